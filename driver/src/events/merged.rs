//! Events over every shard of a `ShardedQueue`: one feed per shard, merged.
//!
//! Each shard's stream has ids of its own. A cursor `After(id)` is given to
//! every shard: ids are the Redis clock's milliseconds, so on the others it
//! means "after that instant", exact on the shard the id came from and, on
//! the others, skipping only an entry added in that very millisecond with
//! a sequence number not above it. Each event names its shard
//! (`namespace`); a caller that must resume each shard exactly keeps one
//! position per shard and follows each with
//! [`RedisQueue::follow_events`](crate::RedisQueue::follow_events).

use futures::future::try_join_all;
use futures::stream::{self, Stream, StreamExt};

use super::{EventCursor, EventFeed};
use crate::{Operator, QueueError, QueueEvent};

impl Operator {
    /// Follow the events of every namespace this covers from `from`, one
    /// connection per shard, as one stream (in the order they arrive); see
    /// [`EventFeed::into_stream`] for errors.
    pub async fn follow_events(
        &self,
        from: EventCursor,
    ) -> Result<impl Stream<Item = Result<QueueEvent, QueueError>> + Send, QueueError> {
        let feeds = self.feeds(from).await?;
        Ok(stream::select_all(
            feeds.into_iter().map(|feed| feed.into_stream().boxed()),
        ))
    }

    /// The events after `from` that are there now, of every shard, oldest
    /// first, without waiting.
    pub async fn events_since(&self, from: EventCursor) -> Result<Vec<QueueEvent>, QueueError> {
        let mut all = Vec::new();
        for mut feed in self.feeds(from).await? {
            loop {
                let batch = feed.available().await?;
                if batch.is_empty() {
                    break;
                }
                all.extend(batch);
            }
        }
        if self.shards().len() > 1 {
            all.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.event_id.cmp(&b.event_id)));
        }
        Ok(all)
    }

    async fn feeds(&self, from: EventCursor) -> Result<Vec<EventFeed>, QueueError> {
        try_join_all(
            self.shards()
                .iter()
                .map(|shard| shard.follow_events(from.clone())),
        )
        .await
    }
}
