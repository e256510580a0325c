//! Job surgery keys: `u` promote, `t` retry now, `d` delete the selected
//! job (a row of the jobs view, or the job detail), and `U`, `T`, `D` the
//! same for every job of the queue in the state shown; `c` cancels the
//! selected job (also a row of the Leases screen) and `C` every job of the
//! state shown (see `redq::kept`); `x` sets the selected job, if it waits
//! its turn, aside unrun in the dead-letter set (`redq::surgery`). Each names what it
//! will touch and asks (default No); only `y` sends it, and the bulk forms
//! run in the driver's bounded batches with progress on the status line.
//!
//! A key that cannot apply to the job's state (or the state shown) is
//! refused at the keypress, before any question, with why and what to do
//! instead: [`Surgery::refused_for`] and [`Surgery::refused_for_all`] are
//! the one place that says which states each key accepts. A job's detail
//! acts on what it shows: once the job finished and its queue keeps it,
//! on the kept job (`receive`).

use redq::{JobRecord, JobState};

use super::{Command, Level, Mutation, Screen, State, View};
use crate::text::inert;

/// Which change a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surgery {
    /// A scheduled job due now.
    Promote,
    /// A job backing off after a failure due now; a dead job requeued
    /// (as `redq jobs retry` and the driver's `retry_now` do).
    RetryNow,
    /// A job gone for good.
    Delete,
    /// A job cancelled: gone for good, never retried, its worker told.
    Cancel,
    /// A job that waits its turn set aside, unrun, in the dead-letter set.
    DeadLetter,
}

impl Surgery {
    fn verb(self) -> &'static str {
        match self {
            Surgery::Promote => "promote",
            Surgery::RetryNow => "retry now",
            Surgery::Delete => "delete",
            Surgery::Cancel => "cancel",
            Surgery::DeadLetter => "dead-letter",
        }
    }

    /// Why this key does not apply to `job`, said with what to do instead;
    /// `None` when it applies. With [`Surgery::refused_for_all`], the one
    /// place naming the states each key accepts.
    fn refused_for(self, job: &JobRecord) -> Option<String> {
        let state = job.state;
        let finished = matches!(state, JobState::Completed | JobState::Cancelled);
        match self {
            Surgery::Promote if state == JobState::Scheduled => None,
            Surgery::Promote => Some(format!(
                "only a scheduled job can be promoted: {}",
                what_it_is(job)
            )),
            Surgery::RetryNow if state == JobState::Scheduled && job.attempts == 0 => {
                Some("this job has not failed (a delay, not a backoff): u promotes it".to_owned())
            }
            Surgery::RetryNow if matches!(state, JobState::Scheduled | JobState::Dead) => None,
            Surgery::RetryNow => Some(format!(
                "only a job backing off after a failure, or a dead one, can be retried now: {}",
                what_it_is(job)
            )),
            // Every state, the kept ones too: the driver deletes a kept
            // job by id (its record and result).
            Surgery::Delete => None,
            Surgery::Cancel if finished => Some(format!("nothing to cancel: {}", what_it_is(job))),
            Surgery::Cancel => None,
            Surgery::DeadLetter
                if matches!(
                    state,
                    JobState::Waiting | JobState::Scheduled | JobState::Held | JobState::Blocked
                ) =>
            {
                None
            }
            Surgery::DeadLetter if state == JobState::Leased => {
                Some("a running job cannot be set aside: c cancels it, d deletes it".to_owned())
            }
            Surgery::DeadLetter if state == JobState::Dead => {
                Some("it is a dead letter already".to_owned())
            }
            Surgery::DeadLetter => Some(format!(
                "only a job waiting its turn (waiting, scheduled, held, blocked) can be \
                 dead-lettered: {}",
                what_it_is(job)
            )),
        }
    }

    /// Why this key does not apply to every job of `state`, as
    /// [`Surgery::refused_for`] for one job.
    fn refused_for_all(self, state: JobState, queue: &str) -> Option<String> {
        let kept = matches!(state, JobState::Completed | JobState::Cancelled);
        match self {
            Surgery::Promote | Surgery::RetryNow if state != JobState::Scheduled => {
                let retry = match self {
                    Surgery::RetryNow if state == JobState::Dead => {
                        " (dead letters: R requeues them all)"
                    }
                    _ => "",
                };
                Some(format!(
                    "{} all works on the scheduled jobs: → to them first{retry}",
                    self.verb()
                ))
            }
            Surgery::Promote | Surgery::RetryNow => None,
            Surgery::Delete if kept => Some(format!(
                "{} jobs are kept by the retention policy of {q}, not queued: \
                 `redq retention clear {q}` forgets them all, `redq retention set` keeps fewer; \
                 d deletes the selected one",
                state.as_str(),
                q = inert(queue)
            )),
            Surgery::Delete => None,
            // A blocked job goes when its key's holder does, so there is
            // no bulk cancel of them.
            Surgery::Cancel if state == JobState::Blocked => Some(
                "blocked jobs follow the holder of their ordering key: c cancels the selected \
                 one, D deletes them all"
                    .to_owned(),
            ),
            Surgery::Cancel if kept => Some(format!(
                "{} jobs have finished: there is nothing to cancel",
                state.as_str()
            )),
            Surgery::Cancel => None,
            // No key asks for it: a bulk dead-letter is one decision too
            // many for a keypress (`redq jobs dead-letter` takes ids).
            Surgery::DeadLetter => Some("x sets aside the selected job only".to_owned()),
        }
    }
}

