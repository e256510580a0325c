//! `DEBUG SLEEP` and `CLIENT PAUSE WRITE`, each longer than the lease, under load.

use std::time::{Duration, Instant};

use super::harness::{self, recorded_team, structure_check, Claims, QUEUE};
use super::workload::{produce, spawn_workers, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{self, ServerLog};
use crate::{unique_namespace, RedisServer};

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
    let mut freezes = 0;
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
                .unwrap_or_else(|e| panic!("{what} failed: {e}"));
        freezes += 1;
        tokio::time::sleep(Duration::from_millis(1600)).await;
        structure_check(&server, &ns, what, &mut structure).await;
    }
    let produced = feed.await.expect("producer task");
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let panics = harness::stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "DEBUG SLEEP and CLIENT PAUSE WRITE past the lease",
        started,
        report,
        structure,
    );
    outcome.figure(
        "freezes (DEBUG SLEEP 1.5 s / CLIENT PAUSE 1.5 s WRITE, lease 0.7 s)",
        freezes,
    );
    outcome.figure("jobs enqueued", produced.created);
    // The command timeout (10 s) outlasts every freeze: no refusal is explained.
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("freezes", freezes),
    );
    Claims::of(&entries).require(&mut outcome, &[1, 2, 3], false);
    outcome.require_none(panics);
    outcome.require_none(unread);
    outcome
}
