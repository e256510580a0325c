//! Many concurrent claimers over one queue: each job claimed exactly once.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use redq::RedisQueue;

use super::harness::{self, Claims, QUEUE};
use super::workload::{produce, spawn_workers, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{self, Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

pub async fn many_claimers(scale: Scale, claimers: usize, jobs: usize) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-claimers");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let producer = RecordingQueue::new(
        harness::handle(&url, &ns, Duration::from_secs(30)).await,
        Recorder::new(0),
    );
    let produced = produce(
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
            .unwrap_or_else(|e| panic!("claimer {p} could not connect: {e}"));
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
    let drained = harness::drain(&producer.queue, Duration::from_secs(120)).await;
    let claim_time = claiming.elapsed();
    let panics = harness::stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let mut claims_per_job: HashMap<String, u32> = HashMap::new();
    for e in &entries {
        if let Some(history::Reply::Claimed { jobs }) = &e.reply {
            for j in jobs {
                *claims_per_job.entry(j.id.clone()).or_default() += 1;
            }
        }
    }
    let claimed_once = claims_per_job.values().filter(|n| **n == 1).count();
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new("concurrent claimers", started, report, Vec::new());
    outcome.figure("claimers", claimers);
    outcome.figure("jobs", jobs);
    outcome.figure("jobs claimed exactly once", claimed_once);
    outcome.figure(
        "claim+ack throughput (jobs/s, MONITOR on)",
        format!("{:.0}", jobs as f64 / claim_time.as_secs_f64()),
    );
    if claimed_once != jobs || claims_per_job.len() != jobs {
        outcome.structure.push(format!(
            "{claimed_once} of {jobs} jobs claimed exactly once ({} claimed at all)",
            claims_per_job.len()
        ));
    }
    // The fault here is contention: claimers racing for the same jobs.
    let claimer_ids: Vec<u32> = (1..=claimers as u32).collect();
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("claimers racing", claimers),
    );
    Claims::of(&entries).require(&mut outcome, &claimer_ids, false);
    outcome.require_none(panics);
    outcome.require_none(unread);
    outcome
}
