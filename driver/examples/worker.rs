//! Run a worker until Ctrl-C, then shut down gracefully.
//!
//! `cargo run -p redq --example worker` (Redis at `REDIS_URL`). The library
//! installs no signal handler: the application decides what stops a worker,
//! here Ctrl-C, by cancelling the token it gave the worker.

mod common;

use std::time::Duration;

use redq::worker::{CancellationToken, Registry, WorkOptions, Worker};
use redq::RedisQueue;

#[tokio::main]
async fn main() -> Result<(), redq::QueueError> {
    tracing_subscriber::fmt().with_env_filter("info").init();
    let queue = RedisQueue::connect(&common::redis_url()).await?;
    let mut registry = Registry::new();
    registry.add_job::<common::WelcomeMail>();
    let options = WorkOptions::new()
        .queues(["mail"])
        .concurrency(4)
        .grace(Duration::from_secs(10));
    let worker = Worker::new(queue, registry, options)?;

    let shutdown = CancellationToken::new();
    let on_ctrl_c = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        println!("shutting down: finishing running jobs (10 s grace)…");
        on_ctrl_c.cancel();
    });
    let report = worker.run(shutdown).await?;
    println!(
        "stopped: {} processed, {} failed attempts",
        report.processed, report.failed
    );
    Ok(())
}
