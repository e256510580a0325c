//! The way back from the compact and detached record formats under
//! faults: a producer that connected while the namespace stored compact
//! and detached records goes on writing them (as a producer does until it
//! reconnects), an operator who has set the format back to standard runs
//! `rewrite_records` pass after pass, and worker processes claim, fail,
//! retry and dead-letter the same jobs while they are killed with
//! `kill -9` every 2–5 s. Every rewrite must change nothing of a job but
//! its stored layout and never touch a running job's record: the checker
//! reads the rewrites from the server record (`Kind::Rewritten`) with
//! every other write.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;
use redq::RecordFormat;

use super::fleet::Fleet;
use super::harness;
use super::workload::{specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

/// The producer's format: the jobs padded past this size detach, the
/// others are stored compact.
const FORMAT: RecordFormat = RecordFormat::CompactDetached { min_bytes: 100 };

/// A whole rewrite, from its first walk step to its last, again and again
/// until `stop`; the passes made and the records rewritten.
async fn rewrite_until(operator: redq::RedisQueue, stop: Arc<AtomicBool>) -> (usize, u64) {
    let (mut passes, mut rewritten) = (0, 0);
    while !stop.load(Ordering::SeqCst) {
        let done = operator
            .rewrite_records()
            .await
            .unwrap_or_else(|e| panic!("a rewrite failed: {e}"));
        rewritten += done.compact + done.detached;
        passes += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (passes, rewritten)
}

pub async fn record_rewrite(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-rewrite");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let mut rng = StdRng::seed_from_u64(scale.seed);
    // Failures retry after a delay or die, so scheduled and dead records
    // are rewritten too, not only waiting ones.
    let behaviour = Behaviour {
        lease: Duration::from_millis(800),
        work_ms: (1, 4),
        nack: 0.2,
        retry_delay: Duration::from_millis(500),
        ..Behaviour::default()
    };
    let producer = RecordingQueue::new(
        harness::handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    producer
        .queue
        .set_record_format(FORMAT)
        .await
        .expect("setting the producer's format");
    // The operator's handle sets the format back: the producer keeps the
    // one it connected with.
    let operator = harness::handle(&url, &ns, Duration::from_secs(5)).await;
    operator
        .set_record_format(RecordFormat::Standard)
        .await
        .expect("setting the standard format");
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    fleet.spawn_team(&behaviour, 3, scale.seed);
    let mut jobs = specs("rewrite", 0, scale.jobs, 0, 3);
    for job in jobs.iter_mut().step_by(2) {
        job.pad = 200;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let rewrites = tokio::spawn(rewrite_until(operator, stop.clone()));
    let (produced, kills, structure) = harness::feed_while_killing(
        &producer,
        jobs,
        &mut fleet,
        (&mut rng, &behaviour),
        (&server, &ns),
        (scale, started),
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    let (passes, rewritten) = rewrites.await.expect("the rewrite task");
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let (entries, ended) = harness::end_fleet(fleet, producer.recorder.entries()).await;
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "records rewritten to the standard layout while workers are killed with -9",
        started,
        report,
        structure,
    );
    outcome.figure("jobs enqueued", produced.created);
    outcome.figure("rewrite passes", passes);
    outcome.figure("records rewritten", rewritten);
    outcome.figure("worker processes killed with -9", kills);
    outcome.figure("worker processes run", ended.processes.len());
    outcome.figure("history lines cut short by kill -9", ended.torn);
    outcome.require(rewritten > 0, || {
        "no record was rewritten: the rewrites met no compact or detached record".into()
    });
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("worker processes killed", kills),
    );
    harness::close_fleet_run(&mut outcome, &entries, ended, unread, false);
    outcome
}
