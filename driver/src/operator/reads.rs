//! Reads over every shard: the union of queue names, sums of counts and
//! throughput, and listings merged in the order one namespace lists them.
//! Each shard's part is its own atomic snapshot; the sum is not one instant.
//! With one namespace each read is that namespace's own call.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use futures::future::try_join_all;

use super::merge::merge_heads;
use super::Operator;
use crate::event_stream::EventStream;
use crate::{
    JobRecord, JobState, Page, QueueCounts, QueueError, QueueEvent, RedisQueue, StatsBucket,
};

/// How deep merged pages go: each shard is read from its start to the end
/// of the page asked for, so this bounds the work of one page.
const MERGE_WINDOW: usize = 10_000;
/// The driver's page limit: a shard is read in pages of this many.
const SHARD_PAGE: usize = 1000;

impl Operator {
    /// Every queue enqueued to in any shard, sorted.
    pub async fn queues(&self) -> Result<Vec<String>, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.queues())).await?;
        let names: BTreeSet<String> = all.into_iter().flatten().collect();
        Ok(names.into_iter().collect())
    }

    /// The names in any shard's queue index that [`queues`](Self::queues)
    /// leaves out as no queue's name, sorted, as stored (escape them to
    /// show them): [`RedisQueue::refused_queue_names`].
    pub async fn refused_queue_names(&self) -> Result<Vec<String>, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.refused_queue_names())).await?;
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
        let mut sums: BTreeMap<SystemTime, StatsBucket> = BTreeMap::new();
        for bucket in all.into_iter().flatten() {
            sums.entry(bucket.start)
                .and_modify(|sum| {
                    sum.processed += bucket.processed;
                    sum.failed += bucket.failed;
                })
                .or_insert(bucket);
        }
        Ok(sums.into_values().collect())
    }

    /// A page of the queue's jobs in `state`. With several shards each is
    /// read for its first `offset + limit` jobs (at most `MERGE_WINDOW`),
    /// they are merged in the order one namespace lists them, and the page is cut from that.
    pub async fn list_jobs(
        &self,
        queue: &str,
        state: JobState,
        offset: u64,
        limit: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        if let [one] = self.shards() {
            return one.list_jobs(queue, state, offset, limit).await;
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
        let lists = heads.into_iter().map(|p| p.items).collect();
        let merged = merge_heads(lists, window, |a, b| merge_order(state, a, b));
        let items = merged
            .into_iter()
            .skip(offset as usize)
            .take(limit)
            .collect();
        Ok(Page { total, items })
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

    /// The latest `count` events of all shards' main streams (every kind
    /// but the traffic's), newest first.
    pub async fn events(&self, count: usize) -> Result<Vec<QueueEvent>, QueueError> {
        self.latest_events(&[EventStream::Main], count).await
    }

    /// The latest `count` events of all shards' `streams`, newest first.
    pub async fn latest_events(
        &self,
        streams: &[EventStream],
        count: usize,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        let all = try_join_all(self.shards().iter().flat_map(|shard| {
            streams
                .iter()
                .map(move |stream| shard.latest_events(*stream, count))
        }))
        .await?;
        Ok(newest_first(all, count))
    }

    /// The latest `count` events of all shards' main streams that `keep`
    /// accepts, newest first (see [`RedisQueue::events_matching`]).
    pub async fn events_matching(
        &self,
        count: usize,
        keep: impl Fn(&QueueEvent) -> bool,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        self.events_matching_in(&[EventStream::Main], count, keep)
            .await
    }

    /// [`Operator::events_matching`] in `streams`.
    pub async fn events_matching_in(
        &self,
        streams: &[EventStream],
        count: usize,
        keep: impl Fn(&QueueEvent) -> bool,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        let keep = &keep;
        let all = try_join_all(self.shards().iter().flat_map(|shard| {
            streams
                .iter()
                .map(move |stream| shard.events_matching_in(*stream, count, keep))
        }))
        .await?;
        Ok(newest_first(all, count))
    }
}

/// The first `window` jobs of one shard, in pages the driver accepts.
async fn head(
    shard: &RedisQueue,
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

/// The order one namespace lists jobs in, applied to the heads of several
/// shards' lists (`merge_heads`; within a shard its own order stands):
/// waiting by priority then age (what a claim would prefer, not a promise),
/// scheduled soonest due, leased soonest lapsing, dead newest first (ties
/// the greater id first), held by key then priority and age, blocked by
/// ordering key then age; other ties by id.
fn merge_order(state: JobState, a: &JobRecord, b: &JobRecord) -> Ordering {
    let by_state = match state {
        JobState::Waiting => b
            .priority
            .cmp(&a.priority)
            .then(a.enqueued_at.cmp(&b.enqueued_at)),
        JobState::Scheduled => a.due_at.cmp(&b.due_at),
        JobState::Leased => a.lease_expires_at.cmp(&b.lease_expires_at),
        // Ties as a namespace's sorted set gives them (ZREVRANGE: the
        // greater id first), and as `redq dead list` merges queues.
        JobState::Dead => b.died_at.cmp(&a.died_at).then(b.id.cmp(&a.id)),
        // As one namespace lists them: by key, then claim order.
        JobState::Held => a
            .limit_key
            .cmp(&b.limit_key)
            .then(b.priority.cmp(&a.priority))
            .then(a.enqueued_at.cmp(&b.enqueued_at)),
        // As one namespace lists them: by ordering key, then the order the
        // key runs them (a key routes to one shard, so that is its own).
        JobState::Blocked => a
            .ordering_key
            .cmp(&b.ordering_key)
            .then(a.enqueued_at.cmp(&b.enqueued_at)),
        _ => Ordering::Equal,
    };
    by_state.then_with(|| a.id.cmp(&b.id))
}

/// Each shard's events (each newest first) as one list, newest first, at
/// most `count`.
fn newest_first(all: Vec<Vec<QueueEvent>>, count: usize) -> Vec<QueueEvent> {
    if all.len() == 1 {
        return all.into_iter().flatten().collect();
    }
    // Each stream stays in its own order; only the streams interleave.
    merge_heads(all, count, |a, b| b.position().cmp(&a.position()))
}
