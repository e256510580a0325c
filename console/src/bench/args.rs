//! `redq bench` flags, parsed the way comparison scripts expect: unknown
//! flags are ignored and the first occurrence of a flag wins, so the same
//! command line can drive redq and the BullMQ script alike.

use std::collections::HashMap;

/// The parsed bench flags.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchArgs {
    /// Which case to run.
    pub case: String,
    /// Jobs (N).
    pub n: usize,
    /// Worker concurrency (C).
    pub c: usize,
    /// The Redis URL.
    pub redis: String,
    /// The queue name.
    pub queue: String,
    /// Jobs in the latency case (K).
    pub lat_n: usize,
    /// Gap between latency-case enqueues, in ms (G).
    pub lat_gap_ms: u64,
    /// Enqueues in flight in `enqueue_window` (W).
    pub window: usize,
    /// Batch size in `enqueue_bulk` (B).
    pub batch: usize,
    /// Shards the queue is spread over (S, default 1: a plain namespace).
    pub shards: usize,
    /// With `--shards`, who processes in the `process` case
    /// (`--workers per-shard|one`, default per-shard).
    pub shard_workers: ShardWorkers,
    /// How the driver calls its scripts (`--script-calls auto|eval|functions`,
    /// default auto: the driver's default).
    pub script_calls: redq::ScriptCalls,
    /// The record format the bench's namespace is set to before it runs
    /// (`--record-format standard|compact`, default standard).
    pub record_format: redq::RecordFormat,
    /// The runtime's worker threads (`--threads N`; `None`, the default:
    /// tokio's own default, one a core, as an application's
    /// `#[tokio::main]` has).
    pub threads: Option<usize>,
    /// Whether the bench's queue records its metrics (`--metrics on|off`,
    /// default on, as every queue starts): off turns them off before the
    /// run, as `redq metrics off` does.
    pub metrics: bool,
    /// Bytes of padding in every job's payload (`--pad-bytes P`, default 0):
    /// the payload becomes `{"i": index, "pad": "x…x"}` with P x's, so the
    /// cases can be run with payloads of a size an application sends.
    pub pad_bytes: usize,
}

/// Who processes a sharded queue in the `process` case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardWorkers {
    /// One `Worker` for each shard, C split evenly between them: a worker
    /// process per primary, as on separate machines.
    PerShard,
    /// One `Worker` over the whole `ShardedQueue` with all C slots,
    /// claiming from each shard in turn: one service process, as an
    /// application that moved to shards runs it.
    One,
}

impl ShardWorkers {
    /// The flag's value, as the JSON line reports it.
    pub fn name(self) -> &'static str {
        match self {
            ShardWorkers::PerShard => "per-shard",
            ShardWorkers::One => "one",
        }
    }
}

const VALUE_FLAGS: [&str; 16] = [
    "pad-bytes",
    "workers",
    "threads",
    "metrics",
    "shards",
    "record-format",
    "script-calls",
    "case",
    "n",
    "c",
    "redis",
    "queue",
    "lat-n",
    "lat-gap-ms",
    "window",
    "batch",
];

