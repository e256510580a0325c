//! What every fault scenario shares: connecting recorded clients, waiting
//! for the queue to drain, the structural check after a fault, stopping
//! in-process workers, and handing the history to the checker.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redq::RedisQueue;

use rand::Rng;

use super::fleet::{Ended, Fleet};
use super::outcome::Outcome;
use super::workload::{produce, Behaviour, Produced};
use super::Scale;
use crate::history::{
    self, Call, Entry, JobSpec, Recorder, RecordingQueue, Reply, Report, ServerLog,
};
use crate::RedisServer;

/// The one queue every scenario works on.
pub(crate) const QUEUE: &str = "work";

/// A handle calling the scripts as the driver does by default.
pub(crate) async fn handle(url: &str, ns: &str, timeout: Duration) -> RedisQueue {
    handle_calling(url, ns, timeout, redq::ScriptCalls::default()).await
}

/// [`handle`] calling the scripts as `calls` says.
pub(crate) async fn handle_calling(
    url: &str,
    ns: &str,
    timeout: Duration,
    calls: redq::ScriptCalls,
) -> RedisQueue {
    let queue = RedisQueue::builder(url)
        .namespace(ns)
        .command_timeout(timeout)
        .script_calls(calls)
        .connect()
        .await
        .unwrap_or_else(|e| panic!("connecting to the test redis-server failed: {e}"));
    // `REDQ_CHAOS_RECORD_FORMAT=compact`: the scenarios' producers store
    // compact records (driver/src/record_format.rs), to run every fault
    // against them.
    crate::fixtures::record_format_from_env(&queue, "REDQ_CHAOS_RECORD_FORMAT").await;
    queue
}

/// A recorded producer (recorder 0) and `n` recorded workers (recorders
/// 1..=n), each on its own handle, plus the workers' recorders.
pub(crate) async fn recorded_team(
    url: &str,
    ns: &str,
    timeout: Duration,
    n: u32,
) -> (RecordingQueue, Vec<RecordingQueue>, Vec<Recorder>) {
    recorded_team_calling(url, ns, timeout, n, redq::ScriptCalls::default()).await
}

/// [`recorded_team`] whose handles call the scripts as `calls` says.
pub(crate) async fn recorded_team_calling(
    url: &str,
    ns: &str,
    timeout: Duration,
    n: u32,
    calls: redq::ScriptCalls,
) -> (RecordingQueue, Vec<RecordingQueue>, Vec<Recorder>) {
    let producer = RecordingQueue::new(
        handle_calling(url, ns, timeout, calls).await,
        Recorder::new(0),
    );
    let mut workers = Vec::new();
    for p in 1..=n {
        workers.push(RecordingQueue::new(
            handle_calling(url, ns, timeout, calls).await,
            Recorder::new(p),
        ));
    }
    let recorders = workers.iter().map(|w| w.recorder.clone()).collect();
    (producer, workers, recorders)
}

/// Waits until the queue has no waiting, scheduled, leased, blocked or held job.
/// `Err` says what was left when `deadline` passed: the run stalled (a lost
/// wake-up, a stuck ordering key, a lease never reclaimed).
pub(crate) async fn drain(queue: &RedisQueue, deadline: Duration) -> Result<(), String> {
    let until = Instant::now() + deadline;
    let mut last = String::from("the counts could not be read");
    while Instant::now() < until {
        match queue.counts(QUEUE).await {
            Ok(c) if c.waiting + c.scheduled + c.leased + c.blocked + c.held == 0 => return Ok(()),
            Ok(c) => {
                last = format!(
                    "{} waiting, {} scheduled, {} leased ({} of them lapsed), {} blocked, {} held",
                    c.waiting, c.scheduled, c.leased, c.lapsed, c.blocked, c.held
                )
            }
            Err(e) => last = format!("the counts could not be read: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!(
        "the queue did not drain within {deadline:?}: {last} (the checker names each job)"
    ))
}

pub(crate) async fn structure_check(
    server: &RedisServer,
    ns: &str,
    after: &str,
    out: &mut Vec<String>,
) {
    let client = server.client().await;
    for v in history::check_namespace(&client, ns).await {
        out.push(format!("after {after}: {v}"));
    }
    let _ = fred::interfaces::ClientLike::quit(&client).await;
}

/// Tells the in-process workers to stop and waits for each; returns a
/// sentence for each one that panicked (it gave up claiming, or broke).
pub(crate) async fn stop_workers(
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
) -> Vec<String> {
    stop.store(true, Ordering::SeqCst);
    let mut panics = Vec::new();
    for (i, t) in tasks.into_iter().enumerate() {
        if let Err(e) = t.await {
            let why = if e.is_panic() {
                let payload = e.into_panic();
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "a panic without a message".into())
            } else {
                "it was cancelled".into()
            };
            panics.push(format!("in-process worker #{} panicked: {why}", i + 1));
        }
    }
    panics
}

