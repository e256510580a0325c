//! Changes over every shard. A dead letter lives on one shard, so a change
//! by id is offered to each shard and counted where it was found (absent
//! ids count as not found there); bulk changes, pause and resume go to
//! every shard; an enqueue goes where the driver's `ShardedQueue` routes
//! it. Each shard's part is the driver's own atomic script.

use redq::{DeadLetterReport, Enqueued, NewJob, QueueError, RedisQueue};

use super::Target;

impl Target {
    /// Requeue these dead letters of `queue`, on whichever shard holds them.
    pub async fn requeue_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.by_ids(queue, ids, true).await
    }

    /// Delete these dead letters of `queue`, on whichever shard holds them.
    pub async fn delete_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.by_ids(queue, ids, false).await
    }

    async fn by_ids(
        &self,
        queue: &str,
        ids: &[String],
        requeue: bool,
    ) -> Result<DeadLetterReport, QueueError> {
        let mut total = DeadLetterReport::default();
        for shard in self.shards() {
            let report = if requeue {
                shard.requeue_dead(queue, ids).await?
            } else {
                shard.delete_dead(queue, ids).await?
            };
            total.done += report.done;
            total.dead_left += report.dead_left;
        }
        // Every shard but the holder reports an id as not found: an id is
        // missing only if no shard took it.
        total.not_found = (ids.len() as u64).saturating_sub(total.done);
        Ok(total)
    }

    /// Requeue every dead letter of `queue` on every shard, in the driver's
    /// bounded batches; `progress(done, left)` counts over all shards.
    pub async fn requeue_all_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain(queue, true, progress).await
    }

    /// Delete every dead letter of `queue` on every shard, as
    /// [`Target::requeue_all_dead`] does.
    pub async fn purge_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain(queue, false, progress).await
    }

    async fn drain(
        &self,
        queue: &str,
        requeue: bool,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        // What the shards not yet reached hold, so "left" covers them too.
        let mut waiting_shards = Vec::new();
        if self.is_sharded() {
            for shard in self.shards() {
                waiting_shards.push(shard.counts(queue).await?.dead);
            }
        }
        let mut done = 0;
        for (i, shard) in self.shards().iter().enumerate() {
            let later: u64 = waiting_shards.iter().skip(i + 1).sum();
            let before = done;
            let report = |d: u64, left: u64| progress(before + d, left + later);
            done += drain_one(shard, queue, requeue, report).await?;
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

    /// Enqueue one job where producers would: with several shards, the
    /// ordering or dedup key's shard, else the next in turn.
    pub async fn add(&self, queue: &str, job: NewJob) -> Result<Enqueued, QueueError> {
        match &self.router {
            Some(router) => router.add(queue, job).await,
            None => self.shards()[0].add(queue, job).await,
        }
    }
}

async fn drain_one(
    shard: &RedisQueue,
    queue: &str,
    requeue: bool,
    progress: impl FnMut(u64, u64),
) -> Result<u64, QueueError> {
    if requeue {
        shard.requeue_all_dead(queue, progress).await
    } else {
        shard.purge_dead(queue, progress).await
    }
}
