//! The Events screen with every kind of event: who did an operator action
//! (BY), a batch's count in place of a job, the kind's own words (WHAT), and
//! `/kind:NAME` keeping one kind.

use redq::QueueEvent;
use redq_console::tui::state::{Action, Screen, Snapshot, State, Update};
use redq_console::tui::theme::Theme;

use crate::common::*;
use crate::views::{screen_text, terminal};

fn event(i: usize, kind: &str, queue: &str) -> QueueEvent {
    QueueEvent {
        event_id: format!("1764455820000-{i}"),
        kind: kind.into(),
        queue: queue.into(),
        job_id: String::new(),
        name: None,
        error: String::new(),
        attempts: 0,
        count: None,
        by: None,
        detail: None,
        at: ago(10 + i as u64),
        namespace: "redq".into(),
    }
}

/// The Events screen of a console that received `snapshot`.
fn events_screen(snapshot: Snapshot) -> State {
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Events));
    state
}

fn with_every_kind() -> State {
    let mut snapshot = snapshot();
    snapshot.events = vec![
        QueueEvent {
            by: Some("cli ops@bastion".into()),
            ..event(0, "paused", "emails")
        },
        QueueEvent {
            count: Some(40),
            ..event(1, "completed", "emails")
        },
        QueueEvent {
            detail: Some("2636283641-7".into()),
            ..event(2, "worker_lost", "")
        },
        QueueEvent {
            by: Some("console ana@laptop".into()),
            detail: Some("queue: concurrency 4, rate 100 per 1000 ms".into()),
            ..event(3, "limit_set", "emails")
        },
        events().remove(0),
    ];
    events_screen(snapshot)
}

#[test]
fn every_kind_shows_with_who_did_it_and_what() {
    let text = screen_text(&with_every_kind(), 140, 30);
    for wanted in [
        "paused",
        "cli ops@bastion",
        "completed",
        "40 jobs",
        "worker_lost",
        "2636283641-7",
        "limit_set",
        "console ana@laptop",
        "queue: concurrency 4, rate 100 per 1000 ms",
        "dead",
        "WHO",
        "WHAT",
    ] {
        assert!(text.contains(wanted), "{wanted} missing:\n{text}");
    }
    assert!(text.contains("Events: latest 5 "), "{text}");
}

#[test]
fn kind_filter_keeps_one_kind() {
    let mut state = with_every_kind();
    state.apply(Action::StartFilter);
    for c in "kind:worker".chars() {
        state.apply(Action::FilterInput(c));
    }
    let text = screen_text(&state, 140, 30);
    assert!(text.contains("Events: latest 1 "), "{text}");
    assert!(text.contains("worker_lost"), "{text}");
    for gone in ["paused", "completed", "limit_set", "HTTP 503"] {
        assert!(!text.contains(gone), "{gone} still shown:\n{text}");
    }
}

#[test]
fn a_schedule_change_shows_the_schedule_it_names_and_who_did_it() {
    let mut snapshot = snapshot();
    snapshot.events = vec![
        QueueEvent {
            job_id: "nightly-report".into(),
            by: Some("cli ops@bastion".into()),
            detail: Some("payload, priority".into()),
            ..event(0, "schedule_changed", "reports")
        },
        QueueEvent {
            by: Some("console ana@laptop".into()),
            detail: Some("count 100, age 7d, tombstones 1d".into()),
            ..event(1, "retention_set", "emails")
        },
    ];
    let state = events_screen(snapshot);
    let text = screen_text(&state, 140, 30);
    for wanted in [
        "schedule_changed",
        "schedule nightly-report",
        "cli ops@bastion",
        "payload, priority",
        "retention_set",
        "console ana@laptop",
        "count 100, age 7d, tombstones 1d",
    ] {
        assert!(text.contains(wanted), "{wanted} missing:\n{text}");
    }
}

/// The kinds an operator should not miss stand out: a dead letter and a
/// lost worker in the error colour, a lost hand-off or claim (the job is
/// safe, the worker's subscription or connection is not) in the warning
/// colour.
#[test]
fn trouble_stands_out_by_colour() {
    let mut snapshot = snapshot();
    // The selected first row has the selection's colours: the others do not.
    snapshot.events = vec![
        event(0, "paused", "emails"),
        QueueEvent {
            job_id: "01KHANDOFF".into(),
            detail: Some("2636283641-7".into()),
            ..event(1, "handoff_lost", "emails")
        },
        event(2, "completed", "emails"),
        event(3, "dead", "emails"),
        QueueEvent {
            job_id: "01KCLAIMED".into(),
            detail: Some("2636283641-7".into()),
            ..event(4, "claim_lost", "emails")
        },
    ];
    let state = events_screen(snapshot);
    let terminal = terminal(&state, 140, 30, true);
    let buffer = terminal.backend().buffer();
    // The colour of the first cell of `word` in the first event row that
    // has it (rows of the queue `emails`: not the tabs or the title).
    let colour_of = |word: &str| {
        (0..30u16)
            .find_map(|y| {
                let row: String = (0..140u16).map(|x| buffer[(x, y)].symbol()).collect();
                let at = row
                    .find(&format!(" {word} "))
                    .filter(|_| row.contains("emails"))?
                    + 1;
                // Each cell holds one character here (ASCII before it).
                let x = row[..at].chars().count() as u16;
                Some(buffer[(x, y)].fg)
            })
            .unwrap_or_else(|| panic!("{word} not on the screen"))
    };
    let theme = Theme::new(true);
    assert_eq!(Some(colour_of("handoff_lost")), theme.warn().fg);
    assert_eq!(Some(colour_of("claim_lost")), theme.warn().fg);
    assert_eq!(Some(colour_of("dead")), theme.error().fg);
    assert_ne!(Some(colour_of("completed")), theme.warn().fg);
    assert_ne!(Some(colour_of("completed")), theme.error().fg);
}

/// With no events in the main stream the screen says what shows there and
/// that the traffic is apart: a busy queue with nothing else to show is not
/// read as an idle one.
#[test]
fn an_empty_events_screen_says_the_traffic_is_searched_apart() {
    let mut snapshot = snapshot();
    snapshot.events = Vec::new();
    let state = events_screen(snapshot);
    let text = screen_text(&state, 100, 30);
    assert!(text.contains("no events yet"), "{text}");
    assert!(
        text.contains(
            "enqueues, completions and push-backs are apart: a filter (/) searches them too"
        ),
        "{text}"
    );
}

/// The title says how far back the main stream reaches, so a dead letter
/// missing from the screen is read against what the stream still keeps.
#[test]
fn the_title_says_how_far_back_the_stream_reaches() {
    let mut snapshot = snapshot();
    snapshot.event_reach = Some(std::time::Duration::from_secs(252));
    let state = events_screen(snapshot);
    let text = screen_text(&state, 100, 30);
    assert!(text.contains("the stream reaches back 4m12s"), "{text}");
}
