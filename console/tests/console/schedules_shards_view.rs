//! The Schedules screen over shards: a SHARD column saying which shard
//! stores (and ticks) each schedule, as `redq schedules` says; one
//! namespace keeps the screen as it was.

use redq_console::tui::state::{Action, Screen, State, Update};

use crate::common::*;
use crate::views::screen_text;

fn schedules_screen(shards: Vec<String>, stored_on: [Option<usize>; 2]) -> State {
    let mut state = State::new(redq_console::tui::state::Settings {
        shards,
        ..settings()
    });
    let mut snapshot = snapshot();
    let mut schedules = schedules();
    for (schedule, shard) in schedules.iter_mut().zip(stored_on) {
        schedule.shard = shard;
    }
    snapshot.schedules = Some(schedules);
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    press(&mut state, &[Action::Show(Screen::Schedules)]);
    state
}

#[test]
fn each_schedule_names_the_shard_that_stores_it() {
    let shards = redq::shards::shard_namespaces("redq", 3).unwrap();
    let mut state = schedules_screen(shards, [Some(2), Some(0)]);
    for (width, height) in [(80, 24), (140, 42)] {
        state.apply(Action::Resize(width, height));
        let text = screen_text(&state, width, height);
        assert!(text.contains("SHARD"), "{text}");
        // Names are cut short at 80 columns: find each row by its queue,
        // the column after SHARD.
        let shard_before = |queue: &str| -> Option<String> {
            let row = text.lines().find(|l| l.contains(queue))?;
            let cells: Vec<&str> = row.split_whitespace().collect();
            let at = cells.iter().position(|c| *c == queue)?;
            Some(cells[at - 1].to_owned())
        };
        assert_eq!(shard_before("emails").as_deref(), Some("2"), "{text}");
        assert_eq!(shard_before("reports").as_deref(), Some("0"), "{text}");
    }
}

#[test]
fn one_namespace_has_no_shard_column() {
    let mut state = schedules_screen(Vec::new(), [None, None]);
    state.apply(Action::Resize(140, 42));
    let text = screen_text(&state, 140, 42);
    assert!(text.contains("digest-every-minute"), "{text}");
    assert!(!text.contains("SHARD"), "{text}");
}
