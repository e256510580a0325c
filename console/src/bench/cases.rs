//! The bench cases. Each returns the fields of its JSON line.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use redq::worker::{
    CancellationToken, JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker,
    WorkerBackend,
};
use redq::{NewJob, RedisQueue};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::args::BenchArgs;
use super::measure::{client_cpu_s, percentiles};
use super::redis_cpu::RedisCpu;

/// The no-op job every processing case runs; its payload is `{"i": index}`
/// (and a `pad` its handler skips, with `--pad-bytes`).
#[derive(Serialize, Deserialize)]
struct Noop {
    i: usize,
}

const NOOP: &str = "bench.noop";

impl TypedJob for Noop {
    const NAME: &'static str = NOOP;
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        if let Some(probe) = cx.service::<Arc<Probe>>() {
            probe.started(self.i);
        }
        Ok(())
    }
}

/// When each latency-case job was sent and when its handler started.
struct Probe {
    sent: Mutex<Vec<Option<Instant>>>,
    started: Mutex<Vec<Option<Instant>>>,
}

impl Probe {
    fn new(n: usize) -> Self {
        Probe {
            sent: Mutex::new(vec![None; n]),
            started: Mutex::new(vec![None; n]),
        }
    }
    fn started(&self, i: usize) {
        if let Some(slot) = self.started.lock().expect("probe").get_mut(i) {
            slot.get_or_insert(Instant::now());
        }
    }
    fn all_started(&self) -> bool {
        self.started
            .lock()
            .expect("probe")
            .iter()
            .all(Option::is_some)
    }
    fn latencies(&self) -> Vec<Duration> {
        let sent = self.sent.lock().expect("probe");
        let started = self.started.lock().expect("probe");
        sent.iter()
            .zip(started.iter())
            .filter_map(|(s, r)| Some(r.as_ref()?.duration_since(*s.as_ref()?)))
            .collect()
    }
}

/// Job `i` of a case: `{"i": i}`, with `--pad-bytes P` also a `pad` of P
/// x's, the same payload the Node sides send (bench/compare/harness.mjs).
pub(super) fn job(args: &BenchArgs, i: usize) -> NewJob {
    let payload = match args.pad_bytes {
        0 => json!({ "i": i }),
        pad => json!({ "i": i, "pad": "x".repeat(pad) }),
    };
    NewJob::new(payload).name(NOOP)
}

/// CPU used by this process and by Redis across a timed section.
pub(super) struct Meter {
    client: Option<f64>,
    redis: RedisCpu,
}

impl Meter {
    pub(super) async fn start(queue: &RedisQueue) -> Meter {
        Meter {
            client: client_cpu_s(),
            redis: RedisCpu::start(std::slice::from_ref(queue)).await,
        }
    }

    pub(super) async fn finish(
        self,
        queue: &RedisQueue,
        jobs: usize,
        out: &mut Map<String, Value>,
    ) {
        if let (Some(before), Some(after)) = (self.client, client_cpu_s()) {
            out.insert("client_cpu_s".into(), json!(round(after - before)));
        }
        self.redis
            .finish(std::slice::from_ref(queue), jobs, out)
            .await;
    }
}

pub(super) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub(super) fn throughput(out: &mut Map<String, Value>, jobs: f64, elapsed: Duration) {
    out.insert("elapsed_s".into(), json!(round(elapsed.as_secs_f64())));
    out.insert(
        "jobs_per_s".into(),
        json!((jobs / elapsed.as_secs_f64()).round() as u64),
    );
}

fn latency_fields(out: &mut Map<String, Value>, samples: &mut [Duration]) {
    let [p50, p90, p99, max] = percentiles(samples);
    for (name, value) in [
        ("p50_ms", p50),
        ("p90_ms", p90),
        ("p99_ms", p99),
        ("max_ms", max),
    ] {
        out.insert(name.into(), json!(round(value)));
    }
}

