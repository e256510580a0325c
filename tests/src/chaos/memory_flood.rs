//! An enqueue flood into `maxmemory` with `noeviction` while workers drain.

use std::time::{Duration, Instant};

use super::harness::{self, structure_check, Claims, QUEUE};
use super::workload::{produce, spawn_workers, specs, Behaviour, Refused};
use super::{Outcome, Scale};
use crate::history::{self, Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

/// The recorder id of the one worker.
const WORKER: u32 = 10;

pub async fn memory_flood(scale: Scale) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::builder().maxmemory(1 << 30).start();
    let ns = unique_namespace("chaos-oom");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let timeout = Duration::from_secs(10);
    let mut producers = Vec::new();
    for p in 0..2 {
        producers.push(RecordingQueue::new(
            harness::handle(&url, &ns, timeout).await,
            Recorder::new(p),
        ));
    }
    let worker = RecordingQueue::new(
        harness::handle(&url, &ns, timeout).await,
        Recorder::new(WORKER),
    );
    // The limit is set once the handles have connected: a connect loads
    // the scripts' function libraries (a few MB of Redis memory; all but
    // the variants only a detaching namespace calls, which load at their
    // first call), and headroom measured before it shrank with each
    // script added.
    let info: String = server.cmd(&["INFO", "memory"]).await.convert().unwrap();
    let used: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory");
    // A few MB of headroom; MONITOR's own buffers count against it too, so
    // leave room for them.
    let limit = used + (6 << 20);
    server
        .cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()])
        .await;
    let recorders: Vec<Recorder> = producers
        .iter()
        .chain([&worker])
        .map(|w| w.recorder.clone())
        .collect();
    let behaviour = Behaviour {
        lease: Duration::from_secs(5),
        work_ms: (5, 15),
        abandon: 0.0,
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(vec![worker], QUEUE, behaviour, scale.seed);
    let mut floods = Vec::new();
    for (i, p) in producers.iter().enumerate() {
        let p = p.clone();
        let mut jobs = specs(&format!("oom{i}"), 0, scale.jobs, 0, 0);
        for j in &mut jobs {
            j.pad = 16 * 1024;
        }
        floods.push(tokio::spawn(async move {
            produce(&p, QUEUE, &jobs, 5, Duration::ZERO).await
        }));
    }
    let mut structure = Vec::new();
    let (mut created, mut refused, mut oom, mut unexplained) = (0, 0, 0, Vec::new());
    for f in floods {
        let produced = f.await.expect("producer task");
        created += produced.created;
        refused += produced.refused();
        oom += produced
            .refusals
            .iter()
            .filter(|r| r.kind == Refused::OutOfMemory)
            .count();
        unexplained.extend(produced.unexplained(&[Refused::OutOfMemory]));
    }
    structure_check(&server, &ns, "the enqueue flood", &mut structure).await;
    let drained = harness::drain(&producers[0].queue, Duration::from_secs(90)).await;
    // Once drained, Redis has room again: one more job is accepted and run.
    let after = producers[0]
        .add_batch(QUEUE, &specs("after", 0, 1, 0, 0))
        .await;
    let drained = match drained {
        Ok(()) => harness::drain(&producers[0].queue, Duration::from_secs(30)).await,
        stalled => stalled,
    };
    let panics = harness::stop_workers(stop, tasks).await;
    let entries: Vec<history::Entry> = recorders.iter().flat_map(|r| r.entries()).collect();
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "maxmemory noeviction during an enqueue flood",
        started,
        report,
        structure,
    );
    outcome.figure("jobs created (16 KiB each)", created);
    outcome.figure("jobs refused", refused);
    outcome.figure(
        "enqueue errors: out of memory / other",
        format!("{oom} / {}", unexplained.len()),
    );
    outcome.figure("enqueue works again once drained", after.is_ok());
    // Only the typed out-of-memory refusal is explained by a full Redis.
    harness::require_ran(
        &mut outcome,
        drained,
        created,
        unexplained,
        ("enqueues refused as out of memory", oom),
    );
    if let Err(e) = &after {
        outcome
            .structure
            .push(format!("enqueue after draining failed: {e}"));
    }
    Claims::of(&entries).require(&mut outcome, &[WORKER], true);
    outcome.require_none(panics);
    outcome.require_none(unread);
    outcome
}
