//! Many workers on one queue: every job is completed exactly once, and no
//! job is ever held under two live leases.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use redq::{Acked, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::unique_namespace;
use serde_json::json;

const JOBS: usize = 4000;
const WORKERS: usize = 10;
const LEASE: Duration = Duration::from_secs(30);

/// What the test knows about leases, shared by every worker.
#[derive(Default)]
struct Ledger {
    /// job id -> (lease id, lease expiry, worker) for leases believed live.
    live: HashMap<String, (u64, SystemTime, usize)>,
    /// job id -> how many times it was acked with `Completed`.
    completed: HashMap<String, u32>,
    /// Leases that were taken and never resolved (a "crashed" worker).
    abandoned: Vec<redq::Lease>,
    nacks: u64,
    violations: Vec<String>,
}

impl Ledger {
    fn claimed(&mut self, worker: usize, job: &redq::Job) {
        let now = SystemTime::now();
        if let Some((lease, expiry, holder)) = self.live.get(&job.id) {
            // A job may only be handed out again once its lease has lapsed.
            if *expiry > now + Duration::from_millis(5) {
                self.violations.push(format!(
                    "job {} claimed by worker {worker} (lease {}) while worker {holder} \
                     held live lease {lease}",
                    job.id, job.lease_id
                ));
            }
        }
        self.live
            .insert(job.id.clone(), (job.lease_id, job.lease_expires_at, worker));
    }

    /// Called before the ack/nack is sent, so another worker may claim the
    /// job as soon as Redis has applied it.
    fn resolving(&mut self, job: &redq::Job) {
        match self.live.remove(&job.id) {
            Some((lease, ..)) if lease == job.lease_id => {}
            other => self.violations.push(format!(
                "job {} resolved under lease {} but the ledger had {other:?}",
                job.id, job.lease_id
            )),
        }
    }
}

async fn worker(
    index: usize,
    queue: RedisQueue,
    ledger: Arc<Mutex<Ledger>>,
    finished: Arc<AtomicUsize>,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while finished.load(Ordering::SeqCst) < JOBS {
        assert!(Instant::now() < deadline, "worker {index} ran out of time");
        let jobs = queue.claim("work", 25, LEASE).await.unwrap();
        if jobs.is_empty() {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        for job in &jobs {
            ledger.lock().unwrap().claimed(index, job);
        }
        for job in jobs {
            let n = job.payload["n"].as_u64().unwrap();
            ledger.lock().unwrap().resolving(&job);
            if n % 7 == 0 && job.attempts == 0 {
                // Fail every seventh job once: it comes back, maybe elsewhere.
                ledger.lock().unwrap().nacks += 1;
                queue
                    .nack(&job.lease(), Duration::ZERO, "transient")
                    .await
                    .unwrap();
                continue;
            }
            assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
            *ledger
                .lock()
                .unwrap()
                .completed
                .entry(job.id.clone())
                .or_default() += 1;
            finished.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_claimers_complete_every_job_exactly_once_without_double_leases() {
    let server = server();
    let ns = unique_namespace("concurrency");
    let producer = handle(&server, &ns).await;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let finished = Arc::new(AtomicUsize::new(0));

    // A worker that takes a few jobs under a short lease and dies: its jobs
    // must be reclaimed by the others.
    producer
        .add_batch("work", numbered_from(0, 20))
        .await
        .unwrap();
    let crashed = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .connect()
        .await
        .unwrap();
    let lost = crashed
        .claim("work", 5, Duration::from_millis(300))
        .await
        .unwrap();
    assert_eq!(lost.len(), 5);
    {
        let mut ledger = ledger.lock().unwrap();
        for job in &lost {
            ledger.claimed(usize::MAX, job);
            ledger.abandoned.push(job.lease());
        }
    }

    let mut handles = Vec::new();
    let mut identities = Vec::new();
    for index in 0..WORKERS {
        let queue = handle(&server, &ns).await;
        identities.push(queue.identity());
        handles.push(tokio::spawn(worker(
            index,
            queue,
            ledger.clone(),
            finished.clone(),
        )));
    }
    identities.sort_by_key(|i| (i.node, i.instance));
    identities.dedup();
    assert_eq!(identities.len(), WORKERS, "identities are distinct");

    // Keep producing while the workers run.
    let mut next = 20;
    while next < JOBS {
        let size = (JOBS - next).min(250);
        producer
            .add_batch("work", numbered_from(next, size))
            .await
            .unwrap();
        next += size;
    }
    for handle in handles {
        handle.await.unwrap();
    }

    let ledger = std::mem::take(&mut *ledger.lock().unwrap());
    assert!(ledger.violations.is_empty(), "{:#?}", ledger.violations);
    assert_eq!(ledger.completed.len(), JOBS);
    assert!(ledger.completed.values().all(|&n| n == 1));
    assert!(
        ledger.live.is_empty(),
        "unresolved: {:?}",
        ledger.live.len()
    );

    let counts = producer.counts("work").await.unwrap();
    assert_eq!(
        (counts.waiting, counts.scheduled, counts.leased, counts.dead),
        (0, 0, 0, 0)
    );
    assert_eq!(hlen(&server, &producer, "jobs").await, 0);
    assert_eq!(stored_payloads(&server, &producer).await, 0);
    let stats = producer.stats("work").await.unwrap();
    let processed: u64 = stats.iter().map(|b| b.processed).sum();
    let failed: u64 = stats.iter().map(|b| b.failed).sum();
    assert_eq!(processed, JOBS as u64);
    // Every nack, plus one reclaim per abandoned lease.
    assert!(ledger.nacks >= (JOBS / 7) as u64 - 1);
    assert_eq!(failed, ledger.nacks + 5, "failed attempts");

    // The crashed worker's leases are all lost now.
    for lease in &ledger.abandoned {
        let ack = crashed.ack(lease).await.unwrap();
        assert_eq!(ack, Acked::AlreadyGone, "its job was completed by another");
        assert_lease_lost(crashed.nack(lease, Duration::ZERO, "late").await, &lease.id);
    }
}

fn numbered_from(start: usize, n: usize) -> Vec<NewJob> {
    (start..start + n)
        .map(|i| NewJob::new(json!({ "n": i })))
        .collect()
}
