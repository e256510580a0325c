//! The operator's keys beyond job surgery: on the Schedules screen `t`
//! triggers the selected schedule now, `p` pauses or resumes it, `d`
//! deletes it (in a schedule's detail, that schedule); on the Leases
//! screen `x` reclaims the lapsed leases of the
//! selected lease's queue; on the Dead letters screen, grouped, `K` sends a
//! few canaries of the selected group (see `crate::canary`); in a queue's
//! Metrics view `o` turns its metrics off or back on. Each names what it
//! will touch and asks (default No); only `y` sends it.

use super::{plural, Command, Level, Mutation, Screen, State, View};
use crate::text::inert;

/// Which operator key was pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperateKey {
    /// Schedules: trigger the selected schedule now.
    TriggerSchedule,
    /// Schedules: pause the selected schedule, or resume it.
    ToggleSchedule,
    /// Schedules: delete the selected schedule.
    DeleteSchedule,
    /// Leases: reclaim the selected lease's queue's lapsed leases.
    Reclaim,
    /// Dead letters (grouped): requeue a few of the group, then watch them.
    Canary,
    /// Metrics: turn the queue's metrics off, or back on.
    ToggleMetrics,
}

/// A change an [`OperateKey`] asks for, carried out by `tui::operate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operate {
    /// Enqueue the schedule's job now. Each schedule variant carries the
    /// name and the shard of the selected row (0 without shards): a name
    /// two shards store is two schedules, and the key acts on the one
    /// selected.
    TriggerSchedule(String, usize),
    /// Pause the schedule.
    PauseSchedule(String, usize),
    /// Resume the schedule.
    ResumeSchedule(String, usize),
    /// Delete the schedule.
    DeleteSchedule(String, usize),
    /// Reclaim every lapsed lease of the queue.
    Reclaim(String),
    /// Turn the queue's metrics off (`false`) or on (`true`).
    RecordMetrics(String, bool),
    /// Requeue these dead letters of one group, then watch what becomes of
    /// them.
    Canary {
        /// The group's error signature.
        signature: String,
        /// The queues the group died in (its rest is counted there after).
        queues: Vec<String>,
        /// The canaries: (queue, id).
        ids: Vec<(String, String)>,
    },
}

impl Operate {
    /// A short description for progress and results.
    pub fn label(&self) -> String {
        match self {
            Operate::TriggerSchedule(name, _) => format!("trigger schedule {}", inert(name)),
            Operate::PauseSchedule(name, _) => format!("pause schedule {}", inert(name)),
            Operate::ResumeSchedule(name, _) => format!("resume schedule {}", inert(name)),
            Operate::DeleteSchedule(name, _) => format!("delete schedule {}", inert(name)),
            Operate::Reclaim(queue) => format!("reclaim the lapsed leases of {}", inert(queue)),
            Operate::RecordMetrics(queue, on) => {
                let switch = if *on { "on" } else { "off" };
                format!("turn the metrics of {} {switch}", inert(queue))
            }
            Operate::Canary { ids, .. } => {
                format!("canary requeue of {}", plural(ids.len(), "dead letter"))
            }
        }
    }
}

impl State {
    /// An operator key: what it would touch, asked about first.
    pub(super) fn on_operate(&mut self, key: OperateKey) -> Command {
        let asked = match key {
            OperateKey::TriggerSchedule
            | OperateKey::ToggleSchedule
            | OperateKey::DeleteSchedule => self.schedule_question(key),
            OperateKey::Reclaim => self.reclaim_question(),
            OperateKey::Canary => self.canary_question(),
            OperateKey::ToggleMetrics => self.metrics_question(),
        };
        let Some((prompt, operate)) = asked else {
            return Command::None;
        };
        if !self.may_mutate(&operate.label()) {
            return Command::None;
        }
        self.ask(prompt, Mutation::Operate(operate))
    }

    /// The schedule the keys act on: the Schedules screen's selected row,
    /// or the schedule its detail shows (as last read).
    fn schedule_acted_on(&mut self) -> Option<super::ScheduleInfo> {
        if let View::Schedule(view) = &self.view {
            let shown = match view.shard {
                Some(shard) => format!("{} (shard {shard})", inert(&view.name)),
                None => inert(&view.name),
            };
            let shard = view.shard;
            let read = self.schedule_shown().map(|r| (r.gone, r.record.clone()));
            let said = match read {
                Some((false, Some(record))) => {
                    return Some(crate::registry::schedule_row(&record, shard))
                }
                Some(_) => format!("schedule {shown} is gone: it was deleted"),
                None => format!("schedule {shown} is not read yet: try again when it shows"),
            };
            self.say(Level::Info, said);
            return None;
        }
        if self.view != View::Screen(Screen::Schedules) {
            return None;
        }
        let schedule = self
            .visible_schedules()
            .get(self.cursor().index)
            .map(|s| (*s).clone());
        if schedule.is_none() {
            self.say(Level::Info, "no schedule selected");
        }
        schedule
    }

