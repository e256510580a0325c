//! The console's job detail says why a held job is held, as `redq jobs
//! show` does, read again with the job at each refresh: under the state
//! line, inert.

use redq_console::tui::state::{Action, Screen, Update, View};

use crate::common::loaded;
use crate::views::screen_text;

#[test]
fn a_held_jobs_detail_says_which_limit_holds_it() {
    let mut state = loaded();
    state.apply(Action::Show(Screen::Dead));
    state.apply(Action::Open);
    let View::Detail(detail) = &state.view else {
        panic!("no detail opened");
    };
    let id = detail.record.id.clone();
    let before = screen_text(&state, 100, 30);
    assert!(!before.contains("held by"), "{before}");

    let why = "the queue-wide limit: its rate window is full (2/2 started)";
    state.apply(Action::Received(Update::JobHeld {
        id: id.clone(),
        lines: vec![("held by", format!("{why}\u{1b}[2J"))],
    }));
    let text = screen_text(&state, 100, 30);
    let lines: Vec<&str> = text.lines().collect();
    let held = lines
        .iter()
        .position(|l| l.contains("held by"))
        .unwrap_or_else(|| panic!("no held by line:\n{text}"));
    assert!(lines[held].contains(why), "{text}");
    assert!(!text.contains('\u{1b}'), "an escape reached the screen");
    assert!(
        lines[held - 1].contains("state"),
        "not under the state line:\n{text}"
    );

    // Another job's reading changes nothing; an empty one clears it.
    state.apply(Action::Received(Update::JobHeld {
        id: "someone-else".into(),
        lines: Vec::new(),
    }));
    assert!(screen_text(&state, 100, 30).contains("held by"));
    state.apply(Action::Received(Update::JobHeld {
        id,
        lines: Vec::new(),
    }));
    assert!(!screen_text(&state, 100, 30).contains("held by"));
}
