//! Notes from jobs under a Worker: `cx.progress` and `cx.log` are seen
//! while the job runs (they ride the heartbeat), what is left rides the
//! nack and stays through the retry and the dead-letter, and the ack of a
//! job without notes issues no note command (seen with MONITOR).

use std::sync::Arc;
use std::time::Duration;

use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::{JobState, Operator, RedisQueue};
use redq_tests::fixtures::handle;
use redq_tests::history::ServerLog;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::Notify;

const DEADLINE: Duration = Duration::from_secs(10);

/// Reports progress and a line, then waits for the test to let it finish.
#[derive(Serialize, Deserialize)]
struct Reporter;
impl TypedJob for Reporter {
    const NAME: &'static str = "n.reporter";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.progress(&json!({"step": 1, "of": 2}))?;
        cx.log("fetching invoices");
        cx.service::<Arc<Notify>>().expect("gate").notified().await;
        cx.log("done");
        Ok(())
    }
}

/// Logs its attempt and fails, twice: dead after the second.
#[derive(Serialize, Deserialize)]
struct Flaky;
impl TypedJob for Flaky {
    const NAME: &'static str = "n.flaky";
    const MAX_ATTEMPTS: u32 = 2;
    fn backoff(_attempt: u32) -> Duration {
        Duration::ZERO
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.progress(&json!({"attempt": cx.attempt()}))?;
        cx.log(&format!("attempt {}", cx.attempt()));
        Err(JobError::retry("ledger locked"))
    }
}

/// Does nothing and notes nothing.
#[derive(Serialize, Deserialize)]
struct Silent;
impl TypedJob for Silent {
    const NAME: &'static str = "n.silent";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

fn start(queue: &RedisQueue, gate: &Arc<Notify>) -> RunningWorker {
    let mut registry = Registry::new();
    registry
        .add_job::<Reporter>()
        .add_job::<Flaky>()
        .add_job::<Silent>();
    // A short lease: the heartbeat, which carries the notes, every 100 ms.
    let options = WorkOptions::new()
        .queues(["default"])
        .lease(Duration::from_millis(300))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(gate.clone()));
    RunningWorker::spawn(worker)
}

async fn gone(queue: &RedisQueue, id: &str) {
    wait_until(DEADLINE, "the job to be acknowledged", async || {
        queue.inspect(id).await.unwrap().is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_and_lines_are_seen_while_the_job_runs_and_go_with_its_ack() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-worker");
    let queue = handle(&server, &ns).await;
    let gate = Arc::new(Notify::new());
    let id = queue.push(&Reporter).await.unwrap().id().to_owned();
    let worker = start(&queue, &gate);

    let operator = Operator::from(queue.clone());
    wait_until(DEADLINE, "the running job's notes", async || {
        !operator.notes(&id).await.unwrap().is_empty()
    })
    .await;
    let notes = operator.notes(&id).await.unwrap();
    assert_eq!(notes.progress, Some(json!({"step": 1, "of": 2})));
    assert_eq!(notes.log, ["fetching invoices"]);
    let job = queue.inspect(&id).await.unwrap().expect("still running");
    assert_eq!(job.state, JobState::Leased);

    gate.notify_one();
    gone(&queue, &id).await;
    assert!(
        queue.notes(&id).await.unwrap().is_empty(),
        "notes outlived the ack"
    );
    worker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_left_at_a_failure_ride_the_nack_and_stay_through_retry_and_dead_letter() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-flaky");
    let queue = handle(&server, &ns).await;
    let gate = Arc::new(Notify::new());
    let id = queue.push(&Flaky).await.unwrap().id().to_owned();
    let worker = start(&queue, &gate);
    wait_until(
        DEADLINE,
        "the job to be dead-lettered",
        async || matches!(queue.inspect(&id).await.unwrap(), Some(j) if j.state == JobState::Dead),
    )
    .await;
    worker.shutdown().await;
    let notes = queue.notes(&id).await.unwrap();
    assert_eq!(notes.progress, Some(json!({"attempt": 2})));
    assert_eq!(notes.log, ["attempt 1", "attempt 2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ack_of_a_job_without_notes_issues_no_note_command() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-monitor");
    let queue = handle(&server, &ns).await;
    let gate = Arc::new(Notify::new());
    let log = ServerLog::start(server.port(), None).await;
    let silent = queue.push(&Silent).await.unwrap().id().to_owned();
    let noted = queue.push(&Reporter).await.unwrap().id().to_owned();
    let worker = start(&queue, &gate);
    gone(&queue, &silent).await;
    // The reporter's notes reach Redis with a heartbeat; then it may finish.
    wait_until(DEADLINE, "the running job's notes", async || {
        !queue.notes(&noted).await.unwrap().is_empty()
    })
    .await;
    gate.notify_one();
    gone(&queue, &noted).await;
    worker.shutdown().await;
    let lines = log.stop(server.port(), None).await;

    let progress_key = format!("\"{{{ns}}}:progress\"");
    let touching_notes: Vec<&String> = lines
        .iter()
        // Commands a script ran (every script call names all the keys).
        .filter(|l| l.contains(" lua] "))
        .filter(|l| l.contains(&progress_key) || l.contains(&format!("\"{{{ns}}}:logs\"")))
        .collect();
    // Only the noted job's commands name the notes: its writes and the HDELs
    // of its ack, none of them about the silent job.
    assert!(
        touching_notes.iter().all(|l| l.contains(&noted)),
        "{touching_notes:#?}"
    );
    assert!(
        touching_notes
            .iter()
            .any(|l| l.contains("\"HDEL\"") && l.contains(&progress_key)),
        "the noted job's ack did not delete its notes: {touching_notes:#?}"
    );
}
