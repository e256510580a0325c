//! Changes over every shard. A dead letter lives on one shard, so a change
//! by id is offered to each shard and counted where it was found (absent
//! ids count as not found there); bulk changes, pause and resume go to
//! every shard; an enqueue goes where [`ShardedQueue`](crate::ShardedQueue)
//! routes it. Each shard's part is the driver's own atomic script.

use super::Operator;
use crate::{DeadAction, DeadLetterReport, Enqueued, NewJob, QueueError};

impl Operator {
    /// Requeue these dead letters of `queue` (attempts reset to 0), on
    /// whichever shard holds them.
    pub async fn requeue_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.change_dead(DeadAction::Requeue { attempts: 0 }, queue, ids)
            .await
    }

    /// Requeue these dead letters of `queue` with their attempt counters set
    /// to `attempts`; see [`RedisQueue::requeue_dead_with_attempts`].
    ///
    /// [`RedisQueue::requeue_dead_with_attempts`]: crate::RedisQueue::requeue_dead_with_attempts
    pub async fn requeue_dead_with_attempts(
        &self,
        queue: &str,
        ids: &[String],
        attempts: u32,
    ) -> Result<DeadLetterReport, QueueError> {
        self.change_dead(DeadAction::Requeue { attempts }, queue, ids)
            .await
    }

    /// Delete these dead letters of `queue` for good, on whichever shard
    /// holds them.
    pub async fn delete_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.change_dead(DeadAction::Delete, queue, ids).await
    }

    /// Apply `action` to these dead letters of `queue`, wherever they are.
    /// An id is `not_found` only if no shard had it.
    pub async fn change_dead(
        &self,
        action: DeadAction,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        if let [one] = self.shards() {
            return one.change_dead(action, queue, ids).await;
        }
        let mut total = DeadLetterReport::default();
        for shard in self.shards() {
            let report = shard.change_dead(action, queue, ids).await?;
            total.done += report.done;
            total.dead_left += report.dead_left;
        }
        // Every shard but the holder reports an id as not found: an id is
        // missing only if no shard took it.
        total.not_found = (ids.len() as u64).saturating_sub(total.done);
        Ok(total)
    }

    /// Requeue every dead letter of `queue` on every shard (attempts reset
    /// to 0), in the driver's bounded batches; `progress(done, left)` counts
    /// over all shards. The number requeued.
    pub async fn requeue_all_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_dead(DeadAction::Requeue { attempts: 0 }, queue, progress)
            .await
    }

    /// [`requeue_all_dead`](Self::requeue_all_dead), with each job's attempt
    /// counter set to `attempts`.
    pub async fn requeue_all_dead_with_attempts(
        &self,
        queue: &str,
        attempts: u32,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_dead(DeadAction::Requeue { attempts }, queue, progress)
            .await
    }

    /// Delete every dead letter of `queue` on every shard, as
    /// [`requeue_all_dead`](Self::requeue_all_dead) does.
    pub async fn purge_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_dead(DeadAction::Delete, queue, progress).await
    }

    /// Apply `action` to every dead letter of `queue` on every shard, one
    /// shard after the other; `progress(done, left)` counts over all shards.
    pub async fn drain_dead(
        &self,
        action: DeadAction,
        queue: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        // What the shards not yet reached hold, so "left" covers them too.
        let mut waiting_shards = Vec::new();
        if self.shards().len() > 1 {
            for shard in self.shards() {
                waiting_shards.push(shard.counts(queue).await?.dead);
            }
        }
        let mut done = 0;
        for (i, shard) in self.shards().iter().enumerate() {
            let later: u64 = waiting_shards.iter().skip(i + 1).sum();
            let before = done;
            let report = |d: u64, left: u64| progress(before + d, left + later);
            done += shard.drain_dead(action, queue, report).await?;
        }
        Ok(done)
    }

    /// Pause `queue` on every shard (a pause that failed half-way shows as
    /// paused, since any paused shard marks the queue; rerun to finish).
    pub async fn pause(&self, queue: &str) -> Result<(), QueueError> {
        for shard in self.shards() {
            shard.pause(queue).await?;
        }
        Ok(())
    }

    /// Resume `queue` on every shard.
    pub async fn resume(&self, queue: &str) -> Result<(), QueueError> {
        for shard in self.shards() {
            shard.resume(queue).await?;
        }
        Ok(())
    }

    /// Enqueue one job where producers would: with shards, the ordering or
    /// dedup key's shard, else the next in turn.
    pub async fn add(&self, queue: &str, job: NewJob) -> Result<Enqueued, QueueError> {
        match &self.router {
            Some(router) => router.add(queue, job).await,
            None => self.shards()[0].add(queue, job).await,
        }
    }
}
