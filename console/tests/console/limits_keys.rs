//! The Limits screen against a real Redis, through the console's source
//! and key table: `7` shows a limit with its use and the jobs it holds
//! back, Enter on a key's row lands on the queue's held tab listing that
//! key's held jobs, and Esc goes back to where it came from.

use std::time::{Duration, SystemTime};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use ratatui::Terminal;
use redq::flow::{Limit, LimitScope};
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Screen, State, View};
use redq_console::tui::theme::Theme;
use redq_console::tui::view;
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{console, press, prompt, refresh, run};
use crate::seed::connect;

/// The screen as drawn at 100×30, a line each.
fn screen(state: &State) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(false), SystemTime::now()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..30)
        .map(|y| (0..100).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

fn line_with<'a>(lines: &'a [String], needle: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{}", lines.join("\n")))
}

#[tokio::test]
async fn the_limits_screen_shows_a_limit_and_its_held_jobs_and_enter_lists_them() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_limits"));
    let queue = connect(&url, &ns).await;
    queue
        .set_limit("emails", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    for i in 0..3 {
        let job = NewJob::new(serde_json::json!(i))
            .name("t.mail")
            .limit_key("acme");
        queue.add("emails", job).await.unwrap();
    }
    let other = NewJob::new(serde_json::json!(9)).limit_key("globex");
    queue.add("emails", other).await.unwrap();
    // One job of each key starts; acme is at its limit with two held back.
    let started = queue
        .claim("emails", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(started.len(), 2, "one per key: {started:?}");

    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('7')]);
    assert_eq!(state.screen(), Screen::Limits);
    refresh(&target, &mut state).await;
    let acme = state
        .visible_limits()
        .iter()
        .position(|r| r.key() == Some("acme"))
        .expect("acme has a row");
    let row = &state.visible_limits()[acme];
    assert_eq!((row.leased, row.held), (Some(1), Some(2)), "{row:?}");
    let drawn = screen(&state);
    let each = line_with(&drawn, "each key");
    assert!(each.contains("1 at once"), "{each}");
    let line = line_with(&drawn, "acme");
    assert!(
        line.contains("as each key") && line.contains("1/1") && line.contains(" 2 "),
        "{line}"
    );
    assert!(
        line_with(&drawn, "Limits (").contains("2 jobs held"),
        "{}",
        drawn.join("\n")
    );

    // Enter on acme's row: the held tab of emails, narrowed to acme.
    for _ in 0..acme {
        press(&mut state, &[KeyCode::Down]);
    }
    press(&mut state, &[KeyCode::Enter]);
    let jobs = state.jobs().expect("the jobs view opened");
    assert_eq!(
        (
            jobs.query.queue.as_str(),
            jobs.query.state,
            jobs.filter.as_str()
        ),
        ("emails", JobState::Held, "acme")
    );
    assert_eq!(state.screen(), Screen::Limits, "the Limits tab stays lit");
    refresh(&target, &mut state).await;
    let held = state.visible_jobs();
    assert_eq!(held.len(), 2, "{held:?}");
    assert!(held
        .iter()
        .all(|j| j.state == JobState::Held && j.limit_key.as_deref() == Some("acme")));
    let drawn = screen(&state);
    assert!(
        line_with(&drawn, " waiting ").contains(" held 2 "),
        "{}",
        drawn.join("\n")
    );
    let header = line_with(&drawn, "JOB");
    assert!(header.contains("KEY"), "{header}");
    assert!(
        line_with(&drawn, "t.mail").contains("acme"),
        "{}",
        drawn.join("\n")
    );

    // Esc clears the key's filter, then goes back to the Limits screen.
    press(&mut state, &[KeyCode::Esc]);
    assert_eq!(state.jobs().map(|j| j.filter.as_str()), Some(""));
    press(&mut state, &[KeyCode::Esc]);
    assert_eq!(state.view, View::Screen(Screen::Limits));

    // x on the each-key row asks, naming it; y lifts it, and acme's held
    // jobs can start.
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('g'), KeyCode::Down]);
    assert_eq!(
        state.visible_limits()[state.cursor().index].scope,
        redq_console::flow::Scope::EachKey
    );
    press(&mut state, &[KeyCode::Char('x')]);
    assert_eq!(
        prompt(&state),
        "Clear the each-key limit of emails (1 at once)? \
         Jobs it holds back start as the other limits allow."
    );
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(message, "cleared the each-key limit of emails");
    refresh(&target, &mut state).await;
    assert!(
        state
            .visible_limits()
            .iter()
            .all(|r| r.scope != redq_console::flow::Scope::EachKey),
        "{:?}",
        state.visible_limits()
    );
    let more = queue
        .claim("emails", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        more.len(),
        2,
        "acme's held jobs start once its limit is lifted"
    );
}

#[tokio::test]
async fn a_paused_queue_is_said_on_its_limiters_rows_and_in_the_title() {
    // Paused, a queue starts nothing: its limiters are free and its keyed
    // jobs wait behind them. Without the pause said here, a free limiter
    // with jobs held reads as a stuck one.
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_limits_halt"));
    let queue = connect(&url, &ns).await;
    for name in ["emails", "webhooks"] {
        queue
            .set_limit(name, LimitScope::EachKey, Limit::concurrency(1))
            .await
            .unwrap();
        let job = NewJob::new(serde_json::json!(1)).limit_key("acme");
        queue.add(name, job).await.unwrap();
    }
    queue.pause("emails").await.unwrap();

    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('7')]);
    refresh(&target, &mut state).await;
    let drawn = screen(&state);
    let title = line_with(&drawn, "Limits (");
    assert!(title.contains("1 queue paused"), "{title}");
    for line in drawn.iter().filter(|l| l.contains("each key")) {
        let paused = line.contains("emails (paused)");
        let webhooks = line.contains("webhooks");
        assert!(paused != webhooks, "only emails is paused: {line}");
    }

    queue.resume("emails").await.unwrap();
    refresh(&target, &mut state).await;
    let drawn = screen(&state);
    assert!(
        !drawn
            .iter()
            .any(|l| l.contains("(paused)") || l.contains("queue paused")),
        "{}",
        drawn.join("\n")
    );
}
