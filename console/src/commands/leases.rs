//! `redq leases reclaim QUEUE`: return a queue's lapsed leases now. Workers
//! reclaim them as they claim; when every worker of a queue has died,
//! nobody does, and this is the operator's way to do it.

use serde_json::json;

use crate::aggregate::Target;
use crate::cli::LeasesCommand;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::text::inert;

/// Lapsed leases one reclaim call handles (the driver's bound per call).
pub const RECLAIM_BATCH: usize = 1000;

pub async fn run(target: &Target, command: LeasesCommand, json: bool) -> Result<(), Failure> {
    let LeasesCommand::Reclaim { queue } = command;
    super::known::require_known(target, &queue).await?;
    let done = target.reclaim_all(&queue, RECLAIM_BATCH).await?;
    tracing::info!(queue = %queue, requeued = done.requeued, dead = done.dead_lettered, "reclaimed");
    if json {
        print_json(&json!({
            "queue": queue,
            "action": "reclaimed",
            "requeued": done.requeued,
            "dead_lettered": done.dead_lettered,
            "still_lapsed": done.still_lapsed,
        }));
    } else {
        outln!(
            "reclaimed {} of {}: {} back in the queue, {} dead-lettered (attempts spent)",
            count(
                done.requeued + done.dead_lettered,
                "lapsed lease",
                "lapsed leases"
            ),
            inert(&queue),
            done.requeued,
            done.dead_lettered,
        );
    }
    Ok(())
}
