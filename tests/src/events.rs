//! Reading the event streams as a test checks what one action wrote: the
//! newest event's id before it, the events after that id once it is done.
//! Both streams are read (the traffic's `enqueued` and `completed` are apart
//! from the rest: `redq::events::EventStream`), merged by time.

use redq::events::{EventCursor, EventKind, EventStream};
use redq::{QueueEvent, RedisQueue};

use crate::RedisServer;

/// A handle on `server` whose operator actions name `actor` as `by`.
pub async fn acting(server: &RedisServer, namespace: &str, actor: &str) -> RedisQueue {
    RedisQueue::builder(&server.url())
        .namespace(namespace)
        .actor(actor)
        .connect()
        .await
        .expect("connect")
}

/// The id of the newest event of either stream ("0-0" when there is none).
pub async fn newest_event_id(queue: &RedisQueue) -> String {
    let newest = queue
        .operator()
        .latest_events(&EventStream::BOTH, 1)
        .await
        .expect("events");
    newest
        .first()
        .map_or_else(|| "0-0".to_owned(), |e| e.event_id.clone())
}

/// The events after `id` (an event id), oldest first, read as a follower
/// resumes.
pub async fn events_after(queue: &RedisQueue, id: &str) -> Vec<QueueEvent> {
    queue
        .operator()
        .events_since_in(&EventStream::BOTH, EventCursor::After(id.to_owned()))
        .await
        .expect("events since")
}

/// The latest 100 events of `kind` (of the stream that holds it), newest
/// first.
pub async fn latest_of_kind(queue: &RedisQueue, kind: EventKind) -> Vec<QueueEvent> {
    queue
        .latest_events(EventStream::of(kind), 100)
        .await
        .expect("events")
        .into_iter()
        .filter(|e| e.kind == kind.as_str())
        .collect()
}
