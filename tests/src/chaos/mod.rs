//! Fault scenarios: each runs a recorded workload against a private
//! redis-server, injects one kind of fault (seeded, bounded in time,
//! loopback only), runs the structural check after every fault, and hands
//! the whole history to the checker. Each returns its figures.
//!
//! The quick CI subset (`tests/tests/reliability_*.rs`) runs them at
//! [`Scale::quick`]; the full run (`scripts/reliability`, binary
//! `redq-chaos`) at [`Scale::full`].

pub mod workload;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redq::RedisQueue;

use crate::history::{self, Recorder, RecordingQueue, Report, ServerLog};
use crate::{unique_namespace, RedisServer};
use workload::{produce, spawn_workers, specs, Behaviour};

/// How big a run is.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// Jobs per scenario (the many-claimers scenario always uses 10 000).
    pub jobs: usize,
    /// How long faults keep coming.
    pub fault_window: Duration,
    pub seed: u64,
}

impl Scale {
    /// The CI subset: small and bounded.
    pub fn quick(seed: u64) -> Scale {
        Scale {
            jobs: 600,
            fault_window: Duration::from_secs(8),
            seed,
        }
    }

    /// The full run.
    pub fn full(seed: u64) -> Scale {
        Scale {
            jobs: 6000,
            fault_window: Duration::from_secs(60),
            seed,
        }
    }
}

/// What a scenario measured and what the checker said.
#[derive(Debug)]
pub struct Outcome {
    pub scenario: &'static str,
    pub elapsed: Duration,
    /// Scenario-specific figures (faults injected, errors seen…).
    pub figures: BTreeMap<&'static str, String>,
    pub report: Report,
    /// Broken invariants found by the structural checks after each fault.
    pub structure: Vec<String>,
}

impl Outcome {
    /// Panics with everything measured when a guarantee was broken.
    #[track_caller]
    pub fn assert_ok(&self) {
        assert!(
            self.report.violations.is_empty() && self.structure.is_empty(),
            "{self}"
        );
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "== {} ({:.1?})", self.scenario, self.elapsed)?;
        for (k, v) in &self.figures {
            writeln!(f, "  {k}: {v}")?;
        }
        write!(f, "  {}", self.report)?;
        writeln!(
            f,
            "  structural checks: {} violations",
            self.structure.len()
        )?;
        for v in self.structure.iter().take(20) {
            writeln!(f, "    - {v}")?;
        }
        Ok(())
    }
}

const QUEUE: &str = "work";

async fn handle(url: &str, ns: &str, timeout: Duration) -> RedisQueue {
    RedisQueue::builder(url)
        .namespace(ns)
        .command_timeout(timeout)
        .connect()
        .await
        .expect("connecting to the test redis")
}

/// A recorded producer (recorder 0) and `n` recorded workers (recorders
/// 1..=n), each on its own handle, plus the workers' recorders.
async fn recorded_team(
    url: &str,
    ns: &str,
    timeout: Duration,
    n: u32,
) -> (RecordingQueue, Vec<RecordingQueue>, Vec<Recorder>) {
    let producer = RecordingQueue::new(handle(url, ns, timeout).await, Recorder::new(0));
    let mut workers = Vec::new();
    for p in 1..=n {
        workers.push(RecordingQueue::new(
            handle(url, ns, timeout).await,
            Recorder::new(p),
        ));
    }
    let recorders = workers.iter().map(|w| w.recorder.clone()).collect();
    (producer, workers, recorders)
}