/// The checker's report on a run that must have drained: every
/// acknowledged job completed or dead, nothing live (a live job is
/// reported by name). `aof_dir` when the server was killed. Also returns
/// a problem when a `MONITOR` line could not be parsed: the checker reads
/// the server record without them, so a check it passed may have seen too
/// little.
pub(crate) async fn check(
    server: &RedisServer,
    ns: &str,
    log: ServerLog,
    entries: &[Entry],
    aof_dir: Option<&std::path::Path>,
) -> (Report, Vec<String>) {
    let captured = log.captured();
    let report = history::finish_on(server, ns, log, entries, true, aof_dir).await;
    if !report.violations.is_empty() {
        keep_evidence(ns, entries, &captured.lines(), aof_dir);
    }
    let client = server.client().await;
    let names = crate::lua::load_all(&client).await;
    let _ = fred::interfaces::ClientLike::quit(&client).await;
    let record = history::server::parse(&captured.lines(), ns, &names);
    (report, record.unparsed_problem().into_iter().collect())
}

/// With `REDQ_CHAOS_KEEP=DIR`, a run whose history breaks a rule leaves
/// what the checker read in `DIR/<namespace>/`: the client history
/// (`history.jsonl`, one entry a line), the server's MONITOR lines
/// (`monitor.txt`) and a copy of the server's directory with its append-only
/// files (`aof/`), to find
/// out afterwards what happened. Without it nothing is kept.
fn keep_evidence(
    ns: &str,
    entries: &[Entry],
    monitor: &[String],
    aof_dir: Option<&std::path::Path>,
) {
    let Some(root) = std::env::var_os("REDQ_CHAOS_KEEP") else {
        return;
    };
    let dir = std::path::Path::new(&root).join(ns);
    let kept = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let mut history = String::new();
        for entry in entries {
            history.push_str(&serde_json::to_string(entry).map_err(std::io::Error::other)?);
            history.push('\n');
        }
        std::fs::write(dir.join("history.jsonl"), history)?;
        std::fs::write(dir.join("monitor.txt"), monitor.join("\n"))?;
        if let Some(aof) = aof_dir {
            copy_tree(aof, &dir.join("aof"))?;
        }
        Ok(())
    })();
    match kept {
        Ok(()) => eprintln!("kept the evidence of the broken rule in {}", dir.display()),
        Err(e) => eprintln!("could not keep the evidence in {}: {e}", dir.display()),
    }
}

/// Copies `from` (the server's directory: its AOF manifest and files sit in
/// a subdirectory) into `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target)?;
        } // The server's unix socket is no evidence, and cannot be copied.
    }
    Ok(())
}

/// Per worker process (recorder id): claims answered, and claims that
/// failed (each retried, up to the bound in `workload::CLAIM_ATTEMPTS`).
#[derive(Debug, Default)]
pub(crate) struct Claims {
    answered: BTreeMap<u32, usize>,
    with_jobs: BTreeMap<u32, usize>,
    failed: usize,
}

impl Claims {
    pub(crate) fn of(entries: &[Entry]) -> Claims {
        let mut claims = Claims::default();
        for e in entries {
            if !matches!(e.call, Call::Claim { .. }) {
                continue;
            }
            match &e.reply {
                Some(Reply::Claimed { jobs }) => {
                    *claims.answered.entry(e.process).or_default() += 1;
                    if !jobs.is_empty() {
                        *claims.with_jobs.entry(e.process).or_default() += 1;
                    }
                }
                _ => claims.failed += 1,
            }
        }
        claims
    }

    /// Records the figures, and a problem for each worker of `workers` that
    /// never had a claim answered (it crashed, hung or never connected),
    /// or, when `jobs_each`, never got a job.
    pub(crate) fn require(&self, outcome: &mut Outcome, workers: &[u32], jobs_each: bool) {
        outcome.figure("claims answered / failed and retried", {
            let answered: usize = self.answered.values().sum();
            format!("{answered} / {}", self.failed)
        });
        for w in workers {
            let answered = self.answered.get(w).copied().unwrap_or(0);
            outcome.require(answered > 0, || {
                format!("worker {w} never had a claim answered (it never started, or every claim failed)")
            });
            if jobs_each && answered > 0 {
                outcome.require(self.with_jobs.contains_key(w), || {
                    format!("worker {w} never claimed a job, so it tested nothing")
                });
            }
        }
    }
}

