//! Flow control under `kill -9`: worker processes claim from a queue with a
//! queue-wide concurrency, an each-key concurrency over 20 limit keys (one
//! of them hot) and a queue-wide rate, and are killed every 2–5 s. A killed
//! worker's slots must free when its leases lapse and are reclaimed, or the
//! queue never drains; the checker's flow-control rules
//! ([`crate::history::limits`]) must hold on the server's record.

use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;
use redq::flow::{Limit, LimitScope};

use super::fleet::Fleet;
use super::harness::{self, QUEUE};
use super::workload::Behaviour;
use super::{Outcome, Scale};
use crate::history::{JobSpec, Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

/// At most this many jobs of the queue leased at once.
pub const QUEUE_CONCURRENCY: u32 = 6;
/// At most this many jobs of each limit key leased at once.
pub const KEY_CONCURRENCY: u32 = 2;
/// At most this many starts of the queue in any window of [`RATE_PER`]:
/// below what six leases start unhindered (90 to 100 a second here, on
/// Redis and Valkey alike), so the rate binds and is tested on every run.
pub const RATE_MAX: u32 = 60;
pub const RATE_PER: Duration = Duration::from_secs(1);
/// Limit keys the jobs are spread over.
pub const KEYS: usize = 20;

/// Job `n` of the workload: a quarter on the hot key "k0", one in ten with
/// no limit key (limited by the queue alone), the rest over the 20 keys.
fn spec(n: usize) -> JobSpec {
    let limit_key = match n {
        n if n % 10 == 9 => String::new(),
        n if n % 4 == 0 => "k0".to_owned(),
        n => format!("k{}", n % KEYS),
    };
    JobSpec {
        tag: format!("limits-{n}"),
        max_attempts: 6,
        pad: 16,
        limit_key,
        ..JobSpec::default()
    }
}

pub async fn limits(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-limits");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let mut rng = StdRng::seed_from_u64(scale.seed);
    let producer = RecordingQueue::new(
        harness::handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let queue_limit = Limit::concurrency(QUEUE_CONCURRENCY).and_rate(RATE_MAX, RATE_PER);
    for (scope, limit) in [
        (LimitScope::Queue, queue_limit),
        (LimitScope::EachKey, Limit::concurrency(KEY_CONCURRENCY)),
    ] {
        producer
            .queue
            .set_limit(QUEUE, scope, limit)
            .await
            .unwrap_or_else(|e| panic!("setting the limits failed: {e}"));
    }
    let behaviour = Behaviour {
        lease: Duration::from_millis(800),
        work_ms: (1, 6),
        nack: 0.02,
        dead: 0.0,
        release: 0.02,
        abandon: 0.01,
        ..Behaviour::default()
    };
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    fleet.spawn_team(&behaviour, 3, scale.seed);
    let jobs: Vec<JobSpec> = (0..scale.jobs).map(spec).collect();
    let (produced, kills, structure) = harness::feed_while_killing(
        &producer,
        jobs,
        &mut fleet,
        (&mut rng, &behaviour),
        (&server, &ns),
        (scale, started),
    )
    .await;
    // At RATE_MAX starts a second the queue needs jobs/RATE_MAX s at the least.
    let least = Duration::from_millis(scale.jobs as u64 * 1000 / RATE_MAX as u64);
    let drained = harness::drain(&producer.queue, least * 2 + Duration::from_secs(60)).await;
    let (entries, ended) = harness::end_fleet(fleet, producer.recorder.entries()).await;
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "flow control (queue and per-key concurrency, a rate) under kill -9 of workers",
        started,
        report,
        structure,
    );
    let r = &outcome.report;
    let figures = [
        (
            "max leased of the queue seen / its concurrency",
            format!("{} / {QUEUE_CONCURRENCY}", r.get("limit_max_leased_queue")),
        ),
        (
            "max leased of one key seen / the each-key concurrency",
            format!("{} / {KEY_CONCURRENCY}", r.get("limit_max_leased_key")),
        ),
        (
            "max starts in one window / the rate",
            format!(
                "{} / {RATE_MAX} per {RATE_PER:?}",
                r.get("limit_max_starts_in_window_queue")
            ),
        ),
        (
            "jobs held back by their key",
            r.get("limit_holds").to_string(),
        ),
        ("server reclaims", r.get("server_reclaims").to_string()),
    ];
    for (name, value) in figures {
        outcome.figure(name, value);
    }
    outcome.figure("jobs enqueued", produced.created);
    outcome.figure("worker processes killed with -9", kills);
    outcome.figure("worker processes run", ended.processes.len());
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("worker processes killed", kills),
    );
    // The limits must have been reached, or they tested nothing.
    let reached = [
        (
            "the queue's concurrency",
            "limit_max_leased_queue",
            QUEUE_CONCURRENCY,
        ),
        (
            "a key's concurrency",
            "limit_max_leased_key",
            KEY_CONCURRENCY,
        ),
        ("the rate", "limit_max_starts_in_window_queue", RATE_MAX),
    ];
    for (what, figure, limit) in reached {
        let seen = outcome.report.get(figure);
        outcome.require(seen == limit as u64, || {
            format!("{what} was never reached ({seen} of {limit}), so it was not tested")
        });
    }
    harness::close_fleet_run(&mut outcome, &entries, ended, unread, false);
    outcome
}
