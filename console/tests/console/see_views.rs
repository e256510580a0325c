//! What an operator could not see before, rendered at 80×24 and 140×42
//! with TestBackend: BLOCKED and LAPSED on the Queues screen, help that
//! scrolls, the frozen header, a sorted column, quiet and gone workers.

use redq::worker::WorkerState;
use redq_console::tui::state::{Action, Screen, State, WorkerInfo};

use crate::common::*;
use crate::views::screen_text;

fn at(state: &mut State, width: u16, height: u16) -> String {
    state.apply(Action::Resize(width, height));
    screen_text(state, width, height)
}

fn sized(width: u16, height: u16, actions: &[Action]) -> (State, String) {
    let mut state = loaded();
    state.apply(Action::Resize(width, height));
    press(&mut state, actions);
    let text = screen_text(&state, width, height);
    (state, text)
}

#[test]
fn queues_show_blocked_and_lapsed_at_80x24_and_140x42() {
    let (_, small) = sized(80, 24, &[]);
    let (_, large) = sized(140, 42, &[]);
    let header = |text: &str| {
        text.lines()
            .find(|l| l.contains("QUEUE"))
            .unwrap()
            .to_owned()
    };
    assert!(
        header(&large).contains("BLOCKED") && header(&large).contains("LAPSED"),
        "{large}"
    );
    // At 80 columns LAPSED makes way (its badge still names the queue).
    assert!(header(&small).contains("BLOCKED"), "{small}");
    assert!(small.contains("LAPSED"), "the badge: {small}");
    insta::assert_snapshot!("queues_blocked_lapsed_80x24", small);
    insta::assert_snapshot!("queues_blocked_lapsed_140x42", large);
}

#[test]
fn without_blocked_or_lapsed_jobs_the_columns_are_left_out() {
    let mut state = loaded();
    let mut snapshot = snapshot();
    for row in &mut snapshot.queues {
        row.counts.blocked = 0;
        row.counts.lapsed = 0;
    }
    state.apply(Action::Received(
        redq_console::tui::state::Update::Snapshot {
            snapshot: Box::new(snapshot),
            received_at: now(),
        },
    ));
    let text = at(&mut state, 100, 30);
    assert!(
        !text.contains("BLOCKED") && !text.contains("LAPSED "),
        "{text}"
    );
}

#[test]
fn help_fits_80x24_and_scrolls_to_its_last_line() {
    let (mut state, top) = sized(80, 24, &[Action::ToggleHelp]);
    insta::assert_snapshot!("help_80x24_top", top);
    // Every row is whole: nothing runs into the border.
    assert!(top.lines().all(|l| !l.contains("…")), "{top}");
    press(&mut state, &[Action::HelpPage(true)]);
    let second = screen_text(&state, 80, 24);
    assert_ne!(top, second);
    press(&mut state, &[Action::HelpScroll(i64::MAX / 2)]);
    let end = screen_text(&state, 80, 24);
    insta::assert_snapshot!("help_80x24_end", end);
    // The last binding of the table is on screen at the end.
    assert!(end.contains("top, end (Home, End)"), "{end}");
    let (_, large) = sized(140, 42, &[Action::ToggleHelp]);
    insta::assert_snapshot!("help_140x42", large);
}

#[test]
fn frozen_says_so_and_since_when_in_the_header() {
    let (_, text) = sized(80, 24, &[Action::ToggleFreeze]);
    let title = text.lines().next().unwrap();
    assert!(
        title.contains("FROZEN since 22:37:05 UTC (f resumes)"),
        "{title}"
    );
    insta::assert_snapshot!("frozen_80x24", text);
}

#[test]
fn a_sorted_column_shows_its_arrow() {
    // o: QUEUE ▲, o: WAITING ▲, O: WAITING ▼.
    let (_, text) = sized(
        140,
        42,
        &[Action::SortNext, Action::SortNext, Action::SortReverse],
    );
    assert!(text.contains("WAITING▼"), "{text}");
    insta::assert_snapshot!("queues_sorted_by_waiting_140x42", text);
}

/// The console on the Workers screen, listing `workers`.
fn on_workers(workers: Vec<WorkerInfo>) -> State {
    let mut state = loaded();
    let mut snapshot = snapshot();
    snapshot.workers = Some(workers);
    state.apply(Action::Received(
        redq_console::tui::state::Update::Snapshot {
            snapshot: Box::new(snapshot),
            received_at: now(),
        },
    ));
    press(&mut state, &[Action::Show(Screen::Workers)]);
    state
}

