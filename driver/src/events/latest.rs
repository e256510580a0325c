//! The latest events, newest first: what the console's Events screen shows;
//! and the latest of those that match, found further back in the stream.

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use super::{entry, EVENTS_CAP};
use crate::limits;
use crate::{QueueError, QueueEvent, RedisQueue};

/// Entries one step of [`RedisQueue::events_matching`] reads.
const MATCHING_STEP: usize = 500;

impl RedisQueue {
    /// The latest `count` events (every kind), newest first.
    pub async fn events(&self, count: usize) -> Result<Vec<QueueEvent>, QueueError> {
        limits::check_limit("event count", count, EVENTS_CAP)?;
        self.events_before("+", count).await
    }

    /// The latest `count` events that `keep` accepts, newest first: the
    /// stream is read back from its newest entry in steps of 500 until
    /// `count` are found or its oldest entry is read. Bounded by the
    /// stream's length (at most [`EVENTS_CAP`] entries, 20 reads): a rare
    /// kind is found however many common ones came after it.
    pub async fn events_matching(
        &self,
        count: usize,
        keep: impl Fn(&QueueEvent) -> bool,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        limits::check_limit("event count", count, EVENTS_CAP)?;
        let mut found = Vec::new();
        let mut end = "+".to_owned();
        for _ in 0..EVENTS_CAP.div_ceil(MATCHING_STEP) + 1 {
            let step = self.events_before(&end, MATCHING_STEP).await?;
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
    async fn events_before(&self, end: &str, count: usize) -> Result<Vec<QueueEvent>, QueueError> {
        let command = CustomCommand::new_static("XREVRANGE", ClusterHash::FirstKey, false);
        let args: Vec<Value> = vec![
            self.inner.keys.events().into(),
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