/// The checks every scenario makes of its own run: it drained, jobs were
/// created and refused only as the fault explains, faults were injected.
pub(crate) fn require_ran(
    outcome: &mut Outcome,
    drained: Result<(), String>,
    created: usize,
    unexplained_refusals: Vec<String>,
    faults: (&str, usize),
) {
    outcome.figure("drained", drained.is_ok());
    if let Err(why) = drained {
        outcome.unproven.push(why);
    }
    outcome.require(created > 0, || "no job was created".into());
    let n = unexplained_refusals.len();
    for r in unexplained_refusals.into_iter().take(5) {
        outcome
            .unproven
            .push(format!("{r} (not a refusal this fault explains)"));
    }
    if n > 5 {
        outcome
            .unproven
            .push(format!("… and {} more such enqueue failures", n - 5));
    }
    let (what, count) = faults;
    outcome.require(count > 0, || format!("no fault was injected ({what}: 0)"));
}

/// Feeds `jobs` to `QUEUE` in calls of 20, spread over the fault window
/// (so that the kills land on workers holding jobs), while
/// [`kill_workers_while`] kills the fleet's workers; returns what was
/// produced, the number of kills and the structural checks' findings.
pub(crate) async fn feed_while_killing(
    producer: &RecordingQueue,
    jobs: Vec<JobSpec>,
    fleet: &mut Fleet,
    faults: (&mut impl Rng, &Behaviour),
    at: (&RedisServer, &str),
    (scale, started): (Scale, Instant),
) -> (Produced, usize, Vec<String>) {
    let pause = scale.fault_window / (jobs.len() as u32 / 20).max(1);
    let feed = {
        let producer = producer.clone();
        tokio::spawn(async move { produce(&producer, QUEUE, &jobs, 20, pause).await })
    };
    let mut structure = Vec::new();
    let kills =
        kill_workers_while(&feed, fleet, faults, at, (scale, started), &mut structure).await;
    let produced = feed.await.expect("producer task");
    (produced, kills, structure)
}

/// Kills a random worker every 2 to 5 s, each replaced at once and followed
/// by a structural check, until the fault window (6 s at least) has passed
/// and `feed` (the producer) has finished, or the run has lasted four fault
/// windows and a minute. Returns the number of kills.
pub(crate) async fn kill_workers_while<T>(
    feed: &tokio::task::JoinHandle<T>,
    fleet: &mut Fleet,
    (rng, behaviour): (&mut impl Rng, &Behaviour),
    (server, ns): (&RedisServer, &str),
    (scale, started): (Scale, Instant),
    structure: &mut Vec<String>,
) -> usize {
    let mut kills = 0;
    let window_end = Instant::now() + scale.fault_window.max(Duration::from_secs(6));
    while Instant::now() < window_end || !feed.is_finished() {
        tokio::time::sleep(Duration::from_millis(rng.random_range(2000..=5000))).await;
        fleet.kill_and_replace(rng, behaviour, scale.seed).await;
        kills += 1;
        structure_check(server, ns, &format!("kill -9 #{kills}"), structure).await;
        if started.elapsed() > scale.fault_window * 4 + Duration::from_secs(60) {
            break;
        }
    }
    kills
}

/// Ends a run with a worker fleet: waits (20 s at most) until every running
/// worker has had a claim answered, so one started late shows it came up,
/// then stops the fleet and appends its histories to `recorded` (the
/// in-process clients' entries).
pub(crate) async fn end_fleet(fleet: Fleet, mut recorded: Vec<Entry>) -> (Vec<Entry>, Ended) {
    fleet.await_first_claims(Duration::from_secs(20)).await;
    let mut ended = fleet.end();
    recorded.append(&mut ended.entries);
    (recorded, ended)
}

/// The checks every fleet run closes with: each worker process had a claim
/// answered (and, when `jobs_each`, got a job), no history was lost or cut
/// off by an exit of its own, every server line was read; the workers'
/// stderr is kept for a failure's report.
pub(crate) fn close_fleet_run(
    outcome: &mut Outcome,
    entries: &[Entry],
    ended: Ended,
    unread: Vec<String>,
    jobs_each: bool,
) {
    Claims::of(entries).require(outcome, &ended.processes, jobs_each);
    outcome.require_none(ended.problems);
    outcome.require_none(unread);
    outcome.worker_stderr = ended.stderr;
}
