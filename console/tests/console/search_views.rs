//! The payload search over a queue's jobs view (`S`), drawn with
//! TestBackend at 80×24 and 140×42: the text being typed, then matches as
//! the steps bring them with how far the walk has come, and the end.

use redq::JobState;
use redq_console::tui::state::{Action, SearchStep, State, Update};

use crate::common::*;
use crate::views::screen_text;

/// The jobs view of the first queue, a search for "cus_3" submitted.
fn searching(width: u16, height: u16) -> State {
    let mut state = loaded();
    state.apply(Action::Resize(width, height));
    press(&mut state, &[Action::Open, Action::StartSearch]);
    let typed: Vec<Action> = "cus_3".chars().map(Action::SearchInput).collect();
    press(&mut state, &typed);
    state
}

fn step(state: &mut State, jobs: Vec<redq::JobRecord>, examined: u64, last: bool) {
    let run = state.search_wanted().expect("a search is walking").run;
    state.apply(Action::Received(Update::Search(SearchStep {
        run,
        jobs,
        examined,
        outcome: Ok(last),
    })));
}

fn matches(queue: &str) -> Vec<redq::JobRecord> {
    let with = |id: &str, state: JobState, customer: &str| {
        let mut job = job(id, queue, state);
        // A payload carrying an escape sequence is shown inert.
        job.payload =
            serde_json::json!({"customer": customer, "note": "pay\u{1b}[2Jnow", "total": 1200});
        job
    };
    vec![
        with("01JB8M0000000000000000AAAA", JobState::Waiting, "cus_3"),
        with("01JB8M0000000000000000BBBB", JobState::Leased, "cus_31"),
        with("01JB8M0000000000000000CCCC", JobState::Dead, "cus_3"),
    ]
}

#[test]
fn the_search_results_show_as_the_steps_come_then_the_end_at_80x24_and_140x42() {
    for (width, height) in [(80, 24), (140, 42)] {
        let mut state = searching(width, height);
        let typing = screen_text(&state, width, height);
        assert!(typing.contains("search payloads for: cus_3█"), "{typing}");
        assert!(typing.contains("Enter search"), "the footer: {typing}");
        press(&mut state, &[Action::SearchSubmit]);
        let queue = state.search.as_ref().unwrap().queue.clone();
        step(&mut state, matches(&queue)[..2].to_vec(), 40, false);
        let walking = screen_text(&state, width, height);
        assert!(
            walking.contains("searched 40 of about 98 records…"),
            "{walking}"
        );
        assert!(
            walking.contains("AAAA") && walking.contains("BBBB"),
            "{walking}"
        );
        assert!(
            walking.contains("\"customer\":\"cus_3\""),
            "the payload excerpt: {walking}"
        );
        assert!(
            !walking.contains('\u{1b}'),
            "payloads are made inert: {walking}"
        );
        step(&mut state, matches(&queue), 58, true);
        let done = screen_text(&state, width, height);
        assert!(
            done.contains("done: searched 98 records, 3 matches"),
            "{done}"
        );
        assert!(done.contains("c cancel all"), "the footer: {done}");
        insta::assert_snapshot!(format!("search_walking_{width}x{height}"), walking);
        insta::assert_snapshot!(format!("search_done_{width}x{height}"), done);
    }
}

#[test]
fn esc_stops_the_walk_and_a_second_esc_goes_back_to_the_jobs() {
    let mut state = searching(100, 30);
    press(&mut state, &[Action::SearchSubmit]);
    assert!(state.search_wanted().is_some());
    press(&mut state, &[Action::Back]);
    assert_eq!(state.search_wanted(), None, "the source is told to stop");
    let stopped = screen_text(&state, 100, 30);
    assert!(stopped.contains("stopped after 0 records"), "{stopped}");
    press(&mut state, &[Action::Back]);
    assert!(state.search.is_none());
    assert!(state.jobs().is_some(), "back on the jobs view");
}

#[test]
fn read_only_refuses_acting_on_the_matches() {
    let mut state = searching(100, 30);
    state.settings.read_only = true;
    press(&mut state, &[Action::SearchSubmit]);
    let queue = state.search.as_ref().unwrap().queue.clone();
    step(&mut state, matches(&queue), 10, true);
    press(
        &mut state,
        &[Action::OnMatches(
            redq_console::tui::state::MatchChange::Cancel,
        )],
    );
    assert!(state.confirm().is_none());
    let said = &state.status.as_ref().unwrap().text;
    assert!(
        said.starts_with("read-only: cancel 3 matching jobs refused"),
        "{said}"
    );
}
