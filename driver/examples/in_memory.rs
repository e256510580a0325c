//! The same job type and worker as the `worker` example, on a `MemoryQueue`:
//! no Redis at all, as in tests or a small app that runs its jobs in process.
//!
//! `cargo run -p redq --example in_memory`. Changing the backend is the one
//! line that builds `queue` (a `RedisQueue` or a `ShardedQueue` takes the same
//! place). User 7's mail fails twice and is retried after its backoff.

mod common;

use std::time::Duration;

use redq::worker::{CancellationToken, JobQueue, Registry, WorkOptions, Worker};
use redq::MemoryQueue;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    common::exit(run().await)
}

async fn run() -> Result<(), redq::QueueError> {
    common::init_logs();
    let queue = MemoryQueue::new();
    let jobs = JobQueue::new(queue.clone());
    for user_id in 1..=8 {
        let address = format!("user{user_id}@example.com");
        jobs.push(&common::WelcomeMail { user_id, address }).await?;
    }

    let mut registry = Registry::new();
    registry.add_job::<common::WelcomeMail>();
    let options = WorkOptions::new().queues(["mail"]).concurrency(4);
    let worker = Worker::new(queue.clone(), registry, options)?;
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.run(shutdown.clone()));

    // Stop once every mail is sent (or dead-lettered).
    while !queue.is_empty("mail") {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    shutdown.cancel();
    let report = running.await.expect("worker task")?;
    println!(
        "done: {} processed, {} failed attempts, {} dead",
        report.processed,
        report.failed,
        queue.dead_letters("mail").len()
    );
    Ok(())
}
