//! The Limits screen (key 7) and what flow control adds to the other views,
//! rendered from the fixture's limiters at the sizes an operator uses.

use crate::common::*;
use crate::views::{assert_headers_whole, line_with, screen_text, with};
use redq::flow::LimitScope;
use redq::{JobState, Page};
use redq_console::tui::state::{
    Action, Command, JobsPage, Mutation, Screen, Snapshot, State, Surgery, Update,
};

const HEADERS: [&str; 8] = [
    "QUEUE",
    "SCOPE",
    "KEY",
    "LIMIT",
    "IN USE",
    "STARTED",
    "HELD",
    "PUSHED BACK",
];

#[test]
fn the_limits_screen_shows_each_limit_its_use_and_what_it_holds_back() {
    let state = with(&[Action::Show(Screen::Limits)]);
    for (w, h) in [(140, 42), (100, 30), (80, 24)] {
        let text = screen_text(&state, w, h);
        assert_headers_whole(&text, &HEADERS);
        // The queue's own limit with its use, the each-key default, then
        // the keys, most held first.
        let queue = line_with(&text, "20 at once, 100/1s");
        assert!(
            queue.contains("9/20") && queue.contains("87/100"),
            "{queue}"
        );
        // Its own limit has room: it holds nothing back itself; the 11
        // held jobs are its keys' (the title counts them all).
        assert!(queue.contains(" 0 "), "held by the queue's limit: {queue}");
        assert!(text.contains("11 jobs held"), "{text}");
        assert!(line_with(&text, "each key").contains("2 at once"), "{text}");
        let globex = line_with(&text, "globex");
        assert!(
            globex.contains("as each key") && globex.contains("2/2"),
            "{globex}"
        );
        let acme = line_with(&text, "acme");
        assert!(acme.contains("key, own") && acme.contains("5/5"), "{acme}");
        let order: Vec<usize> = ["each key", "globex", "acme", "initech"]
            .iter()
            .map(|k| text.find(k).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(line_with(&text, "10/1s").contains("for 12s"), "{text}");
        assert!(text.contains("7 Limits"), "the tab is not cut: {text}");
        insta::assert_snapshot!(format!("limits_{w}x{h}"), text);
    }
}

#[test]
fn the_limits_filter_narrows_by_queue_key_or_scope() {
    let mut state = with(&[Action::Show(Screen::Limits), Action::StartFilter]);
    for c in "glob".chars() {
        state.apply(Action::FilterInput(c));
    }
    state.apply(Action::FilterDone);
    let rows = state.visible_limits();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].key(), Some("globex"));
}

#[test]
fn every_tab_fits_at_80_columns() {
    let text = screen_text(&with(&[]), 80, 24);
    let tabs = text.lines().nth(1).unwrap();
    for title in [
        "1 Queues",
        "2 Leases",
        "3 Dead (5)",
        "4 Sched",
        "5 Workers",
        "6 Events",
        "7 Limits",
        "8 Workflows",
    ] {
        assert!(tabs.contains(title), "{title} missing from {tabs:?}");
    }
    let wide = screen_text(&with(&[]), 140, 42);
    let tabs = wide.lines().nth(1).unwrap();
    assert!(
        tabs.contains("3 Dead letters (5)") && tabs.contains("4 Schedules"),
        "{wide}"
    );
}

/// The fixture with emails holding 11 jobs back (as its limiters say), and
/// the jobs view of its held tab open on `items` when given.
fn holding(held_page: Option<Vec<redq::JobRecord>>) -> State {
    let mut snap = snapshot();
    for row in &mut snap.queues {
        if row.counts.queue == "emails" {
            row.counts.held = 11;
        }
    }
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    let receive = |state: &mut State, snap: &Snapshot| {
        state.apply(Action::Received(Update::Snapshot {
            snapshot: Box::new(snap.clone()),
            received_at: now(),
        }));
    };
    receive(&mut state, &snap);
    let Some(items) = held_page else {
        return state;
    };
    // emails is the second queue; its held tab comes after dead.
    state.apply(Action::Down);
    state.apply(Action::Open);
    while state.jobs().unwrap().query.state != JobState::Held {
        state.apply(Action::NextState);
    }
    snap.jobs = Some(JobsPage {
        query: state.jobs().unwrap().query.clone(),
        page: Page {
            total: items.len() as u64,
            items,
        },
    });
    receive(&mut state, &snap);
    state
}

