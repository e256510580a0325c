//! State and input as pure, table-driven tests: key presses in, actions,
//! state and commands out. No terminal, no Redis, no clock.

use crate::common::*;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use redq::JobState;
use redq_console::failure::ReadFailure;
use redq_console::tui::input::{action_for, help_sections, hints, BINDINGS};
use redq_console::tui::state::{
    Action, Command, Connection, Level, Mutation, Screen, Settings, Snapshot, State, Update,
};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ch(c: char) -> KeyEvent {
    let mods = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), mods)
}

/// Feed keys through the key table into the state, collecting commands.
fn type_keys(state: &mut State, keys: &[KeyEvent]) -> Vec<Command> {
    let mut out = Vec::new();
    for k in keys {
        if let Some(action) = action_for(state, k) {
            let command = state.apply(action);
            if command != Command::None {
                out.push(command);
            }
        }
    }
    out
}

#[test]
fn keys_map_to_actions_by_context() {
    let dead = {
        let mut s = loaded();
        s.apply(Action::Show(Screen::Dead));
        s
    };
    let queues = loaded();
    let confirming = {
        let mut s = dead.clone();
        s.apply(Action::Requeue);
        s
    };
    let deleting = {
        let mut s = dead.clone();
        s.apply(Action::Delete);
        s
    };
    let filtering = {
        let mut s = queues.clone();
        s.apply(Action::StartFilter);
        s
    };
    let detail = {
        let mut s = dead.clone();
        s.apply(Action::Open);
        s
    };
    let cases: Vec<(&str, &State, KeyEvent, Option<Action>)> = vec![
        ("q quits", &queues, ch('q'), Some(Action::Quit)),
        (
            "ctrl-c quits",
            &confirming,
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Action::Quit),
        ),
        (
            "3 shows dead letters",
            &queues,
            ch('3'),
            Some(Action::Show(Screen::Dead)),
        ),
        ("tab", &queues, key(KeyCode::Tab), Some(Action::NextScreen)),
        (
            "shift-tab",
            &queues,
            KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT),
            Some(Action::PrevScreen),
        ),
        ("j moves", &queues, ch('j'), Some(Action::Down)),
        (
            "down moves",
            &queues,
            key(KeyCode::Down),
            Some(Action::Down),
        ),
        ("G bottom", &queues, ch('G'), Some(Action::Bottom)),
        (
            "enter on queues opens jobs",
            &queues,
            key(KeyCode::Enter),
            Some(Action::Open),
        ),
        (
            "p pauses on queues",
            &queues,
            ch('p'),
            Some(Action::TogglePause),
        ),
        ("p does nothing on dead letters", &dead, ch('p'), None),
        (
            "r requeues on dead letters",
            &dead,
            ch('r'),
            Some(Action::Requeue),
        ),
        ("R requeues all", &dead, ch('R'), Some(Action::RequeueAll)),
        ("D purges", &dead, ch('D'), Some(Action::Purge)),
        ("r does nothing on queues", &queues, ch('r'), None),
        ("y confirms", &confirming, ch('y'), Some(Action::Confirm)),
        (
            "a digit types a requeue's attempts",
            &confirming,
            ch('3'),
            Some(Action::AttemptsDigit(3)),
        ),
        (
            "backspace erases a digit of them",
            &confirming,
            key(KeyCode::Backspace),
            Some(Action::AttemptsErase),
        ),
        (
            "a digit answers no to a delete",
            &deleting,
            ch('3'),
            Some(Action::Cancel),
        ),
        ("n cancels", &confirming, ch('n'), Some(Action::Cancel)),
        (
            "enter cancels: the default is no",
            &confirming,
            key(KeyCode::Enter),
            Some(Action::Cancel),
        ),
        (
            "q cancels a confirmation rather than quitting",
            &confirming,
            ch('q'),
            Some(Action::Cancel),
        ),
        (
            "letters type into the filter",
            &filtering,
            ch('q'),
            Some(Action::FilterInput('q')),
        ),
        (
            "esc clears the filter",
            &filtering,
            key(KeyCode::Esc),
            Some(Action::FilterClear),
        ),
        (
            "enter keeps the filter",
            &filtering,
            key(KeyCode::Enter),
            Some(Action::FilterDone),
        ),
        (
            "r requeues from the detail",
            &detail,
            ch('r'),
            Some(Action::Requeue),
        ),
        ("R is not offered in the detail", &detail, ch('R'), None),
        (
            "esc leaves the detail",
            &detail,
            key(KeyCode::Esc),
            Some(Action::Back),
        ),
        ("j scrolls the detail", &detail, ch('j'), Some(Action::Down)),
    ];
    for (what, state, event, want) in cases {
        assert_eq!(action_for(state, &event), want, "{what}");
    }
}

