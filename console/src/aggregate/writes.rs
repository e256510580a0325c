//! Changes over every shard. A dead letter lives on one shard, so a change
//! by id is offered to each shard and counted where it was found (absent
//! ids count as not found there); bulk changes, pause and resume go to
//! every shard; an enqueue goes where the driver's `ShardedQueue` routes
//! it. Each shard's part is the driver's own atomic script.

use redq::{DeadLetterReport, Enqueued, NewJob, QueueError, RedisQueue};

use super::Target;

impl Target {
    /// Requeue these dead letters of `queue`, on whichever shard holds them,
    /// their attempt counters set to `attempts` (usually 0).
    pub async fn requeue_dead(
        &self,
        queue: &str,
        ids: &[String],
        attempts: u32,
    ) -> Result<DeadLetterReport, QueueError> {
        self.by_ids(queue, ids, DeadChange::Requeue { attempts })
            .await
    }

    /// Delete these dead letters of `queue`, on whichever shard holds them.
    pub async fn delete_dead(
        &self,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        self.by_ids(queue, ids, DeadChange::Delete).await
    }

    async fn by_ids(
        &self,
        queue: &str,
        ids: &[String],
        change: DeadChange,
    ) -> Result<DeadLetterReport, QueueError> {
        let mut total = DeadLetterReport::default();
        for shard in self.shards() {
            let report = match change {
                DeadChange::Requeue { attempts } => {
                    shard
                        .requeue_dead_with_attempts(queue, ids, attempts)
                        .await?
                }
                DeadChange::Delete => shard.delete_dead(queue, ids).await?,
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
    /// bounded batches, their attempt counters set to `attempts`;
    /// `progress(done, left)` counts over all shards.
    pub async fn requeue_all_dead(
        &self,
        queue: &str,
        attempts: u32,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain(queue, DeadChange::Requeue { attempts }, progress)
            .await
    }

    /// Delete every dead letter of `queue` on every shard, as
    /// [`Target::requeue_all_dead`] does.
    pub async fn purge_dead(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain(queue, DeadChange::Delete, progress).await
    }

    async fn drain(
        &self,
        queue: &str,
        change: DeadChange,
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
            done += drain_one(shard, queue, change, report).await?;
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

/// What a change of dead letters does to each.
#[derive(Clone, Copy)]
enum DeadChange {
    Requeue { attempts: u32 },
    Delete,
}

async fn drain_one(
    shard: &RedisQueue,
    queue: &str,
    change: DeadChange,
    progress: impl FnMut(u64, u64),
) -> Result<u64, QueueError> {
    match change {
        DeadChange::Requeue { attempts } => {
            shard
                .requeue_all_dead_with_attempts(queue, attempts, progress)
                .await
        }
        DeadChange::Delete => shard.purge_dead(queue, progress).await,
    }
}
