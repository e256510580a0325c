//! `redq events`: the `{ns}:events` stream, one line per event, from a
//! position (`--from start|now|ID`); with `--follow` it then waits for new
//! ones (the driver's blocking subscription: no polling) until Ctrl-C.
//!
//! A line is `ID  TIME  KIND  QUEUE  JOB  [attempts=N]  [name=…]
//! [count=N]  [by=…]  [detail=…]  [error=…]` (plus `shard=…` with
//! `--shards`; QUEUE and JOB are `-` when the event has none; `attempts=`
//! only for an event about one job or a requeue, `error=` only when there
//! is one), or with `-o json` one object a line, every field always there.
//! The ID first: `--from ID` resumes after it. Every kind the main stream
//! carries is printed (`redq::events::EventKind`), with `--traffic` the
//! traffic stream's `enqueued` and `completed` as well (merged by time;
//! over two streams `--from ID` means "after that instant", as over
//! shards), or with `--kind K,…` only those kinds, from the streams that
//! hold them (a name the driver does not know is refused, the accepted
//! ones listed).

use std::time::Duration;

use futures::StreamExt;
use redq::events::{EventCursor, EventKind, EventStream};
use redq::QueueEvent;
use serde_json::json;

use crate::aggregate::Target;
use crate::clock;
use crate::failure::{read_failed, Failure};
use crate::output::{json_text, outln, time};
use crate::text::inert;

/// How long `--follow` waits after a failed read before reading again
/// from where it was (the driver reconnects meanwhile).
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Print the events after `from` (of `kinds` only, unless empty; of the
/// main stream, and the traffic's with `traffic`); with `follow`, keep
/// printing new ones.
pub async fn run(
    target: &Target,
    follow: bool,
    from: &str,
    (kinds, traffic): (&[String], bool),
    json: bool,
) -> Result<(), Failure> {
    let from: EventCursor = from.parse()?;
    let kinds = kind_filter(kinds)?;
    let streams = streams_read(&kinds, traffic);
    let sharded = target.is_sharded();
    let print = |event: &QueueEvent| {
        if kinds.is_empty() || kinds.iter().any(|k| k.as_str() == event.kind) {
            outln!("{}", line(event, sharded, json));
        }
    };
    if !follow {
        for event in target.events_since_in(&streams, from).await? {
            print(&event);
        }
        return Ok(());
    }
    let events = target.follow_streams(&streams, from).await?;
    tokio::pin!(events);
    let interrupted = super::interrupt::interrupted();
    tokio::pin!(interrupted);
    loop {
        let next = tokio::select! {
            _ = &mut interrupted => return Ok(()),
            next = events.next() => next,
        };
        match next {
            Some(Ok(event)) => print(&event),
            Some(Err(e)) => {
                eprintln!(
                    "redq: reading events failed ({}); reading on from the last event shown",
                    read_failed(&e)
                );
                tokio::select! {
                    _ = &mut interrupted => return Ok(()),
                    _ = tokio::time::sleep(RETRY_AFTER) => {}
                }
            }
            None => return Ok(()),
        }
    }
}

/// The streams to read: those holding `kinds` when some are named, else
/// the main one, and the traffic's with `traffic`.
fn streams_read(kinds: &[EventKind], traffic: bool) -> Vec<EventStream> {
    match (kinds.is_empty(), traffic) {
        (false, _) => EventStream::holding(kinds),
        (true, true) => EventStream::BOTH.to_vec(),
        (true, false) => vec![EventStream::Main],
    }
}

/// The kinds `--kind` names, each one the driver knows.
fn kind_filter(names: &[String]) -> Result<Vec<EventKind>, Failure> {
    names
        .iter()
        .map(|name| {
            EventKind::of(name.trim()).ok_or_else(|| {
                let accepted: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
                Failure::Usage(format!(
                    "--kind {name:?} is not a kind of event; accepted: {}",
                    accepted.join(", ")
                ))
            })
        })
        .collect()
}

/// One event as a line of text or of JSON.
fn line(event: &QueueEvent, sharded: bool, json: bool) -> String {
    if json {
        json_line(event)
    } else {
        text_line(event, sharded)
    }
}

/// One event as JSON on one line, every field there (scripts read fixed
/// fields).
fn json_line(event: &QueueEvent) -> String {
    let value = json!({
        "event_id": event.event_id,
        "kind": event.kind,
        "queue": event.queue,
        "job_id": event.job_id,
        "name": event.name,
        "attempts": event.attempts,
        "count": event.count,
        "by": event.by,
        "detail": event.detail,
        "error": event.error,
        "at": time(event.at),
        "namespace": event.namespace,
    });
    json_text(&value, false)
}

/// One event as a line for people: the fixed columns, then only the
/// fields that say something about this event (`attempts=0` on a pause
/// would state a count of something that has none).
fn text_line(event: &QueueEvent, sharded: bool) -> String {
    let mut out = format!(
        "{}  {}  {}  {}  {}",
        event.event_id,
        clock::rfc3339(event.at),
        inert(&event.kind),
        inert(or_dash(&event.queue)),
        inert(or_dash(&event.job_id)),
    );
    if attempts_mean_something(event) {
        out.push_str(&format!("  attempts={}", event.attempts));
    }
    if let Some(name) = &event.name {
        out.push_str(&format!("  name={}", inert(name)));
    }
    if let Some(count) = event.count {
        out.push_str(&format!("  count={count}"));
    }
    if let Some(by) = &event.by {
        out.push_str(&format!("  by={}", inert(by)));
    }
    if let Some(detail) = &event.detail {
        out.push_str(&format!("  detail={}", inert(detail)));
    }
    if sharded {
        out.push_str(&format!("  shard={}", inert(&event.namespace)));
    }
    if !event.error.is_empty() {
        out.push_str(&format!("  error={}", inert(&event.error)));
    }
    out
}

/// The kinds whose `job_id` field names something else than a job: a
/// schedule, or a workflow's gate.
const JOB_ID_NAMES_NO_JOB: [EventKind; 7] = [
    EventKind::ScheduleCreated,
    EventKind::ScheduleChanged,
    EventKind::SchedulePaused,
    EventKind::ScheduleResumed,
    EventKind::ScheduleDeleted,
    EventKind::GateDone,
    EventKind::GateCancelled,
];

/// Whether the event's attempt count means something: it is about one job
/// (names it by its id), or it is a requeue, whose count is the counter
/// its jobs restart at however many there were.
fn attempts_mean_something(event: &QueueEvent) -> bool {
    let kind = EventKind::of(&event.kind);
    if kind == Some(EventKind::Requeued) {
        return true;
    }
    let names_other = kind.is_some_and(|k| JOB_ID_NAMES_NO_JOB.contains(&k));
    !event.job_id.is_empty() && !names_other
}

/// A field the event does not have, as a placeholder that keeps the columns.
fn or_dash(text: &str) -> &str {
    if text.is_empty() {
        "-"
    } else {
        text
    }
}
