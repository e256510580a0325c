//! Stream entries of `{ns}:events` as [`QueueEvent`]s: the fields
//! `lua/lib/events.lua` writes (`kind queue at`, then any of `id name
//! attempts error count by detail`), and the driver's own `resumed`
//! (`admin.rs`). The one parser of the stream: `RedisQueue::events` and the
//! followers use it.

use std::collections::HashMap;

use fred::types::Value;

use crate::job::ms_to_time;
use crate::scripts::reply;
use crate::{QueueError, QueueEvent};

/// The entries of an `XREAD` reply on one stream: `[[key, entries]]`, or
/// nothing (null) when the block ended without any. RESP3 servers answer
/// a map `{key: entries}`.
pub fn xread_events(raw: Value, namespace: &str) -> Result<Vec<QueueEvent>, QueueError> {
    let streams: Vec<Value> = match raw {
        Value::Map(map) => map.inner().into_values().collect(),
        other => reply::array(other)?
            .into_iter()
            .filter_map(|stream| reply::array(stream).ok()?.into_iter().nth(1))
            .collect(),
    };
    let mut events = Vec::new();
    for entries in streams {
        events.extend(range_events(entries, namespace)?);
    }
    Ok(events)
}

/// The entries of an `XRANGE`/`XREVRANGE` reply, `[[id, [field, value,
/// …]], …]`, in the reply's order.
pub fn range_events(raw: Value, namespace: &str) -> Result<Vec<QueueEvent>, QueueError> {
    let mut events = Vec::new();
    for entry in reply::array(raw)? {
        let mut parts = reply::array(entry)?.into_iter();
        let (Some(id), Some(fields)) = (parts.next(), parts.next()) else {
            continue;
        };
        events.push(event(reply::text(id)?, fields, namespace)?);
    }
    Ok(events)
}

/// The milliseconds of a stream entry id `MS-SEQ`.
fn id_ms(event_id: &str) -> &str {
    event_id.split('-').next().unwrap_or("0")
}

fn event(event_id: String, fields: Value, namespace: &str) -> Result<QueueEvent, QueueError> {
    let mut map = HashMap::new();
    let mut kv = reply::array(fields)?.into_iter();
    while let (Some(k), Some(v)) = (kv.next(), kv.next()) {
        map.insert(reply::text(k)?, reply::text(v)?);
    }
    let get = |k: &str| map.get(k).cloned().unwrap_or_default();
    let given = |k: &str| map.get(k).filter(|v| !v.is_empty()).cloned();
    // An entry without `at` (the driver's `resumed`) was written at its
    // id's millisecond.
    let at_ms = given("at")
        .as_deref()
        .unwrap_or(id_ms(&event_id))
        .parse()
        .unwrap_or(0);
    Ok(QueueEvent {
        event_id,
        kind: get("kind"),
        queue: get("queue"),
        job_id: get("id"),
        name: given("name"),
        error: get("error"),
        attempts: get("attempts").parse().unwrap_or(0),
        count: given("count").and_then(|c| c.parse().ok()),
        by: given("by"),
        detail: given("detail"),
        at: ms_to_time(at_ms),
        namespace: namespace.to_owned(),
    })
}
