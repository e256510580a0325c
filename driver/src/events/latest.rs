//! The latest events of a stream, newest first: what the console's Events
//! screen shows; and the latest of those that match, found further back in
//! the stream.

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use super::{entry, EventStream, EVENTS_CAP};
use crate::limits;
use crate::{QueueError, QueueEvent, RedisQueue};

/// Entries one step of [`RedisQueue::events_matching`] reads.
const MATCHING_STEP: usize = 500;

impl RedisQueue {
    /// The latest `count` events of the main stream (every kind but the
    /// traffic's), newest first.
    pub async fn events(&self, count: usize) -> Result<Vec<QueueEvent>, QueueError> {
        self.latest_events(EventStream::Main, count).await
    }

    /// The latest `count` events of `stream`, newest first.
    pub async fn latest_events(
        &self,
        stream: EventStream,
        count: usize,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        limits::check_limit("event count", count, EVENTS_CAP)?;
        self.events_before(stream, "+", count).await
    }

    /// The latest `count` events of the main stream that `keep` accepts,
    /// newest first: the stream is read back from its newest entry in
    /// steps of 500 until `count` are found or its oldest entry is read.
    /// Bounded by the stream's length (at most [`EVENTS_CAP`] entries, 20
    /// reads): a rare kind is found however many common ones came after it.
    pub async fn events_matching(
        &self,
        count: usize,
        keep: impl Fn(&QueueEvent) -> bool,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        self.events_matching_in(EventStream::Main, count, keep)
            .await
    }

    /// [`RedisQueue::events_matching`] in `stream`.
    pub async fn events_matching_in(
        &self,
        stream: EventStream,
        count: usize,
        keep: impl Fn(&QueueEvent) -> bool,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        limits::check_limit("event count", count, EVENTS_CAP)?;
        let mut found = Vec::new();
        let mut end = "+".to_owned();
        for _ in 0..EVENTS_CAP.div_ceil(MATCHING_STEP) + 1 {
            let step = self.events_before(stream, &end, MATCHING_STEP).await?;
            let Some(oldest) = step.last() else { break };
            end = format!("({}", oldest.event_id);
            let last_step = step.len() < MATCHING_STEP;
            found.extend(step.into_iter().filter(|e| keep(e)));
            if found.len() >= count || last_step {
                break;
            }
        }
        found.truncate(count);
        Ok(found)
    }

    /// Up to `count` events from `end` (a stream id, `(id` exclusive, or
    /// `+`) back, newest first.
    async fn events_before(
        &self,
        stream: EventStream,
        end: &str,
        count: usize,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        let command = CustomCommand::new_static("XREVRANGE", ClusterHash::FirstKey, false);
        let args: Vec<Value> = vec![
            stream.key(&self.inner.keys).into(),
            end.into(),
            "-".into(),
            "COUNT".into(),
            count.to_string().into(),
        ];
        let raw: Value = self
            .client()
            .custom(command, args)
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        entry::range_events(raw, self.namespace())
    }
}
