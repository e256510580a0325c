//! `redq events`: the `{ns}:events` stream, one line per event, from a
//! position (`--from start|now|ID`); with `--follow` it then waits for new
//! ones (the driver's blocking subscription) until Ctrl-C, saying on
//! stderr when Redis stops answering, answers again, or lost the history
//! (`follow.rs`).
//!
//! A line is `ID  TIME  KIND  QUEUE  JOB  [attempts=N]  [name=…]
//! [count=N]  [by=…]  [detail=…]  [error=…]` (plus `shard=…` with
//! `--shards`; QUEUE and JOB are `-` when the event has none; `attempts=`
//! only for the kinds that carry a count, a failed attempt's or a
//! requeue's, `error=` only when there is one), or with `-o json` one
//! object a line, every field always there and `null` when the event has
//! none (`crate::event_fields` reads what each kind's fields name).
//! The ID first: `--from ID` resumes after it. Every kind the main stream
//! carries is printed (`redq::events::EventKind`), with `--traffic` the
//! traffic stream's `enqueued` and `completed` as well (merged by time;
//! over two streams `--from ID` means "after that instant", as over
//! shards), or with `--kind K,…` only those kinds, from the streams that
//! hold them (a name the driver does not know is refused, the accepted
//! ones listed).

mod follow;

use redq::events::{EventCursor, EventKind, EventStream};
use redq::QueueEvent;
use serde_json::json;

use crate::aggregate::Target;
use crate::cli::Connection;
use crate::clock;
use crate::event_fields::{self, Subject};
use crate::failure::Failure;
use crate::output::{json_text, outln, time};
use crate::text::inert;

/// Print the events after `from` (of `kinds` only, unless empty; of the
/// main stream, and the traffic's with `traffic`); with `follow`, keep
/// printing new ones.
pub async fn run(
    connection: &Connection,
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
    // Whether it printed the event: --follow names the last one printed.
    let print = |event: &QueueEvent| {
        let shown = kinds.is_empty() || kinds.iter().any(|k| k.as_str() == event.kind);
        if shown {
            outln!("{}", line(event, sharded, json));
        }
        shown
    };
    if !follow {
        for event in target.events_since_in(&streams, from).await? {
            print(&event);
        }
        return Ok(());
    }
    follow::follow(connection, target, &streams, from, print).await
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

/// One event as JSON on one line. Every field is there (scripts read
/// fixed fields), `null` where the event has none: no queue (a worker's
/// kinds), no job (`job_id` names only a job: a schedule's name is in
/// `schedule`, a gate's id in `gate`), no attempt count (only `retried`,
/// `dead` and `requeued` carry one), no error.
fn json_line(event: &QueueEvent) -> String {
    let some = |text: &str| (!text.is_empty()).then(|| text.to_owned());
    let job = match event_fields::subject(event) {
        Subject::Job(id) => Some(id),
        _ => None,
    };
    let value = json!({
        "event_id": event.event_id,
        "kind": event.kind,
        "queue": some(&event.queue),
        "job_id": job,
        "schedule": event_fields::schedule(event),
        "gate": event_fields::gate(event),
        "name": event.name,
        "attempts": event_fields::attempts(event),
        "count": event.count,
        "by": event.by,
        "detail": event.detail,
        "error": some(&event.error),
        "at": time(event.at),
        "namespace": event.namespace,
    });
    json_text(&value, false)
}

/// One event as a line for people: the fixed columns, then only the
/// fields that say something about this event (`attempts=0` on a pause
/// would state a count of something that has none). JOB is the id field
/// as the stream has it: for a schedule's changes the schedule's name, for
/// a gate's kinds the gate.
fn text_line(event: &QueueEvent, sharded: bool) -> String {
    let mut out = format!(
        "{}  {}  {}  {}  {}",
        event.event_id,
        clock::rfc3339(event.at),
        inert(&event.kind),
        inert(or_dash(&event.queue)),
        inert(or_dash(&event.job_id)),
    );
    if let Some(attempts) = event_fields::attempts(event) {
        out.push_str(&format!("  attempts={attempts}"));
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

/// A field the event does not have, as a placeholder that keeps the columns.
fn or_dash(text: &str) -> &str {
    if text.is_empty() {
        "-"
    } else {
        text
    }
}
