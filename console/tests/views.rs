//! Every screen rendered with ratatui's TestBackend at 100×30 and a fixed
//! clock, compared with reviewed snapshot files in `tests/snapshots/`.

mod common;

use std::time::Duration;

use common::*;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui::Terminal;
use redq::{JobState, Page};
use redq_console::tui::state::{Action, JobsPage, JobsQuery, Screen, State, Update, JOBS_PAGE};
use redq_console::tui::theme::Theme;
use redq_console::tui::view;

fn terminal(state: &State, width: u16, height: u16, color: bool) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(color), now()))
        .unwrap();
    terminal
}

fn screen_text(state: &State, width: u16, height: u16) -> String {
    let terminal = terminal(state, width, height, true);
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn screen(state: &State) -> String {
    screen_text(state, 100, 30)
}

fn with(actions: &[Action]) -> State {
    let mut state = loaded();
    press(&mut state, actions);
    state
}

#[test]
fn queues() {
    insta::assert_snapshot!(screen(&with(&[])));
}

#[test]
fn queues_while_typing_a_filter() {
    let state = with(&[
        Action::StartFilter,
        Action::FilterInput('e'),
        Action::FilterInput('m'),
    ]);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn leases_with_a_lapsed_lease() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Leases)])));
}

#[test]
fn dead_letters() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Dead), Action::Down])));
}

#[test]
fn dead_letters_grouped_by_error_signature() {
    insta::assert_snapshot!(screen(&with(&[
        Action::Show(Screen::Dead),
        Action::ToggleGroup
    ])));
}

#[test]
fn dead_letter_detail() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Dead), Action::Open])));
}

#[test]
fn dead_letters_confirm_requeue_all() {
    insta::assert_snapshot!(screen(&with(&[
        Action::Show(Screen::Dead),
        Action::RequeueAll
    ])));
}

#[test]
fn dead_letters_requeue_in_progress() {
    let state = with(&[
        Action::Show(Screen::Dead),
        Action::RequeueAll,
        Action::Confirm,
        Action::Received(Update::Progress {
            label: "requeue all dead letters of 2 queues".into(),
            done: 1000,
            left: 4000,
        }),
    ]);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn jobs_of_a_queue() {
    let mut state = with(&[Action::Down, Action::Open]);
    let query = JobsQuery {
        queue: "emails".into(),
        state: JobState::Scheduled,
        offset: 0,
    };
    state.apply(Action::NextState);
    let items = (0..3)
        .map(|i| {
            let mut j = job(
                &format!("01JDQ4S0000000000000000{i:03}"),
                "emails",
                JobState::Scheduled,
            );
            j.due_at = Some(now() + Duration::from_secs(30 * (i + 1)));
            j.attempts = i as u32;
            j.last_error = (i > 0).then(|| "smtp: 421 service not available".to_owned());
            j
        })
        .collect();
    let mut snapshot = snapshot();
    snapshot.jobs = Some(JobsPage {
        query,
        page: Page { total: 3, items },
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    assert_eq!(JOBS_PAGE, 50);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn schedules() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Schedules)])));
}

#[test]
fn workers() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Workers)])));
}

fn without_registries(workers: Option<Vec<redq_console::tui::state::WorkerInfo>>) -> State {
    let mut snapshot = snapshot();
    snapshot.workers = workers;
    snapshot.schedules = snapshot.workers.as_ref().map(|_| Vec::new());
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

#[test]
fn no_workers_registered() {
    let mut state = without_registries(Some(Vec::new()));
    state.apply(Action::Show(Screen::Workers));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn no_schedules() {
    let mut state = without_registries(Some(Vec::new()));
    state.apply(Action::Show(Screen::Schedules));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn queues_without_a_worker_registry_flag_stalled_backlogs() {
    // A driver without a worker registry: no NO WORKER badge, only STALLED
    // where nothing moved for a minute.
    insta::assert_snapshot!(screen(&without_registries(None)));
}

#[test]
fn events() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Events)])));
}

#[test]
fn help() {
    insta::assert_snapshot!(screen(&with(&[Action::ToggleHelp])));
}

#[test]
fn terminal_too_small() {
    insta::assert_snapshot!(screen_text(&with(&[]), 79, 23));
}

