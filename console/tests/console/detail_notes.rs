//! The job detail shows what the job's handler reported, its progress and
//! log lines, as the source re-reads them, made inert like payloads; and
//! scrolling reaches the last of them.

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use redq::JobNotes;
use redq_console::tui::state::{Action, Screen, State, Update};
use redq_console::tui::theme::Theme;
use redq_console::tui::view;

use crate::common::*;

fn screen(state: &State) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(false), now()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..30)
        .map(|y| {
            let line: String = (0..100).map(|x| buffer[(x, y)].symbol()).collect();
            format!("{}\n", line.trim_end())
        })
        .collect()
}

/// A dead letter's detail, open, after a re-read that brought `notes`.
fn detail_with(notes: JobNotes) -> State {
    let mut state = loaded();
    press(&mut state, &[Action::Show(Screen::Dead), Action::Open]);
    let record = state.detail().expect("a detail is open").record.clone();
    state.apply(Action::Received(Update::Job {
        id: record.id.clone(),
        record: Some(Box::new(record)),
        notes,
        finished: None,
    }));
    state
}

#[test]
fn the_detail_shows_progress_and_log_lines_inert() {
    let state = detail_with(JobNotes {
        progress: Some(serde_json::json!("page 3 of 9 \u{1b}]0;owned\u{7}")),
        log: vec![
            "fetched 120 rows".into(),
            "upstream said \u{1b}[2J\u{9b}31m no".into(),
        ],
    });
    let text = screen(&state);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the screen:\n{text}"
    );
    let progress = text.lines().find(|l| l.contains("progress")).unwrap_or("");
    assert!(progress.contains(r"page 3 of 9 \x1b]0;owned\x07"), "{text}");
    assert!(text.contains("log (last 2)"), "{text}");
    assert!(text.contains("fetched 120 rows"), "{text}");
    assert!(text.contains(r"upstream said \x1b[2J\x9b31m no"), "{text}");
}

#[test]
fn a_job_without_notes_shows_no_progress_or_log() {
    let text = screen(&detail_with(JobNotes::default()));
    assert!(!text.contains("progress"), "{text}");
    assert!(!text.contains("log (last"), "{text}");
}

#[test]
fn scrolling_passes_every_log_line_to_the_end_of_the_payload() {
    let log: Vec<String> = (1..=60).map(|i| format!("step {i} done")).collect();
    let mut state = detail_with(JobNotes {
        progress: None,
        log,
    });
    let mut seen_last_line = false;
    for _ in 0..200 {
        state.apply(Action::Down);
        seen_last_line |= screen(&state).contains("step 60 done");
    }
    assert!(seen_last_line, "the last log line was never shown");
    // The scroll bound counts the log: the payload's end is reachable.
    let text = screen(&state);
    assert!(text.contains("hooks.example.com"), "{text}");
}

#[test]
fn a_job_that_finishes_under_its_detail_shows_how_and_its_result() {
    let mut state = loaded();
    press(&mut state, &[Action::Show(Screen::Dead), Action::Open]);
    let record = state.detail().expect("a detail is open").record.clone();
    let kept = redq::KeptJob {
        id: record.id.clone(),
        outcome: redq::kept::Outcome::Completed,
        queue: record.queue.clone(),
        name: record.name.clone(),
        attempt: 2,
        holder: Some((2631031545, 1)),
        enqueued_at: record.enqueued_at,
        finished_at: now() - std::time::Duration::from_secs(5),
        run_time: Some(std::time::Duration::from_millis(1500)),
        cancelled_by: None,
        cancelled_in: None,
        result: Some(serde_json::json!({"receipt": "r-7 \u{1b}[2J"})),
        namespace: record.namespace.clone(),
    };
    state.apply(Action::Received(Update::Job {
        id: record.id.clone(),
        record: None,
        notes: JobNotes::default(),
        finished: Some(Box::new(kept)),
    }));
    let text = screen(&state);
    assert!(
        text.contains(&format!(" completed job {} ", record.id)),
        "{text}"
    );
    assert!(text.contains("run time"), "{text}");
    assert!(text.contains(r"r-7 \u001b[2J"), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the screen:\n{text}"
    );
    assert_eq!(state.status, None, "a kept job is not said to be gone");
}