#[test]
fn requeue_one_asks_first_and_defaults_to_no() {
    let cases: Vec<(&str, Vec<KeyEvent>, Vec<Command>)> = vec![
        (
            "r then y requeues the selected one",
            vec![ch('3'), ch('j'), ch('r'), ch('y')],
            vec![Command::Mutate(Mutation::RequeueDead {
                ids: vec![("webhooks".into(), vec!["01JDQ2X7K5M3N8P9R2S4T6V8W1".into()])],
                attempts: 0,
            })],
        ),
        (
            "r then n does nothing",
            vec![ch('3'), ch('r'), ch('n')],
            vec![],
        ),
        (
            "r then Enter does nothing",
            vec![ch('3'), ch('r'), key(KeyCode::Enter)],
            vec![],
        ),
        (
            "r then x does nothing",
            vec![ch('3'), ch('r'), ch('x')],
            vec![],
        ),
        (
            "d then y deletes",
            vec![ch('3'), ch('G'), ch('d'), ch('y')],
            vec![Command::Mutate(Mutation::DeleteDead(vec![(
                "webhooks".into(),
                vec!["01JDQ2X7K5M3N8P9R2S4T6V8W4".into()],
            )]))],
        ),
        (
            "R then y requeues every queue with dead letters",
            vec![ch('3'), ch('R'), ch('y')],
            vec![Command::Mutate(Mutation::RequeueAllDead {
                queues: vec!["billing".into(), "webhooks".into()],
                attempts: 0,
            })],
        ),
        (
            "D then y purges them",
            vec![ch('3'), ch('D'), ch('y')],
            vec![Command::Mutate(Mutation::PurgeDead(vec![
                "billing".into(),
                "webhooks".into(),
            ]))],
        ),
        (
            "R with a filter requeues only the matching ones",
            vec![
                ch('3'),
                ch('/'),
                ch('c'),
                ch('a'),
                ch('r'),
                ch('d'),
                key(KeyCode::Enter),
                ch('R'),
                ch('y'),
            ],
            vec![Command::Mutate(Mutation::RequeueDead {
                ids: vec![("billing".into(), vec!["01JDQ2X7K5M3N8P9R2S4T6V8W2".into()])],
                attempts: 0,
            })],
        ),
        (
            "r on a group requeues the whole group",
            vec![ch('3'), ch('s'), ch('r'), ch('y')],
            vec![Command::Mutate(Mutation::RequeueGroup {
                queues: vec!["webhooks".into()],
                signature: "HTTP # from hooks.example.com after #ms".into(),
                count: 3,
                attempts: 0,
            })],
        ),
        (
            "r in the detail requeues that job",
            vec![
                ch('3'),
                ch('j'),
                ch('j'),
                key(KeyCode::Enter),
                ch('r'),
                ch('y'),
            ],
            vec![Command::Mutate(Mutation::RequeueDead {
                ids: vec![("billing".into(), vec!["01JDQ2X7K5M3N8P9R2S4T6V8W2".into()])],
                attempts: 0,
            })],
        ),
        (
            "p pauses the selected queue after y",
            vec![ch('j'), ch('p'), ch('y')],
            vec![Command::Mutate(Mutation::Pause("emails".into()))],
        ),
        (
            "p resumes a paused queue",
            vec![ch('j'), ch('j'), ch('j'), ch('p'), ch('y')],
            vec![Command::Mutate(Mutation::Resume("thumbnails".into()))],
        ),
        ("q quits", vec![ch('q')], vec![Command::Quit]),
    ];
    for (what, keys, want) in cases {
        let mut state = loaded();
        assert_eq!(type_keys(&mut state, &keys), want, "{what}");
    }
}