/// The Workers screen at `width` × `height` listing `workers`.
fn workers_screen(workers: Vec<WorkerInfo>, width: u16, height: u16) -> String {
    at(&mut on_workers(workers), width, height)
}

fn with_quiet_and_gone(width: u16, height: u16) -> String {
    let mut workers = workers();
    workers[0].state = WorkerState::Quiet;
    workers.push(WorkerInfo {
        id: "77-1".into(),
        node: 77,
        instance: 1,
        host: "web-9".into(),
        pid: 99,
        started_at: ago(3600),
        queues: vec!["reports".into()],
        in_flight: 2,
        processed: 31,
        failed: 1,
        last_heartbeat: ago(140),
        shards: Vec::new(),
        gone_shards: Vec::new(),
        state: WorkerState::Running,
        gone: true,
        // A gone worker of an earlier version: no column for it alone.
        wake_ups: None,
        version: None,
        handoffs_lost: None,
        claims_lost: None,
    });
    workers_screen(workers, width, height)
}

#[test]
fn workers_show_quiet_ones_and_gone_ones_with_when_they_were_last_seen() {
    let small = with_quiet_and_gone(80, 24);
    let large = with_quiet_and_gone(140, 42);
    for text in [&small, &large] {
        let gone = text.lines().find(|l| l.contains("web-9")).unwrap();
        assert!(
            gone.contains("gone") && gone.contains("last seen 2m20s ago"),
            "{text}"
        );
        assert!(text.contains("2 live, 1 gone in the last 10m15s"), "{text}");
    }
    insta::assert_snapshot!("workers_quiet_gone_80x24", small);
    insta::assert_snapshot!("workers_quiet_gone_140x42", large);
}

fn with_late_hearers(width: u16, height: u16) -> String {
    let mut workers = workers();
    workers[1].wake_ups = Some(redq::worker::WakeUps::Plain);
    workers_screen(workers, width, height)
}

#[test]
fn workers_that_hear_no_shard_channel_are_shown_so() {
    // All hearing shard channels (the fixture): no column.
    let mut state = loaded();
    press(&mut state, &[Action::Show(Screen::Workers)]);
    let usual = at(&mut state, 140, 42);
    assert!(!usual.contains("WAKE-UPS"), "{usual}");
    for text in [with_late_hearers(80, 24), with_late_hearers(140, 42)] {
        assert!(text.contains("WAKE-UPS"), "{text}");
        let late = text.lines().find(|l| l.contains("web-2")).unwrap();
        let usual = text.lines().find(|l| l.contains("web-1")).unwrap();
        assert!(late.contains("plain") && usual.contains("shard"), "{text}");
    }
    insta::assert_snapshot!("workers_wake_ups_140x42", with_late_hearers(140, 42));
}

#[test]
fn a_version_column_appears_while_live_workers_run_more_than_one() {
    let same = workers_screen(workers(), 140, 42);
    assert!(!same.contains("VERSION"), "{same}");
    let mut mixed = workers();
    mixed[1].version = Some("0.2.0".into());
    let text = workers_screen(mixed, 140, 42);
    assert!(text.contains("VERSION"), "{text}");
    let upgraded = text.lines().find(|l| l.contains("web-2")).unwrap();
    let earlier = text.lines().find(|l| l.contains("web-1")).unwrap();
    assert!(
        upgraded.contains("0.2.0") && earlier.contains("0.1.0"),
        "{text}"
    );
}

#[test]
fn a_worker_that_lost_hand_offs_is_shown_with_how_many() {
    // None lost (the fixture): no column, at any width.
    for (width, height) in [(80, 24), (140, 42)] {
        let usual = workers_screen(workers(), width, height);
        assert!(!usual.contains("LOST-HANDOFFS"), "{usual}");
    }
    let mut workers = workers();
    workers[1].handoffs_lost = Some(3);
    for (width, height) in [(80, 24), (140, 42)] {
        let text = workers_screen(workers.clone(), width, height);
        let header = text.lines().find(|l| l.contains("WORKER")).unwrap();
        // The last column, inside the frame's right edge.
        let last = |line: &str| line.split_whitespace().rev().nth(1).map(str::to_owned);
        assert_eq!(last(header).as_deref(), Some("LOST-HANDOFFS"), "{text}");
        let lost = text.lines().find(|l| l.contains("web-2")).unwrap();
        let none = text.lines().find(|l| l.contains("web-1")).unwrap();
        assert_eq!(last(lost).as_deref(), Some("3"), "{text}");
        assert_eq!(last(none).as_deref(), Some("0"), "{text}");
    }
    insta::assert_snapshot!(
        "workers_lost_handoffs_80x24",
        workers_screen(workers, 80, 24)
    );
}