#[test]
fn queues_show_a_held_column_only_while_some_queue_holds_jobs() {
    let text = screen_text(&with(&[]), 100, 30);
    assert!(!text.contains("HELD"), "{text}");
    let state = holding(None);
    for (w, h) in [(100, 30), (80, 24)] {
        let text = screen_text(&state, w, h);
        // At 80 columns SCHED (future jobs) makes way before HELD.
        let headers: &[&str] = match w {
            80 => &["QUEUE", "WAITING", "LEASED", "HELD", "DEAD", "OLDEST"],
            _ => &[
                "QUEUE", "WAITING", "SCHED", "LEASED", "HELD", "DEAD", "OLDEST",
            ],
        };
        assert_headers_whole(&text, headers);
        let header: Vec<&str> = line_with(&text, "QUEUE").split_whitespace().collect();
        let emails: Vec<&str> = line_with(&text, "emails").split_whitespace().collect();
        let held = header.iter().position(|h| *h == "HELD").unwrap();
        assert_eq!(emails[held], "11", "{text}");
    }
    insta::assert_snapshot!("queues_holding_jobs", screen_text(&state, 100, 30));
}

#[test]
fn the_held_tab_lists_held_jobs_with_their_keys() {
    let held = |i: usize, key: &str| {
        let mut j = job(&format!("01JDQ5H{i:019}"), "emails", JobState::Held);
        j.limit_key = Some(key.into());
        j
    };
    let state = holding(Some(vec![
        held(0, "globex"),
        held(1, "globex"),
        held(2, "acme"),
    ]));
    let text = screen_text(&state, 100, 30);
    assert!(line_with(&text, " waiting ").contains(" held 11"), "{text}");
    assert_headers_whole(&text, &["JOB", "NAME", "KEY", "PRIO", "TRIES", "ENQUEUED"]);
    assert!(
        line_with(&text, "01JDQ5H0000000000000000002").contains("acme"),
        "{text}"
    );
    insta::assert_snapshot!("held_jobs_of_a_queue", text);
    // D and C on the held tab ask with the held count.
    let mut state = state;
    state.apply(Action::AllJobs(Surgery::Delete));
    let prompt = state.confirm().expect("D asks first").prompt.clone();
    assert_eq!(prompt, "Delete all 11 held jobs of emails for good?");
}

#[test]
fn x_asks_before_clearing_a_limit_and_names_it() {
    let mut state = with(&[Action::Show(Screen::Limits), Action::ClearLimit]);
    let prompt = state.confirm().expect("x asks first").prompt.clone();
    assert_eq!(
        prompt,
        "Clear the queue-wide limit of emails (20 at once, 100/1s)? \
         Jobs it holds back start as the other limits allow."
    );
    insta::assert_snapshot!("limits_confirm_clear", screen_text(&state, 100, 30));
    let sent = press(&mut state, &[Action::Confirm]);
    assert_eq!(
        sent.last(),
        Some(&Command::Mutate(Mutation::ClearLimit {
            queue: "emails".into(),
            scope: LimitScope::Queue,
        }))
    );

    // A key the default covers has nothing of its own to clear: said, not
    // asked.
    let mut state = with(&[Action::Show(Screen::Limits)]);
    while state.visible_limits()[state.cursor().index].key() != Some("globex") {
        state.apply(Action::Down);
    }
    state.apply(Action::ClearLimit);
    assert!(state.confirm().is_none());
    let said = state
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        said.starts_with("key globex has no limit of its own"),
        "{said}"
    );
    // Its own limit, a key has.
    state.apply(Action::Down);
    state.apply(Action::ClearLimit);
    assert!(state
        .confirm()
        .unwrap()
        .prompt
        .starts_with("Clear the key \"acme\" limit of emails (5 at once)?"));

    // Read-only refuses before asking.
    let mut state = with(&[Action::Show(Screen::Limits)]);
    state.settings.read_only = true;
    state.apply(Action::ClearLimit);
    assert!(state.confirm().is_none());
    let said = state
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        said.starts_with("read-only: clearing a limit refused"),
        "{said}"
    );
}
