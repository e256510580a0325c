//! The bounds of what a queue keeps hold at every read, not only after the
//! queue's next trim: in a quiet queue (no ack or cancel since), a kept job
//! past its age bound is neither returned, listed nor counted, and a
//! tombstone past its own age reads as nothing, on Redis's clock; the reads
//! write nothing (read-only users make them), and the next trim frees the
//! memory. Also: a size bound that keeps nothing is refused, and what a
//! handler's `cx.set_result(..)?` of an oversized result really does.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use redq::kept::{Outcome, Retention, MIN_RETENTION_BYTES};
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq::{Completion, JobResult, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::running::RunningWorker;
use redq_tests::{wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

const DAY: Duration = Duration::from_secs(86_400);

/// Enqueue, claim and acknowledge one job of `queue` `q` with `result`.
async fn ack_one(queue: &RedisQueue, result: serde_json::Value) -> String {
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    let acked = queue
        .ack_with(&held.lease(), Completion::new().result(&result).unwrap())
        .await
        .unwrap();
    assert_eq!(acked, redq::Acked::Completed);
    held.id
}

/// Whether `{ns}:<hash>` still holds field `id` (memory not yet freed).
async fn stored(server: &RedisServer, queue: &RedisQueue, hash: &str, id: &str) -> bool {
    let key = format!("{{{}}}:{hash}", queue.namespace());
    server
        .cmd(&["HEXISTS", &key, id])
        .await
        .convert::<i64>()
        .expect("HEXISTS is an integer")
        == 1
}

#[tokio::test]
async fn a_kept_job_past_its_age_is_neither_listed_nor_counted_before_any_trim() {
    let server = server();
    let queue = queue(&server, "expiry-list").await;
    queue
        .set_retention("q", &Retention::new().max_age(DAY))
        .await
        .unwrap();
    let id = ack_one(&queue, json!({ "secret": "pii" })).await;
    let page = queue
        .list_kept("q", Outcome::Completed, 0, 10)
        .await
        .unwrap();
    assert_eq!((page.total, page.items.len()), (1, 1));

    // The age bound drops to 1 ms: no ack or cancel follows, so no trim.
    queue
        .set_retention("q", &Retention::new().max_age(Duration::from_millis(1)))
        .await
        .unwrap();
    wait_until(DEADLINE, "the kept job to pass its age", async || {
        queue
            .list_kept("q", Outcome::Completed, 0, 10)
            .await
            .unwrap()
            .total
            == 0
    })
    .await;
    let before = digest(&server).await;
    let page = queue
        .list_kept("q", Outcome::Completed, 0, 10)
        .await
        .unwrap();
    assert!(page.items.is_empty(), "{page:?}");
    let listed = queue
        .list_jobs("q", JobState::Completed, 0, 10)
        .await
        .unwrap();
    assert_eq!((listed.total, listed.items.len()), (0, 0));
    let state = queue.retention("q").await.unwrap();
    assert_eq!((state.completed, state.cancelled, state.expired), (0, 0, 1));
    assert!(
        state.kept_bytes > 0,
        "its memory is not freed yet: {state:?}"
    );
    assert_eq!(digest(&server).await, before, "a read wrote");
    assert!(stored(&server, &queue, "kept", &id).await);

    // The next ack trims it: its memory is freed.
    let next = ack_one(&queue, json!(2)).await;
    assert!(!stored(&server, &queue, "kept", &id).await);
    let state = queue.retention("q").await.unwrap();
    assert_eq!(state.expired + state.completed, 1, "{state:?}");
    assert!(stored(&server, &queue, "kept", &next).await);
}

#[tokio::test]
async fn a_kept_result_past_its_age_reads_as_its_tombstone_then_as_nothing() {
    let server = server();
    let queue = queue(&server, "expiry-get").await;
    let policy = Retention::new()
        .max_age(Duration::from_millis(500))
        .keep_tombstones_for(Duration::from_millis(800));
    queue.set_retention("q", &policy).await.unwrap();
    let id = ack_one(&queue, json!({ "secret": "pii" })).await;

    // Nothing acks or cancels in the queue from here.
    wait_until(DEADLINE, "the result to pass its age", async || {
        !matches!(queue.result(&id).await.unwrap(), JobResult::Kept(_))
    })
    .await;
    let before = digest(&server).await;
    assert!(
        matches!(
            queue.result(&id).await.unwrap(),
            JobResult::Tombstone(t) if t.outcome == Outcome::Completed
        ),
        "past its age a kept job reads as its tombstone"
    );
    assert!(matches!(
        queue
            .wait_for(&id, Duration::from_millis(50))
            .await
            .unwrap(),
        JobResult::Tombstone(_)
    ));
    assert_eq!(digest(&server).await, before, "a read wrote");
    assert!(
        stored(&server, &queue, "kept", &id).await,
        "freed only by a trim"
    );

    wait_until(DEADLINE, "its tombstone to pass its own age", async || {
        queue.result(&id).await.unwrap() == JobResult::Unknown
    })
    .await;
    // The next ack trims the record, and leaves no tombstone to show again:
    // its tombstone's age ran from when the age bound passed.
    ack_one(&queue, json!(2)).await;
    assert!(!stored(&server, &queue, "kept", &id).await);
    assert_eq!(queue.result(&id).await.unwrap(), JobResult::Unknown);
    assert!(!stored(&server, &queue, "tombstones", &id).await);
}

#[tokio::test]
async fn a_tombstone_past_its_age_reads_as_nothing_before_any_trim() {
    let server = server();
    let queue = queue(&server, "expiry-tombstone").await;
    let policy = Retention::new()
        .max_count(10)
        .keep_tombstones_for(Duration::from_millis(300));
    queue.set_retention("q", &policy).await.unwrap();
    let id = ack_one(&queue, json!(1)).await;
    // The clear leaves a tombstone, and the queue no policy: no ack of it
    // trims tombstones any more.
    assert_eq!(queue.clear_retention("q", |_, _| {}).await.unwrap(), 1);
    assert!(matches!(
        queue.result(&id).await.unwrap(),
        JobResult::Tombstone(_)
    ));
    wait_until(DEADLINE, "the tombstone to pass its age", async || {
        queue.result(&id).await.unwrap() == JobResult::Unknown
    })
    .await;
    assert!(
        stored(&server, &queue, "tombstones", &id).await,
        "freed only by a trim"
    );
    // A cancel in the namespace frees expired tombstones.
    let other = queue.add("other", NewJob::new(json!(1))).await.unwrap();
    queue.cancel(other.id(), "test").await.unwrap();
    assert!(!stored(&server, &queue, "tombstones", &id).await);
}

#[tokio::test]
async fn a_size_bound_that_keeps_nothing_is_refused_with_the_smallest_accepted() {
    let server = server();
    let queue = queue(&server, "expiry-bytes").await;
    let refused = queue
        .set_retention("q", &Retention::new().max_bytes(1))
        .await;
    match refused {
        Err(QueueError::Invalid { what, rule, .. }) => {
            assert_eq!(what, "retention size");
            assert!(rule.contains("at least 1024 bytes"), "{rule}");
        }
        other => panic!("a 1-byte bound was not refused: {other:?}"),
    }
    assert_eq!(queue.retention("q").await.unwrap().policy, None);
    let smallest = Retention::new().max_bytes(MIN_RETENTION_BYTES);
    queue.set_retention("q", &smallest).await.unwrap();
    let id = ack_one(&queue, json!(1)).await;
    assert!(matches!(
        queue.result(&id).await.unwrap(),
        JobResult::Kept(_)
    ));
}

static RUNS: AtomicU32 = AtomicU32::new(0);

/// A handler that has a side effect (counted in `RUNS`), then sets a
/// result over 64 KiB with `?`, as the README's example writes it.
#[derive(Serialize, Deserialize)]
struct Oversized;
impl TypedJob for Oversized {
    const NAME: &'static str = "t.oversized";
    const QUEUE: &'static str = "oversized";
    const MAX_ATTEMPTS: u32 = 2;
    fn backoff(_attempt: u32) -> Duration {
        Duration::from_millis(10)
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        RUNS.fetch_add(1, Ordering::SeqCst);
        cx.set_result(&"r".repeat(70_000))?;
        Ok(())
    }
}

/// `cx.set_result(&too_big)?` fails the attempt: the job is retried, its
/// side effects run again, and it dies with the size rule as its error.
#[tokio::test]
async fn an_oversized_result_set_with_a_question_mark_fails_the_attempt_and_reruns_the_job() {
    let server = server();
    let queue = queue(&server, "expiry-oversized").await;
    let mut registry = Registry::new();
    registry.add_job::<Oversized>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        WorkOptions::new().queues(["oversized"]),
    )
    .unwrap();
    let running = RunningWorker::spawn(worker);
    let id = queue.push(&Oversized).await.unwrap().id().to_owned();
    wait_until(DEADLINE, "the job to die", async || {
        queue.counts("oversized").await.unwrap().dead == 1
    })
    .await;
    running.shutdown().await;
    assert_eq!(
        RUNS.load(Ordering::SeqCst),
        2,
        "each attempt ran the handler"
    );
    let dead = queue.inspect(&id).await.unwrap().expect("dead, kept");
    let error = dead.last_error.unwrap_or_default();
    assert!(error.contains("at most 65536 bytes of JSON"), "{error}");
}

/// The queue's counts (`redq queues`, the console's Completed tab title)
/// leave out a kept job past its age bound, as its listing does.
#[tokio::test]
async fn the_queue_counts_leave_out_a_kept_job_past_its_age() {
    let server = server();
    let queue = queue(&server, "expiry-counts").await;
    queue
        .set_retention("q", &Retention::new().max_age(DAY))
        .await
        .unwrap();
    ack_one(&queue, json!(1)).await;
    assert_eq!(queue.counts("q").await.unwrap().completed, 1);
    queue
        .set_retention("q", &Retention::new().max_age(Duration::from_millis(1)))
        .await
        .unwrap();
    wait_until(DEADLINE, "the kept job to pass its age", async || {
        queue.retention("q").await.unwrap().expired == 1
    })
    .await;
    assert_eq!(queue.counts("q").await.unwrap().completed, 0);
}

/// A result acknowledged in a queue that keeps no finished jobs is lost to
/// `result` and `wait_for`: the driver warns, once per queue, naming the job
/// and the command that keeps results; an ack without a result says nothing.
#[tokio::test(flavor = "current_thread")]
async fn a_result_dropped_by_a_queue_that_keeps_nothing_is_warned_once() {
    let server = server();
    let queue = queue(&server, "expiry-dropped").await;
    let logs = redq_tests::logs::LogCapture::new();
    let _guard = logs.set_default(tracing::Level::WARN);
    queue.add("q", NewJob::new(json!(0))).await.unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue.ack(&held.lease()).await.unwrap();
    assert!(!logs.text().contains("dropped"), "{}", logs.text());
    let first = ack_one(&queue, json!({ "rows": 42 })).await;
    ack_one(&queue, json!({ "rows": 43 })).await;
    assert_eq!(queue.result(&first).await.unwrap(), JobResult::Unknown);
    let text = logs.text();
    let warned: Vec<&str> = text.lines().filter(|l| l.contains("was dropped")).collect();
    assert_eq!(warned.len(), 1, "{text}");
    assert!(
        warned[0].contains(&format!(
            "queue q keeps no finished jobs, so the result of job {first} was dropped"
        )) && warned[0].contains("redq retention set q"),
        "{text}"
    );
}