/// Run the case named in `args`, returning the case-specific fields.
pub async fn run(args: &BenchArgs, queue: &RedisQueue) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let q = args.queue.as_str();
    let err = |e: redq::QueueError| e.to_string();
    match args.case.as_str() {
        "enqueue_bulk" => {
            let before = queue.server_stats().await.map_err(err)?;
            let meter = Meter::start(queue).await;
            let start = Instant::now();
            let mut next = 0;
            while next < args.n {
                let end = (next + args.batch).min(args.n);
                queue.add_batch(q, (next..end).map(|i| job(args, i)).collect()).await.map_err(err)?;
                next = end;
            }
            throughput(&mut out, args.n as f64, start.elapsed());
            meter.finish(queue, args.n, &mut out).await;
            let after = queue.server_stats().await.map_err(err)?;
            let grown = after.used_memory_bytes.saturating_sub(before.used_memory_bytes);
            out.insert("batch".into(), json!(args.batch));
            out.insert("redis_mem_bytes_per_job".into(), json!((grown as f64 / args.n as f64).round() as u64));
        }
        "enqueue_serial" => {
            let meter = Meter::start(queue).await;
            let mut samples = Vec::with_capacity(args.n);
            let start = Instant::now();
            for i in 0..args.n {
                let t = Instant::now();
                queue.add(q, job(args, i)).await.map_err(err)?;
                samples.push(t.elapsed());
            }
            throughput(&mut out, args.n as f64, start.elapsed());
            meter.finish(queue, args.n, &mut out).await;
            latency_fields(&mut out, &mut samples);
        }
        "enqueue_window" => {
            let meter = Meter::start(queue).await;
            let start = Instant::now();
            let mut results = futures::stream::iter(0..args.n).map(|i| queue.add(q, job(args, i))).buffer_unordered(args.window);
            while let Some(result) = results.next().await {
                result.map_err(err)?;
            }
            throughput(&mut out, args.n as f64, start.elapsed());
            meter.finish(queue, args.n, &mut out).await;
            out.insert("window".into(), json!(args.window));
        }
        "process" | "process_keep" | "process_rate" | "process_keyed" => {
            // process_keep keeps every completed job (BullMQ's default, which
            // its side of the case uses), with its run time and attempt.
            let keep = args.case == "process_keep";
            if keep {
                let every_job = redq::kept::Retention::new().max_count(args.n as u64);
                queue.set_retention(q, &every_job).await.map_err(err)?;
            }
            // What limits cost when they do not bind. process_rate: a
            // queue-wide rate of 100 000 jobs a second (BullMQ's side: its
            // Worker limiter with the same max and duration); process_keyed:
            // each job one of 100 limit keys, each key at most 1 000 at once
            // (redq only: BullMQ's free edition has no per-key limits).
            let keyed = args.case == "process_keyed";
            if args.case == "process_rate" {
                let rate = redq::flow::Limit::rate(100_000, Duration::from_secs(1));
                queue.set_limit(q, redq::flow::LimitScope::Queue, rate).await.map_err(err)?;
            }
            if keyed {
                let each = redq::flow::Limit::concurrency(1000);
                queue.set_limit(q, redq::flow::LimitScope::EachKey, each).await.map_err(err)?;
            }
            let job_of = |i: usize| if keyed { job(args, i).limit_key(format!("k{}", i % 100)) } else { job(args, i) };
            for chunk in (0..args.n).collect::<Vec<_>>().chunks(1000) {
                queue.add_batch(q, chunk.iter().copied().map(job_of).collect()).await.map_err(err)?;
            }
            let (stop, progress, handle) = start_worker(queue.clone(), args, Services::new())?;
            let meter = Meter::start(queue).await;
            let mut first = None;
            let deadline = Instant::now() + Duration::from_secs(600);
            while progress.processed() < args.n as u64 {
                if first.is_none() && progress.processed() >= 1 {
                    first = Some(Instant::now());
                }
                if Instant::now() > deadline {
                    return Err(format!("only {} of {} jobs completed in 10 minutes", progress.processed(), args.n));
                }
                tokio::time::sleep(Duration::from_micros(500)).await;
            }
            let elapsed = first.map(|f| f.elapsed()).unwrap_or_default().max(Duration::from_micros(1));
            throughput(&mut out, (args.n - 1) as f64, elapsed);
            meter.finish(queue, args.n, &mut out).await;
            stop.cancel();
            handle.await.map_err(|e| e.to_string())??;
            out.insert("concurrency".into(), json!(args.c));
            out.insert("retention".into(), json!(if keep { "every completed job" } else { "none" }));
            let limit = match args.case.as_str() {
                "process_rate" => "queue rate 100000/1s",
                "process_keyed" => "100 keys, each at most 1000 at once",
                _ => "none",
            };
            out.insert("limit".into(), json!(limit));
        }
        "latency" => {
            let probe = Arc::new(Probe::new(args.lat_n));
            let (stop, _progress, handle) = start_worker(queue.clone(), args, Services::new().with(probe.clone()))?;
            // Let the worker reach its idle sleep: the case measures wake-ups.
            let deadline = Instant::now() + Duration::from_secs(10);
            while queue.workers().await.map_err(err)?.is_empty() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            let meter = Meter::start(queue).await;
            let start = Instant::now();
            // Job i is sent at start + i * G: sleeping G after each send
            // would let timer slack accumulate and space the jobs wider.
            let gap = Duration::from_millis(args.lat_gap_ms);
            for i in 0..args.lat_n {
                tokio::time::sleep_until((start + gap * i as u32).into()).await;
                probe.sent.lock().expect("probe")[i] = Some(Instant::now());
                queue.add(q, job(args, i)).await.map_err(err)?;
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            while !probe.all_started() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            throughput(&mut out, args.lat_n as f64, start.elapsed());
            meter.finish(queue, args.lat_n, &mut out).await;
            let mut samples = probe.latencies();
            if samples.len() < args.lat_n {
                return Err(format!("only {} of {} latency jobs ran within a minute", samples.len(), args.lat_n));
            }
            latency_fields(&mut out, &mut samples);
            out.insert("concurrency".into(), json!(args.c));
            stop.cancel();
            handle.await.map_err(|e| e.to_string())??;
        }
        "batch" => super::batch::run(args, queue, &mut out).await?,
        other => {
            return Err(format!(
                "unknown case {other:?}: accepted are enqueue_bulk, enqueue_serial, enqueue_window, process, process_keep, process_rate, process_keyed, batch, latency"
            ))
        }
    }
    Ok(out)
}

type WorkerHandle = tokio::task::JoinHandle<Result<(), String>>;

pub(super) fn start_worker(
    queue: impl Into<WorkerBackend>,
    args: &BenchArgs,
    services: Services,
) -> Result<
    (
        CancellationToken,
        redq::worker::WorkerProgress,
        WorkerHandle,
    ),
    String,
> {
    let mut registry = Registry::new();
    registry.add_job::<Noop>();
    let options = WorkOptions::new()
        .queues([args.queue.as_str()])
        .concurrency(args.c)
        .schedules(false);
    let worker = Worker::new(queue, registry, options)
        .map_err(|e| e.to_string())?
        .services(services);
    let progress = worker.progress();
    let stop = CancellationToken::new();
    let token = stop.clone();
    let handle = tokio::spawn(async move {
        worker
            .run(token)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    Ok((stop, progress, handle))
}
