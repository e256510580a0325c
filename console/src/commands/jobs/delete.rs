//! `redq jobs delete ID... [--force] | --queue QUEUE --state S [--force] --yes`:
//! jobs gone for good, in any state, their ordering and dedup keys released.
//! A leased job needs --force, which voids its holder's lease (its worker
//! is told at once). By id, a finished job's kept record (its result) or
//! tombstone goes too, and the line says so: `deleted completed job ID`.

use redq::{IfLeased, JobState};

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::text::inert;

use super::super::known::require_known;
use super::changes::{all_of, confirm_first, member_of, report, report_all, say_member, Outcome};

pub async fn run(
    queue: &Target,
    ids: Vec<String>,
    all: Option<(String, JobState)>,
    force: bool,
    yes: bool,
    json: bool,
) -> Result<(), Failure> {
    let if_leased = if force {
        IfLeased::VoidLease
    } else {
        IfLeased::Refuse
    };
    if let Some((name, state)) = all {
        require_known(queue, &name).await?;
        if state == JobState::Leased && !force {
            return Err(Failure::Usage(
                "deleting leased jobs voids their holders' leases; add --force to do it".into(),
            ));
        }
        let before = queue.counts(&name).await?.in_state(state);
        if !yes {
            let shown = inert(&name);
            let state = state.as_str();
            let force = if force { " --force" } else { "" };
            return Err(confirm_first(format!(
                "jobs delete{force} --queue {shown} --state {state} would delete {} of {shown} for good",
                all_of(before, &format!("{state} job"), &format!("{state} jobs")),
            )));
        }
        let done = queue.delete_all(&name, state, if_leased, |_, _| {}).await?;
        tracing::info!(queue = %name, state = state.as_str(), done, "deleted all jobs in a state");
        let left = queue.counts(&name).await?.in_state(state);
        report_all("deleted", &name, done, left, json);
        return Ok(());
    }
    let mut outcomes = Vec::new();
    for id in ids {
        let outcome = delete_one(queue, &id, if_leased).await;
        tracing::info!(id = %id, ok = outcome.is_ok(), "delete");
        outcomes.push((id, outcome));
    }
    report("delete", outcomes, json)
}

/// Delete job `id` on the shard that holds it or what was kept of it,
/// saying which it was.
async fn delete_one(queue: &Target, id: &str, if_leased: IfLeased) -> Outcome {
    let member = member_of(queue, id).await;
    match queue.delete_job_reported(id, if_leased).await? {
        Some(JobState::Completed) => Ok("deleted completed job"),
        Some(JobState::Cancelled) => Ok("deleted cancelled job"),
        _ => {
            if let Some(gate) = member {
                say_member(id, &gate);
            }
            Ok("deleted")
        }
    }
}
