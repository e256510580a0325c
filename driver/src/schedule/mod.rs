//! Recurring schedules: cron expressions and `@every` intervals stored in
//! Redis, fired exactly once per tick however many schedulers run.
//!
//! # The model
//!
//! A **schedule** is a name, a queue, a cron expression in an IANA time zone,
//! and the job it enqueues at each **tick**: a payload and job options
//! (priority, max attempts, job name, retry window). It may be paused, may
//! start and end at given times, and has a misfire policy. Schedules live in
//! Redis (`{ns}:schedules`, with each one's next run in `{ns}:schedules:next`;
//! see [`crate::keys`]), so every process of an application sees the same
//! ones, and the console lists them.
//!
//! A [`Scheduler`] fires them. It reads the schedules whose next run has come
//! on **Redis's clock**, and for each runs one script (`lua/schedule_fire.lua`)
//! that, atomically, checks the stored next run still equals the tick it
//! read, enqueues the tick's job, and advances the next run to the following
//! tick. A scheduler runs inside every `Worker` by default, and standalone
//! with [`Scheduler::run`].
//!
//! # Exactly once per tick
//!
//! * The compare-and-advance makes the first scheduler to reach a tick the
//!   only one to fire it: every other finds the next run moved on and
//!   changes nothing. So any number of schedulers can run, and killing one
//!   (even mid-call: a script runs whole or not at all) changes nothing.
//! * The tick's job id is derived from the schedule name and the tick time
//!   ([`tick_job_id`]), so a fire call resent after a dropped connection, or
//!   anything else presenting the same tick, finds the job and creates
//!   nothing; the script also refuses a tick not after the last one fired.
//! * The script checks the schedule's revision too: a scheduler that read a
//!   schedule just before an upsert replaced it cannot enqueue the old
//!   payload or advance by the old expression.
//!
//! Delivery of the enqueued job is then the queue's usual at-least-once.
//!
//! # Missed ticks
//!
//! When no scheduler ran for a while (downtime), the next run is in the past.
//! With [`Misfire::FireOnce`] (the default) the schedule fires once, the job
//! of the first missed tick, and continues from the next tick in the future;
//! with [`Misfire::Skip`] it fires nothing for the missed ticks, and says so:
//! a `schedule_skipped` event, a WARN log and
//! [`ScheduleInfo::last_skipped`]. Ticks that pass while a schedule is
//! paused are never fired.
//!
//! # Time zones and daylight-saving time
//!
//! Expressions are wall-clock times in the schedule's time zone (default
//! UTC). When the clock springs forward, a fixed-time job (`30 2 * * *`, or
//! `0 2,14 * * *` for each of its listed times) whose time does not exist
//! that day fires once right after the gap, and an interval job
//! (`*/15 * * * *`, `0 9-17 * * *`, `@hourly`) skips the missing times. When
//! the clock falls back, a fixed-time job fires once, at the first of the two
//! occurrences, and an interval job fires at both. See [`CronExpr`] for the
//! syntax and worked examples.
//!
//! An interval schedule, `@every 30s` ([`Schedule::every`]), ticks at the
//! multiples of its interval since 1970-01-01 00:00 UTC, not counted from
//! its creation: instants that no time zone or DST change moves, so its time
//! zone must be UTC. A daily run at a time of day is a cron expression.
//!
//! # Example
//!
//! ```no_run
//! use redq::schedule::{Misfire, Schedule, Scheduler};
//! use redq::RedisQueue;
//! use redq::worker::CancellationToken;
//!
//! # async fn demo() -> Result<(), redq::QueueError> {
//! let queue = RedisQueue::connect("redis://127.0.0.1:6379").await?;
//!
//! // Upserting is idempotent: do it at every start.
//! queue
//!     .upsert_schedule(
//!         Schedule::new("nightly-report", "reports", "30 2 * * *")
//!             .timezone("Europe/Paris")
//!             // The TypedJob::NAME of the type that runs it: a typed worker
//!             // dead-letters a job without one ("job has no name").
//!             .job_name("acme::nightly_report")
//!             .payload(serde_json::json!({"kind": "daily"}))
//!             .max_attempts(3)
//!             .misfire(Misfire::Skip),
//!     )
//!     .await?;
//!
//! for s in queue.list_schedules().await? {
//!     println!("{} {} next {:?} last job {:?}", s.name, s.expression, s.next_run, s.last_job_id);
//! }
//!
//! // A standalone scheduler (a Worker starts one of its own by default).
//! let cancel = CancellationToken::new();
//! let scheduler = tokio::spawn(Scheduler::new(queue.clone()).run(cancel.clone()));
//!
//! queue.trigger_schedule("nightly-report").await?; // run it now as well
//! queue.pause_schedule("nightly-report").await?;
//! queue.resume_schedule("nightly-report").await?;
//!
//! cancel.cancel();
//! scheduler.await.expect("scheduler task");
//! # Ok(()) }
//! ```

mod cron;
mod every;
mod record;
mod scheduler;
mod spec;
mod store;

pub use crate::outcome::schedule::{ScheduleChange, Triggered, Upserted};
pub use cron::{
    tick_job_id, CronExpr, MAX_EVERY, MAX_EXPRESSION_LEN, MAX_FIXED_TIMES, MAX_TIMEZONE_LEN,
    MIN_EVERY,
};
pub use record::ScheduleInfo;
pub use scheduler::{
    Scheduler, SchedulerPass, SchedulerReport, DEFAULT_SCHEDULER_BATCH, DEFAULT_SCHEDULER_MAX_IDLE,
};
pub use spec::{Misfire, Schedule, SKIP_GRACE};
pub use store::MAX_SCHEDULE_NAME;
