//! Queue counts kept shard by shard beside their sum: the restart notice
//! compares the jobs of the restarted server's own shards, which the sum
//! over every shard hides.

use futures::future::try_join_all;
use redq::{QueueCounts, QueueError};

use super::Target;

impl Target {
    /// `queue`'s counts summed over the shards, as `Operator::counts` sums
    /// them, and each shard's own, in shard order: the same reads, one
    /// per shard, nothing more.
    pub async fn counts_by_shard(
        &self,
        queue: &str,
    ) -> Result<(QueueCounts, Vec<QueueCounts>), QueueError> {
        let each = try_join_all(self.shards().iter().map(|s| s.counts(queue))).await?;
        let sum = each
            .iter()
            .cloned()
            .reduce(QueueCounts::plus)
            .ok_or_else(|| QueueError::Protocol("no shards".into()))?;
        Ok((sum, each))
    }
}
