//! Ordering keys under random failures (nacks, lapses, releases) with
//! several workers: never two leased jobs of one key, and each key's jobs
//! complete in enqueue order. A stuck key never drains, and fails the run.

use std::time::{Duration, Instant};

use super::harness::{self, recorded_team, structure_check, Claims, QUEUE};
use super::workload::{produce, spawn_workers, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{self, Call, ServerLog};
use crate::{unique_namespace, RedisServer};

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
    let produced = produce(
        &producer,
        QUEUE,
        &specs("ord", 0, n, keys, 0),
        20,
        Duration::from_millis(5),
    )
    .await;
    let mut structure = Vec::new();
    structure_check(&server, &ns, "enqueueing keyed jobs", &mut structure).await;
    let drained = harness::drain(&producer.queue, Duration::from_secs(120)).await;
    let panics = harness::stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    // The faults are the workers' own: nacks and releases, plus abandoned
    // leases (visible as the server's reclaims in the report).
    let failures = entries
        .iter()
        .filter(|e| matches!(e.call, Call::Nack { .. } | Call::Release { .. }))
        .count();
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let reclaims = report.get("server_reclaims") as usize;
    let mut outcome = Outcome::new(
        "per-key ordering under random failures",
        started,
        report,
        structure,
    );
    outcome.figure("ordering keys", keys);
    outcome.figure("keyed jobs", produced.created);
    outcome.figure("nacks and releases", failures);
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("nacks, releases and reclaimed leases", failures + reclaims),
    );
    Claims::of(&entries).require(&mut outcome, &[1, 2, 3, 4], true);
    outcome.require_none(panics);
    outcome.require_none(unread);
    outcome
}
