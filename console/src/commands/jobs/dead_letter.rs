//! `redq jobs dead-letter ID... [--reason TEXT]`: jobs that wait their turn
//! set aside in the dead-letter set, unrun, each on the shard that holds it.

use redq::JobState;

use crate::aggregate::Target;
use crate::failure::Failure;

use super::changes::{report, Outcome};

pub async fn run(
    queue: &Target,
    ids: Vec<String>,
    reason: &str,
    json: bool,
) -> Result<(), Failure> {
    let mut outcomes = Vec::new();
    for id in ids {
        let outcome: Outcome = queue
            .dead_letter_job(&id, reason)
            .await
            .map(dead_lettered_from);
        tracing::info!(id = %id, ok = outcome.is_ok(), "dead-letter");
        outcomes.push((id, outcome));
    }
    report("dead-letter", outcomes, json)
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
