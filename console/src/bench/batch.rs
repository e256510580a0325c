//! The `batch` case: what a workflow costs end to end. The same N no-op
//! jobs run twice on one queue with the same Worker: first plainly
//! (`add_batch` in chunks of 1 000, processed), then as one batch whose
//! `on_complete` callback runs after the last of them (`enqueue_batch`,
//! processed, callback run). Each run is timed from its first enqueue to
//! its last completion, with Redis CPU over it; the difference per job is
//! what the batch adds.

use std::time::{Duration, Instant};

use redq::worker::Services;
use redq::workflow::Batch;
use redq::RedisQueue;
use serde_json::{json, Map, Value};

use super::args::BenchArgs;
use super::cases::{job, round, start_worker, Meter};

/// One timed run: how long it took and the Redis CPU it used, in µs per job.
struct Run {
    elapsed: Duration,
    redis_us_per_job: Option<f64>,
}

pub(super) async fn run(
    args: &BenchArgs,
    queue: &RedisQueue,
    out: &mut Map<String, Value>,
) -> Result<(), String> {
    let plain = timed(args, queue, args.n, false).await?;
    // The callback is one more job to process.
    let batch = timed(args, queue, args.n + 1, true).await?;
    for (prefix, run) in [("plain_", &plain), ("", &batch)] {
        out.insert(
            format!("{prefix}elapsed_s"),
            json!(round(run.elapsed.as_secs_f64())),
        );
        out.insert(
            format!("{prefix}jobs_per_s"),
            json!((args.n as f64 / run.elapsed.as_secs_f64()).round() as u64),
        );
        if let Some(us) = run.redis_us_per_job {
            out.insert(format!("{prefix}redis_cpu_us_per_job"), json!(round(us)));
        }
    }
    if let (Some(with), Some(without)) = (batch.redis_us_per_job, plain.redis_us_per_job) {
        out.insert(
            "batch_redis_cpu_us_per_job_added".into(),
            json!(round(with - without)),
        );
    }
    out.insert("concurrency".into(), json!(args.c));
    out.insert("callbacks".into(), json!("on_complete"));
    Ok(())
}

async fn timed(
    args: &BenchArgs,
    queue: &RedisQueue,
    expected: usize,
    as_batch: bool,
) -> Result<Run, String> {
    let err = |e: redq::QueueError| e.to_string();
    let q = args.queue.as_str();
    let (stop, progress, handle) = start_worker(queue.clone(), args, Services::new())?;
    let mut measured = Map::new();
    let meter = Meter::start(queue).await;
    let start = Instant::now();
    if as_batch {
        let members = (0..args.n).map(|i| job(args, i)).collect();
        let batch = Batch::new()
            .label("bench")
            .jobs(q, members)
            .on_complete(q, job(args, args.n));
        queue.enqueue_batch(batch).await.map_err(err)?;
    } else {
        for chunk in (0..args.n).collect::<Vec<_>>().chunks(1000) {
            let jobs = chunk.iter().map(|&i| job(args, i)).collect();
            queue.add_batch(q, jobs).await.map_err(err)?;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    while progress.processed() < expected as u64 {
        if Instant::now() > deadline {
            return Err(format!(
                "only {} of {expected} jobs completed in 10 minutes",
                progress.processed()
            ));
        }
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    let elapsed = start.elapsed();
    meter.finish(queue, args.n, &mut measured).await;
    stop.cancel();
    handle.await.map_err(|e| e.to_string())??;
    Ok(Run {
        elapsed,
        redis_us_per_job: measured.get("redis_cpu_us_per_job").and_then(Value::as_f64),
    })
}
