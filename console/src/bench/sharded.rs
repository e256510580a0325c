//! `--shards S`: the same queue spread over S namespaces with
//! `redq::ShardedQueue` (on a Redis Cluster, each on its own primary), to
//! measure how one queue scales across shards.
//!
//! Only the throughput cases apply: `enqueue_bulk` (batches go to the shards
//! in turn) and `process`: by default one `Worker` per shard, the
//! concurrency C split evenly between them (a worker process per primary);
//! with `--workers one`, one `Worker` over the whole `ShardedQueue` with all
//! C slots, claiming from each shard in turn (one service process). Redis
//! CPU is summed over the servers that hold the shards, each counted once
//! (`redis_servers` says how many): on a cluster the primaries serving the
//! shards' slots, not the other nodes (`bench/compare/cluster-scaling.sh`
//! reads every primary).

use std::time::{Duration, Instant};

use redq::worker::Services;
use redq::ShardedQueue;
use serde_json::{json, Map, Value};

use super::args::{BenchArgs, ShardWorkers};
use super::cases::{job, start_worker, throughput};
use super::measure::client_cpu_s;
use super::redis_cpu::RedisCpu;

/// Run `args.case` over `queue`'s shards.
pub async fn run(args: &BenchArgs, queue: &ShardedQueue) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let q = args.queue.as_str();
    let err = |e: redq::QueueError| e.to_string();
    let cpu_before = client_cpu_s();
    match args.case.as_str() {
        "enqueue_bulk" => {
            let redis = RedisCpu::start(queue.shards()).await;
            let start = Instant::now();
            let mut next = 0;
            while next < args.n {
                let end = (next + args.batch).min(args.n);
                queue
                    .add_batch(q, (next..end).map(|i| job(args, i)).collect())
                    .await
                    .map_err(err)?;
                next = end;
            }
            throughput(&mut out, args.n as f64, start.elapsed());
            redis.finish(queue.shards(), args.n, &mut out).await;
            out.insert("batch".into(), json!(args.batch));
        }
        "process" => {
            for chunk in (0..args.n).collect::<Vec<_>>().chunks(1000) {
                queue
                    .add_batch(q, chunk.iter().map(|&i| job(args, i)).collect())
                    .await
                    .map_err(err)?;
            }
            let mut workers = Vec::new();
            match args.shard_workers {
                ShardWorkers::PerShard => {
                    let per_shard = BenchArgs {
                        c: args.c.div_ceil(args.shards),
                        ..args.clone()
                    };
                    for shard in queue.shards() {
                        workers.push(start_worker(shard.clone(), &per_shard, Services::new())?);
                    }
                }
                ShardWorkers::One => {
                    workers.push(start_worker(queue.clone(), args, Services::new())?);
                }
            }
            // From the workers' start, as the one-namespace case measures.
            let redis = RedisCpu::start(queue.shards()).await;
            let processed = || {
                workers
                    .iter()
                    .map(|(_, progress, _)| progress.processed())
                    .sum::<u64>()
            };
            let mut first = None;
            let deadline = Instant::now() + Duration::from_secs(600);
            while processed() < args.n as u64 {
                if first.is_none() && processed() >= 1 {
                    first = Some(Instant::now());
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "only {} of {} jobs completed in 10 minutes",
                        processed(),
                        args.n
                    ));
                }
                tokio::time::sleep(Duration::from_micros(500)).await;
            }
            let elapsed = first
                .map(|f| f.elapsed())
                .unwrap_or_default()
                .max(Duration::from_micros(1));
            throughput(&mut out, (args.n - 1) as f64, elapsed);
            redis.finish(queue.shards(), args.n, &mut out).await;
            for (stop, _, handle) in workers {
                stop.cancel();
                handle.await.map_err(|e| e.to_string())??;
            }
            out.insert("concurrency".into(), json!(args.c));
            out.insert("workers".into(), json!(args.shard_workers.name()));
        }
        other => {
            return Err(format!(
                "--shards applies to enqueue_bulk and process, not {other:?}"
            ));
        }
    }
    if let (Some(before), Some(after)) = (cpu_before, client_cpu_s()) {
        out.insert(
            "client_cpu_s".into(),
            json!(((after - before) * 1000.0).round() / 1000.0),
        );
    }
    out.insert("shards".into(), json!(args.shards));
    out.insert("placement".into(), json!(queue.placement()));
    Ok(out)
}
