//! The jobs view's blocked tab: a queue with jobs waiting behind the holder
//! of their ordering key shows them as a state of their own, with the key
//! each waits behind; D asks to delete them with their count, and C, which
//! cannot reach them in bulk, is refused before any question.

use crate::common::*;
use crate::views::{assert_headers_whole, line_with, screen_text};
use redq::{JobState, Page};
use redq_console::tui::state::{Action, JobsPage, Level, State, Surgery, Update};

/// The fixture (billing has 4 blocked jobs) with billing's jobs view on its
/// blocked tab, showing `items`.
fn blocked_tab(items: Vec<redq::JobRecord>) -> State {
    let mut state = loaded();
    // billing is the first queue.
    state.apply(Action::Open);
    let mut seen = Vec::new();
    while state.jobs().unwrap().query.state != JobState::Blocked {
        let shown = state.jobs().unwrap().query.state;
        assert!(!seen.contains(&shown), "no blocked tab among {seen:?}");
        seen.push(shown);
        state.apply(Action::NextState);
    }
    let mut snap = snapshot();
    snap.jobs = Some(JobsPage {
        query: state.jobs().unwrap().query.clone(),
        page: Page {
            total: items.len() as u64,
            items,
        },
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap),
        received_at: now(),
    }));
    state
}

fn blocked(i: usize, key: &str) -> redq::JobRecord {
    let mut j = job(&format!("01JDQ5B{i:019}"), "billing", JobState::Blocked);
    j.ordering_key = Some(key.into());
    j
}

#[test]
fn the_blocked_tab_lists_blocked_jobs_with_their_ordering_keys() {
    let state = blocked_tab(vec![
        blocked(0, "customer-7"),
        blocked(1, "customer-7"),
        blocked(2, "customer-9"),
        blocked(3, "customer-9"),
    ]);
    for (w, h) in [(100, 30), (80, 24)] {
        let text = screen_text(&state, w, h);
        assert!(
            line_with(&text, " waiting ").contains(" blocked 4"),
            "{text}"
        );
        assert_headers_whole(&text, &["JOB", "NAME", "ORDERING", "PRIO", "TRIES"]);
        assert!(
            line_with(&text, "B0000000000000000002").contains("customer-9"),
            "{text}"
        );
    }
}

#[test]
fn a_queue_without_blocked_jobs_has_no_blocked_tab() {
    let mut state = loaded();
    state.apply(Action::Down);
    state.apply(Action::Open);
    assert_eq!(state.jobs().unwrap().query.queue, "emails");
    assert!(!state
        .job_states("emails", JobState::Waiting)
        .contains(&JobState::Blocked));
    assert!(state
        .job_states("billing", JobState::Waiting)
        .contains(&JobState::Blocked));
}

#[test]
fn on_the_blocked_tab_delete_all_asks_with_the_count_and_cancel_all_is_refused_at_once() {
    let mut state = blocked_tab(vec![blocked(0, "customer-7")]);
    state.apply(Action::AllJobs(Surgery::Cancel));
    assert!(
        state.confirm().is_none(),
        "no question for a refused change"
    );
    let said = state.status.as_ref().expect("a refusal");
    assert_eq!(said.level, Level::Error);
    assert!(
        said.text.contains("c cancels the selected one"),
        "{}",
        said.text
    );
    state.apply(Action::AllJobs(Surgery::Delete));
    let prompt = state.confirm().expect("D asks first").prompt.clone();
    assert_eq!(prompt, "Delete all 4 blocked jobs of billing for good?");
}
