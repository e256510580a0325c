//! `redq dead requeue QUEUE --group SIG [--canary N]`: requeue the dead
//! letters of one error signature, all of them or a few canaries first
//! (see `crate::canary`).

use std::time::Duration;

use redq::DeadAction;
use serde_json::json;

use crate::aggregate::Target;
use crate::canary::{self, Fate};
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::requeue_attempts::{refuse_at_or_above_max, Requeued};
use crate::text::inert;

/// What `--group` takes.
pub struct Group {
    pub queue: String,
    pub signature: String,
    pub attempts: u32,
    pub canary: Option<usize>,
    pub watch: Duration,
}

pub async fn run(target: &Target, group: Group, json: bool) -> Result<(), Failure> {
    let ids = canary::group_ids(target, &group.queue, &group.signature).await?;
    let shown = (inert(&group.queue), inert(&group.signature));
    if ids.is_empty() {
        return Err(Failure::Failed(format!(
            "{} has no dead letters with error signature \"{}\" (redq dead list {} shows their errors)",
            shown.0, shown.1, shown.0
        )));
    }
    refuse_at_or_above_max(target, &group.queue, Requeued::Ids(&ids), group.attempts).await?;
    let action = DeadAction::Requeue {
        attempts: group.attempts,
    };
    let Some(n) = group.canary else {
        let report = target.change_dead(action, &group.queue, &ids).await?;
        if json {
            print_json(&json!({
                "queue": group.queue, "group": group.signature, "action": "requeued",
                "done": report.done, "dead_left": report.dead_left,
            }));
        } else {
            outln!(
                "requeued {} of {} with signature \"{}\"; {} left",
                count(report.done, "dead letter", "dead letters"),
                shown.0,
                shown.1,
                count(report.dead_left, "dead letter", "dead letters"),
            );
        }
        return Ok(());
    };
    if n == 0 {
        return Err(Failure::Usage("--canary takes 1 or more jobs".to_owned()));
    }
    let canaries: Vec<String> = ids.iter().take(n).cloned().collect();
    target.change_dead(action, &group.queue, &canaries).await?;
    tracing::info!(queue = %group.queue, canaries = canaries.len(), "canary requeue");
    let fates = canary::watch(target, &canaries, group.watch).await?;
    let rest = ids.len() - canaries.len();
    let died = fates
        .iter()
        .filter(|(_, f)| matches!(f, Fate::DeadAgain { .. }))
        .count();
    if json {
        let each: Vec<_> = fates
            .iter()
            .map(|(id, fate)| json!({ "id": id, "outcome": fate }))
            .collect();
        print_json(&json!({
            "queue": group.queue, "group": group.signature, "action": "canary",
            "canaries": each, "rest": rest,
        }));
    } else {
        for (id, fate) in &fates {
            outln!("{}  {}", inert(id), fate.text());
        }
        let next = if died > 0 {
            format!("{died} died again: the rest stay dead")
        } else {
            format!(
                "to requeue the rest: redq dead requeue {} --group '{}'",
                shown.0, shown.1
            )
        };
        outln!(
            "canary: {} requeued, {} of the group still dead; {next}",
            canaries.len(),
            count(rest as u64, "dead letter", "dead letters"),
        );
    }
    if died > 0 {
        return Err(Failure::Failed(format!(
            "{} of {} canaries died again",
            died,
            canaries.len()
        )));
    }
    Ok(())
}
