//! Limits over one namespace or the shards of a `ShardedQueue` (see
//! "Sharded queues" in [`crate::flow`]): a queue-wide limit is split into
//! one share per shard, each-key and one-key limits go to every shard, and
//! reads add the shards back up.

use futures::future::try_join_all;

use super::Operator;
use crate::flow::{shares, Limit, LimitScope, QueueLimits};
use crate::limits::check_queue_name;
use crate::QueueError;

impl Operator {
    /// Set `queue`'s limit for `scope` on every shard (see
    /// [`RedisQueue::set_limit`](crate::RedisQueue::set_limit)); whether
    /// any shard changed. A queue-wide limit is split: each shard enforces
    /// its share, the shares sum to the limit, and a limit smaller than the
    /// shard count is refused. Everything is checked before anything is
    /// written; a shard failing midway leaves the shards before it changed
    /// (setting the same limit again completes it).
    pub async fn set_limit(
        &self,
        queue: &str,
        scope: LimitScope,
        limit: Limit,
    ) -> Result<bool, QueueError> {
        check_queue_name(queue)?;
        scope.validate()?;
        let per_shard = match scope {
            LimitScope::Queue => limit.shares(self.shards().len())?,
            LimitScope::EachKey | LimitScope::Key(_) => {
                limit.validate()?;
                vec![limit; self.shards().len()]
            }
        };
        let mut changed = false;
        for (shard, limit) in self.shards().iter().zip(per_shard) {
            changed |= shard.set_limit(queue, scope.clone(), limit).await?;
        }
        Ok(changed)
    }

    /// Clear `queue`'s limit for `scope` on every shard.
    pub async fn clear_limit(&self, queue: &str, scope: LimitScope) -> Result<bool, QueueError> {
        self.set_limit(queue, scope, Limit::none()).await
    }

    /// `queue`'s limits and their use, read from every shard and added up:
    /// the queue-wide shares as one limit, use summed, each key once (see
    /// [`RedisQueue::limits`](crate::RedisQueue::limits)). Each shard's
    /// part is its own snapshot; the sum is not one instant.
    pub async fn limits(&self, queue: &str) -> Result<QueueLimits, QueueError> {
        self.limits_up_to(queue, crate::flow::MAX_LISTED_KEYS).await
    }

    /// [`Operator::limits`] reading at most about `max_keys` keys a shard
    /// (see [`RedisQueue::limits_up_to`](crate::RedisQueue::limits_up_to)).
    pub async fn limits_up_to(
        &self,
        queue: &str,
        max_keys: usize,
    ) -> Result<QueueLimits, QueueError> {
        let parts = try_join_all(
            self.shards()
                .iter()
                .map(|s| s.limits_up_to(queue, max_keys)),
        )
        .await?;
        shares::merged(parts).ok_or_else(|| QueueError::Protocol("no shards".into()))
    }

    /// [`RedisQueue::limits_of_key`](crate::RedisQueue::limits_of_key)
    /// over every shard, added up (the key is used on one shard only): what
    /// a held job's detail reads to say why it is held.
    pub async fn limits_of_key(&self, queue: &str, key: &str) -> Result<QueueLimits, QueueError> {
        let parts = try_join_all(self.shards().iter().map(|s| s.limits_of_key(queue, key))).await?;
        shares::merged(parts).ok_or_else(|| QueueError::Protocol("no shards".into()))
    }

    /// Every queue with limits on any shard, sorted.
    pub async fn limited_queues(&self) -> Result<Vec<String>, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.limited_queues())).await?;
        let names: std::collections::BTreeSet<String> = all.into_iter().flatten().collect();
        Ok(names.into_iter().collect())
    }
}
