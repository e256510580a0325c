//! A worker in its own process, for tests that kill it with SIGKILL.
//!
//! Usage: `redq-test-worker URL NAMESPACE LEASE_MS`. Runs the
//! [`redq_tests::jobs::Recorded`] job type on queue `work`, prints `ready`
//! once its worker loop is about to start, and runs until killed.

use std::time::Duration;

use redq::worker::{CancellationToken, Registry, Services, WorkOptions, Worker};
use redq::RedisQueue;
use redq_tests::jobs::Recorded;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, namespace, lease_ms] = args.as_slice() else {
        eprintln!("usage: redq-test-worker URL NAMESPACE LEASE_MS");
        std::process::exit(2);
    };
    let lease = Duration::from_millis(lease_ms.parse().expect("LEASE_MS is a number"));
    let queue = RedisQueue::builder(url)
        .namespace(namespace.as_str())
        .connect()
        .await
        .expect("connect");
    let client = redq_tests::connect(url).await.expect("service client");
    let mut registry = Registry::new();
    registry.add_job::<Recorded>();
    let options = WorkOptions::new()
        .queues(["work"])
        .lease(lease)
        .concurrency(4)
        .schedules(false);
    let worker = Worker::new(queue, registry, options)
        .expect("worker options")
        .services(Services::new().with(client));
    println!("ready");
    worker
        .run(CancellationToken::new())
        .await
        .expect("worker run");
}
