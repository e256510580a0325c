//! The Events screen with every kind of event: who did an operator action
//! (BY), a batch's count in place of a job, the kind's own words (WHAT), and
//! `/kind:NAME` keeping one kind.

use redq::QueueEvent;
use redq_console::tui::state::{Action, Screen, State, Update};

use crate::common::*;
use crate::views::screen_text;

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
            detail: Some("queue: concurrency 4, rate 0 per 0 ms".into()),
            ..event(3, "limit_set", "emails")
        },
        events().remove(0),
    ];
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Events));
    state
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
        "queue: concurrency 4, rate 0 per 0 ms",
        "dead",
        "BY",
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
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Events));
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
