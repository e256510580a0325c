//! Cancels and kept results over every shard. A job id lives on one shard:
//! a cancel or a lookup by id asks each shard in turn until one knows the
//! job; bulk cancels and retention changes go to every shard, with
//! progress counted over all of them.

use std::time::Duration;

use super::Operator;
use crate::kept::{
    CancelOutcome, DeadBound, DeadBoundSet, DeadBoundState, JobResult, KeptJob, Outcome, Retention,
    RetentionState,
};
use crate::{JobState, Page, QueueError};

impl Operator {
    /// Cancel job `id`, on the shard that holds it (see
    /// [`RedisQueue::cancel`](crate::RedisQueue::cancel)).
    pub async fn cancel(&self, id: &str, by: &str) -> Result<CancelOutcome, QueueError> {
        for shard in self.shards() {
            let outcome = shard.cancel(id, by).await?;
            if outcome != CancelOutcome::NotFound {
                return Ok(outcome);
            }
        }
        Ok(CancelOutcome::NotFound)
    }

    /// Cancel every job of `queue` in `state` on every shard, in batches;
    /// `progress(done, left)` counts over all shards. Returns how many.
    pub async fn cancel_all(
        &self,
        queue: &str,
        state: JobState,
        by: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        let mut waiting_shards = Vec::new();
        if self.shards().len() > 1 {
            for shard in self.shards() {
                waiting_shards.push(crate::QueueCounts::cancellable_in(
                    &shard.counts(queue).await?,
                    state,
                )?);
            }
        }
        let mut done = 0;
        for (i, shard) in self.shards().iter().enumerate() {
            let later: u64 = waiting_shards.iter().skip(i + 1).sum();
            let before = done;
            let report = |d: u64, left: u64| progress(before + d, left + later);
            done += shard.cancel_all(queue, state, by, report).await?;
        }
        Ok(done)
    }

    /// What became of job `id`: from the shard that knows it.
    pub async fn result(&self, id: &str) -> Result<JobResult, QueueError> {
        for shard in self.shards() {
            let result = shard.result(id).await?;
            if result != JobResult::Unknown {
                return Ok(result);
            }
        }
        Ok(JobResult::Unknown)
    }

    /// Wait up to `timeout` for job `id` to finish, on the shard that holds
    /// it (see [`RedisQueue::wait_for`](crate::RedisQueue::wait_for)).
    pub async fn wait_for(&self, id: &str, timeout: Duration) -> Result<JobResult, QueueError> {
        for shard in self.shards() {
            if shard.result(id).await? != JobResult::Unknown {
                return shard.wait_for(id, timeout).await;
            }
        }
        Ok(JobResult::Unknown)
    }

    /// What `queue` keeps, summed over the shards.
    pub async fn retention(&self, queue: &str) -> Result<RetentionState, QueueError> {
        let mut total: Option<RetentionState> = None;
        for shard in self.shards() {
            let state = shard.retention(queue).await?;
            total = Some(match total {
                Some(sum) => sum.plus(state),
                None => state,
            });
        }
        total.ok_or_else(|| QueueError::Protocol("no shards".into()))
    }

    /// Set `queue`'s retention policy on every shard (each shard bounds
    /// its own part: with `n` shards, up to `n` times the count and bytes).
    pub async fn set_retention(&self, queue: &str, policy: &Retention) -> Result<(), QueueError> {
        for shard in self.shards() {
            shard.set_retention(queue, policy).await?;
        }
        Ok(())
    }

    /// Clear `queue`'s policy and forget what it keeps, on every shard.
    pub async fn clear_retention(
        &self,
        queue: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        let mut done = 0;
        for shard in self.shards() {
            let before = done;
            done += shard
                .clear_retention(queue, |d, left| progress(before + d, left))
                .await?;
        }
        Ok(done)
    }

    /// A page of `queue`'s kept jobs with `outcome`, newest first, merged
    /// over the shards (each read for its first `offset + limit`).
    pub async fn list_kept(
        &self,
        queue: &str,
        outcome: Outcome,
        offset: u64,
        limit: usize,
    ) -> Result<Page<KeptJob>, QueueError> {
        if let [one] = self.shards() {
            return one.list_kept(queue, outcome, offset, limit).await;
        }
        let window = (offset as usize).saturating_add(limit);
        if limit == 0 || window > 1000 {
            return Err(QueueError::invalid(
                "offset + limit",
                window.to_string(),
                "1 to 1000 when several shards are merged",
            ));
        }
        let mut total = 0;
        let mut lists = Vec::new();
        for shard in self.shards() {
            let page = shard.list_kept(queue, outcome, 0, window).await?;
            total += page.total;
            lists.push(page.items);
        }
        // Newest first, ties as a shard's sorted set gives them (the
        // greater id first).
        let merged = super::merge::merge_heads(lists, window, |a: &KeptJob, b: &KeptJob| {
            b.finished_at
                .cmp(&a.finished_at)
                .then_with(|| b.id.cmp(&a.id))
        });
        let items = merged
            .into_iter()
            .skip(offset as usize)
            .take(limit)
            .collect();
        Ok(Page { total, items })
    }
}

/// The dead-letter bound over every shard: each shard bounds its own dead
/// letters (with `n` shards, up to `n` times the count).
impl Operator {
    /// `queue`'s dead-letter bound (the first shard's that has one) and its
    /// dead letters summed over the shards.
    pub async fn dead_bound(&self, queue: &str) -> Result<DeadBoundState, QueueError> {
        let mut total = DeadBoundState {
            bound: None,
            dead: 0,
        };
        for shard in self.shards() {
            let state = shard.dead_bound(queue).await?;
            total.bound = total.bound.or(state.bound);
            total.dead += state.dead;
        }
        Ok(total)
    }

    /// Set `queue`'s dead-letter bound on every shard, each trimming at
    /// once: the bound replaced (the first shard's that had one) and the
    /// dead letters deleted over all shards.
    pub async fn set_dead_bound(
        &self,
        queue: &str,
        bound: &DeadBound,
    ) -> Result<DeadBoundSet, QueueError> {
        let mut total = DeadBoundSet {
            replaced: None,
            trimmed: 0,
        };
        for shard in self.shards() {
            let set = shard.set_dead_bound(queue, bound).await?;
            total.replaced = total.replaced.or(set.replaced);
            total.trimmed += set.trimmed;
        }
        Ok(total)
    }

    /// Remove `queue`'s dead-letter bound on every shard: the bound it had
    /// (the first shard's that had one).
    pub async fn clear_dead_bound(&self, queue: &str) -> Result<Option<DeadBound>, QueueError> {
        let mut had = None;
        for shard in self.shards() {
            had = had.or(shard.clear_dead_bound(queue).await?);
        }
        Ok(had)
    }

    /// Delete now the dead letters past `queue`'s bound, on every shard:
    /// how many.
    pub async fn trim_dead(&self, queue: &str) -> Result<u64, QueueError> {
        let mut trimmed = 0;
        for shard in self.shards() {
            trimmed += shard.trim_dead(queue).await?;
        }
        Ok(trimmed)
    }
}