    fn schedule_question(&mut self, key: OperateKey) -> Option<(String, Operate)> {
        let schedule = self.schedule_acted_on()?;
        let (name, queue) = (schedule.name.clone(), inert(&schedule.queue));
        let on = schedule.shard.unwrap_or(0);
        let shown = match schedule.shard {
            Some(shard) => format!("{} (shard {shard})", inert(&name)),
            None => inert(&name),
        };
        Some(match key {
            OperateKey::TriggerSchedule => (
                format!("Trigger schedule {shown} now? It enqueues one job into {queue}; its next run stays as it is."),
                Operate::TriggerSchedule(name, on),
            ),
            OperateKey::ToggleSchedule if schedule.paused => (
                format!("Resume schedule {shown}? It fires again from its next tick."),
                Operate::ResumeSchedule(name, on),
            ),
            OperateKey::ToggleSchedule => (
                format!("Pause schedule {shown}? No tick fires until it is resumed, and ticks missed meanwhile are not fired later."),
                Operate::PauseSchedule(name, on),
            ),
            _ => (
                format!("Delete schedule {shown}? The jobs it enqueued stay; an app that upserts it at start creates it again."),
                Operate::DeleteSchedule(name, on),
            ),
        })
    }

    fn reclaim_question(&mut self) -> Option<(String, Operate)> {
        let queue = self
            .visible_leases()
            .get(self.cursor().index)
            .map(|j| j.queue.clone());
        let Some(queue) = queue else {
            self.say(Level::Info, "no lease selected");
            return None;
        };
        // Lease expiries are Redis times; kept data is judged as last seen.
        let now = self.data_time(self.redis_time(self.clock));
        let lapsed = self
            .data
            .leases
            .iter()
            .filter(|j| j.queue == queue && j.lease_expires_at.is_some_and(|at| at <= now))
            .count();
        let shown = inert(&queue);
        if lapsed == 0 {
            self.say(
                Level::Info,
                format!("no lease of {shown} has lapsed: its workers still hold them"),
            );
            return None;
        }
        Some((
            format!(
                "Reclaim the {} of {shown} now? Each counts a failed attempt and goes back to the queue \
                 (to the dead letters when its attempts are spent).",
                plural(lapsed, "lapsed lease")
            ),
            Operate::Reclaim(queue),
        ))
    }

    fn metrics_question(&mut self) -> Option<(String, Operate)> {
        let View::Metrics(view) = &self.view else {
            return None;
        };
        let Some(history) = self.metrics_shown(view) else {
            self.say(
                Level::Info,
                "the metrics are not read yet: try again when they show",
            );
            return None;
        };
        let queue = history.metrics.queue.clone();
        let shown = inert(&queue);
        Some(if history.metrics.recording.is_on() {
            (
                format!(
                    "Turn the metrics of {shown} off? Its workers stop recording wait and run times \
                     and outcome counts (what is recorded stays); sizes, throughput and events go on."
                ),
                Operate::RecordMetrics(queue, false),
            )
        } else {
            (
                format!(
                    "Turn the metrics of {shown} back on? Its workers record them again from now."
                ),
                Operate::RecordMetrics(queue, true),
            )
        })
    }

    fn canary_question(&mut self) -> Option<(String, Operate)> {
        if self.view != View::Screen(Screen::Dead) || !self.tabs.dead_grouped {
            self.say(
                Level::Info,
                "a canary requeue works on a group: s groups the dead letters by error",
            );
            return None;
        }
        let groups = self.dead_groups();
        let Some(group) = groups.get(self.cursor().index) else {
            self.say(Level::Info, "no group selected");
            return None;
        };
        let ids = group.canaries.clone();
        let rest = group.count.saturating_sub(ids.len() as u64);
        let signature = group.signature.clone();
        let counted = match group.complete {
            true => plural(group.count as usize, "dead letter"),
            false => format!("at least {} dead letters", group.count),
        };
        let others = match (rest, group.complete) {
            (0, _) => "That is the whole group.".to_owned(),
            (n, true) => format!("The other {n} stay dead until you requeue them (r)."),
            (n, false) => format!("The other {n} or more stay dead until you requeue them (r)."),
        };
        let queues = group.queues.clone();
        Some((
            format!(
                "Requeue {} of the {counted} with error \"{}\" as canaries, and watch them? {others}",
                ids.len(),
                inert(&signature)
            ),
            Operate::Canary {
                signature,
                queues,
                ids,
            },
        ))
    }
}
