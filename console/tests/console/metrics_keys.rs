//! The Metrics view against a real Redis, through the console's source and
//! key table: `m` on the Queues screen shows the selected queue's figures
//! for jobs that ran, `w`, `]` and `[` change its window (and its title),
//! `o` turns the queue's metrics off or on (it asks), and Esc goes back to
//! the Queues screen as it was.

use std::time::{Duration, SystemTime};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use ratatui::Terminal;
use redq::metrics::MetricsWindow;
use redq::{Completion, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{MetricsView, Screen, State, View};
use redq_console::tui::theme::Theme;
use redq_console::tui::view;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

use crate::live::{console, press, prompt, refresh, run};
use crate::seed::connect;

const LONG: Duration = Duration::from_secs(60);

/// The screen as drawn at 140×42, a line each.
fn screen(state: &State) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(140, 42)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(false), SystemTime::now()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..42)
        .map(|y| (0..140).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

fn line_with<'a>(lines: &'a [String], needle: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{}", lines.join("\n")))
}

fn shown_window(state: &State) -> MetricsWindow {
    match &state.view {
        View::Metrics(MetricsView { window, .. }) => *window,
        other => panic!("not the Metrics view: {other:?}"),
    }
}

#[tokio::test]
async fn m_shows_the_selected_queues_figures_and_w_changes_the_window() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_metrics_keys"));
    let queue = connect(&url, &ns).await;
    // `audio` sorts first and ran nothing; `images` ran what is read back.
    queue.add("audio", NewJob::new(json!(0))).await.unwrap();
    let resize = (0..4)
        .map(|i| NewJob::new(json!(i)).name("resize"))
        .collect();
    queue.add_batch("images", resize).await.unwrap();
    let claimed = queue.claim("images", 4, LONG).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let leases: Vec<_> = claimed[..3].iter().map(|j| j.lease()).collect();
    let done: Vec<_> = [3, 100, 5_000]
        .iter()
        .map(|ms| Completion::new().run_time(Duration::from_millis(*ms)))
        .collect();
    queue.ack_batch_with(&leases, &done).await.unwrap();
    queue.dead_letter(&claimed[3].lease(), "bad").await.unwrap();

    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('j')]);
    let before = state.clone();
    assert_eq!(state.cursor().key.as_deref(), Some("images"));

    press(&mut state, &[KeyCode::Char('m')]);
    assert_eq!(state.screen(), Screen::Queues, "the Queues tab stays lit");
    assert_eq!(shown_window(&state), MetricsWindow::Last5Minutes);
    let waiting = screen(&state);
    // Titled before its figures come.
    line_with(&waiting, "Metrics: images, last 5m");
    line_with(&waiting, "loading metrics…");
    refresh(&target, &mut state).await;
    let drawn = screen(&state);
    // Three acked and one dead-lettered: 1 of 4 attempts failed; the 5 s
    // run is the p90, in the bucket up to 8.2 s.
    let resize = line_with(&drawn, "resize");
    for figure in [" 3 ", " 1 ", "25.0%", "8.2s"] {
        assert!(resize.contains(figure), "{figure} in {resize}");
    }
    let all = line_with(&drawn, "(all)");
    assert!(all.contains(" 3 ") && all.contains("25.0%"), "{all}");
    line_with(&drawn, "Throughput, jobs per 5s window");
    let footer = drawn.last().unwrap();
    assert!(
        footer.contains("w window") && footer.contains("Esc back"),
        "{footer}"
    );

    // w and ] step on, [ back, wrapping past 90d to 5m.
    press(&mut state, &[KeyCode::Char('w')]);
    assert_eq!(shown_window(&state), MetricsWindow::LastHour);
    line_with(&screen(&state), "Metrics: images, last 1h");
    refresh(&target, &mut state).await;
    let hour = screen(&state);
    line_with(&hour, "Metrics: images, last 1h");
    assert!(
        line_with(&hour, "resize").contains(" 3 "),
        "the hour holds them too"
    );
    line_with(&hour, "jobs per 1m00s window");
    press(&mut state, &[KeyCode::Char(']'), KeyCode::Char(']')]);
    assert_eq!(shown_window(&state), MetricsWindow::Last90Days);
    press(&mut state, &[KeyCode::Char(']')]);
    assert_eq!(shown_window(&state), MetricsWindow::Last5Minutes);
    press(&mut state, &[KeyCode::Char('[')]);
    assert_eq!(shown_window(&state), MetricsWindow::Last90Days);
    line_with(&screen(&state), "Metrics: images, last 90d");

    // Esc: the Queues screen as it was, `images` still selected.
    press(&mut state, &[KeyCode::Esc]);
    assert_eq!(state.view, before.view);
    assert_eq!(state.cursor(), before.cursor());
    // Opened again, it keeps the window last chosen.
    press(&mut state, &[KeyCode::Char('m')]);
    assert_eq!(shown_window(&state), MetricsWindow::Last90Days);
}

#[tokio::test]
async fn o_turns_the_queues_metrics_off_and_on_after_asking() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_metrics_switch"));
    let queue = connect(&url, &ns).await;
    queue.add("images", NewJob::new(json!(0))).await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('m')]);
    refresh(&target, &mut state).await;
    let footer = screen(&state).last().unwrap().clone();
    assert!(footer.contains("o off/on"), "{footer}");

    press(&mut state, &[KeyCode::Char('o')]);
    assert!(
        prompt(&state).starts_with("Turn the metrics of images off?"),
        "{}",
        prompt(&state)
    );
    assert!(
        press(&mut state, &[KeyCode::Char('n')]).is_empty(),
        "n sends nothing"
    );
    assert!(target.metrics_recording("images").await.unwrap().is_on());

    press(&mut state, &[KeyCode::Char('o')]);
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(message, "the metrics of images are off");
    assert!(!target.metrics_recording("images").await.unwrap().is_on());
    refresh(&target, &mut state).await;
    let title = line_with(&screen(&state), "Metrics: images").to_owned();
    assert!(
        title.contains("OFF since") && title.contains("o: turn on"),
        "{title}"
    );

    press(&mut state, &[KeyCode::Char('o')]);
    assert!(
        prompt(&state).starts_with("Turn the metrics of images back on?"),
        "{}",
        prompt(&state)
    );
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(message, "the metrics of images are on");
    refresh(&target, &mut state).await;
    assert!(!line_with(&screen(&state), "Metrics: images").contains("OFF"));
}
