//! Operator calls over every shard: the [`Operator`](crate::Operator)'s,
//! under the names [`RedisQueue`](crate::RedisQueue) gives them, so code
//! that holds a `ShardedQueue` needs no other type. Written once, in
//! `operator/`.

use super::ShardedQueue;
use crate::flow::{Limit, LimitScope, QueueLimits};
use crate::{JobRecord, QueueCounts, QueueError};

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

    /// Everything about one job, from whichever shard holds it.
    pub async fn inspect(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        self.operator().inspect(id).await
    }

    crate::dead_forms::dead_letter_forms!(operator);

    /// Pause `queue` in every shard.
    pub async fn pause(&self, queue: &str) -> Result<(), QueueError> {
        self.operator().pause(queue).await
    }

    /// Resume `queue` in every shard.
    pub async fn resume(&self, queue: &str) -> Result<(), QueueError> {
        self.operator().resume(queue).await
    }

    /// Set `queue`'s limit for `scope`: a queue-wide limit split into one
    /// share per shard, the others on every shard (see
    /// [`Operator::set_limit`](crate::Operator::set_limit)).
    pub async fn set_limit(
        &self,
        queue: &str,
        scope: LimitScope,
        limit: Limit,
    ) -> Result<bool, QueueError> {
        self.operator().set_limit(queue, scope, limit).await
    }

    /// Clear `queue`'s limit for `scope` on every shard.
    pub async fn clear_limit(&self, queue: &str, scope: LimitScope) -> Result<bool, QueueError> {
        self.operator().clear_limit(queue, scope).await
    }

    /// `queue`'s limits and use over every shard, the shares added up.
    pub async fn limits(&self, queue: &str) -> Result<QueueLimits, QueueError> {
        self.operator().limits(queue).await
    }

    /// Every queue with limits on any shard, sorted.
    pub async fn limited_queues(&self) -> Result<Vec<String>, QueueError> {
        self.operator().limited_queues().await
    }
}
