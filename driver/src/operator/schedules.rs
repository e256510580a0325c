//! Schedule changes and lease reclaims over every shard, and the operator's
//! view of a schedule's times.
//!
//! A schedule lives on the shard it was upserted to, but nothing stops two
//! shards from storing the same name: those are two schedules, each firing.
//! So a change by name goes to one shard the caller chose
//! ([`Operator::schedule_shards`] says which have the name, the `_on` calls
//! act on one of them); the calls without a shard act on the first shard
//! that has the name, which is the only one when the name is on one shard.
//! A reclaim goes to every shard, its counts summed.

use std::time::SystemTime;

use super::Operator;
use crate::job::time_to_ms;
use crate::schedule::{CronExpr, ScheduleChange, ScheduleInfo, Triggered};
use crate::{QueueError, Reclaimed, RedisQueue};

/// The format of [`Operator::wall_clock`]: a date, a time and the offset
/// from UTC in force then, so a reader can check the conversion.
const WALL_CLOCK: &str = "%Y-%m-%d %H:%M:%S %:z";

impl Operator {
    /// The shards (by index, in shard order) that store a schedule named
    /// `name`: none, one, or several when the same name was upserted to
    /// more than one shard (each of those fires on its own).
    pub async fn schedule_shards(&self, name: &str) -> Result<Vec<usize>, QueueError> {
        let mut on = Vec::new();
        for (i, shard) in self.shards().iter().enumerate() {
            if shard.schedule(name).await?.is_some() {
                on.push(i);
            }
        }
        Ok(on)
    }

    /// [`RedisQueue::trigger_schedule`] on the first shard that has the
    /// schedule.
    pub async fn trigger_schedule(&self, name: &str) -> Result<Triggered, QueueError> {
        for shard in self.shards() {
            let outcome = shard.trigger_schedule(name).await?;
            if outcome != Triggered::NotFound {
                return Ok(outcome);
            }
        }
        Ok(Triggered::NotFound)
    }

    /// [`RedisQueue::trigger_schedule`] on shard `shard` (its index).
    pub async fn trigger_schedule_on(
        &self,
        shard: usize,
        name: &str,
    ) -> Result<Triggered, QueueError> {
        self.schedule_shard(shard)?.trigger_schedule(name).await
    }

    /// [`RedisQueue::pause_schedule`] on the first shard that has the
    /// schedule.
    pub async fn pause_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        self.on_schedule(|shard| async move { shard.pause_schedule(name).await })
            .await
    }

    /// [`RedisQueue::pause_schedule`] on shard `shard` (its index).
    pub async fn pause_schedule_on(
        &self,
        shard: usize,
        name: &str,
    ) -> Result<ScheduleChange, QueueError> {
        self.schedule_shard(shard)?.pause_schedule(name).await
    }

    /// [`RedisQueue::resume_schedule`] on the first shard that has the
    /// schedule.
    pub async fn resume_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        self.on_schedule(|shard| async move { shard.resume_schedule(name).await })
            .await
    }

    /// [`RedisQueue::resume_schedule`] on shard `shard` (its index).
    pub async fn resume_schedule_on(
        &self,
        shard: usize,
        name: &str,
    ) -> Result<ScheduleChange, QueueError> {
        self.schedule_shard(shard)?.resume_schedule(name).await
    }

    /// [`RedisQueue::delete_schedule`] on the first shard that has the
    /// schedule.
    pub async fn delete_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        self.on_schedule(|shard| async move { shard.delete_schedule(name).await })
            .await
    }

    /// [`RedisQueue::delete_schedule`] on shard `shard` (its index).
    pub async fn delete_schedule_on(
        &self,
        shard: usize,
        name: &str,
    ) -> Result<ScheduleChange, QueueError> {
        self.schedule_shard(shard)?.delete_schedule(name).await
    }

    /// The next `n` ticks of `schedule` after `after`, each with the same
    /// instant on the wall clock of the schedule's time zone
    /// ([`Operator::wall_clock`]): the preview an operator reads to check
    /// an expression does what was meant. Ticks before its start or after
    /// its end are left out; a paused schedule previews the ticks it would
    /// fire once resumed.
    pub fn upcoming_runs(
        schedule: &ScheduleInfo,
        after: SystemTime,
        n: usize,
    ) -> Result<Vec<(SystemTime, String)>, QueueError> {
        let cron = CronExpr::parse(&schedule.expression, &schedule.timezone)?;
        // A start in the future: preview from just before it.
        let from = match schedule.starts_at {
            Some(start) if start > after => start - std::time::Duration::from_millis(1),
            _ => after,
        };
        Ok(cron
            .upcoming(from, n)
            .into_iter()
            .filter(|at| schedule.ends_at.is_none_or(|end| *at <= end))
            .filter_map(|at| Some((at, Operator::wall_clock(at, &schedule.timezone)?)))
            .collect())
    }

    /// `at` on the wall clock of the IANA time zone `timezone`, with the
    /// offset from UTC in force then: `2026-12-08 02:00:00 -05:00`. `None`
    /// for a zone this machine's tz database does not know.
    pub fn wall_clock(at: SystemTime, timezone: &str) -> Option<String> {
        let tz = jiff::tz::db().get(timezone).ok()?;
        let ms = i64::try_from(time_to_ms(at)).ok()?;
        let at = jiff::Timestamp::from_millisecond(ms).ok()?;
        Some(at.to_zoned(tz).strftime(WALL_CLOCK).to_string())
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

    /// The handle of shard `shard`, refused when there is no such shard.
    fn schedule_shard(&self, shard: usize) -> Result<&RedisQueue, QueueError> {
        let n = self.shards().len();
        self.shards().get(shard).ok_or_else(|| {
            QueueError::invalid(
                "shard",
                shard.to_string(),
                format!("a shard index from 0 to {}", n.saturating_sub(1)),
            )
        })
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn wall_clock_is_the_zones_time_with_its_offset() {
        // 2026-12-08T07:00:00Z is 02:00 in New York (EST, UTC-5).
        let at = UNIX_EPOCH + Duration::from_secs(1_796_713_200);
        assert_eq!(
            Operator::wall_clock(at, "America/New_York").as_deref(),
            Some("2026-12-08 02:00:00 -05:00")
        );
        assert_eq!(Operator::wall_clock(at, "Nowhere/Atlantis"), None);
    }
}
