//! What graceful shutdown does to a job that outlives the grace period.
//!
//! `cargo run -p redq --example graceful_shutdown` (Redis at `REDIS_URL`).
//! A long job starts, the worker is told to stop (here after 300 ms, or at
//! once on SIGTERM or Ctrl-C), the grace period passes, and the job is
//! released at once: waiting again, no attempt counted. A service takes its
//! token from `shutdown_on_signals` alone (see the `worker` example).

mod common;

use std::time::Duration;

use redq::worker::{shutdown_on_signals, JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq::RedisQueue;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Export {
    rows: u64,
}

impl TypedJob for Export {
    const NAME: &'static str = "examples::export";
    const QUEUE: &'static str = "exports";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        for row in 0..self.rows {
            // Cooperative jobs can check the signal (it fires as shutdown
            // begins) and checkpoint; this one keeps going, so the grace
            // period's end drops it.
            if row == 0 && cx.is_cancelled() {
                println!("asked to stop before starting");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    common::exit(run().await)
}

async fn run() -> Result<(), redq::QueueError> {
    common::init_logs();
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let queue = RedisQueue::builder(&url)
        .namespace("graceful-example")
        .connect()
        .await?;
    let id = queue.push(&Export { rows: 1_000 }).await?.id().to_owned();

    let mut registry = Registry::new();
    registry.add_job::<Export>();
    let options = WorkOptions::new()
        .queues(["exports"])
        .grace(Duration::from_millis(500))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)?;
    let shutdown = shutdown_on_signals();
    let running = tokio::spawn(worker.run(shutdown.clone()));

    tokio::time::sleep(Duration::from_millis(300)).await;
    println!("stopping the worker while job {id} runs…");
    shutdown.cancel();
    running.await.expect("worker task")?;

    let job = queue.inspect(&id).await?.expect("the job still exists");
    println!(
        "job {id} is {} with {} attempts recorded",
        job.state, job.attempts
    );
    queue.purge_dead("exports", |_, _| {}).await?;
    Ok(())
}
