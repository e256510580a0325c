//! A worker's claim whose reply was lost after it leased jobs
//! (`driver/src/lost_claim.rs`, `driver/src/worker/lost_claims.rs`): the
//! jobs are given back at once, no attempt counted, and run on their first
//! attempt, instead of waiting out their leases and being reclaimed with an
//! attempt they never had.
//!
//! The reply is lost for real: Redis closes a connection whose reply
//! outgrows `client-output-buffer-limit`, after the command ran. A claim
//! of a job with a 200 KB payload is such a reply under a 64 KB limit;
//! every other reply here (enqueues, heartbeats, events) stays far below.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::events::EventKind;
use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::{NewJob, RecordFormat, RedisQueue};
use redq_tests::events::latest_of_kind;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// Far longer than the test waits: a job that waits out its lease fails it.
const LEASE: Duration = Duration::from_secs(120);
const DEADLINE: Duration = Duration::from_secs(30);

/// A job whose payload is as large as its pad.
#[derive(Serialize, Deserialize)]
struct Large {
    pad: String,
}

/// Each run's job id and attempt number.
#[derive(Clone, Default)]
struct Runs(Arc<Mutex<Vec<(String, u32)>>>);

impl Runs {
    fn attempts(&self) -> Vec<u32> {
        self.0.lock().unwrap().iter().map(|(_, a)| *a).collect()
    }

    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// Each of `ids` ran exactly once, on its first attempt, and no other
    /// job ran.
    fn assert_each_ran_once_on_its_first_attempt(&self, mut ids: Vec<String>) {
        let mut ran = self.0.lock().unwrap().clone();
        ran.sort();
        ids.sort();
        let expected: Vec<(String, u32)> = ids.into_iter().map(|id| (id, 1)).collect();
        assert_eq!(ran, expected, "each job once, on its first attempt");
    }
}

impl TypedJob for Large {
    const NAME: &'static str = "t.large";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let runs = cx.service::<Runs>().expect("the runs service");
        runs.0
            .lock()
            .unwrap()
            .push((cx.id().to_owned(), cx.attempt()));
        Ok(())
    }
}

/// A handle on `server` whose calls give up after 2 s (half of it is a
/// claim's window to start, which the look waits out), writing `format`.
async fn handle(server: &RedisServer, format: RecordFormat) -> RedisQueue {
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("lost-claim").as_str())
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect("connect");
    queue.set_record_format(format).await.expect("the format");
    queue
}

/// A worker on `queue`'s queue `default`, started now: its first claim is
/// the one whose reply is lost, which it can look for only because the
/// handle read Redis's clock before it (a handle's first claim carried no
/// deadline before).
fn start_worker(queue: &RedisQueue) -> (Runs, RunningWorker) {
    // Claimed, not handed: a hand-off's message is not a reply.
    start_worker_handed(queue, false)
}

/// [`start_worker`], parking for hand-offs when `handoff`.
fn start_worker_handed(queue: &RedisQueue, handoff: bool) -> (Runs, RunningWorker) {
    let runs = Runs::default();
    let mut registry = Registry::new();
    registry.add_job::<Large>();
    let options = WorkOptions::new()
        .queues(["default"])
        .lease(LEASE)
        .handoff(handoff)
        .max_idle(Duration::from_secs(3600))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(runs.clone()));
    (runs, RunningWorker::spawn(worker))
}

/// Every reply above this is lost (`RedisServer::lose_replies_over`).
const REPLIES_KEPT: Option<u64> = Some(65_536);

/// Until `done`: every `every`, kill the server's client connections
/// (`CLIENT KILL TYPE normal`, not the killing one itself: SKIPME yes), or
/// its subscribers' on every `pubsub_every`th round; replies over
/// [`REPLIES_KEPT`] are lost for 8 rounds of every 15. Answers how many
/// rounds it ran.
async fn inject_faults(
    server: &RedisServer,
    done: &CancellationToken,
    every: Duration,
    pubsub_every: Option<u32>,
) -> u32 {
    let mut rounds = 0u32;
    while !done.is_cancelled() {
        match rounds % 15 {
            0 => server.lose_replies_over(REPLIES_KEPT).await,
            8 => server.lose_replies_over(None).await,
            _ => {}
        }
        let subscribers = pubsub_every.is_some_and(|n| rounds % n == n - 1);
        let kind = if subscribers { "pubsub" } else { "normal" };
        let _ = server.try_cmd(&["CLIENT", "KILL", "TYPE", kind]).await;
        rounds += 1;
        tokio::time::sleep(every).await;
    }
    server.lose_replies_over(None).await;
    rounds
}

