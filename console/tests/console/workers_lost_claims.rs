//! A worker's lost claims as an operator sees them: a real `Worker` whose
//! claim replies are lost for real (`RedisServer::lose_replies_over`) gives
//! their jobs back, and counts them on its registry record, which
//! `redq workers` (JSON and table) and the Workers screen show.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};

use crate::live;
use crate::seed::*;
use crate::workers_control::screen_text_at;

const DEADLINE: Duration = Duration::from_secs(30);

/// A job whose claim's reply outgrows the 64 KB the test lets through.
#[derive(serde::Serialize, serde::Deserialize)]
struct Large {
    pad: String,
}

impl TypedJob for Large {
    const NAME: &'static str = "large";
    const QUEUE: &'static str = "reports";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workers_lost_claims_are_counted_on_its_row() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("workers-lost-claims"));
    let q = connect(&url, &ns).await;
    server.lose_replies_over(Some(65_536)).await;
    q.push(&Large {
        pad: "x".repeat(200_000),
    })
    .await
    .unwrap();
    let mut registry = Registry::new();
    registry.add_job::<Large>();
    let options = WorkOptions::new()
        .queues(["reports"])
        // Claimed, not handed: a hand-off's message is not a reply.
        .handoff(false)
        .max_idle(Duration::from_secs(3600))
        .lease(Duration::from_secs(120))
        .schedules(false);
    let worker = Worker::new(connect(&url, &ns).await, registry, options).unwrap();
    let progress = worker.progress();
    let running = RunningWorker::spawn(worker);
    wait_until(DEADLINE, "a lost claim's job given back", async || {
        progress.claims_lost() > 0
    })
    .await;
    server.lose_replies_over(None).await;
    wait_until(DEADLINE, "the job to run", async || {
        progress.processed() == 1
    })
    .await;
    // Stable from now on: what the worker counted, and its queue.
    let lost = progress.claims_lost();
    assert_eq!(q.metric_totals("reports").await.unwrap().claims_lost, lost);
    wait_until(
        Duration::from_secs(10),
        "the worker's record to carry the count",
        async || q.workers().await.unwrap()[0].claims_lost == Some(lost),
    )
    .await;

    let out = redq(&url, &ns, &["workers", "-o", "json"]);
    assert_exit(&out, 0);
    let workers = json(&out);
    assert_eq!(workers[0]["claims_lost"], lost, "{workers}");
    assert_eq!(workers[0]["handoffs_lost"], 0, "{workers}");
    let out = redq(&url, &ns, &["workers"]);
    let table = stdout(&out);
    let header = table.lines().next().unwrap_or("");
    let row = table.lines().nth(1).unwrap_or("");
    let column = header.split_whitespace().position(|h| h == "LOST-CLAIMS");
    assert_eq!(
        column.and_then(|at| row.split_whitespace().nth(at)),
        Some(lost.to_string().as_str()),
        "{table}"
    );

    let target = redq_console::aggregate::Target::single(connect(&url, &ns).await);
    let mut state = live::console(&target, &ns);
    live::press(&mut state, &[KeyCode::Char('5')]);
    live::refresh(&target, &mut state).await;
    let screen = screen_text_at(&state, std::time::SystemTime::now());
    let header = screen.lines().find(|l| l.contains("WORKER")).unwrap();
    assert!(header.contains("LOST-CLAIMS"), "{screen}");
    assert!(!header.contains("LOST-HANDOFFS"), "none lost: {screen}");
    let report = running.shutdown().await;
    assert_eq!(report.claims_lost, lost);
}
