//! The Worker runtime over a `MemoryQueue` (no redis-server): typed jobs
//! run and are acknowledged, an idle worker is woken in process, failures
//! retry after their backoff and are dead-lettered when their attempts are
//! spent, leases are kept alive, ordering keys hold, and shutdown is
//! graceful.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::worker::{
    JobCx, JobError, JobQueue, Mode, Pushed, Registry, Services, TypedJob, UnknownNames,
    WorkOptions, Worker,
};
use redq::{MemoryQueue, Queue};
use redq_tests::running::RunningWorker;
use redq_tests::wait_until;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

const DEADLINE: Duration = Duration::from_secs(10);
const BACKOFF: Duration = Duration::from_millis(100);

/// Each job's attempts as they started: (attempt number, when).
#[derive(Default)]
struct Runs(Mutex<HashMap<String, Vec<(u32, Instant)>>>);

impl Runs {
    fn record(cx: &JobCx) {
        let runs = cx.service::<Arc<Runs>>().expect("runs service");
        runs.0
            .lock()
            .unwrap()
            .entry(cx.id().to_owned())
            .or_default()
            .push((cx.attempt(), Instant::now()));
    }
    fn of(&self, id: &str) -> Vec<(u32, Instant)> {
        self.0.lock().unwrap().get(id).cloned().unwrap_or_default()
    }
    fn jobs(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// Succeeds after `ms` milliseconds; `key` is its ordering key.
#[derive(Serialize, Deserialize)]
struct Work {
    ms: u64,
    key: Option<String>,
}
impl TypedJob for Work {
    const NAME: &'static str = "m.work";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        tokio::time::sleep(Duration::from_millis(self.ms)).await;
        Ok(())
    }
    fn ordering_key(&self) -> Option<String> {
        self.key.clone()
    }
}

/// Always asks for a retry: three attempts, a short fixed backoff.
#[derive(Serialize, Deserialize)]
struct Flaky;
impl TypedJob for Flaky {
    const NAME: &'static str = "m.flaky";
    const MAX_ATTEMPTS: u32 = 3;
    fn backoff(_attempt: u32) -> Duration {
        BACKOFF
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        Err(JobError::retry("not yet"))
    }
}

/// Gives up at once.
#[derive(Serialize, Deserialize)]
struct Hopeless;
impl TypedJob for Hopeless {
    const NAME: &'static str = "m.hopeless";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        Err(JobError::fail("cannot ever work"))
    }
}

/// Finishes when told the worker is shutting down.
#[derive(Serialize, Deserialize)]
struct Polite;
impl TypedJob for Polite {
    const NAME: &'static str = "m.polite";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        cx.cancelled().await;
        Ok(())
    }
}

/// Ignores shutdown; only the end of the grace period stops it.
#[derive(Serialize, Deserialize)]
struct Stubborn;
impl TypedJob for Stubborn {
    const NAME: &'static str = "m.stubborn";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    }
}

/// Registered nowhere.
#[derive(Serialize, Deserialize)]
struct Stranger;
impl TypedJob for Stranger {
    const NAME: &'static str = "m.stranger";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add_job::<Work>();
    registry.add_job::<Flaky>();
    registry.add_job::<Hopeless>();
    registry.add_job::<Polite>();
    registry.add_job::<Stubborn>();
    registry
}

/// An hour of max idle: an idle worker starts new work only because the
/// queue woke it.
fn options() -> WorkOptions {
    WorkOptions::new()
        .queues(["default"])
        .max_idle(Duration::from_secs(3600))
}

fn worker(queue: &MemoryQueue, runs: &Arc<Runs>, options: WorkOptions) -> Worker {
    Worker::new(queue.clone(), registry(), options)
        .expect("options")
        .services(Services::new().with(runs.clone()))
}

async fn wait_dead(queue: &MemoryQueue, id: &str) -> String {
    wait_until(DEADLINE, "the job to be dead-lettered", async || {
        queue
            .dead_letters("default")
            .iter()
            .any(|(dead, _)| dead == id)
    })
    .await;
    let dead = queue.dead_letters("default");
    let (_, error) = dead.iter().find(|(dead, _)| dead == id).unwrap();
    error.clone()
}

