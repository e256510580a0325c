//! Quieting and stopping a real worker, from the CLI and from the Workers
//! screen's keys, and a worker that vanished listed as gone, against a real
//! redis-server.

use std::sync::Arc;
use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::worker::{
    JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker, WorkerState,
};
use redq::RedisQueue;
use redq_console::tui::state::Mutation;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::live;
use crate::seed::*;

const DEADLINE: Duration = Duration::from_secs(10);

/// Runs until the test opens its gate.
#[derive(serde::Serialize, serde::Deserialize)]
struct Gated;

impl TypedJob for Gated {
    const NAME: &'static str = "gated";
    const QUEUE: &'static str = "reports";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Arc<Notify>>().expect("gate").notified().await;
        Ok(())
    }
}

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

fn worker(queue: RedisQueue, gate: &Arc<Notify>) -> Worker {
    let mut registry = Registry::new();
    registry.add_job::<Gated>();
    registry.add_job::<Quick>();
    let options = WorkOptions::new()
        .queues(["reports"])
        .concurrency(4)
        .schedules(false);
    Worker::new(queue, registry, options)
        .unwrap()
        .services(Services::new().with(gate.clone()))
}

async fn state_of(queue: &RedisQueue, id: &str) -> Option<WorkerState> {
    let workers = queue.workers().await.unwrap();
    workers
        .iter()
        .find(|w| w.id == id && !w.gone)
        .map(|w| w.state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_quieted_then_stopped_by_the_cli_claims_nothing_more_and_exits_after_its_job() {
    let server = RedisServer::start();
    let ns = unique_namespace("workers-quiet-cli");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.push(&Gated).await.unwrap();
    let gate = Arc::new(Notify::new());
    let first = worker(connect(&url, &ns).await, &gate);
    let progress = first.progress();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(first.run(shutdown.clone()));
    wait_until(DEADLINE, "the gated job to run", async || {
        q.counts("reports").await.unwrap().leased == 1
    })
    .await;
    // Listed as soon as it hears its holder channel: told at once, it hears.
    wait_until(DEADLINE, "the worker to be listed", async || {
        !q.workers().await.unwrap().is_empty()
    })
    .await;
    let id = q.workers().await.unwrap()[0].id.clone();

    let out = redq(&url, &ns, &["workers", "quiet", &id]);
    assert_exit(&out, 0);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.starts_with(&format!("quieted {id}: it claims nothing more")),
        "{said}"
    );
    wait_until(DEADLINE, "the registry to show it quiet", async || {
        state_of(&q, &id).await == Some(WorkerState::Quiet)
    })
    .await;
    let listed = redq(&url, &ns, &["workers"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("quiet"));

    // Three jobs it would claim at once with its three free slots; then a
    // second worker takes them all: the quiet one took none.
    for _ in 0..3 {
        q.push(&Quick).await.unwrap();
    }
    let second = worker(connect(&url, &ns).await, &gate);
    let second_progress = second.progress();
    let second_stop = CancellationToken::new();
    let second_running = tokio::spawn(second.run(second_stop.clone()));
    wait_until(DEADLINE, "the second worker to run the three", async || {
        second_progress.processed() == 3
    })
    .await;
    assert_eq!(
        (progress.processed(), progress.in_flight()),
        (0, 1),
        "the quiet worker claimed none of the three, and still runs its job"
    );
    second_stop.cancel();
    second_running.await.unwrap().unwrap();

    let out = redq(&url, &ns, &["workers", "stop", &id]);
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&format!("stopping {id}")));
    wait_until(DEADLINE, "the registry to show it stopping", async || {
        state_of(&q, &id).await == Some(WorkerState::Stopping)
    })
    .await;
    assert!(!running.is_finished(), "it exits only after its job");
    gate.notify_one();
    let report = tokio::time::timeout(DEADLINE, running)
        .await
        .expect("the worker exits once its job is done")
        .unwrap()
        .unwrap();
    assert_eq!(report.processed, 1);
    assert!(!shutdown.is_cancelled(), "it stopped by itself");
    // Left cleanly: not listed, not even as gone; telling it again reaches
    // nobody.
    assert!(q.workers().await.unwrap().iter().all(|w| w.id != id));
    let out = redq(&url, &ns, &["workers", "quiet", &id]);
    assert_exit(&out, 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no worker heard it"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workers_screen_asks_then_quiets_and_stops_the_selected_worker() {
    let server = RedisServer::start();
    let ns = unique_namespace("workers-quiet-keys");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let target = redq_console::aggregate::Target::single(connect(&url, &ns).await);
    let gate = Arc::new(Notify::new());
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker(connect(&url, &ns).await, &gate).run(shutdown.clone()));
    wait_until(DEADLINE, "the worker to register", async || {
        !q.workers().await.unwrap().is_empty()
    })
    .await;
    let id = q.workers().await.unwrap()[0].id.clone();
    // Registered is not yet listening: await its holder channel's
    // subscription, or the quiet below may find no one (seen under CI load).
    let channel = format!("{{{ns}}}:wake:holder:{}", id.replace('-', ":"));
    wait_until(
        DEADLINE,
        "the worker to listen on its holder channel",
        async || {
            let reply: Vec<String> = server
                .cmd(&["PUBSUB", "NUMSUB", &channel])
                .await
                .convert()
                .unwrap();
            reply
                .get(1)
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
                > 0
        },
    )
    .await;

    let mut state = live::console(&target, &ns);
    live::press(&mut state, &[KeyCode::Char('5')]);
    live::refresh(&target, &mut state).await;
    assert!(live::press(&mut state, &[KeyCode::Char('z')]).is_empty());
    let asked = live::prompt(&state);
    assert!(
        asked.starts_with(&format!("Quiet worker {id} on ")),
        "{asked}"
    );
    let sent = live::press(&mut state, &[KeyCode::Char('y')]);
    assert_eq!(sent, vec![Mutation::QuietWorker(id.clone())]);
    let ((message, ok), _) = live::run(&target, &mut state, sent[0].clone()).await;
    assert!(
        ok && message.starts_with(&format!("quieted {id}")),
        "{message}"
    );
    wait_until(DEADLINE, "the registry to show it quiet", async || {
        state_of(&q, &id).await == Some(WorkerState::Quiet)
    })
    .await;
    live::refresh(&target, &mut state).await;
    let now = std::time::SystemTime::now();
    let screen = screen_text_at(&state, now);
    assert!(screen.contains(" quiet "), "{screen}");

    // `s` asks too; no answers no, and nothing is sent.
    live::press(&mut state, &[KeyCode::Char('s')]);
    assert!(live::prompt(&state).starts_with("Stop worker"));
    assert!(live::press(&mut state, &[KeyCode::Char('n')]).is_empty());
    live::press(&mut state, &[KeyCode::Char('s')]);
    let sent = live::press(&mut state, &[KeyCode::Char('y')]);
    assert_eq!(sent, vec![Mutation::StopWorker(id.clone())]);
    live::run(&target, &mut state, sent[0].clone()).await;
    // Idle: it exits at once.
    tokio::time::timeout(DEADLINE, running)
        .await
        .expect("an idle worker told to stop exits")
        .unwrap()
        .unwrap();
}

