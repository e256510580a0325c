//! A schedule of a typed job: its queue, name, payload and settings taken
//! from the type, as a push takes them. Here, in the worker module, rather
//! than beside [`Schedule`]'s other constructors: the worker module
//! depends on the schedules (its scheduler duty), and this keeps it one
//! way.

use super::TypedJob;
use crate::schedule::Schedule;

impl Schedule {
    /// A schedule whose every tick enqueues `job`, a typed job: its queue,
    /// type name, payload, priority, attempt ceiling and retry window are
    /// the type's ([`TypedJob`](crate::worker::TypedJob)), as
    /// [`push`](crate::RedisQueue::push) would send them, so a typed
    /// worker runs it and nothing is copied by hand. Its dedup, ordering
    /// and limit keys are not carried (a schedule's jobs have none), nor its
    /// reclaim backoff. Fails, with nothing written, when the job does not
    /// serialize to JSON.
    ///
    /// ```
    /// # use redq::worker::{JobCx, JobError, TypedJob};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Serialize, Deserialize)]
    /// # struct PollFeeds { source: String }
    /// # impl TypedJob for PollFeeds {
    /// #     const NAME: &'static str = "feeds::poll";
    /// #     const QUEUE: &'static str = "feeds";
    /// #     async fn run(&self, _: &JobCx) -> Result<(), JobError> { Ok(()) }
    /// # }
    /// use redq::schedule::Schedule;
    ///
    /// let job = PollFeeds { source: "blogs".into() };
    /// let poll = Schedule::of_job("poll-blogs", "@every 5m", &job)?;
    /// # Ok::<(), redq::QueueError>(())
    /// ```
    pub fn of_job<T: TypedJob>(
        name: impl Into<String>,
        expression: impl Into<String>,
        job: &T,
    ) -> Result<Self, crate::QueueError> {
        let mut schedule = Schedule::new(name, T::QUEUE, expression)
            .payload(super::push::payload(job)?)
            .job_name(T::NAME)
            .priority(job.priority())
            .max_attempts(T::MAX_ATTEMPTS);
        if let Some(window) = T::RETRY_WINDOW {
            schedule = schedule.retry_window(window);
        }
        Ok(schedule)
    }
}
