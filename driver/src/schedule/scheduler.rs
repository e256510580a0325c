//! The scheduler: the background duty that fires due schedules.

use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::outcome::schedule::FireOutcome;
use crate::schedule::cron::{tick_job_id_ms, CronExpr};
use crate::schedule::store::{first_tick, Due};
use crate::schedule::{Misfire, SKIP_GRACE};
use crate::{QueueError, RedisQueue};

/// Default for [`Scheduler::batch`].
pub const DEFAULT_SCHEDULER_BATCH: usize = 100;
/// Default for [`Scheduler::max_idle`].
pub const DEFAULT_SCHEDULER_MAX_IDLE: Duration = Duration::from_secs(1);

/// Fires the due schedules of one namespace. Run any number at once, in any
/// number of processes: each tick is enqueued exactly once (see
/// [`crate::schedule`]), so a second scheduler only adds availability.
///
/// ```no_run
/// # async fn demo(queue: redq::RedisQueue) {
/// use redq::worker::CancellationToken;
/// use redq::schedule::Scheduler;
///
/// let cancel = CancellationToken::new();
/// let task = tokio::spawn(Scheduler::new(queue).run(cancel.clone()));
/// // ... on shutdown:
/// cancel.cancel();
/// let report = task.await.unwrap();
/// println!("enqueued {} scheduled jobs", report.enqueued);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Scheduler {
    queue: RedisQueue,
    batch: usize,
    max_idle: Duration,
}

/// What a scheduler did, counted over its passes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SchedulerReport {
    /// Ticks this scheduler fired that created a job.
    pub enqueued: u64,
    /// Ticks this scheduler fired whose job already existed (nothing created).
    pub duplicates: u64,
    /// Ticks skipped by the misfire policy [`Misfire::Skip`] (each also a
    /// `schedule_skipped` event, the schedule's
    /// [`crate::schedule::ScheduleInfo::last_skipped`] and a WARN log), and
    /// ticks found not after the last one fired (nothing enqueued, nothing
    /// written but the next run).
    pub skipped: u64,
    /// Due ticks another scheduler (or an upsert, pause or delete) got to
    /// first; this one changed nothing.
    pub lost: u64,
    /// Schedules that could not be fired (an unreadable record, a Redis
    /// error); they are retried on a later pass.
    pub errors: u64,
}

impl SchedulerReport {
    fn add(&mut self, other: &SchedulerReport) {
        self.enqueued += other.enqueued;
        self.duplicates += other.duplicates;
        self.skipped += other.skipped;
        self.lost += other.lost;
        self.errors += other.errors;
    }
}

/// The result of one [`Scheduler::run_once`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SchedulerPass {
    /// What this pass did.
    pub report: SchedulerReport,
    /// How long until the soonest next run (Redis clock) as of the start of
    /// the pass; `None` when no schedule has a next run.
    pub next_due: Option<Duration>,
    /// A full batch was due: more may be waiting right now.
    pub backlog: bool,
}

impl SchedulerPass {
    fn empty() -> Self {
        SchedulerPass {
            report: SchedulerReport::default(),
            next_due: None,
            backlog: false,
        }
    }
}

impl Scheduler {
    /// A scheduler for the schedules of `queue`'s namespace, with every
    /// setting at its default.
    pub fn new(queue: RedisQueue) -> Self {
        Scheduler {
            queue,
            batch: DEFAULT_SCHEDULER_BATCH,
            max_idle: DEFAULT_SCHEDULER_MAX_IDLE,
        }
    }

