//! Kept results: a queue with a retention policy keeps its completed jobs
//! with their results, within its bounds (count, age, bytes) however many
//! jobs finish, a bounded amount trimmed per ack; trimmed ones leave
//! tombstones that expire on their own; `wait_for` returns when the job
//! finishes; a Worker sends each job's result and run time with its ack and
//! stops a job an operator cancels.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redq::kept::{Outcome, Retention};
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq::{Completion, JobResult, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::running::RunningWorker;
use redq_tests::{wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Claim and acknowledge `n` jobs of `q` in batches of `batch`, each with a
/// result of about `result_bytes` bytes.
async fn flood(queue: &RedisQueue, n: usize, batch: usize, result_bytes: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let text = "r".repeat(result_bytes);
    let mut left = n;
    while left > 0 {
        let now = left.min(batch);
        queue
            .add_batch("q", (0..now).map(|i| NewJob::new(json!(i))).collect())
            .await
            .unwrap();
        let held = queue.claim("q", now, LONG).await.unwrap();
        let leases: Vec<_> = held.iter().map(|j| j.lease()).collect();
        let done: Vec<Completion> = held
            .iter()
            .map(|_| {
                Completion::new()
                    .result(&json!({ "out": text }))
                    .unwrap()
                    .run_time(Duration::from_millis(7))
            })
            .collect();
        for outcome in queue.ack_batch_with(&leases, &done).await.unwrap() {
            outcome.unwrap();
        }
        ids.extend(held.into_iter().map(|j| j.id));
        left -= now;
    }
    ids
}

async fn memory_usage(server: &RedisServer, key: &str) -> i64 {
    server
        .cmd(&["MEMORY", "USAGE", key, "SAMPLES", "0"])
        .await
        .convert::<Option<i64>>()
        .expect("MEMORY USAGE is an integer or nil")
        .unwrap_or(0)
}

#[tokio::test]
async fn without_a_policy_an_ack_keeps_nothing() {
    let server = server();
    let queue = queue(&server, "kept-off").await;
    let ids = flood(&queue, 10, 10, 10).await;
    assert_eq!(queue.result(&ids[0]).await.unwrap(), JobResult::Unknown);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.completed, counts.cancelled), (0, 0));
    for key in ["kept", "tombstones"] {
        assert_eq!(hlen(&server, &queue, key).await, 0, "{key}");
    }
}

#[tokio::test]
async fn a_completed_job_is_kept_with_its_result_run_time_attempt_and_holder() {
    let server = server();
    let queue = queue(&server, "kept-one").await;
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let job = queue
        .add("q", NewJob::new(json!(1)).name("t.sum"))
        .await
        .unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    let done = Completion::new()
        .result(&json!({ "sum": 42 }))
        .unwrap()
        .run_time(Duration::from_millis(1500));
    queue.ack_with(&held.lease(), done).await.unwrap();
    let JobResult::Kept(kept) = queue.result(job.id()).await.unwrap() else {
        panic!("not kept");
    };
    assert_eq!(kept.outcome, Outcome::Completed);
    assert_eq!(kept.result, Some(json!({ "sum": 42 })));
    assert_eq!(kept.run_time, Some(Duration::from_millis(1500)));
    assert_eq!((kept.attempt, kept.name.as_deref()), (1, Some("t.sum")));
    let me = queue.identity();
    assert_eq!(kept.holder, Some((me.node, me.instance)));
    let page = queue
        .list_jobs("q", JobState::Completed, 0, 10)
        .await
        .unwrap();
    assert_eq!((page.total, page.items[0].id.as_str()), (1, job.id()));
    assert_eq!(page.items[0].state, JobState::Completed);
}

#[tokio::test]
async fn a_result_over_the_cap_is_refused_not_cut() {
    let big = "x".repeat(redq::kept::MAX_RESULT_BYTES);
    assert!(matches!(
        Completion::new().result(&big),
        Err(QueueError::Invalid {
            what: "job result",
            ..
        })
    ));
    assert!(Completion::new().result(&"x".repeat(1000)).is_ok());
}

