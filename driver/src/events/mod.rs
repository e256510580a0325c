//! Following a namespace's event streams: a resumable, blocking
//! subscription to each.
//!
//! [`RedisQueue::follow_events`] opens an [`EventFeed`] on a connection of
//! its own and reads with `XREAD BLOCK`: Redis answers as soon as an entry
//! is added (or after [`EVENT_BLOCK`] with nothing), so a follower sees a
//! dead letter within one round trip and costs one command per
//! [`EVENT_BLOCK`] while nothing happens; nothing polls. Its
//! [`position`](EventFeed::position) is the id of the last event it handed
//! out, an [`EventCursor::After`] that resumes exactly after it, on this
//! feed after a lost connection or in a later process.
//!
//! What the streams carry is what the scripts write to them
//! (`lua/lib/events.lua`): one entry per transition, of the kinds in
//! [`EventKind`]; `enqueued` and `completed` in `{ns}:events:traffic`,
//! every other kind in `{ns}:events` ([`EventStream`]), so that the
//! traffic's flood never trims an incident's events away. Each is capped at
//! about [`EVENTS_CAP`] entries, so an id older than the oldest kept entry
//! resumes at that oldest entry. Operator actions carry who did them
//! (`actor.rs`).
//!
//! Over the shards of a `ShardedQueue`, [`Operator::follow_events`] merges
//! one feed per shard (`merged.rs`).
//!
//! [`Operator::follow_events`]: crate::Operator::follow_events

mod cursor;
mod entry;
mod history;
mod latest;
mod merged;

use std::collections::VecDeque;
use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};
use futures::Stream;

pub use crate::actor::{check_actor, local_actor, MAX_ACTOR_BYTES};
pub use crate::event_kind::EventKind;
pub use crate::event_stream::EventStream;
pub use cursor::EventCursor;

use crate::{QueueError, QueueEvent, RedisQueue};

/// How long one `XREAD BLOCK` waits for an entry before it answers with
/// none and is sent again.
pub const EVENT_BLOCK: Duration = Duration::from_secs(10);

/// About how many entries each event stream keeps (`XADD MAXLEN ~`): the
/// `EVENTS_MAXLEN` of `lua/lib/events.lua`, checked equal by a test. An
/// entry takes about 100 to 300 bytes (more with a long error), so the
/// stream holds 1 to 3 MB, up to about 45 MB with 4 KiB errors.
pub const EVENTS_CAP: usize = 10_000;

/// At most this many entries per read.
const READ_COUNT: usize = 500;

/// A subscription to one of a namespace's event streams, from a position
/// on: see the module docs. Dropping it closes its connection.
pub struct EventFeed {
    client: fred::clients::Client,
    key: String,
    namespace: String,
    /// The id of the last entry handed out (or the cursor's start).
    after: String,
    timeout: Duration,
}

impl std::fmt::Debug for EventFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventFeed")
            .field("namespace", &self.namespace)
            .field("after", &self.after)
            .finish_non_exhaustive()
    }
}

impl Drop for EventFeed {
    fn drop(&mut self) {
        // Its own connection: closed in the background, nothing to wait for.
        let client = self.client.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = client.quit().await;
            });
        }
    }
}

impl RedisQueue {
    /// Follow this namespace's events from `from` on a connection of its
    /// own (see the [module docs](crate::events)): the main stream, every
    /// kind but the traffic's `enqueued` and `completed`
    /// ([`RedisQueue::follow_stream`] follows those).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redq::QueueError> {
    /// use futures::StreamExt;
    /// use redq::{events::EventCursor, RedisQueue};
    /// let queue = RedisQueue::connect("redis://127.0.0.1:6379").await?;
    /// let mut events = Box::pin(queue.follow_events(EventCursor::Now).await?.into_stream());
    /// while let Some(event) = events.next().await {
    ///     let event = event?;
    ///     println!("{} {} {} {}", event.event_id, event.kind, event.queue, event.job_id);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn follow_events(&self, from: EventCursor) -> Result<EventFeed, QueueError> {
        self.follow_stream(EventStream::Main, from).await
    }

    /// [`RedisQueue::follow_events`] of either stream: the main one, or
    /// the traffic's (`enqueued` and `completed`).
    pub async fn follow_stream(
        &self,
        stream: EventStream,
        from: EventCursor,
    ) -> Result<EventFeed, QueueError> {
        let timeout = self.inner.timeout;
        let mut builder = self.inner.client_builder.clone();
        // A blocked read is not a slow command: allow for the block.
        builder.with_performance_config(|perf| {
            perf.default_command_timeout = EVENT_BLOCK + timeout;
        });
        let client = builder
            .build()
            .map_err(|e| QueueError::from_redis(e, timeout))?;
        client
            .init()
            .await
            .map_err(|e| QueueError::from_redis(e, timeout))?;
        let mut feed = EventFeed {
            client,
            key: stream.key(&self.inner.keys),
            namespace: self.namespace().to_owned(),
            after: String::new(),
            timeout,
        };
        feed.after = match from {
            EventCursor::Start => "0-0".to_owned(),
            EventCursor::After(id) => id,
            // The last id now, not `$`: `$` means "the last id when this
            // read arrives", so an event added between two reads would be
            // lost.
            EventCursor::Now => feed.last_id().await?,
        };
        Ok(feed)
    }
}

