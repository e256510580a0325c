//! Which queues a worker serves: its registered types' queues unless its
//! options name some, and a warning naming a registered type whose queue
//! the named ones leave out.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::RedisQueue;
use redq_tests::fixtures::handle;
use redq_tests::logs::LogCapture;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

const DEADLINE: Duration = Duration::from_secs(10);

/// Jobs completed.
type Done = Arc<AtomicU32>;

#[derive(Serialize, Deserialize)]
struct SlowReport;
impl TypedJob for SlowReport {
    const NAME: &'static str = "served.slow_report";
    const QUEUE: &'static str = "reports";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Done>()
            .expect("done service")
            .fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct Ping;
impl TypedJob for Ping {
    const NAME: &'static str = "served.ping";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Done>()
            .expect("done service")
            .fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn start(queue: &RedisQueue, registry: Registry, done: &Done) -> RunningWorker {
    let worker = Worker::new(queue.clone(), registry, WorkOptions::new().schedules(false))
        .expect("options")
        .services(Services::new().with(done.clone()));
    RunningWorker::spawn(worker)
}

/// The queues the one worker of `queue`'s namespace lists in its record.
async fn listed_queues(queue: &RedisQueue) -> Vec<String> {
    wait_until(DEADLINE, "the worker record", async || {
        queue.workers().await.unwrap().len() == 1
    })
    .await;
    queue.workers().await.unwrap().remove(0).queues
}

#[tokio::test]
async fn a_worker_without_queues_serves_its_registered_types_queues() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("served")).await;
    queue.push(&SlowReport).await.unwrap();
    queue.push(&Ping).await.unwrap();
    let mut registry = Registry::new();
    registry.add_job::<SlowReport>().add_job::<Ping>();
    let done = Done::default();
    let running = start(&queue, registry, &done);
    assert_eq!(listed_queues(&queue).await, ["default", "reports"]);
    wait_until(DEADLINE, "both jobs to run", async || {
        done.load(Ordering::SeqCst) == 2
    })
    .await;
    running.shutdown().await;
}

#[tokio::test]
async fn a_worker_of_one_type_on_another_queue_serves_only_that_queue() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("served-one")).await;
    queue.push(&SlowReport).await.unwrap();
    let mut registry = Registry::new();
    registry.add_job::<SlowReport>();
    let done = Done::default();
    let running = start(&queue, registry, &done);
    assert_eq!(listed_queues(&queue).await, ["reports"]);
    wait_until(DEADLINE, "the report to run", async || {
        done.load(Ordering::SeqCst) == 1
    })
    .await;
    running.shutdown().await;
}

#[tokio::test]
async fn a_worker_of_an_empty_registry_serves_the_default_queue() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("served-empty")).await;
    let running = start(&queue, Registry::new(), &Done::default());
    assert_eq!(listed_queues(&queue).await, ["default"]);
    running.shutdown().await;
}

/// What `Worker::new` logs at WARN for a registry of both types with
/// `options`.
fn warnings_of(queue: &RedisQueue, options: WorkOptions) -> String {
    let mut registry = Registry::new();
    registry.add_job::<SlowReport>().add_job::<Ping>();
    let logs = LogCapture::new();
    let guard = logs.set_default(tracing::Level::WARN);
    let worker = Worker::new(queue.clone(), registry, options).expect("options");
    drop(guard);
    drop(worker);
    logs.text()
}

#[tokio::test]
async fn named_queues_that_leave_out_a_registered_types_queue_are_warned_about_once() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("served-warn")).await;
    let text = warnings_of(&queue, WorkOptions::new().queues(["default"]));
    let warned: Vec<&str> = text.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warned.len(), 1, "{text}");
    assert!(
        warned[0].contains(
            "job type served.slow_report is pushed to queue \"reports\", which this worker does not serve"
        ),
        "{text}"
    );
    let weighted = warnings_of(&queue, WorkOptions::new().weighted_queues([("default", 3)]));
    assert!(weighted.contains("served.slow_report"), "{weighted}");
    // Every registered type's queue served: nothing to say.
    let all = warnings_of(&queue, WorkOptions::new().queues(["reports", "default"]));
    assert_eq!(all, "");
}