#[tokio::test]
async fn by_count_a_flood_keeps_exactly_the_newest_and_buries_the_rest() {
    let server = server();
    let queue = queue(&server, "kept-count").await;
    queue
        .set_retention("q", &Retention::new().max_count(100))
        .await
        .unwrap();
    let ids = flood(&queue, 3000, 250, 20).await;
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(counts.completed, 100);
    // The kept are from the last ack call (its jobs share one finish time,
    // so which 100 of its 250 is the set's tie order); earlier ones only
    // have a tombstone.
    let page = queue
        .list_kept("q", Outcome::Completed, 0, 1000)
        .await
        .unwrap();
    let last_call: std::collections::HashSet<&String> = ids[2750..].iter().collect();
    assert!(page.items.iter().all(|k| last_call.contains(&k.id)));
    for id in &ids[..10] {
        assert!(matches!(
            queue.result(id).await.unwrap(),
            JobResult::Tombstone(t) if t.outcome == Outcome::Completed
        ));
    }
    assert_eq!(hlen(&server, &queue, "kept").await, 100);
    assert_eq!(hlen(&server, &queue, "tombstones").await, 2900);
}

#[tokio::test]
async fn by_bytes_a_flood_stays_under_the_configured_cap_in_redis_memory() {
    const CAP: u64 = 256 * 1024;
    let server = server();
    let queue = queue(&server, "kept-bytes").await;
    queue
        .set_retention("q", &Retention::new().max_bytes(CAP))
        .await
        .unwrap();
    flood(&queue, 5000, 500, 400).await;
    let ns = queue.namespace();
    let kept = memory_usage(&server, &format!("{{{ns}}}:kept")).await;
    let index = memory_usage(&server, &format!("{{{ns}}}:q:q:completed")).await;
    let state = queue.retention("q").await.unwrap();
    println!(
        "bytes cap {CAP}: {} kept, charged {} bytes; MEMORY USAGE kept {kept} + completed {index} = {}",
        state.completed,
        state.kept_bytes,
        kept + index
    );
    assert!(state.kept_bytes <= CAP, "{state:?}");
    assert!(state.completed > 100, "kept too few: {state:?}");
    assert!(
        (kept + index) as u64 <= CAP,
        "the kept jobs use {} bytes of Redis memory, over the {CAP} cap",
        kept + index
    );
}

#[tokio::test]
async fn by_age_old_records_become_tombstones_which_expire_on_their_own() {
    let server = server();
    let queue = queue(&server, "kept-age").await;
    let policy = Retention::new()
        .max_age(Duration::from_millis(200))
        .keep_tombstones_for(Duration::from_millis(400));
    queue.set_retention("q", &policy).await.unwrap();
    let old = flood(&queue, 5, 5, 10).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let fresh = flood(&queue, 1, 1, 10).await;
    assert!(matches!(
        queue.result(&fresh[0]).await.unwrap(),
        JobResult::Kept(_)
    ));
    for id in &old {
        assert!(
            matches!(queue.result(id).await.unwrap(), JobResult::Tombstone(_)),
            "{id}"
        );
    }
    tokio::time::sleep(Duration::from_millis(450)).await;
    // The next ack drops the expired tombstones (within its bound).
    flood(&queue, 1, 1, 10).await;
    for id in &old {
        assert_eq!(queue.result(id).await.unwrap(), JobResult::Unknown, "{id}");
    }
}

#[tokio::test]
async fn clearing_the_policy_forgets_what_is_kept_and_leaves_tombstones() {
    let server = server();
    let queue = queue(&server, "kept-clear").await;
    queue
        .set_retention("q", &Retention::new().max_count(5000))
        .await
        .unwrap();
    let ids = flood(&queue, 1500, 500, 10).await;
    let mut seen = Vec::new();
    let forgotten = queue
        .clear_retention("q", |done, left| seen.push((done, left)))
        .await
        .unwrap();
    assert_eq!(forgotten, 1500);
    assert_eq!(seen, vec![(1000, 500), (1500, 0)]);
    let state = queue.retention("q").await.unwrap();
    assert_eq!(
        (state.policy, state.completed, state.kept_bytes),
        (None, 0, 0)
    );
    assert!(matches!(
        queue.result(&ids[0]).await.unwrap(),
        JobResult::Tombstone(_)
    ));
    // Nothing more is kept.
    let after = flood(&queue, 1, 1, 10).await;
    assert_eq!(queue.result(&after[0]).await.unwrap(), JobResult::Unknown);
}

