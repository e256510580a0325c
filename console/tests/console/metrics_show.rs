//! The Metrics view and `redq metrics show`: per job name completed,
//! failed, error rate and wait/run p50/p90/p99 over a window, and the
//! throughput chart with its time scale. Drawn from a fixed history at the
//! sizes an operator uses, then from a real Redis after a known workload.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use redq::metrics::{
    Figures, Histogram, MetricsHistory, MetricsPoint, MetricsWindow, QueueMetrics, Recording,
    BUCKETS,
};
use redq::{Completion, NewJob, Operator};
use redq_console::tui::theme::Theme;
use redq_console::tui::view::metrics::draw;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

use crate::seed::{assert_exit, connect, json as stdout_json, redq};

const LONG: Duration = Duration::from_secs(60);

/// A histogram of these times, each in its bucket (at most 2^b ms).
fn times(ms: &[u64]) -> Histogram {
    let mut h = Histogram::default();
    for &t in ms {
        let b = (0..BUCKETS)
            .find(|&b| Histogram::upper_bound_ms(b).is_none_or(|u| t <= u))
            .unwrap();
        h.counts[b] += 1;
        h.sum_ms += t;
    }
    h
}

/// Queue `images` over the last hour: `resize` jobs (fast, a few retried),
/// `thumbnail` jobs (slow, one dead), and the history minute by minute.
fn fixed_history() -> MetricsHistory {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_615_600); // 2025-12-01 19:00 UTC
    let resize = Figures {
        completed: 1_200,
        retried: 30,
        wait: times(&[2, 3, 5, 40, 300]),
        run: times(&[20, 25, 30, 90, 1_500]),
        ..Figures::default()
    };
    let thumbnail = Figures {
        completed: 99,
        dead_lettered: 1,
        wait: times(&[1_000, 2_000, 70_000]),
        run: times(&[4_000, 8_000, 9_000]),
        ..Figures::default()
    };
    let width = Duration::from_secs(60);
    let first = now - width * 59;
    let points = (0..60u32)
        .map(|i| MetricsPoint {
            start: first + width * i,
            figures: Figures {
                completed: u64::from(10 + (i % 12) * 2),
                retried: u64::from(i % 20 == 0),
                ..Figures::default()
            },
        })
        .collect();
    MetricsHistory {
        metrics: QueueMetrics {
            queue: "images".to_owned(),
            window: Some(MetricsWindow::LastHour),
            names: BTreeMap::from([
                ("resize".to_owned(), resize),
                ("thumbnail".to_owned(), thumbnail),
            ]),
            now,
            recording: Recording::On,
            handoffs_lost: 0,
            claims_lost: 0,
        },
        width,
        points,
    }
}