impl EventFeed {
    /// The id of the last event handed out: resume after it with
    /// `EventCursor::After(position)`. Before the first event, where the
    /// feed started (`0-0` for the start of the stream).
    pub fn position(&self) -> &str {
        &self.after
    }

    /// The namespace whose events these are.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The next events after [`position`](Self::position), oldest first,
    /// waiting up to [`EVENT_BLOCK`] for one; empty when none came in that
    /// time. After an error the position is unchanged: call again to
    /// resume (the connection reconnects by itself).
    pub async fn next_batch(&mut self) -> Result<Vec<QueueEvent>, QueueError> {
        self.read(Some(EVENT_BLOCK)).await
    }

    /// The events after [`position`](Self::position) that are there now,
    /// without waiting (at most a few hundred per call; empty once caught
    /// up).
    pub async fn available(&mut self) -> Result<Vec<QueueEvent>, QueueError> {
        self.read(None).await
    }

    /// The feed as a stream of events, waiting for each; it never ends by
    /// itself. An error is an item of its own, after which the stream goes
    /// on from the same position.
    pub fn into_stream(self) -> impl Stream<Item = Result<QueueEvent, QueueError>> + Send {
        futures::stream::unfold(
            (self, VecDeque::new()),
            |(mut feed, mut pending): (EventFeed, VecDeque<QueueEvent>)| async move {
                loop {
                    if let Some(event) = pending.pop_front() {
                        return Some((Ok(event), (feed, pending)));
                    }
                    match feed.next_batch().await {
                        Ok(batch) => pending.extend(batch),
                        Err(e) => return Some((Err(e), (feed, pending))),
                    }
                }
            },
        )
    }

    async fn read(&mut self, block: Option<Duration>) -> Result<Vec<QueueEvent>, QueueError> {
        let mut args: Vec<Value> = vec!["COUNT".into(), READ_COUNT.to_string().into()];
        if let Some(block) = block {
            args.extend(["BLOCK".into(), block.as_millis().to_string().into()]);
        }
        args.extend([
            "STREAMS".into(),
            self.key.clone().into(),
            self.after.clone().into(),
        ]);
        // Routed by the stream key's slot: the first string of the
        // arguments (what `FirstKey` would hash) is `COUNT`.
        let slot = ClusterHash::Custom(fred::util::redis_keyslot(self.key.as_bytes()));
        let command = CustomCommand::new_static("XREAD", slot, block.is_some());
        let raw: Value = self
            .client
            .custom(command, args)
            .await
            .map_err(|e| QueueError::from_redis(e, self.timeout))?;
        let events = entry::xread_events(raw, &self.namespace)?;
        if let Some(last) = events.last() {
            self.after = last.event_id.clone();
        }
        Ok(events)
    }

    /// The id of the newest entry, `0-0` when the stream is empty.
    async fn last_id(&self) -> Result<String, QueueError> {
        let command = CustomCommand::new_static("XREVRANGE", ClusterHash::FirstKey, false);
        let args: Vec<Value> = vec![
            self.key.clone().into(),
            "+".into(),
            "-".into(),
            "COUNT".into(),
            "1".into(),
        ];
        let raw: Value = self
            .client
            .custom(command, args)
            .await
            .map_err(|e| QueueError::from_redis(e, self.timeout))?;
        let newest = entry::range_events(raw, &self.namespace)?;
        Ok(newest
            .into_iter()
            .next()
            .map_or_else(|| "0-0".to_owned(), |e| e.event_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_the_one_the_scripts_trim_to() {
        let (_, module) = crate::scripts::catalogue::MODULES
            .iter()
            .find(|(name, _)| *name == "events")
            .expect("lua/lib/events.lua is a module");
        assert!(
            module.contains(&format!("local EVENTS_MAXLEN = '{EVENTS_CAP}'\n")),
            "lua/lib/events.lua must trim to EVENTS_CAP"
        );
        let (_, mark) = module
            .split_once("local MAX_ACTOR_BYTES = ")
            .expect("the scripts' actor bound");
        assert!(mark.starts_with(&format!("{MAX_ACTOR_BYTES}\n")));
    }
}
