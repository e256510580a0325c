//! `redq dead requeue QUEUE --group SIG [--canary N]` and `redq dead delete
//! QUEUE --group SIG`: the dead letters of one error signature, every one
//! of the queue (not a window of its newest), all of them or a few
//! canaries first (see `crate::canary`).

use std::time::Duration;

use redq::DeadAction;
use serde_json::json;

use crate::aggregate::Target;
use crate::canary::{self, Fate, Verdict};
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::requeue_attempts::{refuse_at_or_above_max, Requeued};
use crate::text::inert;

use super::jobs::changes::confirm_first;

/// What `--group` takes.
pub struct Group {
    pub queue: String,
    pub signature: String,
    /// Requeue (at these attempts), or delete for good (`None`).
    pub requeue_at: Option<u32>,
    pub canary: Option<usize>,
    pub watch: Duration,
    /// Whether `--yes` was given (needed to change the whole group).
    pub yes: bool,
}

/// The signature as a shell word, for the command a message suggests.
fn quoted(signature: &str) -> String {
    format!("'{}'", inert(signature).replace('\'', r"'\''"))
}

pub async fn run(target: &Target, group: Group, json: bool) -> Result<(), Failure> {
    if group.canary == Some(0) {
        return Err(Failure::Usage(
            "--canary takes 1 or more jobs (the dead letters requeued first and watched)"
                .to_owned(),
        ));
    }
    let ids = canary::group_ids(target, &group.queue, &group.signature).await?;
    let shown = (inert(&group.queue), inert(&group.signature));
    if ids.is_empty() {
        return Err(Failure::Failed(format!(
            "{} has no dead letters with error signature \"{}\" (redq dead groups {} lists its signatures)",
            shown.0, shown.1, shown.0
        )));
    }
    let (action, verb) = match group.requeue_at {
        Some(attempts) => {
            refuse_at_or_above_max(target, &group.queue, Requeued::Ids(&ids), attempts).await?;
            (DeadAction::Requeue { attempts }, "requeue")
        }
        None => (DeadAction::Delete, "delete"),
    };
    let Some(n) = group.canary else {
        if !group.yes {
            let how = if group.requeue_at.is_some() {
                "requeue"
            } else {
                "delete for good"
            };
            return Err(confirm_first(format!(
                "dead {verb} {} --group {} would {how} all {} with that error signature",
                shown.0,
                quoted(&group.signature),
                count(ids.len() as u64, "dead letter", "dead letters"),
            )));
        }
        let report = target.change_dead(action, &group.queue, &ids).await?;
        let done_verb = format!("{verb}d");
        tracing::info!(queue = %group.queue, done = report.done, "{done_verb} a dead-letter group");
        if json {
            print_json(&json!({
                "queue": group.queue, "group": group.signature, "action": done_verb,
                "done": report.done, "not_found": report.not_found, "dead_left": report.dead_left,
            }));
        } else {
            outln!(
                "{done_verb} {} of {} with signature \"{}\"; {} left",
                count(report.done, "dead letter", "dead letters"),
                shown.0,
                shown.1,
                count(report.dead_left, "dead letter", "dead letters"),
            );
        }
        return Ok(());
    };
    let canaries: Vec<String> = ids.iter().take(n).cloned().collect();
    target.change_dead(action, &group.queue, &canaries).await?;
    tracing::info!(queue = %group.queue, canaries = canaries.len(), "canary requeue");
    let fates = canary::watch(target, &canaries, group.watch).await?;
    let rest = ids.len() - canaries.len();
    let died = fates
        .iter()
        .filter(|(_, f)| matches!(f, Fate::DeadAgain { .. }))
        .count();
    let verdict = Verdict::of(&fates);
    let unproven = canary::unproven_text(std::slice::from_ref(&group.queue), group.watch);
    if json {
        let each: Vec<_> = fates
            .iter()
            .map(|(id, fate)| json!({ "id": id, "outcome": fate }))
            .collect();
        print_json(&json!({
            "queue": group.queue, "group": group.signature, "action": "canary",
            "canaries": each, "rest": rest, "verdict": verdict,
        }));
    } else {
        for (id, fate) in &fates {
            outln!("{}  {}", inert(id), fate.text());
        }
        let next = match verdict {
            Verdict::DiedAgain => format!("{died} died again: the rest stay dead"),
            Verdict::Unproven => format!("{unproven}: the rest stay dead"),
            Verdict::Held if rest == 0 => "that was the whole group".to_owned(),
            Verdict::Held => format!(
                "to requeue the rest: redq dead requeue {} --group {} --yes",
                shown.0,
                quoted(&group.signature)
            ),
        };
        outln!(
            "canary: {} requeued, {} of the group still dead; {next}",
            canaries.len(),
            count(rest as u64, "dead letter", "dead letters"),
        );
    }
    match verdict {
        Verdict::Held => Ok(()),
        Verdict::DiedAgain => Err(Failure::Failed(format!(
            "{} of {} canaries died again",
            died,
            canaries.len()
        ))),
        Verdict::Unproven => Err(Failure::Unproven(unproven)),
    }
}
