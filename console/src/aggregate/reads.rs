//! Reads over every shard: the union of queue names, sums of counts and
//! throughput, and listings merged in the order one namespace lists them.
//! Each shard's part is its own atomic snapshot; the sum is not one instant.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;
use redq::{JobRecord, JobState, Page, QueueCounts, QueueError, QueueEvent, StatsBucket};

use super::Target;
use crate::tui::state::{ScheduleInfo, WorkerInfo};

/// How deep merged pages go: each shard is read from its start to the end
/// of the page asked for, so this bounds the work of one page.
pub const MERGE_WINDOW: usize = 10_000;
/// The driver's page limit: a shard is read in pages of this many.
const SHARD_PAGE: usize = 1000;

impl Target {
    /// Every queue enqueued to in any shard, sorted.
    pub async fn queues(&self) -> Result<Vec<String>, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.queues())).await?;
        let names: BTreeSet<String> = all.into_iter().flatten().collect();
        Ok(names.into_iter().collect())
    }

    /// The queue's size by state, summed; paused when any shard is (a
    /// half-applied pause shows rather than hides); the oldest head.
    pub async fn counts(&self, queue: &str) -> Result<QueueCounts, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.counts(queue))).await?;
        all.into_iter()
            .reduce(QueueCounts::plus)
            .ok_or_else(|| QueueError::Protocol("no shards".into()))
    }

    /// Throughput buckets, summed per bucket. Buckets start on multiples of
    /// the bucket width, so the shards' buckets line up.
    pub async fn stats(&self, queue: &str) -> Result<Vec<StatsBucket>, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.stats(queue))).await?;
        if all.len() == 1 {
            return Ok(all.into_iter().flatten().collect());
        }
        let mut sums = BTreeMap::new();
        for b in all.into_iter().flatten() {
            let sum: &mut (u64, u64) = sums.entry(b.start).or_default();
            sum.0 += b.processed;
            sum.1 += b.failed;
        }
        Ok(sums
            .into_iter()
            .map(|(start, (processed, failed))| StatsBucket {
                start,
                processed,
                failed,
            })
            .collect())
    }

    /// A page of the queue's jobs in `state`. With several shards each is
    /// read for its first `offset + limit` jobs (at most `MERGE_WINDOW`),
    /// they are merged in [`merge_order`], and the page is cut from that.
    pub async fn list_jobs(
        &self,
        queue: &str,
        state: JobState,
        offset: u64,
        limit: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        if !self.is_sharded() {
            return self.shards()[0]
                .list_jobs(queue, state, offset, limit)
                .await;
        }
        let window = (offset as usize).saturating_add(limit);
        if limit == 0 || window > MERGE_WINDOW {
            return Err(QueueError::Invalid {
                what: "offset + limit",
                value: window.to_string(),
                rule: format!("1 to {MERGE_WINDOW} when several shards are merged"),
            });
        }
        let heads =
            try_join_all(self.shards().iter().map(|s| head(s, queue, state, window))).await?;
        let total = heads.iter().map(|p| p.total).sum();
        let mut items: Vec<JobRecord> = heads.into_iter().flat_map(|p| p.items).collect();
        items.sort_by(|a, b| merge_order(state, a, b));
        let items = items
            .into_iter()
            .skip(offset as usize)
            .take(limit)
            .collect();
        Ok(Page { total, items })
    }

    /// Dead letters of a queue, newest first.
    pub async fn dead_letters(
        &self,
        queue: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        self.list_jobs(queue, JobState::Dead, offset, limit).await
    }

    /// Everything about one job, from the first shard that has it (a job id
    /// is a ULID, so it is on one shard).
    pub async fn inspect(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        for shard in self.shards() {
            if let Some(job) = shard.inspect(id).await? {
                return Ok(Some(job));
            }
        }
        Ok(None)
    }

    /// The latest `count` events of all shards, newest first.
    pub async fn events(&self, count: usize) -> Result<Vec<QueueEvent>, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.events(count))).await?;
        if all.len() == 1 {
            return Ok(all.into_iter().flatten().collect());
        }
        let mut events: Vec<QueueEvent> = all.into_iter().flatten().collect();
        events.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.event_id.cmp(&a.event_id)));
        events.truncate(count);
        Ok(events)
    }

    /// Live workers of every shard, by id. A worker serving several shards
    /// (one `Worker` per shard, one identity) is listed once per shard.
    pub async fn workers(&self) -> Result<Option<Vec<WorkerInfo>>, QueueError> {
        let all = try_join_all(self.shards().iter().map(crate::registry::workers)).await?;
        Ok(self
            .tagged(all, |w: &mut WorkerInfo, shard| w.shard = shard)
            .map(|mut workers| {
                workers.sort_by(|a, b| a.id.cmp(&b.id).then(a.shard.cmp(&b.shard)));
                workers
            }))
    }

    /// Schedules of every shard, by name.
    pub async fn schedules(&self) -> Result<Option<Vec<ScheduleInfo>>, QueueError> {
        let all = try_join_all(self.shards().iter().map(crate::registry::schedules)).await?;
        Ok(self
            .tagged(all, |s: &mut ScheduleInfo, shard| s.shard = shard)
            .map(|mut schedules| {
                schedules.sort_by(|a, b| a.name.cmp(&b.name).then(a.shard.cmp(&b.shard)));
                schedules
            }))
    }

    /// Concatenate per-shard lists, marking each item with its shard when
    /// there are several; `None` if no shard reports the list at all.
    fn tagged<T>(
        &self,
        per_shard: Vec<Option<Vec<T>>>,
        mut mark: impl FnMut(&mut T, Option<usize>),
    ) -> Option<Vec<T>> {
        let sharded = self.is_sharded();
        let mut out: Option<Vec<T>> = None;
        for (i, items) in per_shard.into_iter().enumerate() {
            let Some(items) = items else { continue };
            let list = out.get_or_insert_with(Vec::new);
            for mut item in items {
                mark(&mut item, sharded.then_some(i));
                list.push(item);
            }
        }
        out
    }
}

/// The first `window` jobs of one shard, in pages the driver accepts.
async fn head(
    shard: &redq::RedisQueue,
    queue: &str,
    state: JobState,
    window: usize,
) -> Result<Page<JobRecord>, QueueError> {
    let mut head = Page {
        total: 0,
        items: Vec::new(),
    };
    loop {
        let want = (window - head.items.len()).min(SHARD_PAGE);
        let page = shard
            .list_jobs(queue, state, head.items.len() as u64, want)
            .await?;
        head.total = page.total;
        let short = page.items.len() < want;
        head.items.extend(page.items);
        if short || head.items.len() >= window {
            return Ok(head);
        }
    }
}

/// The order one namespace lists jobs in, applied to jobs of several:
/// waiting by priority then age (each shard's own claim order; across shards
/// it is what a claim would prefer, not a promise), scheduled soonest due,
/// leased soonest lapsing, dead newest first; ties by id.
pub fn merge_order(state: JobState, a: &JobRecord, b: &JobRecord) -> Ordering {
    let by_state = match state {
        JobState::Waiting => b
            .priority
            .cmp(&a.priority)
            .then(a.enqueued_at.cmp(&b.enqueued_at)),
        JobState::Scheduled => a.due_at.cmp(&b.due_at),
        JobState::Leased => a.lease_expires_at.cmp(&b.lease_expires_at),
        JobState::Dead => b.died_at.cmp(&a.died_at),
        _ => Ordering::Equal,
    };
    by_state.then_with(|| a.id.cmp(&b.id))
}
