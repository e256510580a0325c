//! `redq jobs dead-letter ID... [--reason TEXT]`: jobs that wait their turn
//! set aside in the dead-letter set, unrun, each on the shard that holds it.
//!
//! In a queue with a dead-letter bound each one may delete older dead
//! letters, and a batch may evict the very jobs it set aside: the reply
//! says how many the bound deleted and names those of this batch.

use redq::{JobState, QueueError};
use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{count, outln};
use crate::text::inert;

use super::changes::{member_of, report_with, say_member, Outcome};

pub async fn run(
    queue: &Target,
    ids: Vec<String>,
    reason: &str,
    json: bool,
) -> Result<(), Failure> {
    // Said once, before any id: it is the reason that is unusable.
    if reason.len() > redq::limits::MAX_REASON_LEN {
        return Err(Failure::Usage(format!(
            "the reason is {} bytes: at most {} are accepted",
            reason.len(),
            redq::limits::MAX_REASON_LEN
        )));
    }
    let mut outcomes = Vec::new();
    let (mut bound_deleted, mut set_aside) = (0, Vec::new());
    for id in ids {
        let member = member_of(queue, &id).await;
        let outcome: Outcome = match queue.dead_letter_job(&id, reason).await {
            Ok(done) => {
                if let Some(gate) = &member {
                    say_member(&id, gate);
                }
                bound_deleted += done.bound_deleted;
                set_aside.push(id.clone());
                Ok(dead_lettered_from(done.from))
            }
            Err(err) => Err(err),
        };
        tracing::info!(id = %id, ok = outcome.is_ok(), "dead-letter");
        outcomes.push((id, outcome));
    }
    let evicted = evicted(queue, &set_aside, bound_deleted).await?;
    let mut extra = serde_json::Map::new();
    extra.insert("bound_deleted".into(), json!(bound_deleted));
    extra.insert("evicted".into(), json!(evicted));
    let reported = report_with("dead-letter", outcomes, json, extra);
    if bound_deleted > 0 && !json {
        let mut said = format!(
            "the dead-letter bound deleted {} past it",
            count(bound_deleted, "older dead letter", "older dead letters")
        );
        if !evicted.is_empty() {
            let shown: Vec<String> = evicted.iter().map(|id| inert(id)).collect();
            said.push_str(&format!(
                ", among them {} this command set aside: {}",
                count(evicted.len() as u64, "job", "jobs"),
                shown.join(" ")
            ));
        }
        outln!("{said} (redq dead bound show QUEUE)");
    }
    reported
}

/// The jobs of `set_aside` the bound deleted again: none to look for when
/// it deleted nothing.
async fn evicted(
    queue: &Target,
    set_aside: &[String],
    bound_deleted: u64,
) -> Result<Vec<String>, QueueError> {
    let mut gone = Vec::new();
    if bound_deleted == 0 {
        return Ok(gone);
    }
    for id in set_aside {
        if queue.inspect(id).await?.is_none() {
            gone.push(id.clone());
        }
    }
    Ok(gone)
}

/// What the line says was done, by the state the job left.
fn dead_lettered_from(state: JobState) -> &'static str {
    match state {
        JobState::Waiting => "dead-lettered waiting job",
        JobState::Scheduled => "dead-lettered scheduled job",
        JobState::Held => "dead-lettered held job",
        JobState::Blocked => "dead-lettered blocked job",
        _ => "dead-lettered",
    }
}