#[test]
fn confirmations_say_how_many_jobs_they_touch() {
    let cases: Vec<(Vec<KeyEvent>, &str)> = vec![
        (
            vec![ch('3'), ch('R')],
            "Requeue all 5 dead letters in 2 queues?",
        ),
        (
            vec![ch('3'), ch('D')],
            "Delete for good all 5 dead letters in 2 queues?",
        ),
        (
            vec![
                ch('3'),
                ch('/'),
                ch('5'),
                ch('0'),
                ch('3'),
                key(KeyCode::Enter),
                ch('R'),
            ],
            "Requeue the 3 dead letters matching \"503\"?",
        ),
        (
            vec![ch('3'), ch('s'), ch('r')],
            "Requeue all 3 dead letters with error \"HTTP # from hooks.example.com after #ms\" in queue webhooks?",
        ),
        (
            vec![ch('3'), ch('r')],
            "Requeue dead letter 01JDQ2X7K5M3N8P9R2S4T6V8W0 (webhooks deliver_webhook)?",
        ),
    ];
    for (keys, want) in cases {
        let mut state = loaded();
        type_keys(&mut state, &keys);
        let prompt = state
            .confirm()
            .as_ref()
            .map(|c| c.prompt.clone())
            .unwrap_or_default();
        assert!(prompt.starts_with(want), "want {want:?}, got {prompt:?}");
    }
}

/// The loaded state with every dead letter's max attempts set to `max`.
fn dead_letters_with_max_attempts(max: u32) -> State {
    let mut state = loaded();
    for job in &mut state.data.dead.items {
        job.max_attempts = max;
    }
    recount_groups(&mut state);
    state
}

/// The groups counted again from the loaded dead letters (as the source
/// counts them), after a test changed those.
fn recount_groups(state: &mut State) {
    state.data.dead.groups = redq_console::dead_census::of_records(&state.data.dead.items);
}

/// Digits in a requeue's confirmation set the attempt count it restarts at.
#[test]
fn a_requeue_restarts_at_the_attempts_typed() {
    let newest = || {
        vec![(
            "webhooks".to_owned(),
            vec!["01JDQ2X7K5M3N8P9R2S4T6V8W0".to_owned()],
        )]
    };
    let cases: Vec<(&str, Vec<KeyEvent>, Vec<Command>)> = vec![
        (
            "r, 3, y",
            vec![ch('3'), ch('r'), ch('3'), ch('y')],
            vec![Command::Mutate(Mutation::RequeueDead {
                ids: newest(),
                attempts: 3,
            })],
        ),
        (
            "Backspace erases the last digit",
            vec![
                ch('3'),
                ch('r'),
                ch('1'),
                ch('2'),
                key(KeyCode::Backspace),
                ch('y'),
            ],
            vec![Command::Mutate(Mutation::RequeueDead {
                ids: newest(),
                attempts: 1,
            })],
        ),
        (
            "no digit: attempts restart at 0",
            vec![ch('3'), ch('r'), ch('y')],
            vec![Command::Mutate(Mutation::RequeueDead {
                ids: newest(),
                attempts: 0,
            })],
        ),
        (
            "R takes the count too",
            vec![ch('3'), ch('R'), ch('4'), ch('y')],
            vec![Command::Mutate(Mutation::RequeueAllDead {
                queues: vec!["billing".into(), "webhooks".into()],
                attempts: 4,
            })],
        ),
        (
            "a digit still answers no to a delete",
            vec![ch('3'), ch('d'), ch('3'), ch('y')],
            vec![],
        ),
    ];
    for (what, keys, want) in cases {
        let mut state = dead_letters_with_max_attempts(5);
        assert_eq!(type_keys(&mut state, &keys), want, "{what}");
    }
}

#[test]
fn the_prompt_shows_the_attempts_typed() {
    let mut state = dead_letters_with_max_attempts(5);
    type_keys(&mut state, &[ch('3'), ch('r')]);
    let text = |s: &State| s.confirm().map(|c| c.text()).unwrap_or_default();
    assert!(
        text(&state).ends_with("? Attempts restart at 0."),
        "{}",
        text(&state)
    );
    type_keys(&mut state, &[ch('0'), ch('4')]);
    assert!(
        text(&state).ends_with("? Attempts restart at 4."),
        "{}",
        text(&state)
    );
}