#[tokio::test]
async fn typed_jobs_run_and_are_acknowledged_and_an_idle_worker_is_woken_by_a_push() {
    let queue = MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    let jobs = JobQueue::new(queue.clone());
    assert_eq!(jobs.mode(), Mode::Queued);
    let first = jobs.push(&Work { ms: 1, key: None }).await.unwrap();
    assert!(matches!(first, Pushed::Queued { .. }));

    let running = RunningWorker::spawn(worker(&queue, &runs, options()));
    wait_until(DEADLINE, "the queued job to run", async || {
        queue.is_empty("default")
    })
    .await;
    // The worker is idle for an hour unless the push wakes it.
    for _ in 0..20 {
        queue.push(&Work { ms: 1, key: None }).await.unwrap();
    }
    wait_until(DEADLINE, "the pushed jobs to run", async || {
        queue.is_empty("default")
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (21, 0));
    assert_eq!(runs.jobs(), 21);
    assert_eq!(runs.of(first.id())[0].0, 1, "first attempt");
}

#[tokio::test]
async fn a_failing_job_retries_after_its_backoff_and_is_dead_lettered_when_its_attempts_are_spent()
{
    let queue = MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    let worker = worker(&queue, &runs, options());
    let mut failures = worker.failures();
    let running = RunningWorker::spawn(worker);
    let id = queue.push(&Flaky).await.unwrap().id().to_owned();

    assert_eq!(wait_dead(&queue, &id).await, "not yet");
    let attempts = runs.of(&id);
    let numbers: Vec<u32> = attempts.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3]);
    for pair in attempts.windows(2) {
        let waited = pair[1].1 - pair[0].1;
        assert!(waited >= BACKOFF, "a retry waits its backoff: {waited:?}");
    }
    let event = tokio::time::timeout(DEADLINE, failures.recv())
        .await
        .expect("a dead-letter event")
        .unwrap();
    assert_eq!((event.id.as_str(), event.attempts), (id.as_str(), 3));
    assert_eq!(event.name.as_deref(), Some("m.flaky"));
    assert!(queue.is_empty("default"));
    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (0, 3));
}

#[tokio::test]
async fn a_job_that_fails_for_good_or_has_no_handler_is_dead_lettered_at_once() {
    let queue = MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    let options = options().unknown_names(UnknownNames::DeadLetter);
    let running = RunningWorker::spawn(worker(&queue, &runs, options));
    let hopeless = queue.push(&Hopeless).await.unwrap().id().to_owned();
    let stranger = queue.push(&Stranger).await.unwrap().id().to_owned();

    assert_eq!(wait_dead(&queue, &hopeless).await, "cannot ever work");
    assert_eq!(runs.of(&hopeless).len(), 1, "not retried");
    let why = wait_dead(&queue, &stranger).await;
    assert!(why.contains("m.stranger"), "{why}");
    let report = running.shutdown().await;
    assert_eq!(report.failed, 2);
}

#[tokio::test]
async fn a_job_longer_than_its_lease_keeps_it_and_runs_once() {
    let queue = MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    let running = RunningWorker::spawn(worker(
        &queue,
        &runs,
        options().lease(Duration::from_millis(90)),
    ));
    let id = queue
        .push(&Work { ms: 400, key: None })
        .await
        .unwrap()
        .id()
        .to_owned();
    wait_until(DEADLINE, "the job to complete", async || {
        queue.is_empty("default")
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (1, 0));
    assert_eq!(runs.of(&id).len(), 1, "never reclaimed while running");
}

#[tokio::test]
async fn jobs_sharing_an_ordering_key_run_one_after_another_in_push_order() {
    let queue = MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    let running = RunningWorker::spawn(worker(&queue, &runs, options().concurrency(4)));
    let mut ids = Vec::new();
    for _ in 0..4 {
        let key = Some("account-7".to_owned());
        ids.push(
            queue
                .push(&Work { ms: 20, key })
                .await
                .unwrap()
                .id()
                .to_owned(),
        );
    }
    // Each completion hands the key on; the worker hears of it in process.
    wait_until(DEADLINE, "every job to run", async || {
        queue.is_empty("default")
    })
    .await;
    running.shutdown().await;
    let starts: Vec<Instant> = ids.iter().map(|id| runs.of(id)[0].1).collect();
    for pair in starts.windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_millis(20),
            "one at a time, in order: {starts:?}"
        );
    }
}

#[tokio::test]
async fn shutdown_lets_jobs_finish_within_the_grace_period_and_releases_the_rest() {
    let queue = MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    let polite = queue.push(&Polite).await.unwrap().id().to_owned();
    let stubborn = queue.push(&Stubborn).await.unwrap().id().to_owned();
    let running = RunningWorker::spawn(worker(
        &queue,
        &runs,
        options().concurrency(2).grace(Duration::from_millis(200)),
    ));
    wait_until(DEADLINE, "both jobs to be running", async || {
        runs.jobs() == 2
    })
    .await;

    let report = running.shutdown().await;
    assert_eq!(report.processed, 1, "the polite job finished");
    assert_eq!(report.failed, 0, "an interrupted job is no failure");
    assert_eq!(queue.counts("default").waiting, 1, "the other was released");
    let again = queue
        .claim("default", 10, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (stubborn.as_str(), 0)
    );
    assert_eq!(again[0].name.as_deref(), Some("m.stubborn"));
    assert_ne!(polite, stubborn);
}
