//! redis-server SIGKILLed under load (AOF, fsync always) and restarted on
//! the same directory; the same client handles carry on by themselves.

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::harness::{self, recorded_team, structure_check, Claims, QUEUE};
use super::workload::{produce, spawn_workers, specs, Behaviour, Refused};
use super::{Outcome, Scale};
use crate::history::{self, ServerLog};
use crate::{unique_namespace, RedisServer};

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
    let produced = feed.await.expect("producer task");
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let panics = harness::stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let (report, unread) = harness::check(&server, &ns, log, &entries, Some(server.dir())).await;
    let mut outcome = Outcome::new(
        "redis-server kill -9 under load (appendfsync always)",
        started,
        report,
        structure,
    );
    outcome.figure("redis-server kill -9 + restart", kills);
    outcome.figure("total downtime", format!("{downtime:.1?}"));
    outcome.figure("jobs enqueued (acknowledged)", produced.created);
    outcome.figure(
        "enqueue batches without an answer during downtime (jobs)",
        produced.refused(),
    );
    // A kill explains a call left without an answer, nothing else.
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[Refused::NoAnswer]),
        ("redis-server kills", kills),
    );
    Claims::of(&entries).require(&mut outcome, &[1, 2, 3], false);
    outcome.require_none(panics);
    outcome.require_none(unread);
    outcome
}
