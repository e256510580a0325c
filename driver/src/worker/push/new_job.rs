//! What a typed job carries when it is enqueued: the one definition every
//! typed push, typed bulk push and workflow member (`Batch::typed_job`)
//! builds its [`NewJob`] from, so none of them can drop a setting the type
//! declares.

use crate::worker::TypedJob;
use crate::{NewJob, QueueError};

impl NewJob {
    /// A typed job as a [`NewJob`], carrying everything its type declares:
    /// its [`NAME`](TypedJob::NAME), [`MAX_ATTEMPTS`](TypedJob::MAX_ATTEMPTS),
    /// [`BACKOFF`](TypedJob::BACKOFF) (as its reclaim backoff),
    /// [`RETRY_WINDOW`](TypedJob::RETRY_WINDOW), and its priority, dedup key,
    /// ordering key and limit key. The usual options may then be set on it,
    /// and replace the type's where both set one.
    ///
    /// This is what `push` sends; `push_with` hands it to a closure before
    /// sending it, and [`RedisQueue::add`](crate::RedisQueue::add) or
    /// [`RedisQueue::add_batch`](crate::RedisQueue::add_batch) take it as
    /// is (onto [`TypedJob::QUEUE`], for a worker to find it by name).
    ///
    /// Fails, with nothing written anywhere, when the job does not serialize
    /// to JSON (a map with keys that are not strings, a `Serialize` impl
    /// that errs).
    ///
    /// ```no_run
    /// # use redq::worker::{JobCx, JobError, TypedJob};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Serialize, Deserialize)]
    /// # struct SendDigest { user_id: i64 }
    /// # impl TypedJob for SendDigest {
    /// #     const NAME: &'static str = "acme.blog::send_digest";
    /// #     async fn run(&self, _: &JobCx) -> Result<(), JobError> { Ok(()) }
    /// # }
    /// # async fn demo(queue: redq::RedisQueue) -> Result<(), redq::QueueError> {
    /// use std::time::Duration;
    /// use redq::NewJob;
    ///
    /// // Twenty digests, each a minute after the one before.
    /// let jobs = (0..20)
    ///     .map(|n| {
    ///         let job = NewJob::typed(&SendDigest { user_id: n })?;
    ///         Ok(job.delay(Duration::from_secs(60 * n as u64)))
    ///     })
    ///     .collect::<Result<Vec<_>, redq::QueueError>>()?;
    /// queue.add_batch(SendDigest::QUEUE, jobs).await?;
    /// # Ok(()) }
    /// ```
    pub fn typed<T: TypedJob>(job: &T) -> Result<NewJob, QueueError> {
        new_job(job)
    }
}

/// The enqueue options a typed job carries ([`NewJob::typed`]).
pub(crate) fn new_job<T: TypedJob>(job: &T) -> Result<NewJob, QueueError> {
    let mut new = NewJob::new(payload(job)?)
        .name(T::NAME)
        .max_attempts(T::MAX_ATTEMPTS)
        .reclaim_backoff(T::BACKOFF)
        .priority(job.priority());
    if let Some(window) = T::RETRY_WINDOW {
        new = new.retry_window(window);
    }
    if let Some(key) = job.dedup_key() {
        new = new.dedup_key(key);
    }
    if let Some(key) = job.ordering_key() {
        new = new.ordering_key(key);
    }
    if let Some(key) = job.limit_key() {
        new = new.limit_key(key);
    }
    Ok(new)
}

/// Every job of a typed bulk push, or the first that does not serialize,
/// named by its place in the batch so the caller can find it among many.
pub(crate) fn new_jobs<T: TypedJob>(jobs: &[T]) -> Result<Vec<NewJob>, QueueError> {
    jobs.iter()
        .enumerate()
        .map(|(index, job)| {
            new_job(job).map_err(|e| match e {
                QueueError::Invalid { what, value, rule } => QueueError::Invalid {
                    what,
                    value: format!("{value}, number {} of {}", index + 1, jobs.len()),
                    rule,
                },
                other => other,
            })
        })
        .collect()
}

/// A typed job's payload: the struct itself, as JSON.
pub(crate) fn payload<T: TypedJob>(job: &T) -> Result<serde_json::Value, QueueError> {
    serde_json::to_value(job).map_err(|e| {
        QueueError::invalid(
            "job",
            T::NAME,
            format!("a job that serializes to JSON ({e})"),
        )
    })
}
