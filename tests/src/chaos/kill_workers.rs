//! Worker processes killed with `kill -9` every 2–5 s while others keep
//! working; each killed worker is replaced. Their leases lapse and must be
//! reclaimed, or the queue never drains.

use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::fleet::Fleet;
use super::harness;
use super::workload::{specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

pub async fn kill_workers(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-kill");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let mut rng = StdRng::seed_from_u64(scale.seed);
    let behaviour = Behaviour {
        lease: Duration::from_millis(800),
        work_ms: (1, 4),
        ..Behaviour::default()
    };
    let producer = RecordingQueue::new(
        harness::handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    fleet.spawn_team(&behaviour, 3, scale.seed);
    let mut jobs = specs("kill", 0, scale.jobs, 0, 4);
    // Half the jobs back off when a killed worker's lease lapses (200 ms,
    // doubling to 800 ms): the checker sees each wait out its backoff.
    for job in jobs.iter_mut().step_by(2) {
        job.reclaim_backoff_ms = (200, 800);
    }
    let (produced, kills, structure) = harness::feed_while_killing(
        &producer,
        jobs,
        &mut fleet,
        (&mut rng, &behaviour),
        (&server, &ns),
        (scale, started),
    )
    .await;
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let (entries, ended) = harness::end_fleet(fleet, producer.recorder.entries()).await;
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "worker processes kill -9 every 2-5 s",
        started,
        report,
        structure,
    );
    outcome.figure("jobs enqueued", produced.created);
    outcome.figure("worker processes killed with -9", kills);
    outcome.figure("worker processes run", ended.processes.len());
    outcome.figure("history lines cut short by kill -9", ended.torn);
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
