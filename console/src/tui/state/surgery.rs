//! Job surgery keys: `u` promote, `t` retry now, `d` delete the selected
//! job (a row of the jobs view, or the job detail), and `U`, `T`, `D` the
//! same for every job of the queue in the state shown; `c` cancels the
//! selected job (also a row of the Leases screen) and `C` every job of the
//! state shown (see `redq::kept`). Each names what it
//! will touch and asks (default No); only `y` sends it, and the bulk forms
//! run in the driver's bounded batches with progress on the status line.

use redq::{JobRecord, JobState};

use super::{Command, Level, Mutation, Screen, State, View};
use crate::text::inert;

/// Which change a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surgery {
    /// A scheduled job due now.
    Promote,
    /// A job backing off after a failure due now.
    RetryNow,
    /// A job gone for good.
    Delete,
    /// A job cancelled: gone for good, never retried, its worker told.
    Cancel,
}

impl Surgery {
    fn verb(self) -> &'static str {
        match self {
            Surgery::Promote => "promote",
            Surgery::RetryNow => "retry now",
            Surgery::Delete => "delete",
            Surgery::Cancel => "cancel",
        }
    }
}

impl State {
    /// `u` / `t` / `d` on one job.
    pub(super) fn on_job(&mut self, change: Surgery) -> Command {
        let job = match &self.view {
            View::Detail(detail) => Some(detail.record.clone()),
            View::Jobs(_) => self.selected_job().cloned(),
            View::Screen(Screen::Leases) if change == Surgery::Cancel => self
                .visible_leases()
                .get(self.cursor().index)
                .copied()
                .cloned(),
            View::Screen(_) | View::Metrics(_) | View::Gate(_) => return Command::None,
        };
        let Some(job) = job else {
            self.say(
                Level::Info,
                format!("nothing selected to {}", change.verb()),
            );
            return Command::None;
        };
        if !self.may_mutate(change.verb()) {
            return Command::None;
        }
        let what = describe(&job);
        let backing_off = job.state == JobState::Scheduled && job.attempts > 0;
        let (prompt, mutation) = match change {
            Surgery::Promote if job.state == JobState::Scheduled => (
                format!("Promote {what}? It becomes due now, in its place by priority."),
                Mutation::Promote(job.id),
            ),
            Surgery::RetryNow if backing_off => (
                format!(
                    "Retry {what} now? It failed {} and runs again at once.",
                    times(job.attempts)
                ),
                Mutation::RetryNow(job.id),
            ),
            Surgery::Delete if job.state == JobState::Leased => (
                format!(
                    "Delete {what} for good? It is running: its lease is voided, \
                     so its worker's ack changes nothing and it never comes back."
                ),
                Mutation::DeleteJob {
                    id: job.id,
                    force: true,
                },
            ),
            Surgery::Delete => (
                format!("Delete {what} for good?"),
                Mutation::DeleteJob {
                    id: job.id,
                    force: false,
                },
            ),
            Surgery::Cancel => {
                let mut prompt =
                    format!("Cancel {what}? It leaves the queue for good and is never retried.");
                if job.state == JobState::Leased {
                    prompt.push_str(" Its worker is told at once; its ack then changes nothing.");
                }
                (prompt, Mutation::CancelJob(job.id))
            }
            Surgery::Promote => {
                let refusal = format!(
                    "only a scheduled job can be promoted; this one is {}",
                    job.state.as_str()
                );
                self.say(Level::Error, refusal);
                return Command::None;
            }
            Surgery::RetryNow => {
                let refusal = if job.state == JobState::Scheduled {
                    "this job has not failed (a delay, not a backoff): u promotes it".to_owned()
                } else {
                    format!(
                        "only a job backing off after a failure can be retried now; this one is {} \
                         (a dead job: r requeues it)",
                        job.state.as_str()
                    )
                };
                self.say(Level::Error, refusal);
                return Command::None;
            }
        };
        self.ask(prompt, mutation)
    }

    /// `U` / `T` / `D` in a jobs view: every job of its queue in the state
    /// shown (promote and retry: the scheduled ones). The whole state, not
    /// the filtered rows, so a filter must be cleared first.
    pub(super) fn on_all_jobs(&mut self, change: Surgery) -> Command {
        let View::Jobs(view) = &self.view else {
            return Command::None;
        };
        let (queue, state) = (view.query.queue.clone(), view.query.state);
        if !self.filter().is_empty() {
            self.say(
                Level::Error,
                "clear the filter first: this acts on every job of the state, not the rows shown",
            );
            return Command::None;
        }
        // Refused before the question, not after it: a blocked job goes
        // when its key's holder does, so there is no bulk cancel of them.
        if change == Surgery::Cancel && state == JobState::Blocked {
            self.say(
                Level::Error,
                "blocked jobs follow the holder of their ordering key: c cancels the selected \
                 one, D deletes them all",
            );
            return Command::None;
        }
        let any_state = matches!(change, Surgery::Delete | Surgery::Cancel);
        if !any_state && state != JobState::Scheduled {
            self.say(
                Level::Error,
                format!(
                    "{} all works on the scheduled jobs: → to them first",
                    change.verb()
                ),
            );
            return Command::None;
        }
        if !self.may_mutate(change.verb()) {
            return Command::None;
        }
        let shown = inert(&queue);
        let count = self
            .data
            .queues
            .iter()
            .find(|q| q.counts.queue == queue)
            .map(|q| q.counts.in_state(state))
            .unwrap_or(0);
        let (prompt, mutation) = match change {
            Surgery::Promote => (
                format!("Promote all {count} scheduled jobs of {shown}? They become due now."),
                Mutation::PromoteAll(queue),
            ),
            Surgery::RetryNow => (
                format!(
                    "Retry now every scheduled job of {shown} backing off after a failure? \
                     Delayed jobs that never failed stay scheduled."
                ),
                Mutation::RetryAllNow(queue),
            ),
            Surgery::Delete => {
                let mut prompt = format!(
                    "Delete all {count} {} jobs of {shown} for good?",
                    state.as_str()
                );
                if state == JobState::Leased {
                    prompt
                        .push_str(" Their leases are voided: their workers' acks change nothing.");
                }
                (prompt, Mutation::DeleteAll { queue, state })
            }
            Surgery::Cancel => (
                format!(
                    "Cancel all {count} {} jobs of {shown}? They leave for good and are never retried.",
                    state.as_str()
                ),
                Mutation::CancelAll { queue, state },
            ),
        };
        self.ask(prompt, mutation)
    }
}

fn describe(job: &JobRecord) -> String {
    let name = job
        .name
        .as_deref()
        .map(|n| format!(" {}", inert(n)))
        .unwrap_or_default();
    format!(
        "{} job {} ({}{name})",
        job.state.as_str(),
        inert(&job.id),
        inert(&job.queue)
    )
}

fn times(n: u32) -> String {
    if n == 1 {
        "once".to_owned()
    } else {
        format!("{n} times")
    }
}