/// Wait until each of `ids` was given back as a lost claim's job at least
/// once.
async fn wait_given_back(queue: &RedisQueue, ids: &[String]) {
    wait_until(
        DEADLINE,
        "the lost claims' jobs to be given back",
        async || {
            let events = latest_of_kind(queue, EventKind::ClaimLost).await;
            ids.iter()
                .all(|id| events.iter().any(|event| event.job_id == *id))
        },
    )
    .await;
}

#[tokio::test]
async fn a_workers_claim_whose_reply_was_lost_gives_its_job_back_at_once() {
    let server = RedisServer::start();
    let queue = handle(&server, RecordFormat::Standard).await;
    server.lose_replies_over(REPLIES_KEPT).await;
    let pad = "x".repeat(200_000);
    let pushed = queue.push(&Large { pad }).await.expect("push");
    let (runs, running) = start_worker(&queue);
    // Each claim leases the job and loses its reply while the limit
    // stands; the worker gives it back each time.
    wait_given_back(&queue, &[pushed.id().to_owned()]).await;
    assert_eq!(runs.len(), 0, "no reply, no run");
    server.lose_replies_over(None).await;

    wait_until(DEADLINE, "the job to run", async || runs.len() > 0).await;
    assert_eq!(
        runs.attempts(),
        vec![1],
        "one run, on its first attempt: the lost claims counted none"
    );
    let counted = queue.metric_totals("default").await.unwrap();
    assert!(counted.claims_lost >= 1, "each give-back counted");
    assert_eq!(counted.handoffs_lost, 0);
    // The one worker's own record counts the same give-backs, rewritten at
    // once rather than at its next heartbeat (5 s on).
    let on_its_record = Some(counted.claims_lost);
    wait_until(
        Duration::from_secs(3),
        "the worker's record to count its lost claims",
        async || queue.workers().await.unwrap()[0].claims_lost == on_its_record,
    )
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.processed, 1);
    assert_eq!(report.claims_lost, counted.claims_lost, "{report:?}");
    assert_eq!(report.handoffs_lost, 0);
}

/// A claim of three or more detached jobs answers their metas and leaves
/// their payloads to one read of the worker's (`RecordFormat::Detached`,
/// `lua/lib/lease.lua` `claim_payloads`): when that read's reply is lost,
/// the jobs are leased all the same, and are given back the same way.
#[tokio::test]
async fn a_lost_read_of_a_claims_detached_payloads_gives_its_jobs_back() {
    let server = RedisServer::start();
    let queue = handle(&server, RecordFormat::Detached { min_bytes: 1024 }).await;
    server.lose_replies_over(REPLIES_KEPT).await;
    // The claim's own reply (three metas) gets through; the three payloads
    // together, read at once, do not.
    let job = || NewJob::new(serde_json::json!({ "pad": "x".repeat(30_000) })).name("t.large");
    let created = queue
        .add_batch("default", vec![job(), job(), job()])
        .await
        .expect("enqueue");
    let ids: Vec<String> = created.iter().map(|c| c.id().to_owned()).collect();
    let (runs, running) = start_worker(&queue);
    wait_given_back(&queue, &ids).await;
    assert_eq!(runs.len(), 0, "no payloads, no run");
    server.lose_replies_over(None).await;

    wait_until(DEADLINE, "the three jobs to run", async || runs.len() == 3).await;
    assert_eq!(runs.attempts(), vec![1, 1, 1]);
    let report = running.shutdown().await;
    assert_eq!(report.processed, 3);
    let counted = queue.metric_totals("default").await.unwrap().claims_lost;
    assert!(
        counted >= 3,
        "the three given back at least once: {counted}"
    );
    assert_eq!(report.claims_lost, counted, "{report:?}");
}