#[tokio::test]
async fn wait_for_returns_when_the_job_completes_and_live_at_its_timeout() {
    let server = server();
    let queue = queue(&server, "kept-wait").await;
    let worker = handle(&server, queue.namespace()).await;
    // No policy: waiting for a live job is refused (nothing would tell).
    let job = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    assert!(matches!(
        queue.wait_for(job.id(), Duration::from_secs(1)).await,
        Err(QueueError::Invalid { .. })
    ));
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    assert_eq!(
        queue
            .wait_for(job.id(), Duration::from_millis(100))
            .await
            .unwrap(),
        JobResult::Live
    );
    let waiter = spawn_wait(&queue, job.id());
    let held = worker.claim("q", 1, LONG).await.unwrap().remove(0);
    // Let the waiter subscribe; whether it does before or after the ack, it
    // must see the result (it subscribes before it first reads).
    tokio::time::sleep(Duration::from_millis(100)).await;
    ack_done_and_see_it_kept(&worker, &held, waiter).await;
}

/// A waiter listens on the finished channel both plainly and as a shard
/// channel, so a finish published either way wakes it: the acks publish
/// plainly, and a later version may move them to the shard channel.
#[tokio::test]
async fn wait_for_hears_a_finish_on_the_shard_channel_too() {
    let server = server();
    let queue = queue(&server, "kept-wait-shard").await;
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let job = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let waiter = spawn_wait(&queue, job.id());
    let channel = queue.finished_channel();
    wait_until(DEADLINE, "the waiter to listen both ways", async || {
        server.subscribers(&channel).await == 1 && server.shard_subscribers(&channel).await == 1
    })
    .await;
    // The job goes with no plain message: its record deleted (the waiter
    // then reads no trace of it), its id told on the shard channel alone.
    let jobs = format!("{{{}}}:jobs", queue.namespace());
    server.cmd(&["HDEL", &jobs, job.id()]).await;
    let started = std::time::Instant::now();
    server.cmd(&["SPUBLISH", &channel, job.id()]).await;
    assert_eq!(waiter.await.unwrap().unwrap(), JobResult::Unknown);
    assert!(started.elapsed() < Duration::from_secs(5), "woken late");
}

/// A waiter whose user may not `SSUBSCRIBE` (an ACL written for an earlier
/// driver) still waits, plainly, and the ack wakes it.
#[tokio::test]
async fn wait_for_without_shard_subscriptions_still_hears_the_ack() {
    let server = server();
    let queue = queue(&server, "kept-wait-plain").await;
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let rules: Vec<String> = redq_tests::acl::worker_acl(queue.namespace(), "plain-secret")
        .into_iter()
        .filter(|rule| rule != "+ssubscribe")
        .collect();
    redq_tests::acl::set_user(&server, &rules).await;
    let waiting = redq_tests::acl::worker_handle(&server, queue.namespace(), "plain-secret").await;
    let job = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let waiter = spawn_wait(&waiting, job.id());
    let channel = queue.finished_channel();
    wait_until(DEADLINE, "the waiter to listen plainly", async || {
        server.subscribers(&channel).await == 1
    })
    .await;
    assert_eq!(server.shard_subscribers(&channel).await, 0, "refused");
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    ack_done_and_see_it_kept(&queue, &held, waiter).await;
}

type Waiter = tokio::task::JoinHandle<Result<JobResult, redq::QueueError>>;

/// `queue.wait_for(id)` (up to 30 s) running in the background.
fn spawn_wait(queue: &RedisQueue, id: &str) -> Waiter {
    let queue = queue.clone();
    let id = id.to_owned();
    tokio::spawn(async move { queue.wait_for(&id, Duration::from_secs(30)).await })
}

/// Acknowledge `held` with the result `"done"`, and see `waiter` woken by
/// it within seconds (not at its timeout) with that result kept.
async fn ack_done_and_see_it_kept(acker: &RedisQueue, held: &redq::Job, waiter: Waiter) {
    let started = std::time::Instant::now();
    acker
        .ack_with(&held.lease(), Completion::new().result(&"done").unwrap())
        .await
        .unwrap();
    let JobResult::Kept(kept) = waiter.await.unwrap().unwrap() else {
        panic!("not kept");
    };
    assert!(started.elapsed() < Duration::from_secs(5), "woken late");
    assert_eq!(kept.result, Some(json!("done")));
}

