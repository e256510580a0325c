//! The jobs view of a queue that keeps finished jobs (a retention policy)
//! shows completed and cancelled among its states, with their counts, and
//! ←/→ reach them and list the kept jobs; a queue that keeps nothing shows
//! the four states of every queue. Against a real Redis, through the
//! console's source and key table.

use std::time::{Duration, SystemTime};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use ratatui::Terminal;
use redq::kept::Retention;
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::State;
use redq_console::tui::theme::Theme;
use redq_console::tui::view;
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{console, press, refresh};
use crate::seed::connect;

/// The screen as drawn, a line each.
fn screen(state: &State) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(false), SystemTime::now()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..30)
        .map(|y| {
            (0..120)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect()
}

/// The first line of the jobs view (the state tabs), as drawn.
fn tabs(state: &State) -> String {
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(false), SystemTime::now()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let lines: Vec<String> = (0..30)
        .map(|y| {
            (0..120)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect();
    lines
        .iter()
        .find(|line| line.contains(" waiting "))
        .cloned()
        .unwrap_or_else(|| panic!("no state tabs on screen:\n{}", lines.join("\n")))
}

#[tokio::test]
async fn a_queue_that_keeps_jobs_shows_and_lists_its_completed_and_cancelled_ones() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_kept"));
    let queue = connect(&url, &ns).await;
    queue
        .set_retention("emails", &Retention::new().max_count(100))
        .await
        .unwrap();
    queue
        .add("plain", NewJob::new(serde_json::json!(0)))
        .await
        .unwrap();
    let done = queue
        .add("emails", NewJob::new(serde_json::json!(1)).name("t.done"))
        .await
        .unwrap();
    let job = queue
        .claim("emails", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    queue.ack(&job.lease()).await.unwrap();
    let cancelled = queue
        .add("emails", NewJob::new(serde_json::json!(2)))
        .await
        .unwrap();
    queue
        .operator()
        .cancel(cancelled.id(), "test")
        .await
        .unwrap();

    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    // Queues are listed by name: emails, then plain.
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;
    let line = tabs(&state);
    assert!(line.contains(" completed 1 "), "{line}");
    assert!(line.contains(" cancelled 1 "), "{line}");

    // → from dead reaches completed, which lists the kept job.
    for _ in 0..4 {
        press(&mut state, &[KeyCode::Right]);
    }
    assert_eq!(state.jobs().unwrap().query.state, JobState::Completed);
    refresh(&target, &mut state).await;
    let ids: Vec<String> = state.visible_jobs().iter().map(|j| j.id.clone()).collect();
    assert_eq!(ids, vec![done.id().to_owned()]);
    // Kept rows say when they finished.
    let row = &state.visible_jobs()[0];
    let finished = row.finished_at.expect("a kept row has its finish time");
    assert!(finished >= row.enqueued_at);
    let drawn = screen(&state);
    assert!(
        drawn.iter().any(|line| line.contains("FINISHED")),
        "{}",
        drawn.join("\n")
    );
    press(&mut state, &[KeyCode::Right]);
    assert_eq!(state.jobs().unwrap().query.state, JobState::Cancelled);
    refresh(&target, &mut state).await;
    let ids: Vec<String> = state.visible_jobs().iter().map(|j| j.id.clone()).collect();
    assert_eq!(ids, vec![cancelled.id().to_owned()]);
    // And round again to waiting.
    press(&mut state, &[KeyCode::Right]);
    assert_eq!(state.jobs().unwrap().query.state, JobState::Waiting);

    // A queue that keeps nothing shows the four states only.
    press(&mut state, &[KeyCode::Esc]);
    press(&mut state, &[KeyCode::Down]);
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;
    assert_eq!(state.jobs().unwrap().query.queue, "plain");
    let line = tabs(&state);
    assert!(line.contains(" dead 0 "), "{line}");
    assert!(
        !line.contains("completed") && !line.contains("cancelled"),
        "{line}"
    );
}