/// The whole way, at random: a worker's connections are killed again and
/// again (`CLIENT KILL TYPE normal`, every 20 ms or so), replies over 64 KB
/// are lost for 8 kills of every 15, and the worker runs a mix of small
/// jobs and 100 KB ones. Claims fail at any point (unsent, unanswered,
/// answered but cut), as do acks, looks and give-backs; yet every job runs
/// exactly once, on its first attempt, well before any lease could lapse.
/// (Without the give-back, or with claims resent by the client, the jobs
/// wait out their two-minute leases and the 90 s wait fails. With acks
/// resent by the client, an ack whose first send applied answered "already
/// gone" to its resend, and the worker counted 110 of the 120 jobs
/// processed, about one run in two.)
#[tokio::test]
async fn a_worker_whose_connections_keep_failing_runs_every_job_once_on_its_first_attempt() {
    let server = RedisServer::start();
    let queue = handle(&server, RecordFormat::Standard).await;
    let job = |bytes: usize| NewJob::new(serde_json::json!({ "pad": "x".repeat(bytes) }));
    let jobs = (0..120).map(|i| job(if i % 4 == 0 { 100_000 } else { 100 }));
    let created = queue
        .add_batch("default", jobs.map(|j| j.name("t.large")).collect())
        .await
        .expect("enqueue");
    let ids: Vec<String> = created.iter().map(|c| c.id().to_owned()).collect();
    let (runs, running) = start_worker(&queue);
    let done = CancellationToken::new();
    let faults = inject_faults(&server, &done, Duration::from_millis(20), None);
    let all_ran = async {
        wait_until(Duration::from_secs(90), "every job to run", async || {
            runs.len() >= ids.len()
        })
        .await;
        done.cancel();
    };
    let (kills, ()) = tokio::join!(faults, all_ran);
    let report = running.shutdown().await;

    runs.assert_each_ran_once_on_its_first_attempt(ids);
    let lost = queue.metric_totals("default").await.unwrap().claims_lost;
    assert!(lost >= 1, "some claims' replies were lost ({kills} kills)");
    assert_eq!(report.claims_lost, lost);
    assert_eq!(report.processed, 120);
}

/// Slower than the test above, and enqueues paced, so that the worker
/// parks between jobs and is handed some.
const KILL_EVERY: Duration = Duration::from_millis(60);
const ENQUEUE_EVERY_MS: u64 = 10;

/// The same with hand-offs: the worker parks, a producer on a handle of its
/// own enqueues one job at a time (each handed to the parked worker when
/// it can be), and the subscriber connection that hears hand-offs is
/// killed too (`CLIENT KILL TYPE pubsub`, every 5th round). Lost replies,
/// lost hand-off messages and lost unparks all meet; every job still runs
/// exactly once, on its first attempt. The producer retries a failed
/// enqueue under a dedup key held for an hour, so a retry of one that had
/// applied creates nothing.
#[tokio::test]
async fn a_parked_worker_whose_connections_keep_failing_runs_every_job_once_on_its_first_attempt() {
    let server = RedisServer::start();
    let queue = handle(&server, RecordFormat::Standard).await;
    let producer = RedisQueue::builder(&server.url())
        .namespace(queue.namespace())
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect("connect");
    let (runs, running) = start_worker_handed(&queue, true);
    let done = CancellationToken::new();
    let faults = inject_faults(&server, &done, KILL_EVERY, Some(5));
    let produce_and_wait = async {
        let mut ids = Vec::new();
        for i in 0..150 {
            let pad = if i % 10 == 0 {
                "x".repeat(100_000)
            } else {
                i.to_string()
            };
            let job = || {
                NewJob::new(serde_json::json!({ "pad": pad }))
                    .name("t.large")
                    .dedup_key_for(format!("job-{i}"), Duration::from_secs(3600))
            };
            let created = loop {
                match producer.add("default", job()).await {
                    Ok(created) => break created,
                    Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
                }
            };
            ids.push(created.id().to_owned());
            tokio::time::sleep(Duration::from_millis(ENQUEUE_EVERY_MS)).await;
        }
        wait_until(Duration::from_secs(90), "every job to run", async || {
            runs.len() >= ids.len()
        })
        .await;
        done.cancel();
        ids
    };
    let (_, ids) = tokio::join!(faults, produce_and_wait);
    let report = running.shutdown().await;

    runs.assert_each_ran_once_on_its_first_attempt(ids);
    let lost = report.handoffs_lost + report.claims_lost;
    assert!(lost >= 1, "some hand-offs or claims were lost: {report:?}");
}
