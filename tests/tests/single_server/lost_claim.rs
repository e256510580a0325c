//! A worker's claim whose reply was lost after it leased a job
//! (`driver/src/lost_claim.rs`, `driver/src/worker/lost_claims.rs`): the
//! job is given back at once, no attempt counted, and runs on its first
//! attempt, instead of waiting out its lease and being reclaimed with an
//! attempt it never had.
//!
//! The reply is lost for real: Redis closes a connection whose reply
//! outgrows `client-output-buffer-limit`, after the command ran. A claim
//! of a job with a 200 KB payload is such a reply under a 64 KB limit;
//! every other reply here (enqueues, heartbeats, events) stays far below.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::events::EventKind;
use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::RedisQueue;
use redq_tests::events::latest_of_kind;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

/// Far longer than the test waits: a job that waits out its lease fails it.
const LEASE: Duration = Duration::from_secs(120);
const DEADLINE: Duration = Duration::from_secs(30);

/// A job too large for a claim's reply to get through the limit set below.
#[derive(Serialize, Deserialize)]
struct Large {
    pad: String,
}

/// The attempt number of each run.
type Attempts = Arc<Mutex<Vec<u32>>>;

impl TypedJob for Large {
    const NAME: &'static str = "t.large";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let attempts = cx.service::<Attempts>().expect("the attempts service");
        attempts.lock().unwrap().push(cx.attempt());
        Ok(())
    }
}

#[tokio::test]
async fn a_workers_claim_whose_reply_was_lost_gives_its_job_back_at_once() {
    let server = RedisServer::start();
    let ns = unique_namespace("lost-claim");
    // Half of this is the claim's window to start: the look waits it out.
    let queue = RedisQueue::builder(&server.url())
        .namespace(ns.as_str())
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect("connect");
    let attempts = Attempts::default();
    let mut registry = Registry::new();
    registry.add_job::<Large>();
    let options = WorkOptions::new()
        .queues(["default"])
        .lease(LEASE)
        // Claimed, not handed: a hand-off's message is not a reply.
        .handoff(false)
        .max_idle(Duration::from_secs(3600))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(attempts.clone()));
    let running = RunningWorker::spawn(worker);
    // A small job first: its claim's reply shows the worker Redis's clock,
    // so the next claim carries a deadline (a handle's first claim carries
    // none, and its lost jobs could not be looked for).
    let small = Large { pad: String::new() };
    queue.push(&small).await.expect("push");
    wait_until(DEADLINE, "the small job to run", async || {
        attempts.lock().unwrap().len() == 1
    })
    .await;

    server
        .cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 65536 65536 0",
        ])
        .await;
    let pad = "x".repeat(200_000);
    let pushed = queue.push(&Large { pad }).await.expect("push");
    let id = pushed.id().to_owned();
    // Each claim leases the job and loses its reply while the limit
    // stands; the worker gives it back each time.
    wait_until(
        DEADLINE,
        "the lost claim's job to be given back",
        async || {
            latest_of_kind(&queue, EventKind::ClaimLost)
                .await
                .iter()
                .any(|event| event.job_id == id)
        },
    )
    .await;
    assert_eq!(attempts.lock().unwrap().len(), 1, "no reply, no run");
    server
        .cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 0 0",
        ])
        .await;

    wait_until(DEADLINE, "the large job to run", async || {
        attempts.lock().unwrap().len() == 2
    })
    .await;
    assert_eq!(
        *attempts.lock().unwrap(),
        vec![1, 1],
        "one run each, on its first attempt: the lost claims counted none"
    );
    let counted = queue.metric_totals("default").await.unwrap();
    assert!(counted.claims_lost >= 1, "each give-back counted");
    assert_eq!(counted.handoffs_lost, 0);
    let report = running.shutdown().await;
    assert_eq!(report.processed, 2);
}
