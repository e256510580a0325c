//! What a caller says about a schedule when it upserts it.

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

/// What a schedule does about ticks that passed while no scheduler ran
/// (downtime), or while one was stalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Misfire {
    /// The default: fire once for everything missed (the job of the first
    /// missed tick), then continue from the next tick in the future. A
    /// backlog of missed ticks never turns into a burst of jobs.
    #[default]
    FireOnce,
    /// Fire nothing for missed ticks and continue from the next tick in the
    /// future. A tick counts as missed once the tick after it is also due,
    /// or once it is more than [`SKIP_GRACE`] late; a tick that is merely a
    /// little late (a busy scheduler) still fires.
    ///
    /// A skip is never silent: the scheduler writes a `schedule_skipped`
    /// event (`redq events`) naming the tick and how late it was, logs a
    /// WARN, and stores the tick as the schedule's
    /// [`crate::schedule::ScheduleInfo::last_skipped`]. A daily job skipped
    /// after an outage of a few minutes (a deploy) is therefore seen, and an
    /// operator can run it with `trigger_schedule` (`redq schedules trigger`).
    Skip,
}

/// Under [`Misfire::Skip`], how late a tick may still fire (when the tick
/// after it is not due yet): a daily report may start a minute late after a
/// deploy, but not three hours late.
pub const SKIP_GRACE: Duration = Duration::from_secs(60);

impl Misfire {
    pub(crate) fn code(self) -> u64 {
        match self {
            Misfire::FireOnce => 0,
            Misfire::Skip => 1,
        }
    }

    pub(crate) fn from_code(code: u64) -> Misfire {
        match code {
            1 => Misfire::Skip,
            _ => Misfire::FireOnce,
        }
    }
}

/// A recurring schedule to upsert with [`crate::RedisQueue::upsert_schedule`]:
/// a name, the queue its jobs go to, a cron expression, and options, each
/// with a default.
///
/// **A typed worker needs [`Schedule::job_name`]**: a [`crate::worker::TypedJob`]
/// worker runs a job by its type name, so a schedule without one sends every
/// tick's job straight to the dead letters (`job has no name`). Give it the
/// type's `NAME`, and a payload that type decodes.
///
/// ```
/// use std::time::Duration;
/// use redq::schedule::{Misfire, Schedule};
///
/// let nightly = Schedule::new("nightly-report", "reports", "0 30 2 * * *")
///     .timezone("Europe/Paris")
///     .payload(serde_json::json!({"kind": "daily"}))
///     .job_name("report")
///     .priority(3)
///     .max_attempts(5)
///     .retry_window(Duration::from_secs(3600))
///     .misfire(Misfire::Skip);
/// ```
#[derive(Debug, Clone)]
pub struct Schedule {
    pub(crate) name: String,
    pub(crate) queue: String,
    pub(crate) expression: String,
    pub(crate) timezone: String,
    pub(crate) payload: Value,
    pub(crate) priority: u8,
    pub(crate) max_attempts: u32,
    pub(crate) job_name: Option<String>,
    pub(crate) retry_window: Option<Duration>,
    pub(crate) paused: Option<bool>,
    pub(crate) starts_at: Option<SystemTime>,
    pub(crate) ends_at: Option<SystemTime>,
    pub(crate) misfire: Misfire,
}

impl Schedule {
    /// A schedule `name` (1 to 128 bytes, no control characters; unique in
    /// the namespace) enqueueing into `queue` at the ticks of `expression`
    /// (5 or 6 fields, `@hourly`-style, or `@every 5m`; see
    /// [`crate::schedule::CronExpr`]).
    ///
    /// Defaults: time zone `UTC`, payload `null`, priority 0, unlimited
    /// attempts, no job name, no retry window, no start or end, misfire
    /// [`Misfire::FireOnce`], and the paused state left as it is (a new
    /// schedule runs).
    pub fn new(
        name: impl Into<String>,
        queue: impl Into<String>,
        expression: impl Into<String>,
    ) -> Self {
        Schedule {
            name: name.into(),
            queue: queue.into(),
            expression: expression.into(),
            timezone: "UTC".to_owned(),
            payload: Value::Null,
            priority: 0,
            max_attempts: 0,
            job_name: None,
            retry_window: None,
            paused: None,
            starts_at: None,
            ends_at: None,
            misfire: Misfire::FireOnce,
        }
    }