#[test]
fn reconnecting_keeps_the_last_data() {
    // The last snapshot was read at now(); Redis died a minute later, and
    // the screen is drawn ten minutes into the outage. What is shown must be
    // that snapshot as it was: OLDEST still 1m35s, DONE/S still 6.0 for
    // emails, the sparklines unmoved, and no NO WORKER badge on emails or
    // thumbnails because their heartbeats stopped arriving with the data.
    let state = with(&[Action::Received(Update::Unreachable {
        error: "Redis refused the connection: nothing is listening at that address \
                (is redis-server running?)"
            .into(),
        at: now() + Duration::from_secs(60),
    })]);
    let during = now() + Duration::from_secs(11 * 60);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, &state, &Theme::new(true), during))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let text: String = (0..30)
        .map(|y| {
            let line: String = (0..100).map(|x| buffer[(x, y)].symbol()).collect();
            format!("{}\n", line.trim_end())
        })
        .collect();
    insta::assert_snapshot!(text);
}

#[test]
fn connecting() {
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn read_only_refuses_and_says_so() {
    let mut state = State::new(redq_console::tui::state::Settings {
        read_only: true,
        ..settings()
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    press(&mut state, &[Action::Show(Screen::Dead), Action::Requeue]);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn escape_sequences_in_payloads_are_shown_inert() {
    let mut evil = dead(
        "01JDQ2X7K5M3N8P9R2S4T6V8W9",
        "webhooks",
        "boom \u{1b}[2J\u{1b}]0;owned\u{7} done",
        5,
    );
    evil.name = Some("x\u{1b}[31mred".into());
    evil.payload = serde_json::Value::String("raw \u{1b}[?1049l\u{9b}2J bytes\u{0}".into());
    let mut snapshot = snapshot();
    snapshot.dead = Some(redq_console::tui::state::DeadWindow {
        items: vec![evil],
        truncated: false,
    });
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Dead));
    let list = screen(&state);
    state.apply(Action::Open);
    let detail = screen(&state);
    for text in [&list, &detail] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "a control character reached the screen:\n{text}"
        );
    }
    assert!(
        detail.contains("boom \\x1b[2J\\x1b]0;owned\\x07 done"),
        "{detail}"
    );
    insta::assert_snapshot!("escape_list", list);
    insta::assert_snapshot!("escape_detail", detail);
}

#[test]
fn without_colour_selection_is_a_marker_and_reverse_video() {
    let state = with(&[Action::Down]);
    let terminal = terminal(&state, 100, 30, false);
    let buffer = terminal.backend().buffer();
    // Row 4 is the first queue, row 5 the selected second one.
    let row = |y: u16| {
        (0..100)
            .map(|x| buffer[(x, y)].symbol())
            .collect::<String>()
    };
    assert!(row(5).contains("▶ emails"), "{}", row(5));
    assert!(!row(4).contains('▶'));
    assert!(buffer[(5, 5)].modifier.contains(Modifier::REVERSED));
    for y in 0..30 {
        for x in 0..100 {
            let cell = &buffer[(x, y)];
            assert_eq!(cell.fg, ratatui::style::Color::Reset, "colour at {x},{y}");
            assert_eq!(cell.bg, ratatui::style::Color::Reset, "colour at {x},{y}");
        }
    }
}

#[test]
fn wide_terminals_show_full_ids_and_longer_sparklines() {
    let state = with(&[]);
    insta::assert_snapshot!("wide_queues", screen_text(&state, 140, 24));
    let state = with(&[Action::Show(Screen::Dead)]);
    insta::assert_snapshot!("wide_dead", screen_text(&state, 140, 24));
}

/// `--shards 3`: the dead letters of three shards in one list, a SHARD
/// column after the job id, and the detail naming the shard's namespace.
fn sharded() -> State {
    let shards: Vec<String> = ["redq.s0.2", "redq.s1.0", "redq.s2.5"]
        .map(String::from)
        .to_vec();
    let mut state = State::new(redq_console::tui::state::Settings {
        shards: shards.clone(),
        ..settings()
    });
    state.apply(Action::Resize(100, 30));
    let mut snapshot = snapshot();
    if let Some(dead) = snapshot.dead.as_mut() {
        for (i, job) in dead.items.iter_mut().enumerate() {
            job.namespace = shards[i % 3].clone();
        }
    }
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

#[test]
fn dead_letters_over_shards() {
    let mut state = sharded();
    state.apply(Action::Show(Screen::Dead));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn dead_letter_detail_over_shards() {
    let mut state = sharded();
    press(
        &mut state,
        &[Action::Show(Screen::Dead), Action::Down, Action::Open],
    );
    insta::assert_snapshot!(screen(&state));
}
