//! The Queues screen's badges tell the truth, and `redq queues` tells the
//! same, against a real redis-server: a queue whose only worker is quiet
//! has NO WORKER (saying why) within a refresh, not a blank row and a
//! STALLED a minute later; held jobs with no worker are flagged; a paused
//! queue nobody serves says both; help explains every badge and column.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use redq::flow::{Limit, LimitScope};
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker, WorkerState};
use redq::{NewJob, RedisQueue};
use redq_console::aggregate::Target;
use redq_console::tui::source;
use redq_console::tui::state::rows::BADGE_LEGEND;
use redq_console::tui::state::{Action, Badge, Focus, Settings, State, Update};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio_util::sync::CancellationToken;

use crate::common::loaded;
use crate::seed::tmux::Tmux;
use crate::seed::*;
use crate::views::screen_text;

const DEADLINE: Duration = Duration::from_secs(20);

/// Done at once.
#[derive(serde::Serialize, serde::Deserialize)]
struct Quick;

impl TypedJob for Quick {
    const NAME: &'static str = "quick";
    const QUEUE: &'static str = "reports";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

/// The console's state after one snapshot of the namespace, as a refresh
/// gives it.
async fn console_state(url: &str, ns: &str) -> State {
    let target = Target::connect(RedisQueue::builder(url), ns, 1)
        .await
        .unwrap();
    let snapshot = source::fetch(&target, &Focus::Overview).await.unwrap();
    let mut state = State::new(Settings {
        url: target.redacted_url().to_owned(),
        namespace: ns.to_owned(),
        shards: target.shard_namespaces(),
        read_only: false,
        refresh: Duration::from_secs(1),
    });
    state.apply(Action::Resize(100, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: SystemTime::now(),
    }));
    state
}

/// The badges the console shows for `queue`.
fn console_badges(state: &State, queue: &str) -> Vec<String> {
    let row = state
        .data
        .queues
        .iter()
        .find(|r| r.counts.queue == queue)
        .unwrap_or_else(|| panic!("no {queue} in the snapshot"));
    let now = state.redis_time(SystemTime::now());
    state.badges(row, now).iter().map(Badge::text).collect()
}

/// `redq queues -o json`'s row for `queue`.
fn json_row(url: &str, ns: &str, queue: &str) -> serde_json::Value {
    let out = redq(url, ns, &["queues", "-o", "json"]);
    assert_exit(&out, 0);
    let rows = json(&out);
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["queue"] == queue)
        .cloned()
        .unwrap_or_else(|| panic!("no {queue} in {rows}"))
}