#[test]
fn a_worker_that_lost_claims_is_shown_with_how_many() {
    for (width, height) in [(80, 24), (140, 42)] {
        let usual = workers_screen(workers(), width, height);
        assert!(!usual.contains("LOST-CLAIMS"), "{usual}");
    }
    let mut workers = workers();
    workers[0].claims_lost = Some(2);
    // The two counts side by side when both are shown; each column alone
    // otherwise (the one above shows hand-offs alone).
    let mut both = workers.clone();
    both[1].handoffs_lost = Some(3);
    // The `nth` column from the right, inside the frame's right edge
    // (which a full row touches).
    let last = |line: &str, nth: usize| {
        let inside = line.trim_end().trim_end_matches('│');
        inside.split_whitespace().rev().nth(nth).map(str::to_owned)
    };
    for (width, height) in [(80, 24), (140, 42)] {
        let text = workers_screen(workers.clone(), width, height);
        assert!(!text.contains("LOST-HANDOFFS"), "{text}");
        let header = text.lines().find(|l| l.contains("WORKER")).unwrap();
        assert_eq!(last(header, 0).as_deref(), Some("LOST-CLAIMS"), "{text}");
        let lost = text.lines().find(|l| l.contains("web-1")).unwrap();
        let none = text.lines().find(|l| l.contains("web-2")).unwrap();
        assert_eq!(last(lost, 0).as_deref(), Some("2"), "{text}");
        assert_eq!(last(none, 0).as_deref(), Some("0"), "{text}");

        let text = workers_screen(both.clone(), width, height);
        let header = text.lines().find(|l| l.contains("WORKER")).unwrap();
        assert_eq!(last(header, 1).as_deref(), Some("LOST-HANDOFFS"), "{text}");
        assert_eq!(last(header, 0).as_deref(), Some("LOST-CLAIMS"), "{text}");
        let web1 = text.lines().find(|l| l.contains("web-1")).unwrap();
        let web2 = text.lines().find(|l| l.contains("web-2")).unwrap();
        assert_eq!(
            (last(web1, 1), last(web1, 0)),
            (Some("0".into()), Some("2".into())),
            "{text}"
        );
        assert_eq!(
            (last(web2, 1), last(web2, 0)),
            (Some("3".into()), Some("0".into())),
            "{text}"
        );
    }
    insta::assert_snapshot!("workers_lost_claims_80x24", workers_screen(both, 80, 24));
}

#[test]
fn a_lease_whose_holder_is_gone_says_so() {
    let mut workers = workers();
    workers[0].gone = true;
    let mut state = on_workers(workers);
    press(&mut state, &[Action::Show(Screen::Leases)]);
    let text = at(&mut state, 140, 42);
    // Instance 1 (web-1) holds the emails job; instance 2 (web-2) lives.
    let held_by_gone = text.lines().find(|l| l.contains("emails")).unwrap();
    let held_by_live = text.lines().find(|l| l.contains("thumbnails")).unwrap();
    // On HOLDER, which stays at 80 columns (HOST is the first to go).
    assert!(held_by_gone.contains("2631031545-1 (gone)"), "{text}");
    assert!(!held_by_gone.contains("web-1 (gone)"), "{text}");
    assert!(
        held_by_live.contains("web-2") && !held_by_live.contains("gone"),
        "{text}"
    );
}

#[test]
fn the_workers_filter_finds_the_ones_that_hear_plainly() {
    let mut workers = workers();
    workers[1].wake_ups = Some(redq::worker::WakeUps::Plain);
    let mut state = on_workers(workers);
    state.apply(Action::StartFilter);
    for c in "plain".chars() {
        state.apply(Action::FilterInput(c));
    }
    let shown: Vec<&str> = state
        .visible_workers()
        .iter()
        .map(|w| w.host.as_str())
        .collect();
    assert_eq!(shown, ["web-2"]);
}