#[test]
fn attempts_at_or_above_max_attempts_are_refused_and_nothing_is_sent() {
    let mut state = dead_letters_with_max_attempts(5);
    let sent = type_keys(&mut state, &[ch('3'), ch('r'), ch('5'), ch('y')]);
    assert_eq!(sent, vec![], "nothing is sent");
    let refusal = "attempts 5 refused: accepted are 0 to 4 (max attempts is 5)";
    let status = state.status.clone().expect("the refusal is said");
    assert_eq!(
        (status.level, status.text.as_str()),
        (Level::Error, refusal)
    );
    // The question stays open, saying why, so the count can be corrected.
    let confirm = state.confirm().expect("still asking").clone();
    assert!(
        confirm
            .text()
            .ends_with("? Attempts 5 refused: accepted are 0 to 4 (max attempts is 5)."),
        "{}",
        confirm.text()
    );
    let sent = type_keys(&mut state, &[key(KeyCode::Backspace), ch('4'), ch('y')]);
    assert_eq!(
        sent,
        vec![Command::Mutate(Mutation::RequeueDead {
            ids: vec![("webhooks".into(), vec!["01JDQ2X7K5M3N8P9R2S4T6V8W0".into()])],
            attempts: 4,
        })]
    );
}

#[test]
fn the_accepted_attempts_are_below_the_lowest_max_attempts_selected() {
    // A group: its lowest max attempts (2) bounds the count.
    let mut state = dead_letters_with_max_attempts(5);
    state.data.dead.items[1].max_attempts = 2;
    recount_groups(&mut state);
    let sent = type_keys(&mut state, &[ch('3'), ch('s'), ch('r'), ch('2'), ch('y')]);
    assert_eq!(sent, vec![]);
    assert_eq!(
        state.status.as_ref().map(|s| s.text.as_str()),
        Some("attempts 2 refused: accepted are 0 to 1 (max attempts is 2)")
    );
    // A job that may die only once restarts at 0.
    let mut state = dead_letters_with_max_attempts(1);
    type_keys(&mut state, &[ch('3'), ch('r'), ch('1'), ch('y')]);
    assert_eq!(
        state.status.as_ref().map(|s| s.text.as_str()),
        Some("attempts 1 refused: only 0 is accepted (max attempts is 1)")
    );
    // Unlimited jobs take any count that fits the counter.
    let mut state = dead_letters_with_max_attempts(0);
    let mut keys = vec![ch('3'), ch('r')];
    keys.extend("4294967295".chars().map(ch));
    type_keys(&mut state, &keys);
    let typed = |s: &State| s.confirm().map(|c| c.mutation.attempts());
    assert_eq!(typed(&state), Some(Some(u32::MAX)));
    type_keys(&mut state, &[ch('0')]);
    assert_eq!(typed(&state), Some(Some(u32::MAX)), "one digit too many");
    assert_eq!(
        state.status.as_ref().map(|s| s.text.as_str()),
        Some("attempts refused: accepted are 0 to 4294967295")
    );
}

#[test]
fn read_only_refuses_every_mutation() {
    let keys: Vec<Vec<KeyEvent>> = vec![
        vec![ch('3'), ch('r')],
        vec![ch('3'), ch('R')],
        vec![ch('3'), ch('d')],
        vec![ch('3'), ch('D')],
        vec![ch('p')],
        vec![ch('3'), key(KeyCode::Enter), ch('r')],
    ];
    for k in keys {
        let mut state = State::new(Settings {
            read_only: true,
            ..settings()
        });
        state.apply(Action::Received(Update::Snapshot {
            snapshot: Box::new(snapshot()),
            received_at: now(),
        }));
        let commands = type_keys(&mut state, &[k.clone(), vec![ch('y')]].concat());
        assert!(commands.is_empty(), "{k:?} produced {commands:?}");
        assert!(state.confirm().is_none());
        let status = state.status.expect("a refusal is explained");
        assert_eq!(status.level, Level::Error);
        assert!(status.text.starts_with("read-only:"), "{}", status.text);
    }
}

#[test]
fn one_mutation_at_a_time() {
    let mut state = loaded();
    type_keys(&mut state, &[ch('3'), ch('R'), ch('y')]);
    assert!(state.busy.is_some());
    assert!(type_keys(&mut state, &[ch('r'), ch('y')]).is_empty());
    assert!(state.status.as_ref().unwrap().text.starts_with("busy:"));
    state.apply(Action::Received(Update::Finished {
        message: "requeued 5 dead letters".into(),
        ok: true,
    }));
    assert!(state.busy.is_none());
    assert_eq!(type_keys(&mut state, &[ch('r'), ch('y')]).len(), 1);
}

