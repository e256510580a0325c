//! Operator calls over every shard: sums, merges and fan-outs of the
//! one-namespace calls in `admin.rs`.

use std::collections::BTreeSet;

use super::ShardedQueue;
use crate::{DeadLetterReport, JobRecord, Page, QueueCounts, QueueError};

impl ShardedQueue {
    /// Every queue enqueued to in any shard, sorted.
    pub async fn queues(&self) -> Result<Vec<String>, QueueError> {
        let mut names = BTreeSet::new();
        for shard in self.shards() {
            names.extend(shard.queues().await?);
        }
        Ok(names.into_iter().collect())
    }

    /// The queue's size by state, summed over the shards (each shard's part
    /// is an atomic snapshot; the sum is not one instant). `paused` is true
    /// when any shard is paused; the head is the oldest of the shards' heads.
    pub async fn counts(&self, queue: &str) -> Result<QueueCounts, QueueError> {
        let all =
            futures::future::try_join_all(self.shards().iter().map(|s| s.counts(queue))).await?;
        let total = all.into_iter().reduce(QueueCounts::plus);
        total.ok_or_else(|| QueueError::Protocol("a sharded queue has no shards".into()))
    }

    /// Dead letters of `queue` over every shard, newest first. Each shard is
    /// asked for its first `offset + count` (at most 1000 in all), merged by
    /// time of death.
    pub async fn dead_letters(
        &self,
        queue: &str,
        offset: u64,
        count: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        let window = (offset as usize).saturating_add(count);
        crate::limits::check_limit("page end", window.max(1), 1000)?;
        let mut total = 0;
        let mut items = Vec::new();
        for shard in self.shards() {
            let page = shard.dead_letters(queue, 0, window.max(1)).await?;
            total += page.total;
            items.extend(page.items);
        }
        items.sort_by(|a, b| b.died_at.cmp(&a.died_at).then_with(|| a.id.cmp(&b.id)));
        let items = items
            .into_iter()
            .skip(offset as usize)
            .take(count)
            .collect();
        Ok(Page { total, items })
    }

    /// Everything about one job, from whichever shard holds it.
    pub async fn inspect(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        for shard in self.shards() {
            if let Some(record) = shard.inspect(id).await? {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// Requeue these dead letters of `queue`, wherever they are. An id is
    /// `not_found` only if no shard had it.
    pub async fn requeue_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        let mut total = DeadLetterReport::default();
        for shard in self.shards() {
            let report = shard.requeue_dead(queue, ids).await?;
            total.done += report.done;
            total.dead_left += report.dead_left;
        }
        total.not_found = (ids.len() as u64).saturating_sub(total.done);
        Ok(total)
    }

    /// Requeue every dead letter of `queue` in every shard; the number
    /// requeued.
    pub async fn requeue_all_dead(&self, queue: &str) -> Result<u64, QueueError> {
        let mut done = 0;
        for shard in self.shards() {
            done += shard.requeue_all_dead(queue, |_, _| {}).await?;
        }
        Ok(done)
    }

    /// Pause `queue` in every shard.
    pub async fn pause(&self, queue: &str) -> Result<(), QueueError> {
        for shard in self.shards() {
            shard.pause(queue).await?;
        }
        Ok(())
    }

    /// Resume `queue` in every shard.
    pub async fn resume(&self, queue: &str) -> Result<(), QueueError> {
        for shard in self.shards() {
            shard.resume(queue).await?;
        }
        Ok(())
    }
}