/// Waits until the queue has no waiting, scheduled, leased or blocked job,
/// or `deadline` passes; returns whether it drained.
async fn drained(queue: &RedisQueue, deadline: Duration) -> bool {
    let until = Instant::now() + deadline;
    while Instant::now() < until {
        if let Ok(c) = queue.counts(QUEUE).await {
            if c.waiting + c.scheduled + c.leased + c.blocked == 0 {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn structure_check(server: &RedisServer, ns: &str, after: &str, out: &mut Vec<String>) {
    let client = server.client().await;
    for v in history::check_namespace(&client, ns).await {
        out.push(format!("after {after}: {v}"));
    }
    let _ = fred::interfaces::ClientLike::quit(&client).await;
}

/// A worker process (`redq-chaos-worker`) writing its history to a file.
struct WorkerProcess {
    child: Child,
    history: PathBuf,
}

// Each argument is one of the worker's command-line words.
#[allow(clippy::too_many_arguments)]
fn spawn_worker(
    bin: &Path,
    url: &str,
    ns: &str,
    behaviour: &Behaviour,
    dir: &Path,
    process: u32,
    seed: u64,
    skew: Option<&str>,
) -> WorkerProcess {
    let history = dir.join(format!("history-{process}.jsonl"));
    let mut command = Command::new(bin);
    command
        .args([
            url,
            ns,
            QUEUE,
            &behaviour.to_arg(),
            &history.display().to_string(),
            &process.to_string(),
            &seed.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(offset) = skew {
        command
            .env("LD_PRELOAD", FAKETIME_LIB)
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .env("FAKETIME_NO_CACHE", "1");
    }
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {}: {e}", bin.display()));
    WorkerProcess { child, history }
}

/// Debian's libfaketime (package `faketime`).
pub const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(status.success(), "kill {sig} {pid} failed");
}

/// Worker processes killed with `kill -9` every 2–5 s while others keep
/// working; each killed worker is replaced.
pub async fn kill_workers(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-kill");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = StdRng::seed_from_u64(scale.seed);
    let behaviour = Behaviour {
        lease: Duration::from_millis(800),
        work_ms: (1, 4),
        ..Behaviour::default()
    };
    let producer = RecordingQueue::new(
        handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let jobs = specs("kill", 0, scale.jobs, 0, 4);
    let mut workers: Vec<WorkerProcess> = (1..=3)
        .map(|p| {
            spawn_worker(
                worker_bin,
                &url,
                &ns,
                &behaviour,
                dir.path(),
                p,
                scale.seed + p as u64,
                None,
            )
        })
        .collect();
    let mut next_process = 4;
    let feed = {
        let producer = producer.clone();
        tokio::spawn(
            async move { produce(&producer, QUEUE, &jobs, 20, Duration::from_millis(5)).await },
        )
    };
    let mut structure = Vec::new();
    let mut kills = 0;
    let window_end = Instant::now() + scale.fault_window.max(Duration::from_secs(6));
    while Instant::now() < window_end || !feed.is_finished() {
        tokio::time::sleep(Duration::from_millis(rng.random_range(2000..=5000))).await;
        let victim = rng.random_range(0..workers.len());
        let _ = workers[victim].child.kill();
        let _ = workers[victim].child.wait();
        kills += 1;
        structure_check(&server, &ns, &format!("kill -9 #{kills}"), &mut structure).await;
        workers.push(spawn_worker(
            worker_bin,
            &url,
            &ns,
            &behaviour,
            dir.path(),
            next_process,
            scale.seed + next_process as u64,
            None,
        ));
        workers.swap_remove(victim);
        next_process += 1;
        if started.elapsed() > scale.fault_window * 4 + Duration::from_secs(60) {
            break;
        }
    }
    let (created, _) = feed.await.expect("producer");
    let drained_ok = drained(&producer.queue, Duration::from_secs(60)).await;
    let mut paths = Vec::new();
    for mut w in workers {
        let _ = w.child.kill();
        let _ = w.child.wait();
    }
    for p in 1..next_process {
        paths.push(dir.path().join(format!("history-{p}.jsonl")));
    }
    let mut entries = producer.recorder.entries();
    entries.extend(history::read_history(&paths));
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert("jobs enqueued", created.to_string());
    figures.insert("worker processes killed with -9", kills.to_string());
    figures.insert("worker processes run", (next_process - 1).to_string());
    figures.insert("drained", drained_ok.to_string());
    Outcome {
        scenario: "worker processes kill -9 every 2-5 s",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    }
}

/// A worker process stopped with SIGSTOP past its lease, then resumed: its
/// late acks are refused (`LeaseLost`) and change nothing.
///
/// Each round: the slow worker claims a batch; it is stopped; a second
/// worker, which holds each job for 2 s, reclaims the lapsed leases and
/// takes the oldest (the one the stopped worker was running); the stopped
/// worker resumes while that job is held elsewhere, and its acks (for that
/// job and for the rest of its batch, back in the queue) must be refused.
pub async fn stop_worker(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-stop");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let lease = Duration::from_millis(600);
    let slow = Behaviour {
        batch: 4,
        work_ms: (40, 60),
        ..Behaviour::ack_only(lease)
    };
    let holder = Behaviour {
        batch: 1,
        work_ms: (2000, 2000),
        ..Behaviour::ack_only(Duration::from_secs(5))
    };
    let producer = RecordingQueue::new(
        handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let stopped = spawn_worker(
        worker_bin,
        &url,
        &ns,
        &slow,
        dir.path(),
        1,
        scale.seed,
        None,
    );
    let mut structure = Vec::new();
    let rounds = if scale.jobs >= 5000 { 6 } else { 2 };
    let mut histories = vec![stopped.history.clone()];
    let mut stopped = stopped;
    for round in 0..rounds {
        produce(
            &producer,
            QUEUE,
            &specs(&format!("stop{round}"), 0, 30, 0, 0),
            30,
            Duration::ZERO,
        )
        .await;
        let until = Instant::now() + Duration::from_secs(10);
        while producer.queue.counts(QUEUE).await.map_or(0, |c| c.leased) == 0
            && Instant::now() < until
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        signal(stopped.child.id(), "-STOP");
        // Past the lease first, so the second worker's first claim
        // reclaims the stopped worker's jobs.
        tokio::time::sleep(lease * 2).await;
        let process = 10 + round as u32;
        let mut other = spawn_worker(
            worker_bin,
            &url,
            &ns,
            &holder,
            dir.path(),
            process,
            scale.seed + process as u64,
            None,
        );
        histories.push(other.history.clone());
        // Resume only once the second worker took over (its start-up may
        // take longer than the lease on a busy machine).
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until
            && !history::read_history(&[other.history.clone()]).iter().any(
                |e| matches!(&e.reply, Some(history::Reply::Claimed { jobs }) if !jobs.is_empty()),
            )
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        structure_check(&server, &ns, "SIGSTOP past the lease", &mut structure).await;
        signal(stopped.child.id(), "-CONT");
        tokio::time::sleep(Duration::from_millis(800)).await;
        structure_check(&server, &ns, "SIGCONT", &mut structure).await;
        let _ = other.child.kill();
        let _ = other.child.wait();
    }
    let drained_ok = drained(&producer.queue, Duration::from_secs(30)).await;
    let _ = stopped.child.kill();
    let _ = stopped.child.wait();
    let stopped_history = history::read_history(&[histories[0].clone()]);
    let late_refused = stopped_history
        .iter()
        .filter(|e| matches!(e.reply, Some(history::Reply::LeaseLost)))
        .count();
    let mut entries = producer.recorder.entries();
    entries.extend(history::read_history(&histories));
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert(
        "SIGSTOP/SIGCONT rounds (stopped for over 2 leases)",
        rounds.to_string(),
    );
    figures.insert(
        "late calls of the stopped worker refused (LeaseLost)",
        late_refused.to_string(),
    );
    figures.insert("drained", drained_ok.to_string());
    let mut outcome = Outcome {
        scenario: "worker SIGSTOP past its lease, then SIGCONT",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    };
    if late_refused < rounds {
        outcome.structure.push(format!(
            "only {late_refused} late calls of the stopped worker were refused in {rounds} rounds"
        ));
    }
    outcome
}

/// redis-server SIGKILLed under load (AOF, fsync always) and restarted on
/// the same directory; the same client handles carry on by themselves.
pub async fn kill_redis(scale: Scale) -> Outcome {
    let started = Instant::now();
    // No AOF rewrites: the incremental files then hold the whole history.
    let mut server = RedisServer::builder()
        .appendonly_always()
        .arg("auto-aof-rewrite-percentage", "0")
        .start();
    let ns = unique_namespace("chaos-redis");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let mut rng = StdRng::seed_from_u64(scale.seed);
    let timeout = Duration::from_secs(3);
    let (producer, workers, recorders) = recorded_team(&url, &ns, timeout, 3).await;
    let behaviour = Behaviour {
        lease: Duration::from_millis(1500),
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(workers, QUEUE, behaviour, scale.seed);
    let jobs = specs("redis", 0, scale.jobs, 0, 5);
    let feed = {
        let producer = producer.clone();
        let pause = scale.fault_window / (jobs.len() as u32 / 10).max(1);
        tokio::spawn(async move { produce(&producer, QUEUE, &jobs, 10, pause).await })
    };
    let mut structure = Vec::new();
    let mut kills = 0;
    let window_end = Instant::now() + scale.fault_window;
    let mut downtime = Duration::ZERO;
    while Instant::now() < window_end {
        tokio::time::sleep(Duration::from_millis(rng.random_range(1500..=3000))).await;
        let down = Instant::now();
        tokio::task::block_in_place(|| {
            server.kill9();
            std::thread::sleep(Duration::from_millis(rng.random_range(50..300)));
            server.restart();
        });
        downtime += down.elapsed();
        kills += 1;
        structure_check(
            &server,
            &ns,
            &format!("redis kill -9 #{kills}"),
            &mut structure,
        )
        .await;
    }
    let (created, refused) = feed.await.expect("producer");
    let drained_ok = drained(&producer.queue, Duration::from_secs(60)).await;
    stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let report =
        history::finish_on(&server, &ns, log, &entries, drained_ok, Some(server.dir())).await;
    let mut figures = BTreeMap::new();
    figures.insert("redis-server kill -9 + restart", kills.to_string());
    figures.insert("total downtime", format!("{downtime:.1?}"));
    figures.insert("jobs enqueued (acknowledged or not)", created.to_string());
    figures.insert(
        "enqueue batches that failed during downtime (jobs)",
        refused.to_string(),
    );
    figures.insert("drained", drained_ok.to_string());
    Outcome {
        scenario: "redis-server kill -9 under load (appendfsync always)",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    }
}

/// `DEBUG SLEEP` and `CLIENT PAUSE WRITE`, each longer than the lease, under load.
pub async fn freeze_redis(scale: Scale) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::builder().enable_debug().start();
    let ns = unique_namespace("chaos-freeze");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let timeout = Duration::from_secs(10);
    let lease = Duration::from_millis(700);
    let (producer, workers, recorders) = recorded_team(&url, &ns, timeout, 3).await;
    let behaviour = Behaviour {
        lease,
        work_ms: (2, 10),
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(workers, QUEUE, behaviour, scale.seed);
    let jobs = specs("freeze", 0, scale.jobs, 0, 6);
    let feed = {
        let producer = producer.clone();
        let pause = scale.fault_window / (jobs.len() as u32 / 10).max(1);
        tokio::spawn(async move { produce(&producer, QUEUE, &jobs, 10, pause).await })
    };
    let mut structure = Vec::new();
    let admin = server.client().await;
    let rounds = (scale.fault_window.as_secs() / 4).max(2);
    for round in 0..rounds {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let (what, args): (&str, Vec<&str>) = if round % 2 == 0 {
            ("DEBUG SLEEP 1.5", vec!["DEBUG", "SLEEP", "1.5"])
        } else {
            (
                "CLIENT PAUSE 1500 WRITE",
                vec!["CLIENT", "PAUSE", "1500", "WRITE"],
            )
        };
        let command =
            fred::types::CustomCommand::new(args[0], fred::types::ClusterHash::FirstKey, false);
        let _: fred::types::Value =
            fred::interfaces::ClientLike::custom(&admin, command, args[1..].to_vec())
                .await
                .expect("fault command");
        tokio::time::sleep(Duration::from_millis(1600)).await;
        structure_check(&server, &ns, what, &mut structure).await;
    }
    let (created, _) = feed.await.expect("producer");
    let drained_ok = drained(&producer.queue, Duration::from_secs(60)).await;
    stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert(
        "freezes (DEBUG SLEEP 1.5 s / CLIENT PAUSE 1.5 s WRITE, lease 0.7 s)",
        rounds.to_string(),
    );
    figures.insert("jobs enqueued", created.to_string());
    figures.insert("drained", drained_ok.to_string());
    Outcome {
        scenario: "DEBUG SLEEP and CLIENT PAUSE WRITE past the lease",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    }
}

/// `SCRIPT FLUSH` every second under load: no error reaches a caller.
pub async fn script_flush(scale: Scale) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-flush");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let timeout = Duration::from_secs(10);
    let (producer, workers, recorders) = recorded_team(&url, &ns, timeout, 3).await;
    let behaviour = Behaviour {
        lease: Duration::from_secs(30),
        abandon: 0.0,
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(workers, QUEUE, behaviour, scale.seed);
    let jobs = specs("flush", 0, scale.jobs * 2, 0, 0);
    let pause = scale.fault_window / (jobs.len() as u32 / 10).max(1);
    let feed = {
        let producer = producer.clone();
        tokio::spawn(async move { produce(&producer, QUEUE, &jobs, 10, pause).await })
    };
    let mut structure = Vec::new();
    let admin = server.client().await;
    let mut flushes = 0;
    while !feed.is_finished() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _: () = fred::interfaces::LuaInterface::script_flush(&admin, false)
            .await
            .expect("SCRIPT FLUSH");
        flushes += 1;
        if flushes % 4 == 0 {
            structure_check(&server, &ns, "SCRIPT FLUSH", &mut structure).await;
        }
    }
    let (created, _) = feed.await.expect("producer");
    let drained_ok = drained(&producer.queue, Duration::from_secs(60)).await;
    stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let errors: Vec<String> = entries
        .iter()
        .filter_map(|e| match e.outcome() {
            history::Reply::Unknown { error } | history::Reply::Failed { error } => Some(error),
            _ => None,
        })
        .collect();
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert("SCRIPT FLUSH (1/s)", flushes.to_string());
    figures.insert("calls", entries.len().to_string());
    figures.insert("errors that reached callers", errors.len().to_string());
    figures.insert("jobs enqueued", created.to_string());
    let mut outcome = Outcome {
        scenario: "SCRIPT FLUSH every second under load",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    };
    for e in errors.iter().take(5) {
        outcome
            .structure
            .push(format!("an error reached a caller: {e}"));
    }
    outcome
}

/// An enqueue flood into `maxmemory` with `noeviction` while workers drain.
pub async fn memory_flood(scale: Scale) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::builder().maxmemory(1 << 30).start();
    let ns = unique_namespace("chaos-oom");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let info: String = server.cmd(&["INFO", "memory"]).await.convert().unwrap();
    let used: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory");
    // A few MB of headroom; MONITOR's own buffers count against it too, so
    // leave room for them.
    let limit = used + (6 << 20);
    server
        .cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()])
        .await;
    let timeout = Duration::from_secs(10);
    let mut producers = Vec::new();
    for p in 0..2 {
        producers.push(RecordingQueue::new(
            handle(&url, &ns, timeout).await,
            Recorder::new(p),
        ));
    }
    let worker = RecordingQueue::new(handle(&url, &ns, timeout).await, Recorder::new(10));
    let recorders: Vec<Recorder> = producers
        .iter()
        .chain([&worker])
        .map(|w| w.recorder.clone())
        .collect();
    let behaviour = Behaviour {
        lease: Duration::from_secs(5),
        work_ms: (5, 15),
        abandon: 0.0,
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(vec![worker], QUEUE, behaviour, scale.seed);
    let mut floods = Vec::new();
    for (i, p) in producers.iter().enumerate() {
        let p = p.clone();
        let mut jobs = specs(&format!("oom{i}"), 0, scale.jobs, 0, 0);
        for j in &mut jobs {
            j.pad = 16 * 1024;
        }
        floods.push(tokio::spawn(async move {
            produce(&p, QUEUE, &jobs, 5, Duration::ZERO).await
        }));
    }
    let mut structure = Vec::new();
    let mut created = 0;
    let mut refused = 0;
    for f in floods {
        let (c, r) = f.await.expect("producer");
        created += c;
        refused += r;
    }
    structure_check(&server, &ns, "the enqueue flood", &mut structure).await;
    let drained_ok = drained(&producers[0].queue, Duration::from_secs(90)).await;
    stop_workers(stop, tasks).await;
    let entries: Vec<history::Entry> = recorders.iter().flat_map(|r| r.entries()).collect();
    let refusals: Vec<String> = entries
        .iter()
        .filter_map(|e| match (e.call.clone(), e.outcome()) {
            (history::Call::Enqueue { .. }, history::Reply::Failed { error })
            | (history::Call::Enqueue { .. }, history::Reply::Unknown { error }) => Some(error),
            _ => None,
        })
        .collect();
    let untyped: Vec<&String> = refusals
        .iter()
        .filter(|e| !e.contains("out of memory"))
        .collect();
    let after = producers[0]
        .add_batch(QUEUE, &specs("after", 0, 1, 0, 0))
        .await;
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert("jobs created (16 KiB each)", created.to_string());
    figures.insert("jobs refused", refused.to_string());
    figures.insert(
        "enqueue errors: out of memory / other",
        format!("{} / {}", refusals.len() - untyped.len(), untyped.len()),
    );
    figures.insert("drained after the flood", drained_ok.to_string());
    figures.insert(
        "enqueue works again once drained",
        after.is_ok().to_string(),
    );
    let mut outcome = Outcome {
        scenario: "maxmemory noeviction during an enqueue flood",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    };
    for e in untyped.iter().take(5) {
        outcome
            .structure
            .push(format!("an enqueue failed without the typed error: {e}"));
    }
    if refused == 0 {
        outcome
            .structure
            .push("the flood never reached maxmemory".into());
    }
    if after.is_err() {
        outcome
            .structure
            .push(format!("enqueue after draining failed: {after:?}"));
    }
    outcome
}

/// Worker processes whose clocks are skewed by ±30 s (libfaketime): no lease
/// is reclaimed early. `None` when libfaketime is not installed.
pub async fn skewed_clocks(scale: Scale, worker_bin: &Path) -> Option<Outcome> {
    if !Path::new(FAKETIME_LIB).exists() {
        return None;
    }
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-skew");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let behaviour = Behaviour {
        lease: Duration::from_millis(500),
        abandon: 0.1,
        work_ms: (1, 5),
        ..Behaviour::default()
    };
    let producer = RecordingQueue::new(
        handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let skews = [Some("+30s"), Some("-30s"), None, Some("+30s")];
    let mut workers: Vec<WorkerProcess> = skews
        .iter()
        .enumerate()
        .map(|(i, skew)| {
            spawn_worker(
                worker_bin,
                &url,
                &ns,
                &behaviour,
                dir.path(),
                i as u32 + 1,
                scale.seed + i as u64,
                *skew,
            )
        })
        .collect();
    // Prove the skew is real: the same program under faketime sees another clock.
    let skew_seen = probe_skew("+30s");
    let (created, _) = produce(
        &producer,
        QUEUE,
        &specs("skew", 0, scale.jobs, 0, 0),
        20,
        Duration::from_millis(10),
    )
    .await;
    let drained_ok = drained(&producer.queue, Duration::from_secs(60)).await;
    let mut structure = Vec::new();
    structure_check(
        &server,
        &ns,
        "skewed workers drained the queue",
        &mut structure,
    )
    .await;
    for w in &mut workers {
        let _ = w.child.kill();
        let _ = w.child.wait();
    }
    let paths: Vec<PathBuf> = workers.iter().map(|w| w.history.clone()).collect();
    let mut entries = producer.recorder.entries();
    entries.extend(history::read_history(&paths));
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert("worker clocks", "+30 s, -30 s, +30 s, true".to_string());
    figures.insert("skew measured under faketime", format!("{skew_seen:+} s"));
    figures.insert("jobs enqueued", created.to_string());
    figures.insert("drained", drained_ok.to_string());
    let mut outcome = Outcome {
        scenario: "worker clocks skewed by ±30 s",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    };
    if !(25..=35).contains(&skew_seen) {
        outcome.structure.push(format!(
            "faketime did not skew the clock (measured {skew_seen} s)"
        ));
    }
    Some(outcome)
}

/// Seconds by which `date` under libfaketime with `offset` differs from ours.
fn probe_skew(offset: &str) -> i64 {
    let output = Command::new("date")
        .arg("+%s")
        .env("LD_PRELOAD", FAKETIME_LIB)
        .env("FAKETIME", offset)
        .output()
        .expect("running date");
    let theirs: i64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    let ours = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    theirs - ours
}

/// 100 concurrent claimers over 10 000 jobs: each job claimed exactly once.
pub async fn many_claimers(scale: Scale, claimers: usize, jobs: usize) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-claimers");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let producer = RecordingQueue::new(
        handle(&url, &ns, Duration::from_secs(30)).await,
        Recorder::new(0),
    );
    produce(
        &producer,
        QUEUE,
        &specs("many", 0, jobs, 0, 0),
        500,
        Duration::ZERO,
    )
    .await;
    let mut handles = Vec::new();
    for p in 1..=claimers {
        let queue = RedisQueue::builder(&url)
            .namespace(&ns)
            .pool_size(1)
            .command_timeout(Duration::from_secs(30))
            .connect()
            .await
            .expect("claimer connects");
        handles.push(RecordingQueue::new(queue, Recorder::new(p as u32)));
    }
    let recorders: Vec<Recorder> = handles.iter().map(|h| h.recorder.clone()).collect();
    let claiming = Instant::now();
    let (stop, tasks) = spawn_workers(
        handles,
        QUEUE,
        Behaviour {
            batch: 10,
            ..Behaviour::ack_only(Duration::from_secs(60))
        },
        scale.seed,
    );
    let drained_ok = drained(&producer.queue, Duration::from_secs(120)).await;
    let claim_time = claiming.elapsed();
    stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let mut claims_per_job: std::collections::HashMap<String, u32> = Default::default();
    for e in &entries {
        if let Some(history::Reply::Claimed { jobs }) = &e.reply {
            for j in jobs {
                *claims_per_job.entry(j.id.clone()).or_default() += 1;
            }
        }
    }
    let claimed_once = claims_per_job.values().filter(|n| **n == 1).count();
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert("claimers", claimers.to_string());
    figures.insert("jobs", jobs.to_string());
    figures.insert("jobs claimed exactly once", claimed_once.to_string());
    figures.insert(
        "claim+ack throughput (jobs/s, MONITOR on)",
        format!("{:.0}", jobs as f64 / claim_time.as_secs_f64()),
    );
    let mut outcome = Outcome {
        scenario: "concurrent claimers",
        elapsed: started.elapsed(),
        figures,
        report,
        structure: Vec::new(),
    };
    if claimed_once != jobs || claims_per_job.len() != jobs {
        outcome.structure.push(format!(
            "{claimed_once} of {jobs} jobs claimed exactly once ({} claimed at all)",
            claims_per_job.len()
        ));
    }
    outcome
}

/// Tell the recorded workers to stop and wait for each to finish (a
/// worker task that panicked is the checker's business, not this one's).
async fn stop_workers(stop: Arc<AtomicBool>, tasks: Vec<tokio::task::JoinHandle<()>>) {
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        let _ = t.await;
    }
}

/// Ordering keys under random failures (nacks, lapses, releases) with
/// several workers: never two leased jobs of one key, and each key's jobs
/// complete in enqueue order.
pub async fn ordering_under_failures(scale: Scale) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-order");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let (producer, workers, recorders) = recorded_team(&url, &ns, Duration::from_secs(5), 4).await;
    let behaviour = Behaviour {
        lease: Duration::from_millis(300),
        nack: 0.15,
        dead: 0.0,
        release: 0.05,
        abandon: 0.05,
        retry_delay: Duration::from_millis(5),
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(workers, QUEUE, behaviour, scale.seed);
    let keys = 20;
    let n = (scale.jobs / 2).max(200);
    let (created, _) = produce(
        &producer,
        QUEUE,
        &specs("ord", 0, n, keys, 0),
        20,
        Duration::from_millis(5),
    )
    .await;
    let mut structure = Vec::new();
    structure_check(&server, &ns, "enqueueing keyed jobs", &mut structure).await;
    let drained_ok = drained(&producer.queue, Duration::from_secs(120)).await;
    stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let report = history::finish_on(&server, &ns, log, &entries, drained_ok, None).await;
    let mut figures = BTreeMap::new();
    figures.insert("ordering keys", keys.to_string());
    figures.insert("keyed jobs", created.to_string());
    figures.insert("drained", drained_ok.to_string());
    Outcome {
        scenario: "per-key ordering under random failures",
        elapsed: started.elapsed(),
        figures,
        report,
        structure,
    }
}