    /// A schedule firing every `interval` (whole seconds, from 1 s to 366
    /// days): [`Schedule::new`] with the expression `@every <interval>`
    /// written largest unit first (90 minutes is `@every 1h30m`), so it is
    /// stored, listed and shown as that text.
    ///
    /// **Ticks are the multiples of the interval since 1970-01-01 00:00
    /// UTC**, not counted from the upsert: 7 minutes fire at 00:07, 00:14,
    /// … of 1970's count, and a day at 00:00 UTC. The time zone must stay
    /// UTC; for a run at a time of day use a cron expression. An interval
    /// out of range or not whole seconds is refused at the upsert
    /// ([`crate::QueueError::Invalid`], `what` = `"interval"`). See
    /// [`crate::schedule::CronExpr`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use redq::schedule::Schedule;
    ///
    /// let poll = Schedule::every("poll-feeds", "feeds", Duration::from_secs(90))
    ///     .job_name("feeds::poll");
    /// ```
    pub fn every(name: impl Into<String>, queue: impl Into<String>, interval: Duration) -> Self {
        Schedule::new(name, queue, super::every::expression(interval))
    }

    /// The IANA time zone the expression's wall-clock times are in (default
    /// `UTC`). See [`crate::schedule`] for what happens at DST changes.
    #[must_use]
    pub fn timezone(mut self, timezone: impl Into<String>) -> Self {
        self.timezone = timezone.into();
        self
    }

    /// The payload every job of this schedule carries (default `null`).
    #[must_use]
    pub fn payload(mut self, payload: Value) -> Self {
        self.payload = payload;
        self
    }

    /// The jobs' priority (default 0; higher is claimed first).
    #[must_use]
    pub fn priority(mut self, priority: u8) -> Self {
        self.priority = priority;
        self
    }

    /// The jobs' attempt ceiling (default 0, unlimited).
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// The jobs' type name, which typed workers dispatch on (default none):
    /// the [`crate::worker::TypedJob::NAME`] of the type that runs them.
    /// Required for a typed worker, which dead-letters a job with no name.
    #[must_use]
    pub fn job_name(mut self, name: impl Into<String>) -> Self {
        self.job_name = Some(name.into());
        self
    }

    /// The jobs' retry window (default none): see
    /// [`crate::NewJob::retry_window`].
    #[must_use]
    pub fn retry_window(mut self, window: Duration) -> Self {
        self.retry_window = Some(window);
        self
    }

    /// Store the schedule paused (`true`) or running (`false`). Left unset,
    /// an upsert keeps the state an operator gave an existing schedule, so
    /// an application re-upserting its schedules at every start does not
    /// undo a pause; a new schedule then runs.
    #[must_use]
    pub fn paused(mut self, paused: bool) -> Self {
        self.paused = Some(paused);
        self
    }

    /// No tick before this time (default: none). A tick at exactly this time
    /// fires.
    #[must_use]
    pub fn starts_at(mut self, at: SystemTime) -> Self {
        self.starts_at = Some(at);
        self
    }

    /// No tick after this time (default: none). A tick at exactly this time
    /// fires; after the last tick the schedule stays listed with no next run.
    #[must_use]
    pub fn ends_at(mut self, at: SystemTime) -> Self {
        self.ends_at = Some(at);
        self
    }

    /// What to do about ticks missed during downtime (default
    /// [`Misfire::FireOnce`]).
    #[must_use]
    pub fn misfire(mut self, misfire: Misfire) -> Self {
        self.misfire = misfire;
        self
    }
}
