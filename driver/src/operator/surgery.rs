//! Job surgery over every shard: a job id is on one shard, so a change by
//! id is tried on each until the shard holding the job answers (the others
//! answer "no such job"); a bulk change goes over every shard in turn, its
//! progress counted over all of them. See [`crate::surgery`].

use super::Operator;
use crate::surgery::{Bulk, DeadLettered, IfLeased, RetriedNow};
use crate::{JobState, QueueError, RedisQueue};

impl Operator {
    /// [`RedisQueue::promote`] on the shard that holds job `id`.
    pub async fn promote(&self, id: &str) -> Result<(), QueueError> {
        self.on_holder(id, |shard| async move { shard.promote(id).await })
            .await
    }

    /// [`RedisQueue::retry_now`] on the shard that holds job `id`.
    pub async fn retry_now(&self, id: &str) -> Result<RetriedNow, QueueError> {
        self.on_holder(id, |shard| async move { shard.retry_now(id).await })
            .await
    }

    /// [`RedisQueue::delete_job`] on the shard that holds job `id`.
    pub async fn delete_job(&self, id: &str, if_leased: IfLeased) -> Result<(), QueueError> {
        self.delete_job_reported(id, if_leased).await.map(|_| ())
    }

    /// [`RedisQueue::delete_job_reported`] on the shard that holds job
    /// `id` or what was kept of it: `None` for a live job, the outcome for
    /// a finished one's kept record or tombstone.
    pub async fn delete_job_reported(
        &self,
        id: &str,
        if_leased: IfLeased,
    ) -> Result<Option<JobState>, QueueError> {
        self.on_holder(id, |shard| async move {
            shard.delete_job_reported(id, if_leased).await
        })
        .await
    }

    /// [`RedisQueue::dead_letter_job`] on the shard that holds job `id`.
    pub async fn dead_letter_job(
        &self,
        id: &str,
        reason: &str,
    ) -> Result<DeadLettered, QueueError> {
        self.on_holder(id, |shard| async move {
            shard.dead_letter_job(id, reason).await
        })
        .await
    }

    /// [`RedisQueue::edit_payload`] on the shard that holds job `id`.
    pub async fn edit_payload(
        &self,
        id: &str,
        payload: &serde_json::Value,
    ) -> Result<JobState, QueueError> {
        self.on_holder(
            id,
            |shard| async move { shard.edit_payload(id, payload).await },
        )
        .await
    }

    /// [`RedisQueue::promote_all`] over every shard.
    pub async fn promote_all(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_surgery(Bulk::Promote, queue, progress).await
    }

    /// [`RedisQueue::retry_all_now`] over every shard.
    pub async fn retry_all_now(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_surgery(Bulk::RetryNow, queue, progress).await
    }

    /// [`RedisQueue::delete_all`] over every shard.
    pub async fn delete_all(
        &self,
        queue: &str,
        state: JobState,
        if_leased: IfLeased,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_surgery(Bulk::Delete(state, if_leased), queue, progress)
            .await
    }

    /// `change` on each shard in turn until one holds the job.
    async fn on_holder<'a, T, F, Fut>(&'a self, id: &str, change: F) -> Result<T, QueueError>
    where
        F: Fn(&'a RedisQueue) -> Fut,
        Fut: std::future::Future<Output = Result<T, QueueError>>,
    {
        let mut last = QueueError::JobNotFound { id: id.to_owned() };
        for shard in self.shards() {
            match change(shard).await {
                Err(err @ QueueError::JobNotFound { .. }) => last = err,
                other => return other,
            }
        }
        Err(last)
    }

    /// Each shard drained in turn; "left" includes what the shards not yet
    /// reached held at the start.
    async fn drain_surgery(
        &self,
        bulk: Bulk,
        queue: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        if let [one] = self.shards() {
            return one.drain_surgery(bulk, queue, progress).await;
        }
        let mut reach = Vec::new();
        for shard in self.shards() {
            reach.push(bulk.reach(&shard.counts(queue).await?));
        }
        let mut done = 0;
        for (i, shard) in self.shards().iter().enumerate() {
            let later: u64 = reach.iter().skip(i + 1).sum();
            let before = done;
            let report = |d: u64, left: u64| progress(before + d, left + later);
            done += shard.drain_surgery(bulk, queue, report).await?;
        }
        Ok(done)
    }
}
