//! Typed pushes on each backend: one job, one job with options, many jobs.
//! Each builds its jobs with [`NewJob::typed`] and sends them with the
//! backend's own enqueue, so a typed push means what an `add` of the same
//! [`NewJob`] means.

use super::new_job::{new_job, new_jobs};
use super::Pushed;
use crate::worker::TypedJob;
use crate::{MemoryQueue, NewJob, QueueError, RedisQueue, ShardedQueue};

impl RedisQueue {
    /// Push a typed job onto `T::QUEUE` with everything its type declares
    /// ([`NewJob::typed`]). Pushing a type no local worker registered is
    /// fine: another service may run it.
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        self.push_with(job, |new| new).await
    }

    /// Push a typed job as [`RedisQueue::push`] does, after `options` set
    /// more on it: a delay, another priority, an ordering key, anything a
    /// [`NewJob`] takes. What `options` sets replaces what the type
    /// declares; what it leaves alone stays the type's.
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
    ///
    /// let digest = SendDigest { user_id: 7 };
    /// queue.push_with(&digest, |job| job.delay(Duration::from_secs(3600)).priority(9)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn push_with<T: TypedJob>(
        &self,
        job: &T,
        options: impl FnOnce(NewJob) -> NewJob,
    ) -> Result<Pushed, QueueError> {
        let new = options(new_job(job)?);
        Ok(self.add(T::QUEUE, new).await?.into())
    }

    /// Push many typed jobs onto `T::QUEUE`, each as [`RedisQueue::push`]
    /// would, with one [`RedisQueue::add_batch`]: one round trip for up to
    /// [`crate::limits::ENQUEUE_CHUNK`] jobs, every job serialized and
    /// checked before any is written, outcomes in input order. A job whose
    /// dedup key a pending job holds (one pushed earlier, or earlier in this
    /// batch) is [`Pushed::Duplicate`] of that job.
    ///
    /// For options that differ from job to job, build each with
    /// [`NewJob::typed`] and send them with `add_batch`.
    pub async fn push_batch<T: TypedJob>(&self, jobs: &[T]) -> Result<Vec<Pushed>, QueueError> {
        let outcomes = self.add_batch(T::QUEUE, new_jobs(jobs)?).await?;
        Ok(outcomes.into_iter().map(Pushed::from).collect())
    }
}

impl ShardedQueue {
    /// Push a typed job onto `T::QUEUE`, as [`RedisQueue::push`] does, on
    /// the shard its ordering key (else its limit key, else its dedup key)
    /// routes to, or the next shard in turn when it has none (see
    /// [`ShardedQueue::add`]).
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        self.push_with(job, |new| new).await
    }

    /// [`RedisQueue::push_with`], routed as [`ShardedQueue::push`] routes
    /// (by the keys the job has once `options` has set its own).
    pub async fn push_with<T: TypedJob>(
        &self,
        job: &T,
        options: impl FnOnce(NewJob) -> NewJob,
    ) -> Result<Pushed, QueueError> {
        let new = options(new_job(job)?);
        Ok(self.add(T::QUEUE, new).await?.into())
    }

    /// [`RedisQueue::push_batch`] with [`ShardedQueue::add_batch`]: keyed
    /// jobs to their key's shard, the rest to the next shard in turn, one
    /// round trip per shard the batch touches.
    pub async fn push_batch<T: TypedJob>(&self, jobs: &[T]) -> Result<Vec<Pushed>, QueueError> {
        let outcomes = self.add_batch(T::QUEUE, new_jobs(jobs)?).await?;
        Ok(outcomes.into_iter().map(Pushed::from).collect())
    }
}

impl MemoryQueue {
    /// Push a typed job onto `T::QUEUE` with its name, `MAX_ATTEMPTS` and
    /// ordering key, for a [`Worker`](crate::worker::Worker) over this
    /// queue. What a `MemoryQueue` does not keep is ignored: priority, dedup
    /// key, limit key, retry window and backoff (see [`MemoryQueue`]), so a
    /// push is always `Queued`.
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        self.push_with(job, |new| new).await
    }

    /// [`MemoryQueue::push`] after `options` set more on the job. It keeps
    /// what `push` keeps (an ordering key set here included) and refuses,
    /// with nothing queued, an option that says when the job may run (a
    /// delay, a start time, jobs to wait for): this queue would run it at
    /// once, which no test should mistake for the real thing.
    pub async fn push_with<T: TypedJob>(
        &self,
        job: &T,
        options: impl FnOnce(NewJob) -> NewJob,
    ) -> Result<Pushed, QueueError> {
        let new = options(new_job(job)?);
        let id = self.push_typed(T::QUEUE, vec![new])?.remove(0);
        Ok(Pushed::Queued { id })
    }

    /// Push many typed jobs as [`MemoryQueue::push`] does, all checked
    /// before any is queued.
    pub async fn push_batch<T: TypedJob>(&self, jobs: &[T]) -> Result<Vec<Pushed>, QueueError> {
        let ids = self.push_typed(T::QUEUE, new_jobs(jobs)?)?;
        Ok(ids.into_iter().map(|id| Pushed::Queued { id }).collect())
    }
}
