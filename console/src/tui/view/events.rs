//! Screen 6: the event feed, every kind of transition but the traffic's
//! (`enqueued` and `completed`, a stream of their own which a filter
//! searches too; `/kind:dead` keeps one kind), with who did an operator
//! action.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;
use redq::events::EventKind;

use super::table::{self, Column, Item, List};
use crate::clock;
use crate::event_fields::{self, Subject};
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let events = state.visible_events();
    let shard = table::ShardColumn::new(&state.settings.shards);
    // Who did it: only operator actions say, so most rows have no one. The
    // column is there while some row has someone, and at 80 columns it
    // goes before WHAT (the error) is cut below its floor.
    let any_by = events.iter().any(|e| e.by.is_some());
    let rows = events
        .iter()
        .map(|e| {
            let kind = Item::new(&e.kind);
            let mut what_by = vec![Item::new(what(e))];
            if any_by {
                what_by.insert(0, Item::new(e.by.as_deref().unwrap_or("—")));
            }
            // The job id is the first column the shard qualifies: the
            // SHARD column goes after TIME here, as after JOB elsewhere.
            let mut items = vec![
                Item::new(clock::short(e.at, now)),
                match EventKind::of(&e.kind) {
                    Some(EventKind::Dead | EventKind::WorkerLost) => kind.style(theme.error()),
                    // The job is safe, but the worker's subscription
                    // broke or lagged, or its connection dropped a
                    // claim's reply: worth a look.
                    Some(EventKind::HandoffLost | EventKind::ClaimLost) => kind.style(theme.warn()),
                    _ => kind,
                },
                Item::new(if e.queue.is_empty() { "—" } else { &e.queue }),
                Item::new(subject(e)),
                Item::new(e.name.as_deref().unwrap_or("—")),
                Item::new(failed(e)),
            ];
            items.extend(what_by);
            shard.cells(items, &e.namespace)
        })
        .collect::<Vec<_>>();
    let empty = if state.filter().is_empty() {
        vec![
            "no events yet".to_owned(),
            "failures, reclaims, workers and operator actions show here as they happen".to_owned(),
            // The traffic's stream is apart (redq::events::EventStream): a
            // busy queue with nothing else to show is not an empty one.
            "enqueues, completions and push-backs are apart: a filter (/) searches them too"
                .to_owned(),
        ]
    } else {
        vec!["no event matches the filter (kind:NAME keeps one kind)".to_owned()]
    };
    // WHO, not BY: beside FAILED the headers read as one phrase ("FAILED
    // BY"), as if FAILED counted what the operator failed.
    let mut columns = vec![
        Column::whole("TIME"),
        Column::name("KIND"),
        Column::name("QUEUE"),
        Column::id("JOB"),
        Column::name("NAME").optional(1),
        Column::number("FAILED").optional(2),
    ];
    if any_by {
        columns.push(Column::name("WHO").optional(3));
    }
    columns.push(Column::text("WHAT"));
    let mut list = List {
        // How far back the stream goes: an empty screen or a missing dead
        // letter means nothing older than this was kept.
        title: match state.data.event_reach {
            Some(reach) => format!(
                " Events: latest {} · the stream reaches back {} ",
                events.len(),
                clock::compact(reach)
            ),
            None => format!(" Events: latest {} ", events.len()),
        },
        columns,
        rows,
        selected: state.cursor().index,
        empty,
    };
    shard.add_to(&mut list);
    table::draw(frame, area, list, theme);
}

/// The job, or how many jobs a batch's event covers; for a change to a
/// schedule the schedule its id names, for a gate's kinds the gate.
fn subject(e: &redq::QueueEvent) -> String {
    match event_fields::subject(e) {
        Subject::Schedule(name) => format!("schedule {name}"),
        Subject::Gate(id) => format!("gate {id}"),
        Subject::Job(id) => id.to_owned(),
        Subject::None => match e.count {
            Some(1) => "1 job".to_owned(),
            Some(n) => format!("{n} jobs"),
            None => "—".to_owned(),
        },
    }
}

/// The error of a failed attempt, else the kind's own words.
/// The failed attempts a retry or dead letter had made. An event does not
/// keep the job's limit, so the count stands alone (a `1/?` read as a
/// question); a requeue's count is where attempts restart, said in WHAT.
fn failed(e: &redq::QueueEvent) -> String {
    match EventKind::of(&e.kind) {
        Some(EventKind::Requeued) => "—".to_owned(),
        _ if e.attempts > 0 => e.attempts.to_string(),
        _ => "—".to_owned(),
    }
}

fn what(e: &redq::QueueEvent) -> String {
    if !e.error.is_empty() {
        return e.error.clone();
    }
    if EventKind::of(&e.kind) == Some(EventKind::Requeued) {
        return format!("attempts restart at {}", e.attempts);
    }
    e.detail.clone().unwrap_or_default()
}