impl BenchArgs {
    /// Parse `args` (without the program name and `bench`).
    pub fn parse(args: &[String]) -> Result<BenchArgs, String> {
        let mut seen: HashMap<&str, String> = HashMap::new();
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            i += 1;
            let Some(flag) = arg.strip_prefix("--") else {
                continue;
            };
            let (name, inline) = match flag.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (flag, None),
            };
            let Some(known) = VALUE_FLAGS.iter().find(|f| **f == name) else {
                continue;
            };
            let value = match inline {
                Some(value) => value,
                None if i < args.len() => {
                    i += 1;
                    args[i - 1].clone()
                }
                None => return Err(format!("--{name} needs a value")),
            };
            seen.entry(known).or_insert(value);
        }
        let number = |name: &str, default: usize| -> Result<usize, String> {
            match seen.get(name) {
                Some(v) => v
                    .parse()
                    .map_err(|_| format!("--{name} must be a whole number, got {v:?}")),
                None => Ok(default),
            }
        };
        let case = seen.get("case").cloned().ok_or("--case is required: enqueue_bulk, enqueue_serial, enqueue_window, process, process_keep, process_rate, process_keyed, batch or latency")?;
        let args = BenchArgs {
            case,
            n: number("n", 50_000)?,
            c: number("c", 50)?,
            redis: seen
                .get("redis")
                .cloned()
                .or_else(|| std::env::var("REDIS_URL").ok())
                .ok_or("--redis URL is required")?,
            queue: seen
                .get("queue")
                .cloned()
                .unwrap_or_else(|| "bench".to_owned()),
            lat_n: number("lat-n", 1000)?,
            lat_gap_ms: number("lat-gap-ms", 1)? as u64,
            window: number("window", 100)?,
            batch: number("batch", 1000)?,
            shards: number("shards", 1)?,
            shard_workers: match seen.get("workers").map(String::as_str) {
                None | Some("per-shard") => ShardWorkers::PerShard,
                Some("one") => ShardWorkers::One,
                Some(other) => return Err(format!("--workers is per-shard or one, got {other:?}")),
            },
            script_calls: match seen.get("script-calls").map(String::as_str) {
                None | Some("auto") => redq::ScriptCalls::Auto,
                Some("eval") => redq::ScriptCalls::Eval,
                Some("functions") => redq::ScriptCalls::Functions,
                Some(other) => {
                    return Err(format!(
                        "--script-calls is auto, eval or functions, got {other:?}"
                    ))
                }
            },
            threads: match seen.get("threads") {
                None => None,
                Some(_) => Some(number("threads", 0)?),
            },
            metrics: match seen.get("metrics").map(String::as_str) {
                None | Some("on") => true,
                Some("off") => false,
                Some(other) => return Err(format!("--metrics is on or off, got {other:?}")),
            },
            pad_bytes: number("pad-bytes", 0)?,
            record_format: match seen.get("record-format") {
                None => redq::RecordFormat::Standard,
                Some(name) => redq::RecordFormat::parse(name).map_err(|_| {
                    format!(
                        "--record-format is {}, got {name:?}",
                        redq::RecordFormat::ACCEPTED
                    )
                })?,
            },
        };
        if args.n == 0
            || args.c == 0
            || args.window == 0
            || args.batch == 0
            || args.lat_n == 0
            || args.shards == 0
        {
            return Err(
                "--n, --c, --window, --batch, --lat-n and --shards must be at least 1".to_owned(),
            );
        }
        if args.threads == Some(0) {
            return Err("--threads must be at least 1 (leave it out for one a core)".to_owned());
        }
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<BenchArgs, String> {
        BenchArgs::parse(
            &line
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn first_occurrence_wins_and_unknown_flags_are_ignored() {
        let args =
            parse("--case process --n 10 --bogus 3 --n 20 --c=7 --redis redis://x --verbose")
                .unwrap();
        assert_eq!(
            (args.case.as_str(), args.n, args.c, args.redis.as_str()),
            ("process", 10, 7, "redis://x")
        );
        assert_eq!(
            (
                args.queue.as_str(),
                args.lat_n,
                args.lat_gap_ms,
                args.window,
                args.batch
            ),
            ("bench", 1000, 1, 100, 1000)
        );
    }

    #[test]
    fn bad_values_are_named() {
        assert!(parse("--case x --n ten --redis r")
            .unwrap_err()
            .contains("--n must be a whole number"));
        assert!(parse("--n 1 --redis r")
            .unwrap_err()
            .contains("--case is required"));
        assert!(parse("--case x --redis r --c 0")
            .unwrap_err()
            .contains("at least 1"));
        assert!(parse("--case x --redis r --script-calls fcall")
            .unwrap_err()
            .contains("--script-calls is auto, eval or functions"));
        assert!(parse("--case x --redis r --record-format tiny")
            .unwrap_err()
            .contains("--record-format is standard, compact, detached, detached:<bytes>, compact+detached or compact+detached:<bytes> (<bytes> 1 to 1073741824), got \"tiny\""));
        assert_eq!(
            parse("--case x --redis r --record-format compact")
                .unwrap()
                .record_format,
            redq::RecordFormat::Compact
        );
        assert_eq!(
            parse("--case x --redis r --record-format detached:512")
                .unwrap()
                .record_format,
            redq::RecordFormat::Detached { min_bytes: 512 }
        );
        assert!(parse("--case x --redis r --workers all")
            .unwrap_err()
            .contains("--workers is per-shard or one, got \"all\""));
        assert_eq!(
            parse("--case x --redis r").unwrap().shard_workers,
            ShardWorkers::PerShard
        );
        assert_eq!(
            parse("--case x --redis r --workers one")
                .unwrap()
                .shard_workers,
            ShardWorkers::One
        );
        assert_eq!(parse("--case x --redis r").unwrap().pad_bytes, 0);
        assert_eq!(
            parse("--case x --redis r --pad-bytes 1024")
                .unwrap()
                .pad_bytes,
            1024
        );
        assert!(parse("--case x --redis r --pad-bytes 1k")
            .unwrap_err()
            .contains("--pad-bytes must be a whole number, got \"1k\""));
        assert!(parse("--case x --redis r --threads 0")
            .unwrap_err()
            .contains("--threads must be at least 1"));
        assert!(parse("--case x --redis r --threads two")
            .unwrap_err()
            .contains("--threads must be a whole number"));
        assert_eq!(parse("--case x --redis r").unwrap().threads, None);
        assert!(
            parse("--case x --redis r").unwrap().metrics,
            "on unless turned off"
        );
        assert!(!parse("--case x --redis r --metrics off").unwrap().metrics);
        assert!(parse("--case x --redis r --metrics no")
            .unwrap_err()
            .contains("--metrics is on or off, got \"no\""));
        assert_eq!(
            parse("--case x --redis r --threads 1").unwrap().threads,
            Some(1)
        );
        assert_eq!(
            parse("--case x --redis r --script-calls functions")
                .unwrap()
                .script_calls,
            redq::ScriptCalls::Functions
        );
    }
}
