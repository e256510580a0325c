//! Changes over every shard. A dead letter lives on one shard, so a change
//! by id is offered to each shard and counted where it was found (absent
//! ids count as not found there); bulk changes, pause and resume go to
//! every shard; an enqueue goes where [`ShardedQueue`](crate::ShardedQueue)
//! routes it. Each shard's part is the driver's own atomic script.

use super::Operator;
use crate::{DeadAction, DeadLetterReport, Enqueued, NewJob, QueueError};

impl Operator {
    /// The by-id change behind the named forms: every shard is offered all
    /// the ids and changes those it holds, so an id is `not_found` only if
    /// no shard had it.
    pub async fn change_dead(
        &self,
        action: DeadAction,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        if let [one] = self.shards() {
            return one.change_dead(action, queue, ids).await;
        }
        let (mut done, mut dead_left) = (0, 0);
        for shard in self.shards() {
            let report = shard.change_dead(action, queue, ids).await?;
            done += report.done;
            dead_left += report.dead_left;
        }
        Ok(DeadLetterReport {
            done,
            // Every shard but the holder reports an id as not found: an id
            // is missing only if no shard took it.
            not_found: (ids.len() as u64).saturating_sub(done),
            dead_left,
        })
    }

    /// The bulk change behind the named forms: each shard drained in turn,
    /// `progress(done, left)` counted over all of them.
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

    // The named forms, on top of the two general calls above.
    crate::dead_forms::dead_letter_forms!();

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
