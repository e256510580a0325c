//! How far back a namespace's event streams reach. A capped stream forgets
//! its oldest entries as new ones come, so "no dead letter in the last
//! hour" holds only if the main stream reaches back an hour: the exporter's
//! `redq_event_history_seconds` says how far it does.

use std::time::{Duration, UNIX_EPOCH};

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use super::{entry, EventStream};
use crate::{Operator, QueueError, RedisQueue};

impl RedisQueue {
    /// The time since the oldest entry `stream` still keeps, on the Redis
    /// clock; `None` while the stream is empty.
    pub async fn event_history(&self, stream: EventStream) -> Result<Option<Duration>, QueueError> {
        let key = stream.key(&self.inner.keys);
        let command = CustomCommand::new_static("XRANGE", ClusterHash::FirstKey, false);
        let args: Vec<Value> = vec![
            key.clone().into(),
            "-".into(),
            "+".into(),
            "COUNT".into(),
            "1".into(),
        ];
        let (raw, now_ms) = tokio::try_join!(
            async {
                self.client()
                    .custom::<Value, _>(command, args)
                    .await
                    .map_err(|e| QueueError::from_redis(e, self.inner.timeout))
            },
            self.redis_now_ms(&key),
        )?;
        let Some(oldest) = entry::range_events(raw, self.namespace())?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let now = UNIX_EPOCH + Duration::from_millis(now_ms);
        Ok(Some(now.duration_since(oldest.at).unwrap_or_default()))
    }
}

impl RedisQueue {
    /// The ids of the oldest and the newest entry `stream` keeps, `None`
    /// while it is empty. A follower back from an outage compares them
    /// with its position: its last event still kept (between the two) means
    /// the history it read is still there; a newest entry older than its
    /// position, or an oldest one newer, means Redis lost the stream (a
    /// restart without its data, a flush) or trimmed it meanwhile.
    pub async fn event_ids_kept(
        &self,
        stream: EventStream,
    ) -> Result<Option<(String, String)>, QueueError> {
        let key = stream.key(&self.inner.keys);
        let end = |command: &'static str, from: &str, to: &str| {
            let command = CustomCommand::new_static(command, ClusterHash::FirstKey, false);
            let args: Vec<Value> = vec![
                key.clone().into(),
                from.into(),
                to.into(),
                "COUNT".into(),
                "1".into(),
            ];
            async move {
                let raw: Value = self
                    .client()
                    .custom(command, args)
                    .await
                    .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
                Ok::<_, QueueError>(
                    entry::range_events(raw, self.namespace())?
                        .into_iter()
                        .next()
                        .map(|e| e.event_id),
                )
            }
        };
        let (oldest, newest) =
            tokio::try_join!(end("XRANGE", "-", "+"), end("XREVRANGE", "+", "-"))?;
        Ok(oldest.zip(newest))
    }
}

impl Operator {
    /// [`RedisQueue::event_history`] over the shards: the shortest of
    /// theirs (how far back every shard's stream reaches), `None` while
    /// every shard's stream is empty.
    pub async fn event_history(&self, stream: EventStream) -> Result<Option<Duration>, QueueError> {
        let each = futures::future::try_join_all(
            self.shards()
                .iter()
                .map(|shard| shard.event_history(stream)),
        )
        .await?;
        Ok(each.into_iter().flatten().min())
    }
}