async fn subscribers(server: &RedisServer, channel: &str) -> i64 {
    let reply: Vec<fred::types::Value> = server
        .cmd(&["PUBSUB", "NUMSUB", channel])
        .await
        .convert()
        .expect("PUBSUB NUMSUB is a list");
    reply.get(1).and_then(|n| n.as_i64()).unwrap_or(0)
}

#[derive(Default)]
struct Seen {
    cancelled: AtomicU32,
    runs: AtomicU32,
}

#[derive(Serialize, Deserialize)]
struct Adds {
    a: i64,
    b: i64,
}
impl TypedJob for Adds {
    const NAME: &'static str = "t.adds";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.set_result(&json!({ "sum": self.a + self.b }))?;
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct Waits;
impl TypedJob for Waits {
    const NAME: &'static str = "t.waits";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let seen = cx.service::<Arc<Seen>>().expect("seen");
        seen.runs.fetch_add(1, Ordering::SeqCst);
        cx.cancelled().await;
        seen.cancelled.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn worker_on(queue: &RedisQueue, seen: &Arc<Seen>) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<Adds>().add_job::<Waits>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        WorkOptions::new()
            .queues(["default"])
            .lease(Duration::from_secs(30)),
    )
    .unwrap()
    .services(redq::worker::Services::new().with(seen.clone()));
    RunningWorker::spawn(worker)
}

#[tokio::test]
async fn a_worker_sends_the_result_and_run_time_with_its_ack() {
    let server = server();
    let queue = queue(&server, "kept-worker").await;
    queue
        .set_retention("default", &Retention::new().max_count(10))
        .await
        .unwrap();
    let seen = Arc::new(Seen::default());
    let running = worker_on(&queue, &seen);
    let pushed = queue.push(&Adds { a: 2, b: 3 }).await.unwrap();
    let id = pushed.id().to_owned();
    let JobResult::Kept(kept) = queue.wait_for(&id, Duration::from_secs(10)).await.unwrap() else {
        panic!("not kept");
    };
    assert_eq!(kept.result, Some(json!({ "sum": 5 })));
    // The handler takes microseconds: measured all the same, as at least
    // a millisecond, never as "not measured".
    let run_time = kept.run_time.expect("the worker measured the run");
    assert!(run_time >= Duration::from_millis(1), "{run_time:?}");
    assert!(run_time < Duration::from_secs(10), "{run_time:?}");
    running.shutdown().await;
}

#[tokio::test]
async fn a_running_jobs_cancellation_fires_at_once_when_an_operator_cancels_it() {
    let server = server();
    let queue = queue(&server, "kept-worker-cancel").await;
    let operator = handle(&server, queue.namespace()).await;
    let seen = Arc::new(Seen::default());
    let running = worker_on(&queue, &seen);
    let id = queue.push(&Waits).await.unwrap().id().to_owned();
    wait_until(DEADLINE, "the job to run", async || {
        seen.runs.load(Ordering::SeqCst) == 1
    })
    .await;
    // The worker listens on its holder channel once its subscriber is up
    // (a cancel before that reaches the job at its next heartbeat instead).
    let channel = queue.holder_channel(queue.identity());
    wait_until(
        DEADLINE,
        "the worker to listen on its holder channel",
        async || subscribers(&server, &channel).await == 1,
    )
    .await;
    assert!(matches!(
        operator.cancel(&id, "test").await.unwrap(),
        redq::CancelOutcome::Cancelled {
            from: JobState::Leased,
            ..
        }
    ));
    // The lease is 30 s: only the holder channel can have told it this soon.
    wait_until(
        Duration::from_secs(2),
        "the job's cancellation to fire",
        async || seen.cancelled.load(Ordering::SeqCst) == 1,
    )
    .await;
    let report = running.shutdown().await;
    assert_eq!(
        report.processed, 0,
        "a cancelled job is not counted as processed"
    );
    assert_eq!(seen.runs.load(Ordering::SeqCst), 1, "never retried");
    let counts = operator.counts("default").await.unwrap();
    assert_eq!((counts.waiting, counts.leased, counts.scheduled), (0, 0, 0));
    assert!(matches!(
        operator.result(&id).await.unwrap(),
        JobResult::Tombstone(t) if t.outcome == Outcome::Cancelled
    ));
}
