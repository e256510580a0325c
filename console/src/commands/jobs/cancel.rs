//! `redq jobs cancel ID [--by TEXT]` and `redq jobs cancel --queue Q --state S --yes`.

use redq::CancelOutcome;
use serde_json::json;

use crate::aggregate::Target;
use crate::cli::JobsCancel;
use crate::clock::rfc3339;
use crate::failure::Failure;
use crate::output::{count, opt_time, outln, print_json};
use crate::text::inert;

use super::super::known::require_known;
use super::changes::{member_of, say_member};

pub async fn run(queue: &Target, args: JobsCancel, json: bool) -> Result<(), Failure> {
    match (args.id, args.queue, args.state) {
        (Some(id), None, _) => one(queue, &id, &args.by, json).await,
        (None, Some(name), Some(state)) => {
            require_known(queue, &name).await?;
            let state = state.state();
            if !args.yes {
                let counts = queue.counts(&name).await?;
                let n = counts.cancellable_in(state).map_err(Failure::from)?;
                return Err(Failure::Usage(format!(
                    "this cancels all {} of {} for good; add --yes to do it",
                    count(n, &format!("{state} job"), &format!("{state} jobs")),
                    inert(&name)
                )));
            }
            let done = queue.cancel_all(&name, state, &args.by, |_, _| {}).await?;
            tracing::info!(queue = %name, %state, done, "cancelled jobs");
            let now = queue.counts(&name).await?;
            let left = now.cancellable_in(state).map_err(Failure::from)?;
            if json {
                print_json(&json!({
                    "queue": name,
                    "action": "cancelled",
                    "state": state,
                    "done": done,
                    "left": left,
                }));
            } else {
                outln!(
                    "cancelled {} of {}; {} left",
                    count(done, &format!("{state} job"), &format!("{state} jobs")),
                    inert(&name),
                    left
                );
            }
            Ok(())
        }
        _ => Err(Failure::Usage(
            "give a job id, or --queue and --state for a bulk cancel".into(),
        )),
    }
}

async fn one(queue: &Target, id: &str, by: &str, json: bool) -> Result<(), Failure> {
    let member = member_of(queue, id).await;
    let outcome = queue.cancel(id, by).await?;
    if let (Some(gate), CancelOutcome::Cancelled { .. }) = (&member, &outcome) {
        say_member(id, gate);
    }
    tracing::info!(id, ?outcome, "cancel");
    let (name, from, at) = match outcome {
        CancelOutcome::Cancelled { from, at } => ("cancelled", Some(from), Some(at)),
        CancelOutcome::AlreadyCancelled { at } => ("already_cancelled", None, Some(at)),
        CancelOutcome::AlreadyCompleted { at } => ("already_completed", None, Some(at)),
        CancelOutcome::NotFound => ("not_found", None, None),
    };
    if json {
        print_json(&json!({
            "id": id,
            "outcome": name,
            "from": from,
            "at": opt_time(at),
        }));
    }
    let shown = inert(id);
    let when = at.map(rfc3339).unwrap_or_default();
    match outcome {
        CancelOutcome::Cancelled { from, .. } => {
            if !json {
                outln!("cancelled job {shown} ({from}) at {when}");
            }
            Ok(())
        }
        CancelOutcome::AlreadyCancelled { .. } => {
            if !json {
                outln!("job {shown} was already cancelled at {when}");
            }
            Ok(())
        }
        CancelOutcome::AlreadyCompleted { .. } => Err(Failure::Failed(format!(
            "job {shown} cannot be cancelled: it completed at {when}"
        ))),
        CancelOutcome::NotFound => Err(Failure::Failed(format!("no job {shown}"))),
    }
}
