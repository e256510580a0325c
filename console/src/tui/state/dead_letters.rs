//! `r`/`d` (the selected dead letter or group) and `R`/`D` (every dead
//! letter matching the filter): each names what it will touch and asks. A
//! requeue asks with attempts restarting at 0, and the lowest max attempts
//! of the jobs it touches, which the count typed must stay below.

use redq::{JobRecord, JobState};

use super::attempts::lowest_max_attempts;
use super::{plural, Command, DeadIds, Level, Mutation, Screen, State, View};
use crate::text::inert;

impl State {
    /// `r` / `d`: the selected dead letter, or the selected group.
    pub(super) fn on_selected(&mut self, requeue: bool) -> Command {
        let verb = if requeue { "requeue" } else { "delete" };
        if self.settings.read_only {
            self.may_mutate(verb);
            return Command::None;
        }
        // Which dead letters are selected, how to describe them, and the
        // lowest max attempts among them.
        let one = |j: &JobRecord| {
            (
                vec![(j.queue.clone(), vec![j.id.clone()])],
                describe_job(j),
                lowest_max_attempts([j]),
            )
        };
        let picked: Option<(DeadIds, String, Option<u32>)> = match &self.view {
            View::Detail(detail) => {
                (detail.record.state == JobState::Dead).then(|| one(&detail.record))
            }
            View::Jobs(view) => (view.query.state == JobState::Dead)
                .then(|| self.selected_job())
                .flatten()
                .map(one),
            View::Screen(Screen::Dead) if self.tabs.dead_grouped => {
                return self.on_group(requeue);
            }
            View::Screen(Screen::Dead) => {
                self.visible_dead().get(self.cursor().index).map(|j| one(j))
            }
            View::Screen(_) | View::Metrics(_) | View::Gate(_) | View::Schedule(_) => {
                return Command::None
            }
        };
        let Some((ids, what, attempts_below)) = picked else {
            self.say(Level::Info, format!("nothing selected to {verb}"));
            return Command::None;
        };
        if !self.may_mutate(verb) {
            return Command::None;
        }
        if requeue {
            let prompt = format!("Requeue {what}?");
            let mutation = Mutation::RequeueDead { ids, attempts: 0 };
            self.ask_requeue(prompt, mutation, attempts_below)
        } else {
            let prompt = format!("Delete {what} for good?");
            self.ask(prompt, Mutation::DeleteDead(ids))
        }
    }

    /// `r` / `d` on a group: every dead letter of its queues with its
    /// signature, counted over the whole queue and read whole when carried
    /// out (as `redq dead requeue|delete QUEUE --group SIG`), not only the
    /// loaded window.
    fn on_group(&mut self, requeue: bool) -> Command {
        let verb = if requeue { "requeue" } else { "delete" };
        let Some(group) = self.dead_groups().into_iter().nth(self.cursor().index) else {
            self.say(Level::Info, format!("nothing selected to {verb}"));
            return Command::None;
        };
        if !self.may_mutate(verb) {
            return Command::None;
        }
        let place = match group.queues.as_slice() {
            [one] => format!("queue {}", inert(one)),
            many => plural(many.len(), "queue"),
        };
        let mut what = format!(
            "{} {} with error \"{}\" in {place}",
            if group.complete {
                "all"
            } else {
                "every one of the"
            },
            if group.complete {
                plural(group.count as usize, "dead letter")
            } else {
                format!("at least {} dead letters", group.count)
            },
            inert(&group.signature)
        );
        if !group.complete {
            what.push_str(" (the group was counted as far as the newest dead letters; all are read when it runs)");
        }
        let (queues, signature, count) = (group.queues, group.signature, group.count);
        if requeue {
            let mutation = Mutation::RequeueGroup {
                queues,
                signature,
                count,
                attempts: 0,
            };
            self.ask_requeue(
                format!("Requeue {what}?"),
                mutation,
                group.lowest_max_attempts,
            )
        } else {
            let mutation = Mutation::DeleteGroup {
                queues,
                signature,
                count,
            };
            self.ask(format!("Delete {what} for good?"), mutation)
        }
    }