impl State {
    /// `u` / `t` / `d` / `c` on one job: the selected row, or the job a
    /// detail shows (the kept job once it finished).
    pub(super) fn on_job(&mut self, change: Surgery) -> Command {
        let job = match &self.view {
            View::Detail(detail) if detail.gone => {
                let id = inert(&detail.record.id);
                self.say(
                    Level::Info,
                    format!(
                        "job {id} no longer exists: there is nothing to {}",
                        change.verb()
                    ),
                );
                return Command::None;
            }
            View::Detail(detail) => Some(detail.record.clone()),
            View::Jobs(_) => self.selected_job().cloned(),
            View::Screen(Screen::Leases) if change == Surgery::Cancel => self
                .visible_leases()
                .get(self.cursor().index)
                .copied()
                .cloned(),
            View::Screen(_) | View::Metrics(_) | View::Gate(_) | View::Schedule(_) => {
                return Command::None
            }
        };
        let Some(job) = job else {
            self.say(
                Level::Info,
                format!("nothing selected to {}", change.verb()),
            );
            return Command::None;
        };
        // Refused before read-only or busy: the answer does not depend on
        // them, and says what would work.
        if let Some(refusal) = change.refused_for(&job) {
            self.say(Level::Error, refusal);
            return Command::None;
        }
        if !self.may_mutate(change.verb()) {
            return Command::None;
        }
        let what = describe(&job);
        let kept = matches!(job.state, JobState::Completed | JobState::Cancelled);
        // A member still to count in its batch or tree: ending it here is a
        // failure there, which decides what waits on it.
        let member_of = job.gate.clone().filter(|_| !kept);
        let (mut prompt, mutation) = match change {
            Surgery::Promote => (
                format!("Promote {what}? It becomes due now, in its place by priority."),
                Mutation::Promote(job.id),
            ),
            Surgery::RetryNow if job.state == JobState::Dead => (
                format!(
                    "Retry {what} now? It is requeued with its attempts reset to 0, as r does."
                ),
                Mutation::RetryNow(job.id),
            ),
            Surgery::RetryNow => (
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
            Surgery::Delete if kept => (
                format!("Delete {what} for good? What its queue kept of it, result included, is forgotten."),
                Mutation::DeleteJob {
                    id: job.id,
                    force: false,
                },
            ),
            Surgery::Delete => (
                format!("Delete {what} for good?"),
                Mutation::DeleteJob {
                    id: job.id,
                    force: false,
                },
            ),
            Surgery::DeadLetter => (
                format!(
                    "Dead-letter {what}? It is set aside unrun, its attempts kept; \
                     r on Dead letters requeues it."
                ),
                Mutation::DeadLetterJob(job.id),
            ),
            Surgery::Cancel => {
                let mut prompt =
                    format!("Cancel {what}? It leaves the queue for good and is never retried.");
                if job.state == JobState::Leased {
                    prompt.push_str(" Its worker is told at once; its ack then changes nothing.");
                }
                (prompt, Mutation::CancelJob(job.id))
            }
        };
        let ends_it = matches!(
            change,
            Surgery::Delete | Surgery::Cancel | Surgery::DeadLetter
        );
        if let Some(gate) = member_of.filter(|_| ends_it) {
            prompt.push_str(&format!(
                " It is a member of {}: that counts it failed there, and what waits on it \
                 follows its failure policy (redq batches show {0}).",
                inert(&gate)
            ));
        }
        self.ask(prompt, mutation)
    }

    /// `U` / `T` / `D` / `C` in a jobs view: every job of its queue in the
    /// state shown (promote and retry: the scheduled ones). The whole
    /// state, not the filtered rows, so a filter must be cleared first.
    pub(super) fn on_all_jobs(&mut self, change: Surgery) -> Command {
        let View::Jobs(view) = &self.view else {
            return Command::None;
        };
        let (queue, state) = (view.query.queue.clone(), view.query.state);
        if let Some(refusal) = change.refused_for_all(state, &queue) {
            self.say(Level::Error, refusal);
            return Command::None;
        }
        if !self.filter().is_empty() {
            self.say(
                Level::Error,
                "clear the filter first: this acts on every job of the state, not the rows shown",
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
        if count == 0 {
            self.say(
                Level::Info,
                format!(
                    "no {} jobs in {shown}: nothing to {}",
                    state.as_str(),
                    change.verb()
                ),
            );
            return Command::None;
        }
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
            // Refused above (refused_for_all): no bulk dead-letter.
            Surgery::DeadLetter => return Command::None,
        };
        self.ask(prompt, mutation)
    }
}

/// What `job` is and what moves it on, as a refusal says it.
fn what_it_is(job: &JobRecord) -> String {
    let q = inert(&job.queue);
    match job.state {
        JobState::Waiting => "this job is waiting: due already, next in line by priority".into(),
        JobState::Scheduled => "this job is scheduled".into(),
        JobState::Held => format!(
            "this job is held: due already, held back by its limit key's limits until the key \
             has room (the Limits screen, or redq limits show {q})"
        ),
        JobState::Awaiting => format!(
            "this job is awaiting its batch, dependencies or tree: it runs once they decide \
             (redq deps show {})",
            inert(&job.id)
        ),
        JobState::Blocked => "this job is blocked behind the holder of its ordering key: \
                              it runs once that job finishes"
            .into(),
        JobState::Leased => "this job is running (c cancels it, d deletes it)".into(),
        JobState::Dead => "this job is dead (t or r requeues it)".into(),
        JobState::Completed => "this job has completed; its queue only keeps its record".into(),
        JobState::Cancelled => "this job was cancelled; its queue only keeps its record".into(),
        #[allow(unreachable_patterns)]
        other => format!("this job is {}", other.as_str()),
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
