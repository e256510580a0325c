//! A push-back on real Redis: a handler that hits a remote 429 returns
//! `JobError::rate_limited`, and its limit key starts nothing until the
//! push-back ends, while other keys run on; judged from the server's
//! record of every start (the checker's push-back rule), with no timing
//! bound on the test's side.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use redq::flow::{Limit, LimitScope};
use redq::worker::{JobCx, JobError, Registry, TypedJob};
use serde::{Deserialize, Serialize};

use super::flow_support::{Bench, Q};

/// Set once the remote has said "too many requests" (one test uses these).
static TOLD_TO_WAIT: AtomicBool = AtomicBool::new(false);
/// The key of each run, in the order the runs began ("429" for the run
/// that was told to wait).
static RUNS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// A call to a remote API for tenant `key`; the first call anywhere is
/// answered 429 "retry after 2 s".
#[derive(Serialize, Deserialize)]
struct ApiCall {
    key: String,
}

impl TypedJob for ApiCall {
    const NAME: &'static str = "flow.api_call";
    const QUEUE: &'static str = Q;
    fn limit_key(&self) -> Option<String> {
        Some(self.key.clone())
    }
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        let busy = self.key == "busy";
        if busy && !TOLD_TO_WAIT.swap(true, Ordering::SeqCst) {
            RUNS.lock().unwrap().push("429");
            return Err(JobError::rate_limited(Duration::from_secs(2)));
        }
        RUNS.lock()
            .unwrap()
            .push(if busy { "busy" } else { "calm" });
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_handler_pushes_its_key_back_and_no_other() {
    let bench = Bench::new("flow-pushback").await;
    // One busy job at a time, so none was already claimed when its key is
    // told to wait: every busy run after the 429 started after the push-back.
    bench
        .limit(LimitScope::Key("busy".into()), Limit::concurrency(1))
        .await;
    for n in 0..20 {
        let key = if n % 2 == 0 { "busy" } else { "calm" };
        bench
            .queue
            .push(&ApiCall { key: key.into() })
            .await
            .expect("push");
    }
    let mut registry = Registry::new();
    registry.add_job::<ApiCall>();
    let worker = bench.worker_with(registry, 4);
    bench.await_drained(Duration::from_secs(30)).await;
    worker.shutdown().await;
    assert!(
        TOLD_TO_WAIT.load(Ordering::SeqCst),
        "no handler was told to wait"
    );
    let report = bench.check().await;
    // No start of the busy key during its push-back (the checker's rule),
    // and every job ran to completion: the pushed-back one without an
    // attempt counted (the checker's attempts rules).
    report.assert_ok();
    assert_eq!(report.get("limit_push_backs"), 1, "{report}");
    assert_eq!(report.get("server_acks"), 20, "{report}");
    assert_eq!(report.get("server_releases"), 1, "{report}");
    // The calm key was not pushed back: every calm job still to run when
    // the busy key was told to wait ran before the busy key's next run.
    let runs = RUNS.lock().unwrap().clone();
    let told = runs.iter().position(|r| *r == "429").expect("the 429 run");
    let next_busy = told
        + 1
        + runs[told + 1..]
            .iter()
            .position(|r| *r == "busy")
            .expect("busy runs again");
    assert!(
        runs[told..next_busy].contains(&"calm"),
        "no calm job ran during the push-back, so this showed nothing: {runs:?}"
    );
    assert!(
        runs[next_busy..].iter().all(|r| *r == "busy"),
        "a calm job waited out the busy key's push-back: {runs:?}"
    );
}