    /// `R` / `D`: every dead letter matching the filter, on the Dead
    /// letters screen or in a jobs view listing dead jobs.
    pub(super) fn on_all(&mut self, requeue: bool) -> Command {
        let verb = if requeue {
            "Requeue"
        } else {
            "Delete for good"
        };
        // `Some(queue)`: the jobs view of that queue's dead jobs.
        let jobs_of: Option<String> = match &self.view {
            View::Screen(Screen::Dead) => None,
            View::Jobs(view) if view.query.state == JobState::Dead => {
                Some(view.query.queue.clone())
            }
            _ => return Command::None,
        };
        if !self.may_mutate(if requeue { "requeue" } else { "purge" }) {
            return Command::None;
        }
        let filter = self.filter().to_owned();
        if filter.is_empty() {
            // Everything: let the driver drain whole queues in batches.
            let queues: Vec<(String, u64)> = self
                .data
                .queues
                .iter()
                .filter(|q| match &jobs_of {
                    Some(queue) => q.counts.queue == *queue,
                    None => q.counts.dead > 0,
                })
                .map(|q| (q.counts.queue.clone(), q.counts.dead))
                .collect();
            let total: u64 = queues.iter().map(|(_, n)| n).sum();
            if total == 0 {
                self.say(Level::Info, "no dead letters");
                return Command::None;
            }
            let names: Vec<String> = queues.into_iter().map(|(q, _)| q).collect();
            // Only the loaded dead letters are known: one that is not, with
            // a lower max attempts, gets the driver's one more try.
            let loaded: Vec<&JobRecord> = match &jobs_of {
                Some(_) => self.visible_jobs(),
                None => self
                    .data
                    .dead
                    .items
                    .iter()
                    .filter(|j| names.contains(&j.queue))
                    .collect(),
            };
            let attempts_below = lowest_max_attempts(loaded);
            let place = match names.as_slice() {
                [one] => format!("queue {}", inert(one)),
                many => plural(many.len(), "queue"),
            };
            let prompt = format!(
                "{verb} all {} in {place}?",
                plural(total as usize, "dead letter")
            );
            if requeue {
                let mutation = Mutation::RequeueAllDead {
                    queues: names,
                    attempts: 0,
                };
                return self.ask_requeue(prompt, mutation, attempts_below);
            }
            return self.ask(prompt, Mutation::PurgeDead(names));
        }
        // A filtered jobs view acts on the matching rows of its page only.
        let rows = if jobs_of.is_some() {
            self.visible_jobs()
        } else {
            self.visible_dead()
        };
        if rows.is_empty() {
            self.say(Level::Info, "no dead letters match the filter");
            return Command::None;
        }
        let ids = by_queue(rows.iter().map(|j| (&j.queue, &j.id)));
        let attempts_below = lowest_max_attempts(rows.iter().copied());
        let mut prompt = format!(
            "{verb} the {} matching \"{}\"?",
            plural(rows.len(), "dead letter"),
            inert(&filter)
        );
        if jobs_of.is_some() {
            prompt.push_str(" (only this page was searched)");
        } else if self.data.dead.truncated {
            prompt.push_str(" (only the newest loaded dead letters were searched)");
        }
        if requeue {
            let mutation = Mutation::RequeueDead { ids, attempts: 0 };
            self.ask_requeue(prompt, mutation, attempts_below)
        } else {
            self.ask(prompt, Mutation::DeleteDead(ids))
        }
    }
}

fn describe_job(job: &JobRecord) -> String {
    let name = job
        .name
        .as_deref()
        .map(|n| format!(" {}", inert(n)))
        .unwrap_or_default();
    format!(
        "dead letter {} ({}{name})",
        inert(&job.id),
        inert(&job.queue)
    )
}

fn by_queue<'a>(jobs: impl Iterator<Item = (&'a String, &'a String)>) -> DeadIds {
    let mut out: DeadIds = Vec::new();
    for (queue, id) in jobs {
        match out.iter_mut().find(|(q, _)| q == queue) {
            Some((_, ids)) => ids.push(id.clone()),
            None => out.push((queue.clone(), vec![id.clone()])),
        }
    }
    out
}
