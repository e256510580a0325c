//! The on-call review's layout faults, at the smallest size the screens
//! draw in (80×24) and a large one (160×45): the Queues table ran wider
//! than the terminal and ratatui clipped a queue name (`thumbna`), a
//! header (`ASED` for LEASED) and the badge with no `…`; a dead worker's
//! `(gone)` was on HOST, the first column to go at 80; the Events screen
//! kept 12 characters for a `—` in BY while the error was cut, and read
//! "FAILED BY" at 160.

use std::time::Duration;

use redq::{JobState, Page, QueueEvent};
use redq_console::tui::state::{Action, JobsPage, Screen, State, Update};

use crate::common::*;
use crate::seed::tmux::Tmux;
use crate::seed::{connect, dead_letters, BIN};
use crate::views::{assert_headers_whole, line_with, screen_text};
use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

/// The review's incident: every worker gone (one still listed, holding a
/// lease), thumbnails with lapsed leases and no worker, webhooks with a
/// held job and 53 dead letters, retries past their time on emails, and an
/// operator's requeue among the failures.
fn incident() -> State {
    let mut snapshot = snapshot();
    let mut thumbnails = counts("thumbnails", 5, 0, 3, 0);
    thumbnails.lapsed = 3;
    thumbnails.head_enqueued_at = Some(ago(54));
    // Two waiting, so that NO WORKER holds however held jobs count.
    let mut webhooks = counts("webhooks", 2, 0, 0, 53);
    webhooks.held = 1;
    let mut emails = counts("emails", 12, 4, 0, 2);
    emails.due = 4;
    emails.due_since = Some(ago(70));
    snapshot.queues = vec![
        redq_console::tui::state::QueueRow {
            counts: thumbnails,
            stats: stats(2, 40),
        },
        redq_console::tui::state::QueueRow {
            counts: webhooks,
            stats: stats(10, 3),
        },
        redq_console::tui::state::QueueRow {
            counts: emails,
            stats: stats(30, 0),
        },
    ];
    let mut workers = workers();
    workers.truncate(1);
    workers[0].gone = true;
    workers[0].last_heartbeat = ago(140);
    snapshot.workers = Some(workers);
    snapshot.events.push(QueueEvent {
        event_id: "1764455826000-0".into(),
        kind: "requeued".into(),
        queue: "webhooks".into(),
        job_id: String::new(),
        name: None,
        error: String::new(),
        attempts: 0,
        count: Some(53),
        by: Some("console ana@laptop".into()),
        detail: None,
        at: ago(20),
        namespace: snapshot.events[0].namespace.clone(),
    });
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

fn at(state: &mut State, width: u16, height: u16) -> String {
    state.apply(Action::Resize(width, height));
    screen_text(state, width, height)
}

/// No line runs past the right border: the table's widths fit the room.
fn assert_within_borders(text: &str) {
    for line in text.lines().filter(|l| l.starts_with('│')) {
        assert!(line.ends_with('│'), "a line runs over the border:\n{text}");
    }
}

#[test]
fn queues_at_80_keep_the_names_whole_and_the_badge() {
    let mut state = incident();
    for (w, h) in SIZES {
        let text = at(&mut state, w, h);
        assert_within_borders(&text);
        assert_headers_whole(&text, &["QUEUE", "WAITING", "LEASED", "DEAD", "OLDEST"]);
        // The names whole (a clipped `webhook` reads as a real queue),
        // and thumbnails' badge whole after its numbers.
        let thumbnails = line_with(&text, "thumbnails");
        assert!(thumbnails.contains("LAPSED"), "{text}");
        assert!(thumbnails.contains("NO WORKER"), "{text}");
        line_with(&text, "webhooks");
        line_with(&text, "emails");
        if w == 80 {
            // What went is what an operator needs least, whole columns.
            let header = line_with(&text, "QUEUE");
            for gone in ["SCHED", "HELD", "DONE 15m", "FAILED 15m"] {
                assert!(!header.contains(gone), "{gone}:\n{text}");
            }
        } else {
            assert_headers_whole(
                &text,
                &[
                    "QUEUE",
                    "WAITING",
                    "SCHED",
                    "DUE",
                    "LEASED",
                    "HELD",
                    "LAPSED",
                    "DEAD",
                    "DONE/S",
                    "FAIL/S",
                    "DONE 15m",
                    "FAILED 15m",
                    "OLDEST",
                ],
            );
        }
        insta::assert_snapshot!(format!("incident_queues_{w}x{h}"), text);
    }
}

#[test]
fn a_gone_workers_leases_say_so_on_the_holder_at_80() {
    let mut state = incident();
    state.apply(Action::Show(Screen::Leases));
    for (w, h) in SIZES {
        let text = at(&mut state, w, h);
        assert_within_borders(&text);
        assert_headers_whole(&text, &["JOB", "QUEUE", "NAME", "HOLDER", "LEFT", "TRIES"]);
        // The lease of emails is held by the gone worker (instance 1).
        let emails = line_with(&text, "emails");
        assert!(emails.contains("(gone)"), "{text}");
        if w == 80 {
            assert!(!text.contains("HOST"), "HOST goes first at 80:\n{text}");
        } else {
            assert!(emails.contains("web-1"), "{text}");
            assert!(!emails.contains("web-1 (gone)"), "{text}");
        }
        insta::assert_snapshot!(format!("incident_leases_{w}x{h}"), text);
    }
}

#[test]
fn events_give_the_error_the_room_and_name_who_apart_from_failed() {
    let mut state = incident();
    state.apply(Action::Show(Screen::Events));
    for (w, h) in SIZES {
        let text = at(&mut state, w, h);
        assert_within_borders(&text);
        assert!(!text.contains("FAILED BY"), "{text}");
        if w == 80 {
            // WHO goes before the error is cut below 20 characters.
            assert!(!line_with(&text, "TIME").contains("WHO"), "{text}");
            assert_headers_whole(&text, &["TIME", "KIND", "QUEUE", "JOB", "WHAT"]);
        } else {
            assert_headers_whole(
                &text,
                &[
                    "TIME", "KIND", "QUEUE", "JOB", "NAME", "FAILED", "WHO", "WHAT",
                ],
            );
            assert!(
                line_with(&text, "requeued").contains("console ana@laptop"),
                "{text}"
            );
        }
        insta::assert_snapshot!(format!("incident_events_{w}x{h}"), text);
    }
}

#[test]
fn without_an_operator_action_events_have_no_who_column() {
    let mut state = loaded();
    state.apply(Action::Show(Screen::Events));
    let text = at(&mut state, 160, 45);
    assert!(!line_with(&text, "TIME").contains("WHO"), "{text}");
    assert_headers_whole(&text, &["TIME", "KIND", "QUEUE", "JOB", "FAILED", "WHAT"]);
}

/// Every list screen still lays out within its borders at both sizes.
#[test]
fn every_table_screen_fits_80x24_and_160x45() {
    let screens: [(Screen, &[&str]); 8] = [
        (Screen::Queues, &["QUEUE", "WAITING", "LEASED"]),
        (Screen::Leases, &["JOB", "QUEUE", "HOLDER", "LEFT"]),
        (Screen::Dead, &["JOB", "QUEUE", "ERROR"]),
        (Screen::Schedules, &["NAME", "QUEUE", "EXPRESSION"]),
        (Screen::Workers, &["WORKER"]),
        (Screen::Events, &["TIME", "KIND", "QUEUE", "JOB", "WHAT"]),
        (Screen::Limits, &["QUEUE"]),
        (Screen::Workflows, &["KIND", "STATE"]),
    ];
    for (screen, headers) in screens {
        let mut state = incident();
        state.apply(Action::Show(screen));
        for (w, h) in SIZES {
            let text = at(&mut state, w, h);
            assert_within_borders(&text);
            assert_headers_whole(&text, headers);
            let name = format!(
                "incident_{}_{w}x{h}",
                screen.title().replace(' ', "_").to_lowercase()
            );
            if !matches!(screen, Screen::Queues | Screen::Leases | Screen::Events) {
                insta::assert_snapshot!(name, text);
            }
        }
    }
    // A queue's jobs.
    let mut state = incident();
    state.apply(Action::Open);
    let query = state.jobs().unwrap().query.clone();
    let items = (0..3)
        .map(|i| {
            let mut j = job(
                &format!("01JDQ4W0000000000000000{i:03}"),
                "thumbnails",
                JobState::Waiting,
            );
            j.name = Some("resize_and_watermark_original_upload".into());
            j.enqueued_at = now() - Duration::from_secs(54 + i);
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
    for (w, h) in SIZES {
        let text = at(&mut state, w, h);
        assert_within_borders(&text);
        assert_headers_whole(&text, &["JOB"]);
        insta::assert_snapshot!(format!("incident_jobs_{w}x{h}"), text);
    }
}

/// The review's repro with the real binary in an 80×24 tmux: thumbnails
/// with leases that lapsed and no worker, webhooks with dead letters. The
/// names, the headers and the badge are whole, and nothing runs past the
/// border.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_console_at_80x24_keeps_names_headers_and_the_badge_whole() {
    let server = RedisServer::start();
    let ns = unique_namespace("narrow");
    let url = server.url();
    let q = connect(&url, &ns).await;
    for i in 0..8 {
        let job = NewJob::new(serde_json::json!({ "n": i })).name("resize");
        q.add("thumbnails", job).await.unwrap();
    }
    // Three leases of a second that nobody renews or reclaims.
    q.claim("thumbnails", 3, Duration::from_secs(1))
        .await
        .unwrap();
    dead_letters(&q, "webhooks", 3, "HTTP 503 from upstream").await;
    q.add("webhooks", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();

    let term = Tmux::start(
        &format!("{BIN} --refresh 250ms; sleep 60"),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    term.resize(80, 24);
    let deadline = Duration::from_secs(20);
    let screen = term.wait_until(deadline, "thumbnails' LAPSED badge", |s| {
        s.lines()
            .any(|l| l.contains("thumbnails") && l.contains("LAPSED") && l.contains("NO WORKER"))
    });
    for line in screen.lines() {
        assert!(line.chars().count() <= 80, "{screen}");
    }
    assert_headers_whole(&screen, &["QUEUE", "WAITING", "LEASED", "DEAD", "OLDEST"]);
    let webhooks = line_with(&screen, "webhooks");
    assert!(webhooks.contains("NO WORKER"), "{screen}");
    // Every row that holds a cell ends at the border: nothing clipped.
    for line in screen.lines().filter(|l| l.starts_with('│')) {
        assert!(line.trim_end().ends_with('│'), "{screen}");
    }
}
