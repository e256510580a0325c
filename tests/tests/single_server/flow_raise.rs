//! A raised limit on real Redis, with a Worker runtime: while a key's one
//! slot is taken by a job that does not finish, its other jobs are held;
//! raising the key's concurrency starts them under the running worker (no
//! new enqueue) while the first one still runs: the server's record shows
//! all four leased at once.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use redq::flow::{Limit, LimitScope};
use redq::worker::{JobCx, JobError, Registry, TypedJob};
use redq_tests::wait_until;
use serde::{Deserialize, Serialize};

use super::flow_support::{Bench, Q};

const DEADLINE: Duration = Duration::from_secs(20);

/// Whether the gate job may finish (one test uses these).
static OPEN: AtomicBool = AtomicBool::new(false);
static GATE_RUNNING: AtomicBool = AtomicBool::new(false);
static OTHERS_DONE: AtomicU32 = AtomicU32::new(0);

/// A job of limit key "k"; the `gate` one runs until [`OPEN`] is set.
#[derive(Serialize, Deserialize)]
struct Gated {
    gate: bool,
}

impl TypedJob for Gated {
    const NAME: &'static str = "flow.gated";
    const QUEUE: &'static str = Q;
    fn limit_key(&self) -> Option<String> {
        Some("k".into())
    }
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        if self.gate {
            GATE_RUNNING.store(true, Ordering::SeqCst);
            while !OPEN.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        } else {
            OTHERS_DONE.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_limit_starts_held_jobs_under_a_running_worker() {
    let bench = Bench::new("flow-raise-worker").await;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(1))
        .await;
    bench.queue.push(&Gated { gate: true }).await.expect("push");
    for _ in 0..3 {
        bench
            .queue
            .push(&Gated { gate: false })
            .await
            .expect("push");
    }
    let mut registry = Registry::new();
    registry.add_job::<Gated>();
    let worker = bench.worker_with(registry, 4);
    wait_until(DEADLINE, "the gate job to start", async || {
        GATE_RUNNING.load(Ordering::SeqCst)
    })
    .await;
    wait_until(DEADLINE, "the other three to be held", async || {
        bench.counts().await.held == 3
    })
    .await;
    assert_eq!(
        OTHERS_DONE.load(Ordering::SeqCst),
        0,
        "the key's slot was shared"
    );
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(4))
        .await;
    wait_until(
        DEADLINE,
        "the held jobs to run after the raise",
        async || OTHERS_DONE.load(Ordering::SeqCst) == 3,
    )
    .await;
    OPEN.store(true, Ordering::SeqCst);
    bench.await_drained(DEADLINE).await;
    worker.shutdown().await;
    let report = bench.check().await;
    report.assert_ok();
    // Four leased at once: the three started while the gate job held its slot.
    assert_eq!(report.get("limit_max_leased_key"), 4, "{report}");
    assert_eq!(report.get("server_acks"), 4, "{report}");
}
