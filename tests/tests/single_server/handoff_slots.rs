//! Handed jobs start from the hand-off listener when a slot is free
//! (driver/src/worker/handed.rs), not from the worker loop: the worker's
//! concurrency bound and its graceful shutdown must hold for them exactly
//! as for claimed jobs. Each test watches the handlers' own count of runs in
//! progress, the park record, and the worker's report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::clients::Client;
use fred::interfaces::KeysInterface;
use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::RedisQueue;
use redq_tests::fixtures::{self, DEADLINE};
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

/// How many handlers run now, the most that ever ran at once, and how many
/// finished.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
    finished: AtomicUsize,
}

/// A job that takes `sleep_ms`, counted by the worker's [`Gauge`].
#[derive(Serialize, Deserialize)]
struct Gauged {
    sleep_ms: u64,
}

impl TypedJob for Gauged {
    const NAME: &'static str = "test.gauged";
    const QUEUE: &'static str = "work";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let gauge = cx
            .service::<Arc<Gauge>>()
            .ok_or_else(|| JobError::fail("no gauge service"))?;
        let now = gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
        gauge.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(self.sleep_ms)).await;
        gauge.now.fetch_sub(1, Ordering::SeqCst);
        gauge.finished.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A worker of queue `work` with `concurrency` slots. An hour of max idle:
/// only a hand-off or a wake-up can start a job in time.
fn start(queue: &RedisQueue, gauge: &Arc<Gauge>, concurrency: usize) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<Gauged>();
    let options = WorkOptions::new()
        .queues(["work"])
        .concurrency(concurrency)
        .max_idle(Duration::from_secs(3600))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(gauge.clone()));
    RunningWorker::spawn(worker)
}

/// How many jobs the current park of queue `work` was handed, `None` when
/// no worker is parked: the record's last field (lua/lib/parked.lua).
async fn handed_by_park(client: &Client, ns: &str) -> Option<u64> {
    let raw: Option<String> = client
        .get(format!("{{{ns}}}:q:work:parked"))
        .await
        .expect("GET");
    raw.and_then(|r| r.rsplit(' ').next()?.parse().ok())
}

async fn wait_parked(client: &Client, ns: &str) {
    wait_until(DEADLINE, "the worker to park on the queue", async || {
        handed_by_park(client, ns).await == Some(0)
    })
    .await;
}

#[tokio::test]
async fn handed_and_claimed_jobs_together_never_run_more_than_the_concurrency() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-slots");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let gauge = Arc::new(Gauge::default());
    let running = start(&queue, &gauge, 2);
    wait_parked(&client, &ns).await;

    // Spaced closer than a job lasts: the park's two slots are handed the
    // first jobs, then the worker leaves it and claims the rest, while
    // handed ones may still run.
    let jobs = 12;
    let mut handed_over = 0;
    for _ in 0..jobs {
        queue.push(&Gauged { sleep_ms: 30 }).await.unwrap();
        if handed_by_park(&client, &ns).await.is_some_and(|n| n > 0) {
            handed_over += 1;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    wait_until(DEADLINE, "every job to finish", async || {
        gauge.finished.load(Ordering::SeqCst) == jobs
    })
    .await;
    assert!(handed_over > 0, "some jobs went by hand-off");
    assert_eq!(gauge.most.load(Ordering::SeqCst), 2, "at most 2 at once");
    let report = running.shutdown().await;
    assert_eq!(report.processed, jobs as u64);
}

#[tokio::test]
async fn shutdown_waits_for_a_handed_job_that_is_running_and_acknowledges_it() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-drain");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let gauge = Arc::new(Gauge::default());
    let running = start(&queue, &gauge, 2);
    wait_parked(&client, &ns).await;

    let id = queue
        .push(&Gauged { sleep_ms: 300 })
        .await
        .unwrap()
        .id()
        .to_owned();
    assert_eq!(handed_by_park(&client, &ns).await, Some(1), "handed over");
    wait_until(DEADLINE, "the handed job to start", async || {
        gauge.now.load(Ordering::SeqCst) == 1
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(gauge.finished.load(Ordering::SeqCst), 1, "ran to its end");
    assert_eq!(
        report.processed, 1,
        "acknowledged before the worker returned"
    );
    assert!(
        queue.inspect(&id).await.unwrap().is_none(),
        "gone once acked"
    );
}
