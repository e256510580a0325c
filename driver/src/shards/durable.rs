//! Durable enqueue over shards: the job goes to the shard it would go to
//! anyway, and that shard's primary is asked to `WAIT` for its replicas.
//! Each shard is its own slot on its own primary, so only the one that took
//! the job has anything to wait for.

use std::time::Duration;

use super::ShardedQueue;
use crate::{Durable, NewJob, QueueError};

impl ShardedQueue {
    /// Enqueue `job` on its shard (routed as [`ShardedQueue::add`]), then
    /// wait up to `timeout` until `replicas` replicas of that shard's
    /// primary hold it; see [`RedisQueue::add_durable`](crate::RedisQueue::add_durable)
    /// for what this does and does not promise, and give durable enqueues
    /// their own handle (`pool_size(1)` on the builder) so claims and acks
    /// never wait behind a `WAIT`.
    pub async fn add_durable(
        &self,
        queue: &str,
        job: NewJob,
        replicas: u32,
        timeout: Duration,
    ) -> Result<Durable, QueueError> {
        let shard = self.route(&job, self.next_unkeyed());
        self.inner.shards[shard]
            .add_durable(queue, job, replicas, timeout)
            .await
    }
}
