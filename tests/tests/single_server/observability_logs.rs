//! What a worker logs about a job: its size, never its payload's bytes.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq_tests::fixtures::handle;
use redq_tests::logs::LogCapture;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

const SECRET: &str = "card-4111-1111-1111-1111";

#[derive(Serialize, Deserialize)]
struct Charge {
    card: String,
}

impl TypedJob for Charge {
    const NAME: &'static str = "logged.charge";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Arc<AtomicU32>>()
            .expect("done service")
            .fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

// A current-thread runtime (tokio::test's default), so the worker's tasks
// log through this thread's capture.
#[tokio::test]
async fn a_running_job_is_logged_by_its_size_never_its_payload() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("logged")).await;
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::TRACE);
    let charge = Charge {
        card: SECRET.to_owned(),
    };
    let size = serde_json::to_vec(&charge).unwrap().len();
    queue.push(&charge).await.unwrap();
    let mut registry = Registry::new();
    registry.add_job::<Charge>();
    let done = Arc::new(AtomicU32::new(0));
    let worker = Worker::new(queue.clone(), registry, WorkOptions::new().schedules(false))
        .expect("options")
        .services(Services::new().with(done.clone()));
    let running = RunningWorker::spawn(worker);
    wait_until(Duration::from_secs(10), "the job to run", async || {
        done.load(Ordering::SeqCst) == 1
    })
    .await;
    running.shutdown().await;
    let text = logs.text();
    assert!(
        text.contains(&format!("payload_bytes={size}")),
        "the running line gives the size: {text}"
    );
    assert!(!text.contains(SECRET), "a payload reached the log: {text}");
}
