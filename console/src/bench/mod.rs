//! `redq bench`: measure redq the way users compare job queues, printing one
//! JSON line per run (see `bench/compare/` for the side-by-side with BullMQ).
//!
//! ```text
//! redq bench --case CASE --n N --c C --redis URL --queue NAME
//!            [--lat-n K] [--lat-gap-ms G] [--window W] [--batch B]
//!            [--threads T] [--metrics on|off] [--pad-bytes P]
//! ```
//!
//! Cases: `enqueue_bulk` (batches of B, one in flight), `enqueue_serial`
//! (one awaited enqueue at a time; per-call percentiles), `enqueue_window`
//! (at most W enqueues in flight), `process` and `process_keep` (N jobs
//! enqueued beforehand, untimed; a Worker with concurrency C and a no-op
//! handler; jobs/s = (N-1) / first-to-last acknowledged completion;
//! `process_rate` and `process_keyed` the same under limits that do not
//! bind: a queue-wide rate of 100 000/s, or 100 limit keys of at most 1 000
//! at once each: what limits cost per job), `batch` (the same N jobs run
//! plainly, then as one batch with an `on_complete` callback, each timed
//! from the first enqueue to the last completion: what a batch adds),
//! `latency` (an idle Worker; K jobs enqueued one at a time, G ms apart;
//! from the start of the enqueue call to the start of the handler).
//! Each run uses a fresh namespace, so runs never see each other's jobs.
//! `--threads T` gives the runtime T worker threads instead of one a core
//! (the line's `threads` says how many ran): on a machine whose cores Redis shares,
//! the default's second thread costs the latency case's round trips
//! (docs/performance.md, round thirteen). `--metrics off` turns the
//! queue's metrics off before the run (`redq metrics off`; the line's
//! `metrics` says which): what recording them costs a job. `--pad-bytes P`
//! adds a `pad` of P bytes to every job's `{"i": index}` payload (the line's
//! `pad_bytes` says how many; the Node sides take the same flag): how the
//! cases go with payloads of the size an application sends.

mod args;
mod batch;
mod cases;
mod measure;
mod redis_cpu;
mod sharded;

use std::process::ExitCode;

use serde_json::{json, Map};

use crate::output::{json_text, outln};

pub use args::BenchArgs;

/// Run `redq bench` with the arguments after `bench`.
pub fn main(raw: &[String]) -> ExitCode {
    let args = match BenchArgs::parse(raw) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("redq bench: {message}");
            return ExitCode::from(2);
        }
    };
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = args.threads {
        builder.worker_threads(threads);
    }
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("redq bench: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // The case runs on a worker thread, as an application's own tasks do:
    // `block_on`'s future runs on the calling thread instead, outside the
    // runtime's workers, so every reply would wake that thread and every
    // command wake a worker (two thread switches a round trip that a
    // service calling `add` from its handlers never pays).
    let on_worker =
        runtime.block_on(async move { tokio::spawn(async move { run(&args).await }).await });
    let outcome =
        on_worker.unwrap_or_else(|e| Err(format!("the bench task ended abnormally: {e}")));
    match outcome {
        Ok(line) => {
            outln!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("redq bench: {message}");
            ExitCode::from(1)
        }
    }
}

async fn run(args: &BenchArgs) -> Result<String, String> {
    // As long as the Node sides' fresh queue names (`bench-` and 12 hex
    // digits): every key a script call sends carries the namespace, and the
    // server hashes each key's every byte (a 32-byte namespace cost about
    // 18k instructions more than a 4-byte one across an enqueue's 31 keys).
    let namespace = format!("bench-{:012x}", rand::random::<u64>() >> 16);
    let builder = redq::RedisQueue::builder(&args.redis).script_calls(args.script_calls);
    // How the scripts were called: `auto` settles at connect, so the line
    // says what it became.
    let (fields, calls) = if args.shards > 1 {
        let queue = redq::ShardedQueue::connect(builder, &namespace, args.shards)
            .await
            .map_err(|e| e.to_string())?;
        let calls = queue.shards()[0].script_calls();
        let operator = redq::Operator::from(queue.clone());
        operator
            .set_record_format(args.record_format)
            .await
            .map_err(|e| e.to_string())?;
        operator
            .set_metrics_recording(&args.queue, args.metrics)
            .await
            .map_err(|e| e.to_string())?;
        (sharded::run(args, &queue).await?, calls)
    } else {
        let queue = builder
            .namespace(namespace)
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        queue
            .set_record_format(args.record_format)
            .await
            .map_err(|e| e.to_string())?;
        queue
            .set_metrics_recording(&args.queue, args.metrics)
            .await
            .map_err(|e| e.to_string())?;
        (cases::run(args, &queue).await?, queue.script_calls())
    };
    let mut line = Map::new();
    line.insert("system".into(), json!("redq"));
    line.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
    line.insert("case".into(), json!(args.case));
    let calls = match calls {
        redq::ScriptCalls::Functions => "functions",
        _ => "eval",
    };
    line.insert("script_calls".into(), json!(calls));
    line.insert("record_format".into(), json!(args.record_format.name()));
    line.insert(
        "metrics".into(),
        json!(if args.metrics { "on" } else { "off" }),
    );
    // The worker threads the runtime ran, as it counts them.
    line.insert(
        "threads".into(),
        json!(tokio::runtime::Handle::current().metrics().num_workers()),
    );
    let jobs = if args.case == "latency" {
        args.lat_n
    } else {
        args.n
    };
    line.insert("jobs".into(), json!(jobs));
    line.insert("pad_bytes".into(), json!(args.pad_bytes));
    line.extend(fields);
    Ok(json_text(&serde_json::Value::Object(line), false))
}
