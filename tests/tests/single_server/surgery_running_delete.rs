//! Delete and the jobs around it: a forced delete of a running job tells
//! its worker at once (the handler sees it is cancelled) and the worker
//! neither counts nor logs it as completed; a finished job's kept record or
//! tombstone is deleted by id; and `wait_for` ends when the job it waits
//! for dies or is deleted, not at its timeout.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redq::kept::Retention;
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq::{Completion, IfLeased, JobResult, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::logs::LogCapture;
use redq_tests::running::RunningWorker;
use redq_tests::{wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Well within any lease these tests give: only the holder channel, not a
/// heartbeat, can have told the worker this soon.
const AT_ONCE: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Seen {
    runs: AtomicU32,
    cancelled: AtomicU32,
}

/// Returns `Ok` once told it is cancelled: what a cooperative handler does.
#[derive(Serialize, Deserialize)]
struct StopsWhenTold;
impl TypedJob for StopsWhenTold {
    const NAME: &'static str = "t.stops-when-told";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let seen = cx.service::<Arc<Seen>>().expect("seen");
        seen.runs.fetch_add(1, Ordering::SeqCst);
        cx.cancelled().await;
        seen.cancelled.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Runs on whatever it is told: only its worker can stop it.
#[derive(Serialize, Deserialize)]
struct IgnoresIt;
impl TypedJob for IgnoresIt {
    const NAME: &'static str = "t.ignores-it";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let seen = cx.service::<Arc<Seen>>().expect("seen");
        seen.runs.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(())
    }
}

fn worker_on(queue: &RedisQueue, seen: &Arc<Seen>, lease: Duration) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<StopsWhenTold>().add_job::<IgnoresIt>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        WorkOptions::new().queues(["default"]).lease(lease),
    )
    .unwrap()
    .services(redq::worker::Services::new().with(seen.clone()));
    RunningWorker::spawn(worker)
}

async fn subscribers(server: &RedisServer, channel: &str) -> i64 {
    let reply: Vec<fred::types::Value> = server
        .cmd(&["PUBSUB", "NUMSUB", channel])
        .await
        .convert()
        .expect("PUBSUB NUMSUB is a list");
    reply.get(1).and_then(|n| n.as_i64()).unwrap_or(0)
}

/// Wait until job `id` runs on the worker and the worker hears its holder
/// channel (a word sent before that reaches it at its next heartbeat).
async fn running_and_listening(server: &RedisServer, queue: &RedisQueue, seen: &Seen) {
    wait_until(DEADLINE, "the job to run", async || {
        seen.runs.load(Ordering::SeqCst) == 1
    })
    .await;
    let channel = queue.holder_channel(queue.identity());
    wait_until(DEADLINE, "the worker to listen", async || {
        subscribers(server, &channel).await == 1
    })
    .await;
}

// Current-thread: the worker's tasks log on this thread, into `logs`.
#[tokio::test(flavor = "current_thread")]
async fn a_forced_delete_tells_the_running_job_at_once_and_it_is_not_counted_processed() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = server();
    let queue = queue(&server, "delete-running").await;
    let operator = handle(&server, queue.namespace()).await;
    let seen = Arc::new(Seen::default());
    let running = worker_on(&queue, &seen, Duration::from_secs(30));
    let id = queue.push(&StopsWhenTold).await.unwrap().id().to_owned();
    running_and_listening(&server, &queue, &seen).await;

    operator.delete_job(&id, IfLeased::VoidLease).await.unwrap();
    // The lease is 30 s, its heartbeat every 10 s.
    wait_until(AT_ONCE, "the handler to see it is cancelled", async || {
        seen.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    // The handler returned Ok: its ack finds no job.
    wait_until(
        DEADLINE,
        "the worker to say what became of it",
        async || {
            logs.text()
                .contains("an operator had deleted it while it ran")
        },
    )
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.processed, 0, "a deleted job is not processed");
    let text = logs.text();
    assert!(!text.contains("lost to another worker"), "{text}");
    assert!(queue.inspect(&id).await.unwrap().is_none());
    assert_eq!(seen.runs.load(Ordering::SeqCst), 1, "never run again");
}

