//! One `Worker` over a 3-shard `ShardedQueue` registers on every shard,
//! each record with the whole process's figures: `redq --shards 3 workers`
//! (table and `-o json`) and the Workers screen list it once, with the
//! figures it reports and the shards it is on, and a quiet or stop by its
//! id still reaches it. Against a real redis-server, the shards as
//! namespaces on it.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::worker::{
    JobCx, JobError, Registry, TypedJob, WorkOptions, Worker, WorkerProgress, WorkerReport,
    WorkerState,
};
use redq::{RedisQueue, ShardedQueue};
use redq_console::aggregate::Target;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::live;
use crate::seed::*;

const DEADLINE: Duration = Duration::from_secs(20);

/// Jobs the worker runs: more than the shards, so each shard has some.
const JOBS: u64 = 12;

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

/// A worker over 3 shards that ran [`JOBS`] jobs, each shard's registry
/// record showing all of them.
struct Ran {
    server: RedisServer,
    base: String,
    queue: ShardedQueue,
    id: String,
    stop: CancellationToken,
    running: JoinHandle<Result<WorkerReport, redq::QueueError>>,
}

async fn ran_over_three_shards(name: &str) -> Ran {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace(name);
    let queue = ShardedQueue::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .expect("connecting the sharded queue");
    for _ in 0..JOBS {
        queue.push(&Quick).await.unwrap();
    }
    let mut registry = Registry::new();
    registry.add_job::<Quick>();
    let options = WorkOptions::new()
        .queues(["reports"])
        .concurrency(2)
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options).unwrap();
    let progress: WorkerProgress = worker.progress();
    let stop = CancellationToken::new();
    let running = tokio::spawn(worker.run(stop.clone()));
    wait_until(DEADLINE, "the worker to run every job", async || {
        progress.processed() == JOBS
    })
    .await;
    // Each shard's record says so by its next heartbeat.
    wait_until(DEADLINE, "every shard's record to show them", async || {
        let mut all = true;
        for shard in queue.shards() {
            let workers = shard.workers().await.unwrap();
            all &= workers.len() == 1 && workers[0].processed == JOBS && !workers[0].gone;
        }
        all
    })
    .await;
    let id = queue.shards()[0].workers().await.unwrap()[0].id.clone();
    Ran {
        server,
        base,
        queue,
        id,
        stop,
        running,
    }
}

impl Ran {
    fn redq(&self, args: &[&str]) -> std::process::Output {
        let all = [&["--shards", "3"][..], args].concat();
        redq(&self.server.url(), &self.base, &all)
    }

    async fn finish(self) {
        self.stop.cancel();
        self.running.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_lists_a_worker_over_three_shards_once_with_what_it_ran() {
    let ran = ran_over_three_shards("workers-sharded-cli").await;

    let out = ran.redq(&["workers", "-o", "json"]);
    assert_exit(&out, 0);
    let listed = json(&out);
    let workers = listed.as_array().expect("a list");
    assert_eq!(workers.len(), 1, "one process, one object: {listed}");
    let worker = &workers[0];
    assert_eq!(worker["id"], ran.id.as_str(), "{listed}");
    assert_eq!(worker["processed"], JOBS, "not once per shard: {listed}");
    assert_eq!(worker["shards"], serde_json::json!([0, 1, 2]), "{listed}");
    assert!(worker.get("gone_shards").is_none(), "{listed}");
    assert_eq!(worker["state"], "running", "{listed}");

    let out = ran.redq(&["workers"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header[..3], ["WORKER", "SHARDS", "HOST"], "{table}");
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with(&ran.id)).collect();
    assert_eq!(rows.len(), 1, "{table}");
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(cells[1], "0-2", "{table}");
    let done = header.iter().position(|h| *h == "DONE").unwrap();
    assert_eq!(cells[done], JOBS.to_string(), "{table}");

    ran.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workers_screen_lists_a_worker_over_three_shards_once() {
    let ran = ran_over_three_shards("workers-sharded-tui").await;
    let target = Target::connect(RedisQueue::builder(&ran.server.url()), &ran.base, 3)
        .await
        .unwrap();
    let mut state = live::console(&target, &ran.base);
    live::press(&mut state, &[KeyCode::Char('5')]);
    live::refresh(&target, &mut state).await;

    assert_eq!(state.visible_workers().len(), 1);
    let now = state.redis_time(std::time::SystemTime::now());
    let screen = crate::workers_control::screen_text_at(&state, now);
    assert!(screen.contains(" Workers (1) "), "{screen}");
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains(&ran.id)).collect();
    assert_eq!(rows.len(), 1, "{screen}");
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    assert!(cells.contains(&"0-2"), "its shards: {screen}");
    assert!(cells.contains(&JOBS.to_string().as_str()), "{screen}");
    assert!(screen.contains("SHARDS"), "{screen}");

    ran.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_and_stop_by_id_reach_a_worker_over_three_shards() {
    let ran = ran_over_three_shards("workers-sharded-quiet").await;
    let (id, queue) = (ran.id.clone(), ran.queue.clone());

    let out = ran.redq(&["workers", "quiet", &id]);
    assert_exit(&out, 0);
    assert!(stdout(&out).starts_with(&format!("quieted {id}")));
    // One control for the process: every shard's record says quiet.
    wait_until(DEADLINE, "every shard's record to say quiet", async || {
        let mut all = true;
        for shard in queue.shards() {
            let workers = shard.workers().await.unwrap();
            all &= workers
                .iter()
                .any(|w| w.id == id && w.state == WorkerState::Quiet);
        }
        all
    })
    .await;
    let listed = json(&ran.redq(&["workers", "-o", "json"]));
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["state"], "quiet", "{listed}");

    let out = ran.redq(&["workers", "stop", &id]);
    assert_exit(&out, 0);
    // Idle: it exits by itself, and leaves every shard's registry.
    let (running, stop) = (ran.running, ran.stop);
    let report = tokio::time::timeout(DEADLINE, running)
        .await
        .expect("an idle worker told to stop exits")
        .unwrap()
        .unwrap();
    assert_eq!(report.processed, JOBS);
    assert!(!stop.is_cancelled(), "it stopped by itself");
    let url = ran.server.url();
    let listed = json(&redq(
        &url,
        &ran.base,
        &["--shards", "3", "workers", "-o", "json"],
    ));
    assert_eq!(listed, serde_json::json!([]));
}