#[test]
fn selection_follows_its_row_when_new_rows_arrive() {
    let mut state = loaded();
    type_keys(&mut state, &[ch('3'), ch('j'), ch('j')]);
    assert_eq!(
        state.cursor().key.as_deref(),
        Some("01JDQ2X7K5M3N8P9R2S4T6V8W2")
    );
    let mut snap = snapshot();
    let mut dead = snap.dead.take().unwrap();
    dead.items.insert(0, dead_letters()[0].clone());
    dead.items[0].id = "01JDQ2X7K5M3N8P9R2S4T6V8ZZ".into();
    snap.dead = Some(dead);
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap),
        received_at: now(),
    }));
    assert_eq!(state.cursor().index, 3);
    assert_eq!(
        state.cursor().key.as_deref(),
        Some("01JDQ2X7K5M3N8P9R2S4T6V8W2")
    );
    // r acts on the row the operator selected, not on whatever moved under it.
    let commands = type_keys(&mut state, &[ch('r'), ch('y')]);
    assert_eq!(
        commands,
        vec![Command::Mutate(Mutation::RequeueDead {
            ids: vec![("billing".into(), vec!["01JDQ2X7K5M3N8P9R2S4T6V8W2".into()])],
            attempts: 0
        })]
    );
}

#[test]
fn a_screen_keeps_its_selection_while_its_list_reloads() {
    // Leaving the Dead letters screen drops its list (the next refresh does
    // not read it); coming back, the selection waits for the list to load
    // and lands on the same dead letter, not on the first row.
    let mut state = loaded();
    type_keys(&mut state, &[ch('3'), ch('j'), ch('j'), ch('1')]);
    let overview = Snapshot {
        leases: None,
        dead: None,
        ..snapshot()
    };
    for snapshot in [overview.clone(), overview] {
        state.apply(Action::Received(Update::Snapshot {
            snapshot: Box::new(snapshot),
            received_at: now(),
        }));
    }
    type_keys(&mut state, &[ch('3')]);
    assert!(!state.screen_loaded());
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    assert_eq!(
        state.cursor().key.as_deref(),
        Some("01JDQ2X7K5M3N8P9R2S4T6V8W2")
    );
}

#[test]
fn navigation_table() {
    // (keys, screen, cursor index)
    let cases: Vec<(Vec<KeyEvent>, Screen, usize)> = vec![
        (vec![], Screen::Queues, 0),
        (vec![ch('j'), ch('j')], Screen::Queues, 2),
        (vec![ch('j'), ch('k'), ch('k')], Screen::Queues, 0),
        (vec![ch('G')], Screen::Queues, 4),
        (vec![ch('G'), ch('j')], Screen::Queues, 4),
        (vec![ch('G'), ch('g')], Screen::Queues, 0),
        (vec![key(KeyCode::PageDown)], Screen::Queues, 4),
        (vec![key(KeyCode::Tab)], Screen::Leases, 0),
        (
            vec![KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)],
            Screen::Workflows,
            0,
        ),
        (vec![ch('6'), ch('j')], Screen::Events, 1),
        (vec![ch('7'), ch('j'), ch('j')], Screen::Limits, 2),
        (vec![ch('7'), key(KeyCode::Tab)], Screen::Workflows, 0),
        (vec![ch('8'), ch('j')], Screen::Workflows, 1),
        (vec![ch('8'), key(KeyCode::Tab)], Screen::Queues, 0),
        (
            vec![
                ch('/'),
                ch('w'),
                ch('e'),
                ch('b'),
                key(KeyCode::Enter),
                ch('j'),
            ],
            Screen::Queues,
            0,
        ),
    ];
    for (keys, screen, index) in cases {
        let mut state = loaded();
        type_keys(&mut state, &keys);
        assert_eq!(
            (state.screen(), state.cursor().index),
            (screen, index),
            "{keys:?}"
        );
    }
}

#[test]
fn filters_narrow_rows_and_esc_clears_them() {
    let mut state = loaded();
    type_keys(&mut state, &[ch('/'), ch('W'), ch('E'), ch('B')]);
    assert!(state.filter_editing());
    assert_eq!(state.visible_queues().len(), 1, "filters ignore case");
    type_keys(&mut state, &[key(KeyCode::Backspace), key(KeyCode::Enter)]);
    assert_eq!(state.filter(), "WE");
    assert!(!state.filter_editing());
    type_keys(&mut state, &[key(KeyCode::Esc)]);
    assert_eq!(state.filter(), "");
    assert_eq!(state.visible_queues().len(), 5);
}