#[tokio::test(flavor = "current_thread")]
async fn a_deleted_job_that_runs_on_is_stopped_at_its_heartbeat_as_deleted() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = server();
    let queue = queue(&server, "delete-running-deaf").await;
    let operator = handle(&server, queue.namespace()).await;
    let seen = Arc::new(Seen::default());
    // A heartbeat every second.
    let running = worker_on(&queue, &seen, Duration::from_secs(3));
    let id = queue.push(&IgnoresIt).await.unwrap().id().to_owned();
    running_and_listening(&server, &queue, &seen).await;

    operator.delete_job(&id, IfLeased::VoidLease).await.unwrap();
    wait_until(DEADLINE, "the worker to stop the job", async || {
        logs.text()
            .contains("deleted by an operator while it ran: job stopped")
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.processed, 0);
    let text = logs.text();
    assert!(!text.contains("lease lost"), "{text}");
}

/// A queue that keeps finished jobs, with `n` of them completed (result
/// `{"n": i}`), their ids in order.
async fn completed_jobs(queue: &RedisQueue, n: usize) -> Vec<String> {
    queue
        .set_retention("q", &Retention::new().max_count(100))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for i in 0..n {
        queue.add("q", NewJob::new(json!(i))).await.unwrap();
        let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
        let done = Completion::new().result(&json!({ "n": i })).unwrap();
        queue.ack_with(&held.lease(), done).await.unwrap();
        ids.push(held.id);
    }
    ids
}

async fn retention_bytes(server: &RedisServer, queue: &RedisQueue) -> i64 {
    let key = format!("{{{}}}:retention", queue.namespace());
    server
        .cmd(&["HGET", &key, "q:bytes"])
        .await
        .convert::<Option<i64>>()
        .unwrap()
        .unwrap_or(0)
}

#[tokio::test]
async fn a_kept_completed_job_is_deleted_by_id_with_its_result_and_its_charge() {
    let server = server();
    let queue = queue(&server, "delete-kept").await;
    let ids = completed_jobs(&queue, 2).await;
    let charged_for_two = retention_bytes(&server, &queue).await;
    assert!(charged_for_two > 0);

    assert_eq!(
        queue
            .delete_job_reported(&ids[0], IfLeased::Refuse)
            .await
            .unwrap(),
        Some(JobState::Completed)
    );
    assert_eq!(queue.result(&ids[0]).await.unwrap(), JobResult::Unknown);
    let kept = queue
        .list_kept("q", redq::kept::Outcome::Completed, 0, 10)
        .await
        .unwrap();
    assert_eq!(kept.total, 1);
    assert_eq!(kept.items[0].id, ids[1], "the other is kept");
    assert_eq!(queue.counts("q").await.unwrap().completed, 1);
    let charged_for_one = retention_bytes(&server, &queue).await;
    assert!(
        charged_for_one > 0 && charged_for_one < charged_for_two,
        "{charged_for_one} of {charged_for_two}"
    );
    // Nothing of it is left to delete.
    assert!(matches!(
        queue.delete_job(&ids[0], IfLeased::Refuse).await,
        Err(QueueError::JobNotFound { .. })
    ));
    // delete_job deletes it too; then nothing is charged.
    queue.delete_job(&ids[1], IfLeased::Refuse).await.unwrap();
    assert_eq!(retention_bytes(&server, &queue).await, 0);
    assert_eq!(hlen(&server, &queue, "kept").await, 0);
}