    /// Most schedules fired per pass (default 100, clamped to 1..=1000); a
    /// full batch is followed by another pass at once.
    #[must_use]
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch.clamp(1, 1000);
        self
    }

    /// Longest sleep between passes (default 1 s). The scheduler sleeps until
    /// the soonest next run, but wakes at least this often to notice
    /// schedules upserted meanwhile with an earlier tick, and waits this long
    /// after an error.
    #[must_use]
    pub fn max_idle(mut self, max_idle: Duration) -> Self {
        self.max_idle = max_idle.max(Duration::from_millis(1));
        self
    }

    /// Loop until `cancel` fires: fire what is due, sleep until the soonest
    /// next run (at most [`Scheduler::max_idle`]), repeat. Redis errors are
    /// logged and retried; they never end the loop. Cancelling stops at once
    /// while the scheduler sleeps or reads what is due, and after the fire in
    /// flight otherwise (each fire is one script call, bounded by the command
    /// timeout). So the report counts every tick this scheduler fired: a fire
    /// cut short would have happened in Redis without being counted.
    pub async fn run(self, cancel: CancellationToken) -> SchedulerReport {
        let mut total = SchedulerReport::default();
        loop {
            let pass = self.pass(Some(&cancel)).await;
            if cancel.is_cancelled() {
                if let Ok(pass) = &pass {
                    total.add(&pass.report);
                }
                break;
            }
            let wait = match pass {
                Ok(pass) => {
                    total.add(&pass.report);
                    if pass.report.errors > 0 {
                        self.max_idle
                    } else if pass.backlog {
                        continue;
                    } else {
                        pass.next_due
                            .unwrap_or(self.max_idle)
                            .clamp(Duration::from_millis(1), self.max_idle)
                    }
                }
                Err(error) => {
                    total.errors += 1;
                    tracing::warn!(%error, namespace = self.queue.namespace(), "scheduler pass failed; retrying");
                    self.max_idle
                }
            };
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        total
    }

    /// One pass: read up to [`Scheduler::batch`] due schedules and fire each.
    pub async fn run_once(&self) -> Result<SchedulerPass, QueueError> {
        self.pass(None).await
    }

    /// One pass that, once `cancel` fires, starts no further fire. The read
    /// of what is due writes nothing, so it is abandoned at once.
    async fn pass(&self, cancel: Option<&CancellationToken>) -> Result<SchedulerPass, QueueError> {
        let read = self.queue.due_schedules(self.batch);
        let set = match cancel {
            None => read.await?,
            Some(cancel) => tokio::select! {
                biased;
                _ = cancel.cancelled() => return Ok(SchedulerPass::empty()),
                set = read => set?,
            },
        };
        let mut report = SchedulerReport::default();
        let backlog = set.due.len() >= self.batch;
        for due in set.due {
            if cancel.is_some_and(CancellationToken::is_cancelled) {
                break;
            }
            let name = due.name.clone();
            if let Err(error) = self.fire(due, set.now_ms, &mut report).await {
                report.errors += 1;
                tracing::warn!(%error, schedule = %name, "cannot fire schedule; will retry");
            }
        }
        Ok(SchedulerPass {
            report,
            next_due: set
                .earliest_ms
                .map(|at| Duration::from_millis(at.saturating_sub(set.now_ms))),
            backlog,
        })
    }

    async fn fire(
        &self,
        due: Due,
        now_ms: u64,
        report: &mut SchedulerReport,
    ) -> Result<(), QueueError> {
        let Some(record) = due.record else {
            tracing::warn!(schedule = %due.name, "next-run entry without a schedule record; dropping it");
            return self.queue.drop_orphan_schedule(&due.name).await;
        };
        let record = record?;
        let info = &record.info;
        let cron = CronExpr::parse(&info.expression, &info.timezone)?;
        let tick = due.tick_ms;
        let following = first_tick(
            &cron,
            now_ms.max(tick),
            record.starts_at_ms,
            record.ends_at_ms,
        );
        let enqueue = match info.misfire {
            Misfire::FireOnce => true,
            Misfire::Skip => {
                let later_tick_due = cron.next_after_ms(tick).is_some_and(|next| next <= now_ms);
                let late = Duration::from_millis(now_ms.saturating_sub(tick));
                !later_tick_due && late <= SKIP_GRACE
            }
        };
        let job_id = tick_job_id_ms(&due.name, tick);
        let fired = self
            .queue
            .fire_schedule(
                &info.queue,
                &due.name,
                info.revision,
                tick,
                &job_id,
                following,
                enqueue,
            )
            .await?;
        tracing::debug!(schedule = %due.name, tick, following, ?fired, "schedule tick");
        if fired == FireOutcome::Skipped {
            // A run that did not happen must be seen: the script wrote a
            // schedule_skipped event and the record's last_skipped, and the
            // log says it too.
            tracing::warn!(
                schedule = %due.name,
                tick = %crate::human::time_text(crate::job::ms_to_time(tick)),
                late_ms = now_ms.saturating_sub(tick),
                "schedule tick skipped: it was due too late for misfire policy skip; no job enqueued"
            );
        }
        match fired {
            FireOutcome::Enqueued { created: true, .. } => report.enqueued += 1,
            FireOutcome::Enqueued { created: false, .. } => report.duplicates += 1,
            FireOutcome::Skipped | FireOutcome::AlreadyFired => report.skipped += 1,
            FireOutcome::Lost
            | FireOutcome::Changed
            | FireOutcome::NotDue
            | FireOutcome::NotFound => report.lost += 1,
        }
        Ok(())
    }
}