/// The Metrics view of `history` as drawn at `w`×`h`, its lines' ends trimmed.
pub(crate) fn drawn(history: &MetricsHistory, window: MetricsWindow, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal
        .draw(|frame| draw(frame, frame.area(), history, window, &Theme::new(false)))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..h)
        .map(|y| {
            let line: String = (0..w).map(|x| buffer[(x, y)].symbol()).collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{text}"))
}

#[test]
fn the_metrics_view_shows_each_name_its_percentiles_and_a_time_scale() {
    let history = fixed_history();
    for (w, h) in [(140, 42), (80, 24)] {
        let text = drawn(&history, MetricsWindow::LastHour, w, h);
        for header in [
            "NAME",
            "COMPLETED",
            "FAILED",
            "ERROR RATE",
            "WAIT p90",
            "RUN p90",
        ] {
            assert!(text.contains(header), "{header} at {w}x{h}:\n{text}");
        }
        let all = line_with(&text, "(all)");
        assert!(all.contains("1,299") && all.contains(" 31 "), "{all}");
        assert!(all.contains("2.3%"), "31 of 1330 attempts failed: {all}");
        let thumbnail = line_with(&text, "thumbnail");
        // Waits 1 s, 2 s and 70 s: p90 is in the bucket up to 131 s; runs
        // 4, 8 and 9 s: in the bucket up to 16.4 s.
        assert!(thumbnail.contains("1.0%"), "1 of 100 failed: {thumbnail}");
        assert!(
            thumbnail.contains("2.2m") && thumbnail.contains("16.4s"),
            "{thumbnail}"
        );
        // The time scale: the window's first minute, its middle, now (UTC).
        assert!(
            text.contains("18:01:00") && text.contains("19:00:00"),
            "{text}"
        );
        assert!(text.contains("jobs per 1m00s window"), "{text}");
        insta::assert_snapshot!(format!("metrics_view_{w}x{h}"), text);
    }
    // p50 columns give way first at 80 columns; p90 stays.
    let narrow = drawn(&history, MetricsWindow::LastHour, 80, 24);
    assert!(
        !narrow.contains("WAIT p50") && narrow.contains("WAIT p90"),
        "{narrow}"
    );
    let wide = drawn(&history, MetricsWindow::LastHour, 140, 42);
    assert!(
        wide.contains("WAIT p50") && wide.contains("RUN p99"),
        "{wide}"
    );
}

#[test]
fn a_scale_that_starts_on_an_earlier_day_dates_every_label() {
    // The last 24 h at 19:00: the scale starts yesterday, so its end says
    // today's date too rather than a bare time read as yesterday's.
    let mut history = fixed_history();
    let width = Duration::from_secs(1800);
    let first = history.metrics.now - width * 47;
    history.width = width;
    history.points = (0..48u32)
        .map(|i| MetricsPoint {
            start: first + width * i,
            figures: Figures {
                completed: 5,
                ..Figures::default()
            },
        })
        .collect();
    history.metrics.window = Some(MetricsWindow::LastDay);
    let text = drawn(&history, MetricsWindow::LastDay, 140, 42);
    assert!(
        text.contains("11-30 19:30") && text.contains("12-01 19:00"),
        "{text}"
    );
    let below_title: Vec<&str> = text.lines().filter(|l| !l.contains("Metrics:")).collect();
    assert!(!below_title.join("\n").contains("19:00:00"), "{text}");
    // The wide windows are read every 30 s: the title says when this was.
    assert!(
        line_with(&text, "Metrics: images").contains("read 19:00:00 UTC (every 30s"),
        "{text}"
    );
    // Within one day the scale keeps its times alone (the last hour above).
    let hour = drawn(&fixed_history(), MetricsWindow::LastHour, 140, 42);
    assert!(
        hour.contains("18:01:00") && !hour.contains("12-01"),
        "{hour}"
    );
}

/// `images`: three `resize` jobs acked with run times 3 ms, 100 ms and
/// 5 s, claimed 600 ms after they were due; one unnamed job retried, one
/// dead-lettered.
async fn known_workload(url: &str, ns: &str) {
    let q = connect(url, ns).await;
    let resize = (0..3)
        .map(|i| NewJob::new(json!(i)).name("resize"))
        .collect();
    q.add_batch("images", resize).await.unwrap();
    // The wait this makes is what the test reads back: not a sleep-and-hope.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let claimed = q.claim("images", 3, LONG).await.unwrap();
    let leases: Vec<_> = claimed.iter().map(|j| j.lease()).collect();
    let done: Vec<_> = [3, 100, 5_000]
        .iter()
        .map(|ms| Completion::new().run_time(Duration::from_millis(*ms)))
        .collect();
    q.ack_batch_with(&leases, &done).await.unwrap();
    q.add_batch(
        "images",
        vec![NewJob::new(json!("retry")), NewJob::new(json!("die"))],
    )
    .await
    .unwrap();
    let failing = q.claim("images", 2, LONG).await.unwrap();
    q.nack(&failing[0].lease(), Duration::from_secs(3600), "once")
        .await
        .unwrap();
    q.dead_letter(&failing[1].lease(), "bad").await.unwrap();
}

fn ms(value: &serde_json::Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not a number"))
}

#[tokio::test]
async fn metrics_show_and_the_view_report_what_ran() {
    let server = RedisServer::builder().start();
    let (url, ns) = (server.url(), unique_namespace("metrics_show"));
    known_workload(&url, &ns).await;

    let out = redq(
        &url,
        &ns,
        &["metrics", "show", "images", "--window", "5m", "-o", "json"],
    );
    assert_exit(&out, 0);
    let reply = stdout_json(&out);
    assert_eq!(reply["window"], "5m");
    let rows = reply["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row {name} in {reply}"))
    };
    let all = row("(all)");
    assert_eq!(
        (all["completed"].as_u64(), all["failed"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(ms(&all["error_rate"]), 0.4);
    let resize = row("resize");
    assert_eq!(
        (resize["completed"].as_u64(), resize["failed"].as_u64()),
        (Some(3), Some(0))
    );
    // The median run (100 ms) is in the bucket over 64 ms up to 128 ms, the
    // 90th and 99th (5 s) over 4.096 s up to 8.192 s.
    let run = &resize["run_ms"];
    assert!((64.0..=128.0).contains(&ms(&run["p50"])), "{run}");
    assert!((4_096.0..=8_192.0).contains(&ms(&run["p90"])), "{run}");
    assert!((4_096.0..=8_192.0).contains(&ms(&run["p99"])), "{run}");
    // Claimed 600 ms after due: over 512 ms, up to 1024 ms.
    let wait = &resize["wait_ms"];
    assert!((512.0..=1_024.0).contains(&ms(&wait["p50"])), "{wait}");
    let none = row(redq::metrics::NONE);
    assert_eq!(
        (none["completed"].as_u64(), none["failed"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(ms(&none["error_rate"]), 1.0);
    assert!(
        none["run_ms"]["p50"].is_null(),
        "nothing ran to an ack: {none}"
    );

    let table = redq(&url, &ns, &["metrics", "show", "images", "--window", "5m"]);
    assert_exit(&table, 0);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(line_with(&text, "resize").contains("8.2s"), "{text}");
    // Two runs failed, and a failed run records no run time: said, so a
    // queue failing on timeouts does not read as fast.
    assert!(
        text.contains("RUN times are of completed runs only"),
        "{text}"
    );

    let unknown = redq(&url, &ns, &["metrics", "show", "nosuch"]);
    assert_exit(&unknown, 1);

    // The view, from the same Redis through the operator API.
    let operator = Operator::from(connect(&url, &ns).await);
    let history = operator
        .metrics_history("images", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    assert_eq!(history.points.len(), 60);
    let done: u64 = history.points.iter().map(|p| p.figures.completed).sum();
    assert_eq!(done, 3, "the chart's points add up to what ran");
    let text = drawn(&history, MetricsWindow::Last5Minutes, 140, 42);
    let shown = line_with(&text, "resize");
    assert!(shown.contains(" 3 ") && shown.contains("0.0%"), "{shown}");
    assert!(line_with(&text, "(all)").contains("40.0%"), "{text}");
}

/// `redq metrics off|on`: what it prints, and what `metrics show`, the
/// view and the figures say while the metrics are off.
#[tokio::test]
async fn metrics_off_stops_recording_and_show_and_the_view_say_since_when() {
    let server = RedisServer::builder().start();
    let (url, ns) = (server.url(), unique_namespace("metrics_switch_cli"));
    known_workload(&url, &ns).await;
    let completed = |reply: &serde_json::Value| {
        let rows = reply["rows"].as_array().unwrap();
        let all = rows.iter().find(|r| r["name"] == "(all)").unwrap();
        all["completed"].as_u64().unwrap()
    };
    let show = || {
        redq(
            &url,
            &ns,
            &["metrics", "show", "images", "--window", "5m", "-o", "json"],
        )
    };

    let off = redq(&url, &ns, &["metrics", "off", "images", "-o", "json"]);
    assert_exit(&off, 0);
    let reply = stdout_json(&off);
    assert_eq!(
        (reply["changed"].as_bool(), reply["recording"].as_bool()),
        (Some(true), Some(false))
    );
    let since = reply["off_since"].as_str().expect("off_since").to_owned();
    let again = redq(&url, &ns, &["metrics", "off", "images"]);
    assert_exit(&again, 0);
    let text = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(
        text.contains("images: metrics are off since ") && text.contains("redq metrics on images"),
        "{text}"
    );
    assert!(
        text.contains("nothing changed: it was already so"),
        "{text}"
    );

    // The same workload again: nothing of it is recorded.
    known_workload(&url, &ns).await;
    let shown = show();
    assert_exit(&shown, 0);
    let reply = stdout_json(&shown);
    assert_eq!(completed(&reply), 3, "{reply}");
    assert_eq!(
        (reply["recording"].as_bool(), reply["off_since"].as_str()),
        (Some(false), Some(since.as_str()))
    );
    let table = redq(&url, &ns, &["metrics", "show", "images", "--window", "5m"]);
    assert_exit(&table, 0);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(text.contains("metrics are off since"), "{text}");

    let operator = Operator::from(connect(&url, &ns).await);
    let history = operator
        .metrics_history("images", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    let drawn_off = drawn(&history, MetricsWindow::Last5Minutes, 140, 42);
    assert!(
        line_with(&drawn_off, "Metrics: images").contains("OFF since"),
        "{drawn_off}"
    );

    let on = redq(&url, &ns, &["metrics", "on", "images", "-o", "json"]);
    assert_exit(&on, 0);
    let reply = stdout_json(&on);
    assert_eq!(
        (reply["changed"].as_bool(), reply["recording"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(reply["off_since"].is_null(), "{reply}");
    known_workload(&url, &ns).await;
    let reply = stdout_json(&show());
    assert_eq!(completed(&reply), 6, "recorded again: {reply}");
    assert_eq!(reply["recording"].as_bool(), Some(true));
    let history = operator
        .metrics_history("images", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    assert!(!drawn(&history, MetricsWindow::Last5Minutes, 140, 42).contains("OFF since"));

    let unknown = redq(&url, &ns, &["metrics", "off", "nosuch"]);
    assert_exit(&unknown, 1);
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("nosuch"),
        "{unknown:?}"
    );
}
