//! Schedule changes and lease reclaims over every shard. A schedule lives
//! on one shard (the one it was upserted to), so a change by name is tried
//! on each until one has it; a reclaim goes to every shard, its counts
//! summed.

use super::Operator;
use crate::schedule::{ScheduleChange, Triggered};
use crate::{QueueError, Reclaimed};

impl Operator {
    /// [`RedisQueue::trigger_schedule`](crate::RedisQueue::trigger_schedule)
    /// on the shard that has the schedule.
    pub async fn trigger_schedule(&self, name: &str) -> Result<Triggered, QueueError> {
        for shard in self.shards() {
            let outcome = shard.trigger_schedule(name).await?;
            if outcome != Triggered::NotFound {
                return Ok(outcome);
            }
        }
        Ok(Triggered::NotFound)
    }

    /// [`RedisQueue::pause_schedule`](crate::RedisQueue::pause_schedule) on
    /// the shard that has the schedule.
    pub async fn pause_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        self.on_schedule(|shard| async move { shard.pause_schedule(name).await })
            .await
    }

    /// [`RedisQueue::resume_schedule`](crate::RedisQueue::resume_schedule)
    /// on the shard that has the schedule.
    pub async fn resume_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        self.on_schedule(|shard| async move { shard.resume_schedule(name).await })
            .await
    }

    /// [`RedisQueue::delete_schedule`](crate::RedisQueue::delete_schedule)
    /// on the shard that has the schedule.
    pub async fn delete_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        self.on_schedule(|shard| async move { shard.delete_schedule(name).await })
            .await
    }

    /// [`RedisQueue::reclaim`](crate::RedisQueue::reclaim) on every shard
    /// until none has a lapsed lease of `queue` left (each call bounded by
    /// `limit`), counts summed: what an operator runs when every worker of
    /// a queue has died and nobody is left to reclaim their leases.
    pub async fn reclaim_all(&self, queue: &str, limit: usize) -> Result<Reclaimed, QueueError> {
        let mut total = Reclaimed::default();
        for shard in self.shards() {
            loop {
                let step = shard.reclaim(queue, limit).await?;
                total.requeued += step.requeued;
                total.dead_lettered += step.dead_lettered;
                if step.still_lapsed == 0 || step.requeued + step.dead_lettered == 0 {
                    total.still_lapsed += step.still_lapsed;
                    break;
                }
            }
        }
        Ok(total)
    }

    /// `change` on each shard in turn until one has the schedule.
    async fn on_schedule<'a, F, Fut>(&'a self, change: F) -> Result<ScheduleChange, QueueError>
    where
        F: Fn(&'a crate::RedisQueue) -> Fut,
        Fut: std::future::Future<Output = Result<ScheduleChange, QueueError>>,
    {
        for shard in self.shards() {
            let outcome = change(shard).await?;
            if outcome != ScheduleChange::NotFound {
                return Ok(outcome);
            }
        }
        Ok(ScheduleChange::NotFound)
    }
}
