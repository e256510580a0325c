//! Operator calls over every shard: the [`Operator`](crate::Operator)'s,
//! under the names [`RedisQueue`](crate::RedisQueue) gives them, so code
//! that holds a `ShardedQueue` needs no other type. Written once, in
//! `operator/`.

use super::ShardedQueue;
use crate::{DeadLetterReport, JobRecord, JobState, Page, QueueCounts, QueueError};

impl ShardedQueue {
    /// Every queue enqueued to in any shard, sorted.
    pub async fn queues(&self) -> Result<Vec<String>, QueueError> {
        self.operator().queues().await
    }

    /// The queue's size by state, summed over the shards (each shard's part
    /// is an atomic snapshot; the sum is not one instant). `paused` is true
    /// when any shard is paused; the head is the oldest of the shards' heads.
    pub async fn counts(&self, queue: &str) -> Result<QueueCounts, QueueError> {
        self.operator().counts(queue).await
    }

    /// A page of the queue's jobs in `state` over every shard, merged in the
    /// order one namespace lists them; see [`Operator::list_jobs`].
    ///
    /// [`Operator::list_jobs`]: crate::Operator::list_jobs
    pub async fn list_jobs(
        &self,
        queue: &str,
        state: JobState,
        offset: u64,
        count: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        self.operator().list_jobs(queue, state, offset, count).await
    }

    /// Dead letters of `queue` over every shard, newest first.
    pub async fn dead_letters(
        &self,
        queue: &str,
        offset: u64,
        count: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        self.operator().dead_letters(queue, offset, count).await
    }

    /// Everything about one job, from whichever shard holds it.
    pub async fn inspect(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        self.operator().inspect(id).await
    }

    /// Requeue these dead letters of `queue`, wherever they are. An id is
    /// `not_found` only if no shard had it.
    pub async fn requeue_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.operator().requeue_dead(queue, ids).await
    }

    /// [`requeue_dead`](Self::requeue_dead) with each job's attempt counter
    /// set to `attempts`.
    pub async fn requeue_dead_with_attempts(
        &self,
        queue: &str,
        ids: &[String],
        attempts: u32,
    ) -> Result<DeadLetterReport, QueueError> {
        self.operator()
            .requeue_dead_with_attempts(queue, ids, attempts)
            .await
    }

    /// Delete these dead letters of `queue`, wherever they are.
    pub async fn delete_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.operator().delete_dead(queue, ids).await
    }

    /// Requeue every dead letter of `queue` in every shard; `progress` is
    /// told (done, left) over all shards. The number requeued.
    pub async fn requeue_all_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.operator().requeue_all_dead(queue, progress).await
    }

    /// [`requeue_all_dead`](Self::requeue_all_dead) with each job's attempt
    /// counter set to `attempts`.
    pub async fn requeue_all_dead_with_attempts(
        &self,
        queue: &str,
        attempts: u32,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.operator()
            .requeue_all_dead_with_attempts(queue, attempts, progress)
            .await
    }

    /// Delete every dead letter of `queue` in every shard; `progress` as
    /// for [`requeue_all_dead`](Self::requeue_all_dead).
    pub async fn purge_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.operator().purge_dead(queue, progress).await
    }

    /// Pause `queue` in every shard.
    pub async fn pause(&self, queue: &str) -> Result<(), QueueError> {
        self.operator().pause(queue).await
    }

    /// Resume `queue` in every shard.
    pub async fn resume(&self, queue: &str) -> Result<(), QueueError> {
        self.operator().resume(queue).await
    }
}
