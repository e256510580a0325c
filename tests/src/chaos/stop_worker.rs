//! A worker process stopped with SIGSTOP past its lease, then resumed: its
//! late acks are refused (`LeaseLost`) and change nothing.
//!
//! Each round: the slow worker claims a batch; it is stopped; a second
//! worker, which holds each job for 2 s, reclaims the lapsed leases and
//! takes the oldest (the one the stopped worker was running); the stopped
//! worker resumes while that job is held elsewhere, and its acks (for that
//! job and for the rest of its batch, back in the queue) must be refused.

use std::path::Path;
use std::time::{Duration, Instant};

use super::fleet::Fleet;
use super::harness::{self, structure_check, QUEUE};
use super::workload::{produce, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{self, Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

/// The recorder id of the worker that is stopped and resumed.
const STOPPED: u32 = 1;

pub async fn stop_worker(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-stop");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
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
        harness::handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    fleet.spawn(&slow, STOPPED, scale.seed, None);
    let mut structure = Vec::new();
    let rounds = if scale.jobs >= 5000 { 6 } else { 2 };
    let mut created = 0;
    let mut unexplained = Vec::new();
    let mut stops = 0;
    for round in 0..rounds {
        let produced = produce(
            &producer,
            QUEUE,
            &specs(&format!("stop{round}"), 0, 30, 0, 0),
            30,
            Duration::ZERO,
        )
        .await;
        created += produced.created;
        unexplained.extend(produced.unexplained(&[]));
        let until = Instant::now() + Duration::from_secs(10);
        while producer.queue.counts(QUEUE).await.map_or(0, |c| c.leased) == 0
            && Instant::now() < until
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        fleet.signal(STOPPED, "-STOP");
        stops += 1;
        // Past the lease first, so the second worker's first claim
        // reclaims the stopped worker's jobs.
        tokio::time::sleep(lease * 2).await;
        let other = 10 + round as u32;
        fleet.spawn(&holder, other, scale.seed + other as u64, None);
        // Resume only once the second worker took over (its start-up may
        // take longer than the lease on a busy machine).
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until
            && !fleet.history_so_far(other).iter().any(
                |e| matches!(&e.reply, Some(history::Reply::Claimed { jobs }) if !jobs.is_empty()),
            )
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        structure_check(&server, &ns, "SIGSTOP past the lease", &mut structure).await;
        fleet.signal(STOPPED, "-CONT");
        tokio::time::sleep(Duration::from_millis(800)).await;
        structure_check(&server, &ns, "SIGCONT", &mut structure).await;
        fleet.kill(other);
    }
    let drained = harness::drain(&producer.queue, Duration::from_secs(30)).await;
    let mut ended = fleet.end();
    let late_refused = ended
        .entries
        .iter()
        .filter(|e| e.process == STOPPED && matches!(e.reply, Some(history::Reply::LeaseLost)))
        .count();
    let mut entries = producer.recorder.entries();
    entries.append(&mut ended.entries);
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "worker SIGSTOP past its lease, then SIGCONT",
        started,
        report,
        structure,
    );
    outcome.figure("SIGSTOP/SIGCONT rounds (stopped for over 2 leases)", stops);
    outcome.figure(
        "late calls of the stopped worker refused (LeaseLost)",
        late_refused,
    );
    harness::require_ran(
        &mut outcome,
        drained,
        created,
        unexplained,
        ("SIGSTOP rounds", stops),
    );
    if late_refused < rounds {
        outcome.structure.push(format!(
            "only {late_refused} late calls of the stopped worker were refused in {rounds} rounds"
        ));
    }
    harness::close_fleet_run(&mut outcome, &entries, ended, unread, true);
    outcome
}