pub(crate) fn screen_text_at(
    state: &redq_console::tui::state::State,
    now: std::time::SystemTime,
) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 42)).unwrap();
    terminal
        .draw(|frame| {
            redq_console::tui::view::render(
                frame,
                state,
                &redq_console::tui::theme::Theme::new(false),
                now,
            )
        })
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..42 {
        for x in 0..140 {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_vanished_is_listed_as_gone_with_when_it_was_last_seen() {
    let server = RedisServer::start();
    let ns = unique_namespace("workers-gone");
    let url = server.url();
    let q = connect(&url, &ns).await;
    // A worker that beat 20 s ago and then died. Its way of hearing
    // wake-ups is a word of a later version: unknown here, and the worker
    // still listed.
    crate::seed::vanished_worker(
        &server,
        &ns,
        &["reports"],
        serde_json::json!({ "wake_ups": "a-later-word" }),
    )
    .await;

    // Nobody beats any more: still listed, as gone.
    let out = redq(&url, &ns, &["workers", "-o", "json"]);
    assert_exit(&out, 0);
    let listed = json(&out);
    assert_eq!(listed[0]["id"], "77-1");
    assert_eq!(listed[0]["gone"], true);
    assert_eq!(listed[0]["processed"], 31);
    assert_eq!(listed[0]["wake_ups"], serde_json::Value::Null);

    // A live worker's first beat moves it to the gone set; still listed.
    let gate = Arc::new(Notify::new());
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker(connect(&url, &ns).await, &gate).run(shutdown.clone()));
    wait_until(DEADLINE, "the live worker to register", async || {
        q.workers().await.unwrap().iter().any(|w| !w.gone)
    })
    .await;
    let gone_set = server
        .cmd(&["ZRANGE", &format!("{{{ns}}}:workers:gone"), "0", "-1"])
        .await;
    assert!(
        format!("{gone_set:?}").contains("77-1"),
        "moved to the gone set: {gone_set:?}"
    );
    let workers = q.workers().await.unwrap();
    assert_eq!(workers.len(), 2);
    assert!(!workers[0].gone && workers[1].gone && workers[1].id == "77-1");
    let out = redq(&url, &ns, &["workers"]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = table.lines().find(|l| l.starts_with("77-1")).unwrap_or("");
    assert!(row.trim_end().ends_with("gone"), "{table}");
    // It runs nothing: RUNNING is not the 2 it last reported.
    assert_eq!(row.split_whitespace().nth(4), Some("-"), "{table}");

    // The Workers screen: live first, then the gone one, last seen 20 s ago.
    let target = redq_console::aggregate::Target::single(connect(&url, &ns).await);
    let mut state = live::console(&target, &ns);
    live::press(&mut state, &[KeyCode::Char('5')]);
    live::refresh(&target, &mut state).await;
    let shown = screen_text_at(&state, state.redis_time(std::time::SystemTime::now()));
    let line = shown.lines().find(|l| l.contains("web-9")).unwrap_or("");
    assert!(
        line.contains("gone") && line.contains("last seen 2"),
        "{shown}"
    );
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert!(
        cells.contains(&"-") && !cells.contains(&"2"),
        "a gone worker shows no running count: {line}"
    );
    assert!(
        shown.contains("1 live, 1 gone in the last 10m15s"),
        "{shown}"
    );
    // Nothing listens as a gone worker: the key says so and asks nothing.
    live::press(&mut state, &[KeyCode::Char('j'), KeyCode::Char('z')]);
    assert_eq!(state.overlay, redq_console::tui::state::Overlay::None);
    assert!(state.status.as_ref().unwrap().text.contains("is gone"));

    shutdown.cancel();
    running.await.unwrap().unwrap();
}