#[tokio::test]
async fn a_cancelled_jobs_kept_record_and_a_tombstone_are_deleted_by_id() {
    let server = server();
    let queue = queue(&server, "delete-tombstone").await;
    // No policy: a cancel leaves a tombstone, which names no queue.
    let buried = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    queue.cancel(buried.id(), "test").await.unwrap();
    assert!(matches!(
        queue.result(buried.id()).await.unwrap(),
        JobResult::Tombstone(_)
    ));
    assert_eq!(
        queue
            .delete_job_reported(buried.id(), IfLeased::Refuse)
            .await
            .unwrap(),
        Some(JobState::Cancelled)
    );
    assert_eq!(queue.result(buried.id()).await.unwrap(), JobResult::Unknown);
    assert_eq!(hlen(&server, &queue, "tombstones").await, 0);
    let at = format!("{{{}}}:tombstones:at", queue.namespace());
    let left: i64 = server.cmd(&["ZCARD", &at]).await.convert().unwrap();
    assert_eq!(left, 0);

    // With a policy: the cancelled job is kept, and deleted whole.
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let kept = queue.add("q", NewJob::new(json!(2))).await.unwrap();
    queue.cancel(kept.id(), "test").await.unwrap();
    assert_eq!(
        queue
            .delete_job_reported(kept.id(), IfLeased::Refuse)
            .await
            .unwrap(),
        Some(JobState::Cancelled)
    );
    assert_eq!(queue.result(kept.id()).await.unwrap(), JobResult::Unknown);
    assert_eq!(queue.counts("q").await.unwrap().cancelled, 0);
    assert_eq!(retention_bytes(&server, &queue).await, 0);

    // A live job still reads as one.
    let live = queue.add("q", NewJob::new(json!(3))).await.unwrap();
    assert_eq!(
        queue
            .delete_job_reported(live.id(), IfLeased::Refuse)
            .await
            .unwrap(),
        None
    );
}

type Waiter = tokio::task::JoinHandle<Result<JobResult, QueueError>>;

/// `wait_for(id)` for 20 s in the background, once it listens.
async fn waiting_for(server: &RedisServer, queue: &RedisQueue, id: &str) -> Waiter {
    let waiter = {
        let (queue, id) = (queue.clone(), id.to_owned());
        tokio::spawn(async move { queue.wait_for(&id, Duration::from_secs(20)).await })
    };
    let channel = queue.finished_channel();
    wait_until(DEADLINE, "the waiter to listen", async || {
        subscribers(server, &channel).await == 1
    })
    .await;
    waiter
}

#[track_caller]
fn assert_dead(outcome: Result<JobResult, QueueError>) {
    match outcome {
        Err(QueueError::WrongState {
            change: "wait for",
            state: "dead",
            ..
        }) => {}
        other => panic!("not refused as dead: {other:?}"),
    }
}

#[tokio::test]
async fn wait_for_ends_when_the_job_is_dead_lettered_or_deleted() {
    let server = server();
    let queue = queue(&server, "wait-dead").await;
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();

    let dying = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let waiter = waiting_for(&server, &queue, dying.id()).await;
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    let started = Instant::now();
    queue.dead_letter(&held.lease(), "boom").await.unwrap();
    assert_dead(waiter.await.unwrap());
    assert!(started.elapsed() < Duration::from_secs(5), "woken late");
    // Dead already: refused at once, not at the timeout.
    let started = Instant::now();
    assert_dead(queue.wait_for(dying.id(), Duration::from_secs(20)).await);
    assert!(started.elapsed() < Duration::from_secs(5));

    let deleted = queue.add("q", NewJob::new(json!(2))).await.unwrap();
    let waiter = waiting_for(&server, &queue, deleted.id()).await;
    let started = Instant::now();
    queue
        .delete_job(deleted.id(), IfLeased::Refuse)
        .await
        .unwrap();
    assert_eq!(waiter.await.unwrap().unwrap(), JobResult::Unknown);
    assert!(started.elapsed() < Duration::from_secs(5), "woken late");
}

/// A failure that retries does not end the wait: the job may still finish.
#[tokio::test]
async fn wait_for_goes_on_through_a_retry() {
    let server = server();
    let queue = queue(&server, "wait-retry").await;
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let job = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let waiter = waiting_for(&server, &queue, job.id()).await;
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue
        .nack(&held.lease(), Duration::ZERO, "again")
        .await
        .unwrap();
    let again = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue
        .ack_with(&again.lease(), Completion::new().result(&"ok").unwrap())
        .await
        .unwrap();
    let JobResult::Kept(kept) = waiter.await.unwrap().unwrap() else {
        panic!("not kept");
    };
    assert_eq!(kept.attempt, 2);
}
