//! What `jobs promote|retry|delete` share: a change applied to each id in
//! turn (each on the shard that holds the job), reported per id, and a bulk
//! form that asks for `--yes` first, as `dead purge` does.

use serde_json::json;

use redq::JobState;

use crate::aggregate::Target;
use crate::failure::{describe, Failure};
use crate::output::{count, outln, print_json};
use crate::text::inert;

/// One id's outcome: what was done (a past-tense verb), or why not.
pub type Outcome = Result<&'static str, redq::QueueError>;

/// Print each id's outcome; exit 1 (after every id was tried) when any
/// failed, exit 2 when an id itself was unusable.
pub fn report(change: &str, outcomes: Vec<(String, Outcome)>, json: bool) -> Result<(), Failure> {
    report_with(change, outcomes, json, serde_json::Map::new())
}

/// [`report`], with `extra` fields in the JSON reply beside `action` and
/// `jobs` (a change that has more to say than each id's outcome).
pub fn report_with(
    change: &str,
    outcomes: Vec<(String, Outcome)>,
    json: bool,
    extra: serde_json::Map<String, serde_json::Value>,
) -> Result<(), Failure> {
    let mut failed = 0;
    let mut unusable = 0;
    let mut rows = Vec::new();
    for (id, outcome) in outcomes {
        match outcome {
            Ok(done) => {
                if !json {
                    outln!("{done} {}", inert(&id));
                }
                rows.push(json!({ "id": id, "outcome": done }));
            }
            Err(err) => {
                failed += 1;
                let message = describe(&err);
                if !json {
                    eprintln!("{}", inert(&message));
                }
                if matches!(err, redq::QueueError::Invalid { .. }) {
                    unusable += 1;
                }
                rows.push(json!({ "id": id, "outcome": "refused", "error": message }));
            }
        }
    }
    if json {
        let mut reply = json!({ "action": change, "jobs": rows });
        reply.as_object_mut().expect("an object").extend(extra);
        print_json(&reply);
    }
    // Each id's own sentence is printed above: the exit's line sums them
    // up rather than repeating one.
    if unusable > 0 {
        return Err(Failure::Usage(match (unusable, rows.len()) {
            (_, 1) => "the id given is not usable as a job id".to_owned(),
            (1, n) => format!("1 of the {n} ids given is not usable as a job id"),
            (k, n) => format!("{k} of the {n} ids given are not usable as job ids"),
        }));
    }
    if failed > 0 {
        // `the job was not changed`, `2 of the 3 jobs were not changed`.
        return Err(Failure::Failed(match (failed, rows.len()) {
            (_, 1) => "the job was not changed".to_owned(),
            (1, n) => format!("1 of the {n} jobs was not changed"),
            (k, n) => format!("{k} of the {n} jobs were not changed"),
        }));
    }
    Ok(())
}

/// The refusal of a bulk change run without `--yes`: what it would do.
pub fn confirm_first(what: String) -> Failure {
    Failure::Usage(format!("{what}; add --yes to do it"))
}

/// How many a bulk change reaches: `the 1 scheduled job`, `all 7
/// scheduled jobs`.
pub fn all_of(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("the 1 {one}")
    } else {
        format!("all {}", count(n, one, many))
    }
}

/// After a bulk change: how many, and what is left.
pub fn report_all(action: &str, queue: &str, done: u64, left: u64, json: bool) {
    if json {
        print_json(&json!({ "queue": queue, "action": action, "done": done, "left": left }));
    } else {
        outln!(
            "{action} {} of {}; {} left in that state",
            count(done, "job", "jobs"),
            inert(queue),
            left
        );
    }
}

/// The batch or tree live job `id` is a member of, read before a change
/// that ends it (delete, cancel, dead-letter): ending it counts it failed
/// there, which decides what waits on it, so the command says so, as the
/// console's question does. `None` for a job of no batch, one that already
/// finished, or one that cannot be read (the change itself then says why).
pub async fn member_of(queue: &Target, id: &str) -> Option<String> {
    match queue.inspect(id).await {
        Ok(Some(job)) if !matches!(job.state, JobState::Completed | JobState::Cancelled) => {
            job.gate
        }
        _ => None,
    }
}

/// Said on stderr once a change ended job `id`, a member of `gate`.
pub fn say_member(id: &str, gate: &str) {
    let gate = inert(gate);
    eprintln!(
        "note: job {} was a member of {gate}: that counts it failed there, and what waits on \
         it follows its failure policy (redq batches show {gate})",
        inert(id)
    );
}