/// `redq queues`' row for `queue`, each cell under its column's name.
fn table_row(url: &str, ns: &str, queue: &str) -> BTreeMap<String, String> {
    let out = redq(url, ns, &["queues"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(queue))
        .unwrap_or_else(|| panic!("no row for {queue}:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells.len(), header.len(), "{table}");
    header
        .iter()
        .zip(cells)
        .map(|(h, c)| (h.to_string(), c.to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_whose_only_worker_is_quiet_says_no_worker_at_once_on_screen_and_in_the_cli() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("badges-quiet"));
    let q = connect(&url, &ns).await;
    let mut registry = Registry::new();
    registry.add_job::<Quick>();
    let options = WorkOptions::new()
        .queues(["reports"])
        .concurrency(2)
        .schedules(false);
    let worker = Worker::new(connect(&url, &ns).await, registry, options).unwrap();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.run(shutdown.clone()));
    wait_until(DEADLINE, "the worker to be listed", async || {
        !q.workers().await.unwrap().is_empty()
    })
    .await;
    let id = q.workers().await.unwrap()[0].id.clone();

    let term = Tmux::start(
        &format!("{BIN} --refresh 250ms; echo REDQ-EXITED-$?; sleep 60"),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    let out = redq(&url, &ns, &["workers", "quiet", &id]);
    assert_exit(&out, 0);
    wait_until(DEADLINE, "the registry to show it quiet", async || {
        q.workers().await.unwrap()[0].state == WorkerState::Quiet
    })
    .await;
    for _ in 0..3 {
        q.push(&Quick).await.unwrap();
    }
    // Well before STALLED's minute: the first refresh that sees the jobs.
    let pushed = std::time::Instant::now();
    let screen = term.wait_for("NO WORKER (1 quiet)", DEADLINE);
    assert!(pushed.elapsed() < Duration::from_secs(30), "{screen}");
    let row = screen
        .lines()
        .find(|l| l.contains("reports"))
        .unwrap_or_else(|| panic!("no reports row:\n{screen}"));
    assert!(
        row.contains("NO WORKER (1 quiet)") && !row.contains("STALLED"),
        "{screen}"
    );

    let listed = json_row(&url, &ns, "reports");
    assert_eq!(
        listed["warnings"],
        serde_json::json!(["no_worker"]),
        "{listed}"
    );
    assert_eq!(
        listed["warnings_text"],
        serde_json::json!(["NO WORKER (1 quiet)"]),
        "{listed}"
    );
    assert_eq!(listed["waiting"], 3, "existing fields stay: {listed}");
    let cells = table_row(&url, &ns, "reports");
    assert_eq!(cells.get("WARNINGS").map(String::as_str), Some("no_worker"));
    assert_eq!(cells.get("STATE").map(String::as_str), Some("active"));

    // Stopped, idle, it exits: still NO WORKER, now with no reason to give.
    let out = redq(&url, &ns, &["workers", "stop", &id]);
    assert_exit(&out, 0);
    tokio::time::timeout(DEADLINE, running)
        .await
        .expect("the stopped worker exits once idle")
        .unwrap()
        .unwrap();
    term.wait_until(DEADLINE, "the badge without the quiet worker", |s| {
        s.lines()
            .any(|l| l.contains("reports") && l.contains("NO WORKER") && !l.contains("quiet"))
    });
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
    drop(shutdown);
}

#[tokio::test]
async fn held_jobs_with_no_live_worker_say_no_worker() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("badges-held"));
    let q = connect(&url, &ns).await;
    // One at a time per tenant; the first job's holder died with its lease
    // still running, so the other two are held and nobody will claim them.
    q.set_limit("webhooks", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    for n in 0..3 {
        q.add(
            "webhooks",
            NewJob::new(serde_json::json!(n)).limit_key("acme"),
        )
        .await
        .unwrap();
    }
    let taken = q
        .claim("webhooks", 3, Duration::from_secs(600))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "the limit lets one start");
    let counts = q.counts("webhooks").await.unwrap();
    assert_eq!((counts.waiting, counts.held, counts.lapsed), (0, 2, 0));

    let state = console_state(&url, &ns).await;
    assert_eq!(console_badges(&state, "webhooks"), ["NO WORKER"]);
    let screen = screen_text(&state, 100, 30);
    let row = screen
        .lines()
        .find(|l| l.contains("webhooks"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.contains("NO WORKER"), "{screen}");

    let listed = json_row(&url, &ns, "webhooks");
    assert_eq!(
        listed["warnings"],
        serde_json::json!(["no_worker"]),
        "{listed}"
    );
    let cells = table_row(&url, &ns, "webhooks");
    assert_eq!(cells.get("WARNINGS").map(String::as_str), Some("no_worker"));
}

#[tokio::test]
async fn a_paused_queue_nobody_serves_says_paused_and_no_worker() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("badges-paused"));
    let q = connect(&url, &ns).await;
    q.add("thumbnails", NewJob::new(serde_json::json!({"n": 1})))
        .await
        .unwrap();
    q.pause("thumbnails").await.unwrap();

    let state = console_state(&url, &ns).await;
    assert_eq!(
        console_badges(&state, "thumbnails"),
        ["PAUSED", "NO WORKER"]
    );
    let listed = json_row(&url, &ns, "thumbnails");
    assert_eq!(
        listed["warnings"],
        serde_json::json!(["paused", "no_worker"]),
        "{listed}"
    );
    assert_eq!(
        listed["warnings_text"],
        serde_json::json!(["PAUSED", "NO WORKER"]),
        "{listed}"
    );
    assert_eq!(listed["paused"], true, "{listed}");
    // The table says the pause under STATE, as before, and the rest under
    // WARNINGS; a queue with nothing to say has `-`.
    let cells = table_row(&url, &ns, "thumbnails");
    assert_eq!(cells.get("WARNINGS").map(String::as_str), Some("no_worker"));
    assert_eq!(cells.get("STATE").map(String::as_str), Some("paused"));
    q.add("idle", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    let idle = q.claim("idle", 1, Duration::from_secs(600)).await.unwrap();
    q.ack(&idle[0].lease()).await.unwrap();
    let cells = table_row(&url, &ns, "idle");
    assert_eq!(cells.get("WARNINGS").map(String::as_str), Some("-"));
}

#[test]
fn help_explains_every_badge_and_column_in_whole_sentences() {
    let mut state = loaded();
    state.apply(Action::Resize(80, 24));
    state.apply(Action::ToggleHelp);
    // Every page, in order, until the last line is on screen.
    let mut pages = Vec::new();
    let mut seen = String::new();
    for _ in 0..20 {
        let text = screen_text(&state, 80, 24);
        seen.push_str(&text);
        let at_end = text
            .lines()
            .find(|l| l.contains(" lines "))
            .is_some_and(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let range = words.get(2).unwrap_or(&"");
                let total = words.get(4).unwrap_or(&"");
                range.ends_with(&format!("–{total}"))
            });
        pages.push(text);
        if at_end {
            break;
        }
        state.apply(Action::HelpPage(true));
    }
    assert!(
        seen.contains("top, end (Home, End)"),
        "help reaches its end"
    );
    let flat: String = seen
        .lines()
        .map(|l| l.trim_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    for (name, sentence) in BADGE_LEGEND {
        assert!(flat.contains(name), "{name} missing:\n{seen}");
        // The sentence's words all show, wrapped, never cut.
        let start: String = sentence.split(' ').take(4).collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&start), "{name}: {start:?} missing:\n{seen}");
    }
    for column in ["DUE", "HELD", "BLOCKED", "AWAITING", "OLDEST"] {
        assert!(
            seen.lines().any(|l| l
                .trim_start_matches('│')
                .starts_with(&format!("  {column} "))),
            "{column} missing:\n{seen}"
        );
    }
    assert!(flat.contains("STALLED"), "{seen}");
    assert!(!seen.contains('…'), "nothing is cut:\n{seen}");
    let legend = pages
        .iter()
        .find(|p| p.contains("  NO WORKER  ") && p.contains("  STALLED  "))
        .expect("a page with the badges' legend");
    insta::assert_snapshot!("help_legend_80x24", legend);
}
