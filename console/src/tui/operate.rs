//! Carrying out the operator keys' changes (`state::operate`), in the I/O
//! task: each is one driver call (schedules, reclaim, the metrics switch), or for a canary
//! requeue the requeue and then a watch of the canaries with their fates
//! on the status line as they settle.

use std::time::Duration;

use redq::schedule::{ScheduleChange, Triggered};
use redq::{DeadAction, QueueError};

use crate::aggregate::Target;
use crate::canary::{self, Fate, Verdict};
use crate::commands::leases::RECLAIM_BATCH;
use crate::text::inert;
use crate::tui::state::{plural, Operate};

/// How long the console watches its canaries before it reports them.
pub const CANARY_WATCH: Duration = Duration::from_secs(30);

/// Carry out `operate`; the sentence the status line shows after.
pub async fn run(
    target: &Target,
    operate: &Operate,
    progress: impl Fn(u64, u64),
) -> Result<String, QueueError> {
    let changed = |change: ScheduleChange, name: &str, verb: &str| match change {
        ScheduleChange::Done => format!("{verb} schedule {}", inert(name)),
        ScheduleChange::Unchanged => format!("schedule {} was already {verb}", inert(name)),
        ScheduleChange::NotFound => format!("schedule {} is gone", inert(name)),
    };
    Ok(match operate {
        Operate::TriggerSchedule(name, on) => match target.trigger_schedule_on(*on, name).await? {
            Triggered::Enqueued(id) => {
                format!("triggered schedule {}: job {}", inert(name), inert(&id))
            }
            Triggered::NotFound => format!("schedule {} is gone", inert(name)),
        },
        Operate::PauseSchedule(name, on) => {
            changed(target.pause_schedule_on(*on, name).await?, name, "paused")
        }
        Operate::ResumeSchedule(name, on) => {
            changed(target.resume_schedule_on(*on, name).await?, name, "resumed")
        }
        Operate::DeleteSchedule(name, on) => {
            changed(target.delete_schedule_on(*on, name).await?, name, "deleted")
        }
        Operate::Reclaim(queue) => {
            let done = target.reclaim_all(queue, RECLAIM_BATCH).await?;
            format!(
                "reclaimed {} of {}: {} back in the queue, {} dead-lettered",
                plural(
                    (done.requeued + done.dead_lettered) as usize,
                    "lapsed lease"
                ),
                inert(queue),
                done.requeued,
                done.dead_lettered
            )
        }
        Operate::RecordMetrics(queue, on) => {
            let changed = target.set_metrics_recording(queue, *on).await?.changed;
            let (already, switch) = (
                if changed { "" } else { "already " },
                if *on { "on" } else { "off" },
            );
            format!("the metrics of {} are {already}{switch}", inert(queue))
        }
        Operate::Canary {
            ids,
            queues,
            signature,
        } => {
            let action = DeadAction::Requeue { attempts: 0 };
            for (queue, id) in ids {
                target
                    .change_dead(action, queue, std::slice::from_ref(id))
                    .await?;
            }
            let only_ids: Vec<String> = ids.iter().map(|(_, id)| id.clone()).collect();
            progress(0, only_ids.len() as u64);
            let fates = canary::watch(target, &only_ids, CANARY_WATCH).await?;
            // The rest as it is now, counted whole (as `r` would take it).
            let mut rest = 0;
            for queue in queues {
                rest += canary::group_ids(target, queue, signature).await?.len();
            }
            summary(&fates, rest, queues)
        }
    })
}

/// "canaries: 2 completed, 1 dead again: …" and what to do next: `r` on
/// the group only on evidence (one completed, none died again), the same
/// [`Verdict`] as `redq dead requeue --group --canary`.
fn summary(fates: &[(String, Fate)], rest: usize, queues: &[String]) -> String {
    let count = |f: fn(&Fate) -> bool| fates.iter().filter(|(_, fate)| f(fate)).count();
    let completed = count(|f| *f == Fate::Completed);
    let dead = count(|f| matches!(f, Fate::DeadAgain { .. }));
    let pending = fates.len() - completed - dead;
    let mut text =
        format!("canaries: {completed} completed, {dead} dead again, {pending} still running");
    let rest_text = plural(rest, "dead letter");
    match Verdict::of(fates) {
        Verdict::DiedAgain => text.push_str(&format!(
            "; the other {rest_text} stay dead (the fix did not hold)"
        )),
        Verdict::Unproven => text.push_str(&format!(
            "; {}: the other {rest_text} stay dead",
            canary::unproven_text(queues, CANARY_WATCH)
        )),
        Verdict::Held if rest == 0 => text.push_str("; that was the whole group"),
        Verdict::Held => text.push_str(&format!("; r on the group requeues the other {rest_text}")),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates(of: &[Fate]) -> Vec<(String, Fate)> {
        of.iter()
            .enumerate()
            .map(|(i, f)| (format!("J{i}"), f.clone()))
            .collect()
    }

    #[test]
    fn the_rest_is_offered_only_when_a_canary_completed_and_none_died() {
        let pending = Fate::Pending {
            state: "waiting".into(),
        };
        let dead = Fate::DeadAgain {
            error: "timeout".into(),
        };
        let orders = ["orders".to_owned()];
        let said = summary(&fates(&[pending.clone(), pending.clone()]), 597, &orders);
        assert_eq!(
            said,
            "canaries: 0 completed, 0 dead again, 2 still running; no canary finished within 30s \
             (is orders paused, or does no worker serve it?); nothing proves the fix yet: the \
             other 597 dead letters stay dead"
        );
        let said = summary(&fates(&[Fate::Completed, pending.clone()]), 597, &orders);
        assert!(
            said.ends_with("; r on the group requeues the other 597 dead letters"),
            "{said}"
        );
        let said = summary(&fates(&[Fate::Completed, dead]), 597, &orders);
        assert!(said.contains("(the fix did not hold)"), "{said}");
        assert!(!said.contains("r on the group"), "{said}");
    }
}
