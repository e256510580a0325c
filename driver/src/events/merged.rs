//! Events over every shard of a `ShardedQueue`, and over both of a
//! namespace's streams: one feed per shard and stream, merged.
//!
//! Each stream has ids of its own. A cursor `After(id)` is given to every
//! feed: ids are the Redis clock's milliseconds, so on the others it means
//! "after that instant", exact on the stream the id came from and, on the
//! others, skipping only an entry added in that very millisecond with a
//! sequence number not above it. Each event names its shard
//! (`namespace`) and its kind its stream ([`EventStream::of`]); a caller
//! that must resume each exactly keeps one position per shard and stream
//! and follows each with
//! [`RedisQueue::follow_stream`](crate::RedisQueue::follow_stream).

use futures::future::try_join_all;
use futures::stream::{self, Stream, StreamExt};

use super::{EventCursor, EventFeed, EventStream};
use crate::{Operator, QueueError, QueueEvent};

impl Operator {
    /// Follow the main event stream (every kind but the traffic's) of
    /// every namespace this covers from `from`, one connection per shard,
    /// as one stream (in the order they arrive); see
    /// [`EventFeed::into_stream`] for errors.
    pub async fn follow_events(
        &self,
        from: EventCursor,
    ) -> Result<impl Stream<Item = Result<QueueEvent, QueueError>> + Send, QueueError> {
        self.follow_streams(&[EventStream::Main], from).await
    }

    /// [`Operator::follow_events`] of `streams` (one connection per shard
    /// and stream).
    pub async fn follow_streams(
        &self,
        streams: &[EventStream],
        from: EventCursor,
    ) -> Result<impl Stream<Item = Result<QueueEvent, QueueError>> + Send, QueueError> {
        let feeds = self.feeds(streams, from).await?;
        Ok(stream::select_all(
            feeds.into_iter().map(|feed| feed.into_stream().boxed()),
        ))
    }

    /// The events of the main stream after `from` that are there now, of
    /// every shard, oldest first, without waiting.
    pub async fn events_since(&self, from: EventCursor) -> Result<Vec<QueueEvent>, QueueError> {
        self.events_since_in(&[EventStream::Main], from).await
    }

    /// [`Operator::events_since`] in `streams`, merged oldest first.
    pub async fn events_since_in(
        &self,
        streams: &[EventStream],
        from: EventCursor,
    ) -> Result<Vec<QueueEvent>, QueueError> {
        let feeds = self.feeds(streams, from).await?;
        let mut lists = Vec::new();
        for mut feed in feeds {
            let mut list = Vec::new();
            loop {
                let batch = feed.available().await?;
                if batch.is_empty() {
                    break;
                }
                list.extend(batch);
            }
            lists.push(list);
        }
        // Each stream stays in its own order; only the streams interleave.
        let all = lists.iter().map(Vec::len).sum();
        Ok(crate::operator::merge::merge_heads(lists, all, |a, b| {
            a.position().cmp(&b.position())
        }))
    }

    async fn feeds(
        &self,
        streams: &[EventStream],
        from: EventCursor,
    ) -> Result<Vec<EventFeed>, QueueError> {
        try_join_all(self.shards().iter().flat_map(|shard| {
            streams
                .iter()
                .map(|stream| shard.follow_stream(*stream, from.clone()))
        }))
        .await
    }
}
