//! Run a worker until SIGTERM or Ctrl-C, then shut down gracefully.
//!
//! `cargo run -p redq --example worker` (Redis at `REDIS_URL`). The
//! application decides what stops a worker by cancelling the token it gave
//! it; `shutdown_on_signals` cancels one on SIGTERM (what Kubernetes, Docker
//! and systemd send) and SIGINT (Ctrl-C). The worker logs at INFO when it
//! starts, when shutdown begins and when it stops.

mod common;

use std::time::Duration;

use redq::worker::{shutdown_on_signals, Registry, WorkOptions, Worker};
use redq::RedisQueue;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    common::exit(run().await)
}

async fn run() -> Result<(), redq::QueueError> {
    common::init_logs();
    let queue = RedisQueue::connect(&common::redis_url()).await?;
    let mut registry = Registry::new();
    registry.add_job::<common::WelcomeMail>();
    let options = WorkOptions::new()
        .queues(["mail"])
        .concurrency(4)
        .grace(Duration::from_secs(10));
    let worker = Worker::new(queue, registry, options)?;

    let report = worker.run(shutdown_on_signals()).await?;
    println!(
        "stopped: {} processed, {} failed attempts",
        report.processed, report.failed
    );
    Ok(())
}