#[test]
fn jobs_view_pages_and_cycles_states() {
    let mut state = loaded();
    type_keys(&mut state, &[ch('j'), key(KeyCode::Enter)]);
    let query = |s: &State| {
        s.jobs()
            .as_ref()
            .map(|j| (j.query.queue.clone(), j.query.state, j.query.offset))
    };
    assert_eq!(query(&state), Some(("emails".into(), JobState::Waiting, 0)));
    type_keys(&mut state, &[ch('l'), ch('l')]);
    assert_eq!(query(&state), Some(("emails".into(), JobState::Leased, 0)));
    // emails has flow control: its held jobs come after the four states.
    type_keys(&mut state, &[ch('h'), ch('h'), ch('h')]);
    assert_eq!(query(&state), Some(("emails".into(), JobState::Held, 0)));
    type_keys(&mut state, &[ch('h')]);
    assert_eq!(query(&state), Some(("emails".into(), JobState::Dead, 0)));
    // Paging needs to know the total: give it a page of 120 dead jobs.
    let mut snap = snapshot();
    snap.jobs = Some(redq_console::tui::state::JobsPage {
        query: state.jobs().unwrap().query.clone(),
        page: redq::Page {
            total: 120,
            items: vec![],
        },
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap),
        received_at: now(),
    }));
    type_keys(
        &mut state,
        &[
            key(KeyCode::PageDown),
            key(KeyCode::PageDown),
            key(KeyCode::PageDown),
        ],
    );
    assert_eq!(query(&state).unwrap().2, 100);
    type_keys(&mut state, &[key(KeyCode::PageUp)]);
    assert_eq!(query(&state).unwrap().2, 50);
    assert!(matches!(
        state.focus(),
        redq_console::tui::state::Focus::Jobs(_)
    ));
    type_keys(&mut state, &[key(KeyCode::Esc)]);
    assert!(state.jobs().is_none());
    assert_eq!(state.focus(), redq_console::tui::state::Focus::Overview);
}

#[test]
fn connection_states() {
    let mut state = State::new(settings());
    assert_eq!(state.connection, Connection::Connecting);
    let refused = ReadFailure {
        sentence: "refused".into(),
        fault: Some(redq::ConnectionFault::Refused),
    };
    let down = |secs| Update::Unreachable {
        error: refused.clone(),
        at: ago(secs),
    };
    state.apply(Action::Received(down(10)));
    state.apply(Action::Received(down(5)));
    assert_eq!(
        state.connection,
        Connection::Reconnecting {
            since: ago(10),
            error: refused.clone()
        },
        "the banner keeps the time of the first failure"
    );
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    assert_eq!(state.connection, Connection::Live);
}

#[test]
fn help_and_hints_come_from_the_key_table() {
    let documented: Vec<&str> = help_sections()
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(keys, _)| *keys))
        .collect();
    for binding in BINDINGS.iter().filter(|b| !b.label.is_empty()) {
        assert!(
            documented.contains(&binding.label),
            "{} missing from help",
            binding.label
        );
    }
    let state = loaded();
    let footer = hints(&state);
    assert!(
        footer.contains(&"? help") && footer.contains(&"q quit"),
        "{footer:?}"
    );
    assert!(
        !footer.iter().any(|h| h.starts_with("r ")),
        "no requeue hint on Queues"
    );
    let mut dead = loaded();
    dead.apply(Action::Show(Screen::Dead));
    assert!(hints(&dead).contains(&"r requeue"));
    // A requeue's question offers the attempt count; a delete's does not.
    let asking = |key: char| {
        let mut s = dead.clone();
        type_keys(&mut s, &[ch(key)]);
        hints(&s)
    };
    assert!(asking('r').contains(&"0-9 attempts"), "{:?}", asking('r'));
    assert!(
        asking('R').contains(&"Backspace erase"),
        "{:?}",
        asking('R')
    );
    assert!(!asking('d').contains(&"0-9 attempts"), "{:?}", asking('d'));
    // Every hint key really does something in that state.
    for (state, hint) in [(&dead, "r"), (&dead, "R"), (&state, "p")] {
        let c = hint.chars().next().unwrap();
        assert!(action_for(state, &ch(c)).is_some(), "{hint}");
    }
}
