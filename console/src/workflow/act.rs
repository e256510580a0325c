//! Changing gates: cancel one, decide a held waiter. The console's I/O
//! task and the CLI run these and say the same sentences.

use serde_json::{json, Value};

use redq::workflow::{Decision, GateCancelled};
use redq::QueueError;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;

/// What a change did, in words and in JSON; `ok` is false when nothing
/// was changed because there was nothing to change (exit 1 in the CLI).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// It changed what it was asked to.
    pub ok: bool,
    /// One sentence for people.
    pub message: String,
    /// The same for scripts.
    pub json: Value,
}

impl Outcome {
    /// Print it as the CLI does (`-o json` or the sentence); a change that
    /// did nothing fails with its sentence.
    pub fn print(self, id: &str, json: bool) -> Result<(), Failure> {
        if !self.ok {
            return Err(Failure::Failed(self.message));
        }
        if json {
            let mut value = self.json;
            value["id"] = json!(id);
            print_json(&value);
        } else {
            outln!("{}", self.message);
        }
        Ok(())
    }
}

/// Cancel gate `id`, then its pending members (`progress(done, left)`).
pub async fn cancel(
    queue: &Target,
    id: &str,
    by: &str,
    mut progress: impl FnMut(u64, u64),
) -> Result<Outcome, QueueError> {
    let shown = inert(id);
    let outcome = queue.cancel_gate(id, by, &mut progress).await?;
    let json = serde_json::to_value(&outcome).unwrap_or(Value::Null);
    let (ok, message) = match outcome {
        GateCancelled::NotFound => (
            false,
            format!(
                "no batch, dependencies or tree {shown} in this namespace (never created, or its \
             data expired 24 h after it finished)"
            ),
        ),
        GateCancelled::Cancelled {
            members_cancelled,
            subtrees_cancelled,
        } => {
            let subtrees = match subtrees_cancelled {
                0 => String::new(),
                n => format!(
                    " (at every level: {} cancelled with it)",
                    crate::output::count(n, "subtree", "subtrees")
                ),
            };
            (
                true,
                format!(
                    "cancelled {shown}: {} cancelled{subtrees}; the jobs waiting on it are \
                     cancelled at their queues' next claim",
                    crate::output::count(members_cancelled, "pending job", "pending jobs")
                ),
            )
        }
        GateCancelled::HeldCancelled { waiters_cancelled } => (
            true,
            format!(
                "{shown} was done: {} held for an operator cancelled",
                crate::output::count(waiters_cancelled, "job", "jobs")
            ),
        ),
        GateCancelled::AlreadyFinished(state) => (
            false,
            format!(
                "{shown} is {} already: nothing was cancelled",
                state.as_str()
            ),
        ),
    };
    Ok(Outcome { ok, message, json })
}

/// Release (`release`) or dead-letter held waiter `id`.
pub async fn decide(
    queue: &Target,
    id: &str,
    release: bool,
    by: &str,
) -> Result<Outcome, QueueError> {
    let decision = if release {
        Decision::Release
    } else {
        Decision::DeadLetter
    };
    let shown = inert(id);
    match queue.decide_held(id, decision, by).await {
        Ok(()) => {
            let message = match release {
                true => format!("released {shown}: it enters its queue and runs"),
                false => format!("dead-lettered {shown}: it does not run"),
            };
            let word = if release { "released" } else { "dead_lettered" };
            Ok(Outcome {
                ok: true,
                message,
                json: json!({ "outcome": word }),
            })
        }
        Err(QueueError::JobNotFound { .. }) => Ok(Outcome {
            ok: false,
            message: format!(
                "job {shown} is not in this namespace: nothing was released or failed"
            ),
            json: json!({ "outcome": "not_found" }),
        }),
        // No waiter (waits on nothing, or finished): the driver's sentence
        // says what it is instead.
        Err(QueueError::Invalid {
            what: "waiter",
            rule,
            ..
        }) => Ok(Outcome {
            ok: false,
            message: inert(&rule),
            json: json!({ "outcome": "not_waiting" }),
        }),
        // Not held (pending, released, decided already): said, not a
        // usage error; nothing was changed.
        Err(
            e @ QueueError::Invalid {
                what: "held waiter",
                ..
            },
        ) => Ok(Outcome {
            ok: false,
            message: format!("{shown} was not released or failed: {}", e_rule(&e)),
            json: json!({ "outcome": "not_held" }),
        }),
        Err(e) => Err(e),
    }
}

/// The rule of an invalid-argument error (what the driver says is
/// accepted), or the whole error.
fn e_rule(e: &QueueError) -> String {
    match e {
        QueueError::Invalid { rule, .. } => rule.clone(),
        other => other.to_string(),
    }
}
