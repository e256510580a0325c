//! The keys for seeing: `f` freezes, `i` copies the selected id, `o`/`O`
//! sort, help scrolls; through the key table, from fixed states.

use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use redq_console::tui::input::action_for;
use redq_console::tui::state::{Action, Command, Overlay, Screen, State, Update};

use crate::common::*;

/// Press keys; the commands they produced.
fn keys(state: &mut State, codes: &[KeyCode]) -> Vec<Command> {
    let mut out = Vec::new();
    for code in codes {
        let event = KeyEvent::new(*code, KeyModifiers::NONE);
        if let Some(action) = action_for(state, &event) {
            out.push(state.apply(action));
        }
    }
    out
}

fn chars(text: &str) -> Vec<KeyCode> {
    text.chars().map(KeyCode::Char).collect()
}

fn queue_order(state: &State) -> Vec<String> {
    state
        .visible_queues()
        .iter()
        .map(|q| q.counts.queue.clone())
        .collect()
}

#[test]
fn f_sets_snapshots_aside_until_pressed_again() {
    let mut state = loaded();
    keys(&mut state, &chars("f"));
    assert!(state.frozen.is_some());
    let before = state.data.clone();
    let mut newer = snapshot();
    newer.queues[0].counts.waiting = 999;
    newer.redis_now = now() + Duration::from_secs(5);
    let newer_update = Update::Snapshot {
        snapshot: Box::new(newer),
        received_at: now() + Duration::from_secs(5),
    };
    state.apply(Action::Received(newer_update.clone()));
    assert_eq!(state.data, before, "frozen: the data stays as it was");
    // Shown at the frozen snapshot's time, not the clock's.
    assert_eq!(state.data_time(now() + Duration::from_secs(60)), now());
    // Actions still ask while frozen.
    keys(&mut state, &chars("p"));
    assert!(matches!(state.overlay, Overlay::Confirm(_)));
    keys(&mut state, &chars("n"));
    keys(&mut state, &chars("f"));
    assert!(state.frozen.is_none());
    state.apply(Action::Received(newer_update));
    assert_eq!(state.data.queues[0].counts.waiting, 999);
}

#[test]
fn i_copies_the_selected_id_and_says_what_it_copied() {
    let mut state = loaded();
    keys(&mut state, &chars("3j"));
    let id = state.visible_dead()[1].id.clone();
    let commands = keys(&mut state, &chars("i"));
    assert_eq!(commands.last(), Some(&Command::Copy(id.clone())));
    let said = &state.status.as_ref().unwrap().text;
    assert_eq!(
        said,
        &format!("copied job id {id} to the clipboard (OSC 52)")
    );
    keys(&mut state, &chars("5"));
    let worker = state.visible_workers()[0].id.clone();
    assert_eq!(keys(&mut state, &chars("i")), vec![Command::Copy(worker)]);
    keys(&mut state, &chars("4"));
    assert_eq!(
        keys(&mut state, &chars("i")),
        vec![Command::Copy("digest-every-minute".into())]
    );
    // While a filter is typed, `i` is a letter of it.
    keys(&mut state, &chars("/i"));
    assert_eq!(state.filter(), "i");
}

#[test]
fn o_cycles_the_sort_column_and_o_shifted_reverses_it_per_screen() {
    let mut state = loaded();
    let own = queue_order(&state);
    keys(&mut state, &chars("o"));
    assert_eq!(state.sort().map(|s| s.column), Some("QUEUE"));
    let mut by_name = own.clone();
    by_name.sort();
    assert_eq!(queue_order(&state), by_name);
    keys(&mut state, &chars("oO"));
    let sort = state.sort().unwrap();
    assert_eq!((sort.column, sort.descending), ("WAITING", true));
    let waiting: Vec<u64> = state
        .visible_queues()
        .iter()
        .map(|q| q.counts.waiting)
        .collect();
    assert!(waiting.windows(2).all(|w| w[0] >= w[1]), "{waiting:?}");
    // The selection follows its row, and acting on it acts on what is drawn.
    let selected = state.visible_queues()[state.cursor().index]
        .counts
        .queue
        .clone();
    keys(&mut state, &chars("p"));
    let asked = match &state.overlay {
        Overlay::Confirm(c) => c.prompt.clone(),
        other => panic!("{other:?}"),
    };
    assert!(asked.contains(&selected), "{asked}");
    keys(&mut state, &chars("n"));
    // Another screen keeps its own sort; coming back finds this one.
    keys(&mut state, &chars("2"));
    assert_eq!(state.sort(), None);
    keys(&mut state, &chars("1"));
    assert_eq!(state.sort().map(|s| s.column), Some("WAITING"));
    // Past the last column: the screen's own order again.
    for _ in 0..20 {
        if state.sort().is_none() {
            break;
        }
        keys(&mut state, &chars("o"));
    }
    assert_eq!(queue_order(&state), own);
}

#[test]
fn ties_keep_the_screens_own_order() {
    let mut state = loaded();
    // Sorted by SCHED: billing, reports and emails... those with 0 keep
    // their order by name among themselves.
    let own = queue_order(&state);
    keys(&mut state, &chars("oo"));
    keys(&mut state, &chars("o"));
    assert_eq!(state.sort().map(|s| s.column), Some("SCHED"));
    let zeros: Vec<String> = state
        .visible_queues()
        .iter()
        .filter(|q| q.counts.scheduled == 0)
        .map(|q| q.counts.queue.clone())
        .collect();
    let own_zeros: Vec<String> = own.into_iter().filter(|q| zeros.contains(q)).collect();
    assert_eq!(zeros, own_zeros);
}

#[test]
fn help_scrolls_with_j_and_page_keys_and_any_other_key_closes_it() {
    let mut state = loaded();
    state.apply(Action::Resize(80, 24));
    keys(&mut state, &chars("?"));
    assert_eq!(state.overlay, Overlay::Help);
    keys(&mut state, &chars("jj"));
    assert_eq!(state.help_scroll, 2);
    keys(&mut state, &[KeyCode::PageDown]);
    assert!(state.help_scroll > 2);
    keys(&mut state, &chars("G"));
    let end = state.help_scroll;
    keys(&mut state, &chars("j"));
    assert_eq!(state.help_scroll, end, "no further than its end");
    keys(&mut state, &chars("k"));
    assert_eq!(state.help_scroll, end - 1);
    assert_eq!(state.overlay, Overlay::Help);
    // `q` only closes help; opening it again starts at the top.
    assert_eq!(keys(&mut state, &chars("q")), vec![Command::None]);
    assert_eq!(state.overlay, Overlay::None);
    keys(&mut state, &chars("?"));
    assert_eq!(state.help_scroll, 0);
}

#[test]
fn z_and_s_ask_only_on_the_workers_screen() {
    let mut state = loaded();
    keys(&mut state, &chars("z"));
    assert_eq!(state.overlay, Overlay::None);
    keys(&mut state, &chars("5"));
    assert_eq!(state.screen(), Screen::Workers);
    keys(&mut state, &chars("z"));
    match &state.overlay {
        Overlay::Confirm(c) => assert!(
            c.prompt.starts_with("Quiet worker 2636283641-1 on web-1?"),
            "{}",
            c.prompt
        ),
        other => panic!("{other:?}"),
    }
}
