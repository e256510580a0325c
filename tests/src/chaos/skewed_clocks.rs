//! Worker processes whose clocks are skewed by ±30 s (libfaketime): no
//! lease is reclaimed early. Every skewed worker must have claimed jobs,
//! or the run says nothing about skewed clocks.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::fleet::{Fleet, FAKETIME_LIB};
use super::harness::{self, structure_check, QUEUE};
use super::workload::{produce, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

/// The clock of each worker process (recorder ids 1..), `None` for true time.
const SKEWS: [Option<&str>; 4] = [Some("+30s"), Some("-30s"), None, Some("+30s")];

/// `None` when libfaketime is not installed.
pub async fn skewed_clocks(scale: Scale, worker_bin: &Path) -> Option<Outcome> {
    if !Path::new(FAKETIME_LIB).exists() {
        return None;
    }
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-skew");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let behaviour = Behaviour {
        lease: Duration::from_millis(500),
        abandon: 0.1,
        work_ms: (1, 5),
        ..Behaviour::default()
    };
    let producer = RecordingQueue::new(
        harness::handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    for (i, skew) in SKEWS.iter().enumerate() {
        fleet.spawn(&behaviour, i as u32 + 1, scale.seed + i as u64, *skew);
    }
    // Prove the skew is real: the same program under faketime sees another clock.
    let skew_seen = probe_skew("+30s");
    let produced = produce(
        &producer,
        QUEUE,
        &specs("skew", 0, scale.jobs, 0, 0),
        20,
        Duration::from_millis(10),
    )
    .await;
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let mut structure = Vec::new();
    structure_check(
        &server,
        &ns,
        "skewed workers drained the queue",
        &mut structure,
    )
    .await;
    let mut ended = fleet.end();
    let mut entries = producer.recorder.entries();
    entries.append(&mut ended.entries);
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new("worker clocks skewed by ±30 s", started, report, structure);
    outcome.figure("worker clocks", "+30 s, -30 s, true, +30 s");
    outcome.figure("skew measured under faketime", format!("{skew_seen:+} s"));
    outcome.figure("jobs enqueued", produced.created);
    let skewed = SKEWS.iter().filter(|s| s.is_some()).count();
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("worker processes with a skewed clock", skewed),
    );
    outcome.require((25..=35).contains(&skew_seen), || {
        format!("faketime did not skew the clock (measured {skew_seen} s)")
    });
    harness::close_fleet_run(&mut outcome, &entries, ended, unread, true);
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
