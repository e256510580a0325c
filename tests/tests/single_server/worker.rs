//! The Worker runtime against a real redis-server: typed jobs run, fail,
//! retry, time out, panic, heartbeat, shut down and dead-letter as documented.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use redq::worker::{
    CancellationToken, JobCx, JobError, JobQueue, Pushed, Registry, Services, TypedJob,
    UnknownNames, WorkOptions, Worker, WorkerReport,
};
use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::handle;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

const DEADLINE: Duration = Duration::from_secs(10);

/// What jobs report back to the test.
#[derive(Default)]
struct Tracker {
    runs: AtomicU32,
    running: AtomicU32,
    max_running: AtomicU32,
    attempts: Mutex<Vec<u32>>,
    cancelled: AtomicU32,
    completed: AtomicU32,
}

impl Tracker {
    fn enter(&self, cx: &JobCx) {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.attempts.lock().unwrap().push(cx.attempt());
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
    }
    fn leave(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }
}

fn tracker(cx: &JobCx) -> &Arc<Tracker> {
    cx.service::<Arc<Tracker>>().expect("tracker service")
}

#[derive(Serialize, Deserialize)]
struct Quick {
    n: u32,
}
impl TypedJob for Quick {
    const NAME: &'static str = "t.quick";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let t = tracker(cx);
        t.enter(cx);
        tokio::time::sleep(Duration::from_millis(self.n as u64)).await;
        t.leave();
        t.completed.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct Slow;
impl TypedJob for Slow {
    const NAME: &'static str = "t.slow";
    const TIMEOUT: Duration = Duration::from_millis(150);
    const MAX_ATTEMPTS: u32 = 1;
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        tracker(cx).enter(cx);
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct Panicky;
impl TypedJob for Panicky {
    const NAME: &'static str = "t.panicky";
    const MAX_ATTEMPTS: u32 = 1;
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        panic!("boom at the disco");
    }
}

#[derive(Serialize, Deserialize)]
struct AlwaysFails;
impl TypedJob for AlwaysFails {
    const NAME: &'static str = "t.always_fails";
    const MAX_ATTEMPTS: u32 = 3;
    fn backoff(_attempt: u32) -> Duration {
        Duration::ZERO
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        tracker(cx).enter(cx);
        tracker(cx).leave();
        Err(std::io::Error::other("disk on fire"))?
    }
}

#[derive(Serialize, Deserialize)]
struct Windowed;
impl TypedJob for Windowed {
    const NAME: &'static str = "t.windowed";
    const MAX_ATTEMPTS: u32 = 0;
    const RETRY_WINDOW: Option<Duration> = Some(Duration::from_millis(400));
    fn backoff(_attempt: u32) -> Duration {
        Duration::from_millis(50)
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        tracker(cx).enter(cx);
        tracker(cx).leave();
        Err(JobError::retry("still broken"))
    }
}

#[derive(Serialize, Deserialize)]
struct FailsNow;
impl TypedJob for FailsNow {
    const NAME: &'static str = "t.fails_now";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Err(JobError::fail("invoice is void"))
    }
}

#[derive(Serialize, Deserialize)]
struct RetryLater;
impl TypedJob for RetryLater {
    const NAME: &'static str = "t.retry_later";
    fn backoff(_attempt: u32) -> Duration {
        Duration::from_secs(20)
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        tracker(cx).enter(cx);
        tracker(cx).leave();
        Err(JobError::retry("rate limited"))
    }
}

/// Sleeps `ms` unless cancelled first. Counts a cancellation whether it
/// notices `cx.cancelled()` or the worker drops its future unfinished.
#[derive(Serialize, Deserialize)]
struct Patient {
    ms: u64,
}
impl TypedJob for Patient {
    const NAME: &'static str = "t.patient";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        struct Unfinished<'a>(&'a Tracker, bool);
        impl Drop for Unfinished<'_> {
            fn drop(&mut self) {
                self.0.leave();
                let counter = if self.1 {
                    &self.0.completed
                } else {
                    &self.0.cancelled
                };
                counter.fetch_add(1, Ordering::SeqCst);
            }
        }
        let t = tracker(cx);
        t.enter(cx);
        let mut guard = Unfinished(t, false);
        tokio::select! {
            _ = cx.cancelled() => {}
            _ = tokio::time::sleep(Duration::from_millis(self.ms)) => guard.1 = true,
        }
        Ok(())
    }
}

/// Ignores cancellation: only the grace period's end stops it.
#[derive(Serialize, Deserialize)]
struct Stubborn;
impl TypedJob for Stubborn {
    const NAME: &'static str = "t.stubborn";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        tracker(cx).enter(cx);
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(())
    }
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.add_job::<Quick>()
        .add_job::<Slow>()
        .add_job::<Panicky>()
        .add_job::<AlwaysFails>()
        .add_job::<Windowed>()
        .add_job::<FailsNow>()
        .add_job::<RetryLater>()
        .add_job::<Patient>()
        .add_job::<Stubborn>();
    r
}

struct Running {
    worker: RunningWorker,
    tracker: Arc<Tracker>,
}

impl Running {
    async fn shutdown(self) -> WorkerReport {
        self.worker.shutdown().await
    }
}

fn start(queue: &RedisQueue, options: WorkOptions) -> Running {
    start_with(queue, options, Arc::new(Tracker::default()))
}

fn start_with(queue: &RedisQueue, options: WorkOptions, tracker: Arc<Tracker>) -> Running {
    let worker = Worker::new(queue.clone(), registry(), options.schedules(false))
        .expect("options")
        .services(Services::new().with(tracker.clone()));
    Running {
        worker: RunningWorker::spawn(worker),
        tracker,
    }
}

fn default_queue() -> WorkOptions {
    WorkOptions::new().queues(["default"])
}

async fn dead_error(queue: &RedisQueue, id: &str) -> String {
    let job = queue.inspect(id).await.unwrap().expect("job exists");
    assert_eq!(job.state, JobState::Dead, "{job:?}");
    job.last_error.unwrap_or_default()
}

async fn wait_dead(queue: &RedisQueue, id: &str) {
    wait_until(
        DEADLINE,
        "the job to be dead-lettered",
        async || matches!(queue.inspect(id).await.unwrap(), Some(j) if j.state == JobState::Dead),
    )
    .await;
}

#[tokio::test]
async fn a_pushed_typed_job_runs_once_and_is_acknowledged() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("typed")).await;
    let pushed = queue.push(&Quick { n: 1 }).await.unwrap();
    assert!(matches!(pushed, Pushed::Queued { .. }));
    let running = start(&queue, default_queue());
    let t = running.tracker.clone();
    wait_until(DEADLINE, "the job to complete", async || {
        t.completed.load(Ordering::SeqCst) == 1
    })
    .await;
    wait_until(DEADLINE, "the job to be acknowledged", async || {
        queue.inspect(pushed.id()).await.unwrap().is_none()
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.processed, 1);
    assert_eq!(t.attempts.lock().unwrap().as_slice(), &[1]);
}

#[tokio::test]
async fn a_timeout_is_a_failed_attempt_and_the_future_is_dropped() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("timeout")).await;
    let id = queue.push(&Slow).await.unwrap().id().to_owned();
    let running = start(&queue, default_queue());
    wait_dead(&queue, &id).await;
    assert!(dead_error(&queue, &id)
        .await
        .contains("timed out after 150 ms"));
    assert_eq!(queue.inspect(&id).await.unwrap().unwrap().attempts, 1);
    running.shutdown().await;
}

#[tokio::test]
async fn a_panic_is_a_failed_attempt_carrying_its_message_and_the_worker_keeps_going() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("panic")).await;
    let id = queue.push(&Panicky).await.unwrap().id().to_owned();
    let running = start(&queue, default_queue().concurrency(1));
    wait_dead(&queue, &id).await;
    assert!(dead_error(&queue, &id)
        .await
        .contains("panicked: boom at the disco"));
    queue.push(&Quick { n: 1 }).await.unwrap();
    let t = running.tracker.clone();
    wait_until(DEADLINE, "the next job to complete", async || {
        t.completed.load(Ordering::SeqCst) == 1
    })
    .await;
    running.shutdown().await;
}

#[tokio::test]
async fn heartbeats_keep_a_job_running_three_times_its_lease_from_running_twice() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("heartbeat")).await;
    let id = queue
        .push(&Patient { ms: 900 })
        .await
        .unwrap()
        .id()
        .to_owned();
    let lease = Duration::from_millis(300);
    // Two workers: if the lease lapsed, the second would claim the job again.
    let first = start(&queue, default_queue().lease(lease));
    let second = start_with(&queue, default_queue().lease(lease), first.tracker.clone());
    let t = first.tracker.clone();
    wait_until(DEADLINE, "the job to complete", async || {
        t.completed.load(Ordering::SeqCst) == 1
    })
    .await;
    wait_until(DEADLINE, "the ack", async || {
        queue.inspect(&id).await.unwrap().is_none()
    })
    .await;
    assert_eq!(t.runs.load(Ordering::SeqCst), 1, "the job ran twice");
    first.shutdown().await;
    second.shutdown().await;
}

#[tokio::test]
async fn jobs_are_dead_lettered_after_exactly_max_attempts() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("attempts")).await;
    let id = queue.push(&AlwaysFails).await.unwrap().id().to_owned();
    let running = start(&queue, default_queue());
    wait_dead(&queue, &id).await;
    let job = queue.inspect(&id).await.unwrap().unwrap();
    assert_eq!(job.attempts, 3);
    assert_eq!(job.last_error.as_deref(), Some("disk on fire"));
    assert_eq!(
        running.tracker.attempts.lock().unwrap().as_slice(),
        &[1, 2, 3]
    );
    running.shutdown().await;
}

#[tokio::test]
async fn the_retry_window_dead_letters_a_job_that_keeps_failing() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("window")).await;
    let id = queue.push(&Windowed).await.unwrap().id().to_owned();
    let running = start(&queue, default_queue());
    wait_dead(&queue, &id).await;
    let job = queue.inspect(&id).await.unwrap().unwrap();
    let died = job
        .died_at
        .unwrap()
        .duration_since(job.enqueued_at)
        .unwrap();
    assert!(
        died >= Duration::from_millis(400),
        "dead after {died:?}, inside the window"
    );
    assert!(
        job.attempts >= 2,
        "retried within the window: {}",
        job.attempts
    );
    running.shutdown().await;
}

#[tokio::test]
async fn fail_now_skips_the_remaining_attempts() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("failnow")).await;
    let id = queue.push(&FailsNow).await.unwrap().id().to_owned();
    let running = start(&queue, default_queue());
    wait_dead(&queue, &id).await;
    let job = queue.inspect(&id).await.unwrap().unwrap();
    assert_eq!(
        (job.attempts, job.last_error.as_deref()),
        (1, Some("invoice is void"))
    );
    running.shutdown().await;
}

#[tokio::test]
async fn a_retry_is_scheduled_after_the_job_types_backoff() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("backoff")).await;
    let id = queue.push(&RetryLater).await.unwrap().id().to_owned();
    let before = SystemTime::now();
    let running = start(&queue, default_queue());
    wait_until(DEADLINE, "the retry to be scheduled", async || {
        matches!(queue.inspect(&id).await.unwrap(), Some(j) if j.state == JobState::Scheduled)
    })
    .await;
    let job = queue.inspect(&id).await.unwrap().unwrap();
    let due_in = job.due_at.unwrap().duration_since(before).unwrap();
    assert!(
        due_in >= Duration::from_secs(19) && due_in <= Duration::from_secs(22),
        "due in {due_in:?}"
    );
    assert_eq!(job.attempts, 1);
    assert_eq!(running.tracker.runs.load(Ordering::SeqCst), 1);
    running.shutdown().await;
}

#[tokio::test]
async fn unknown_names_and_undecodable_payloads_are_dead_lettered_at_once() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("unknown")).await;
    let unknown = queue
        .add(
            "default",
            NewJob::new(serde_json::json!({}))
                .name("billing.nope")
                .max_attempts(25),
        )
        .await
        .unwrap();
    let garbled = queue
        .add(
            "default",
            NewJob::new(serde_json::json!({"n": "not a number"}))
                .name(Quick::NAME)
                .max_attempts(25),
        )
        .await
        .unwrap();
    let options = default_queue().unknown_names(UnknownNames::DeadLetter);
    let running = start(&queue, options);
    wait_dead(&queue, unknown.id()).await;
    wait_dead(&queue, garbled.id()).await;
    let why = dead_error(&queue, unknown.id()).await;
    assert!(why.contains("unknown job name \"billing.nope\""), "{why}");
    assert!(why.contains("t.quick"), "lists what is registered: {why}");
    let why = dead_error(&queue, garbled.id()).await;
    assert!(why.contains("payload does not decode as t.quick"), "{why}");
    assert_eq!(
        queue.inspect(unknown.id()).await.unwrap().unwrap().attempts,
        1
    );
    running.shutdown().await;
}

#[tokio::test]
async fn an_idle_worker_wakes_on_enqueue_without_polling() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wake")).await;
    // With an hour of max idle, only the wake-up can start the job in time;
    // with hand-off off, the enqueue cannot lease the job to it instead.
    let running = start(
        &queue,
        default_queue()
            .max_idle(Duration::from_secs(3600))
            .handoff(false),
    );
    wait_until(
        DEADLINE,
        "the worker to subscribe to wake-ups",
        async || server.subscribers(&queue.wake_channel()).await == 1,
    )
    .await;
    queue.push(&Quick { n: 1 }).await.unwrap();
    let t = running.tracker.clone();
    wait_until(
        Duration::from_secs(5),
        "the idle worker to run the new job",
        async || t.completed.load(Ordering::SeqCst) == 1,
    )
    .await;
    running.shutdown().await;
}

#[tokio::test]
async fn concurrency_is_honoured_exactly() {
    for limit in [1u32, 3] {
        let server = RedisServer::start();
        let queue = handle(&server, &unique_namespace("concurrency")).await;
        for _ in 0..12 {
            queue.push(&Quick { n: 60 }).await.unwrap();
        }
        let running = start(
            &queue,
            default_queue().concurrency(limit as usize).claim_batch(10),
        );
        let t = running.tracker.clone();
        wait_until(DEADLINE, "all jobs to complete", async || {
            t.completed.load(Ordering::SeqCst) == 12
        })
        .await;
        assert_eq!(
            t.max_running.load(Ordering::SeqCst),
            limit,
            "concurrency {limit}"
        );
        running.shutdown().await;
    }
}

#[tokio::test]
async fn graceful_shutdown_lets_short_jobs_finish_and_releases_the_rest_at_once() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("shutdown")).await;
    let stubborn = queue.push(&Stubborn).await.unwrap().id().to_owned();
    let patient = queue
        .push(&Patient { ms: 60_000 })
        .await
        .unwrap()
        .id()
        .to_owned();
    let running = start(
        &queue,
        default_queue()
            .grace(Duration::from_millis(300))
            .lease(Duration::from_secs(60)),
    );
    let t = running.tracker.clone();
    wait_until(DEADLINE, "both jobs to start", async || {
        t.runs.load(Ordering::SeqCst) == 2
    })
    .await;
    let report = running.shutdown().await;
    // The cooperative job saw the cancellation and finished (acked).
    assert_eq!(t.cancelled.load(Ordering::SeqCst), 1);
    assert_eq!(report.processed, 1);
    assert!(queue.inspect(&patient).await.unwrap().is_none());
    // The stubborn one was released at once: waiting, no attempt counted,
    // long before its 60 s lease would have lapsed.
    let job = queue
        .inspect(&stubborn)
        .await
        .unwrap()
        .expect("still exists");
    assert_eq!((job.state, job.attempts), (JobState::Waiting, 0));
}

#[tokio::test]
async fn a_job_whose_lease_is_lost_is_cancelled_and_not_acknowledged() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("lost")).await;
    let id = queue
        .push(&Patient { ms: 60_000 })
        .await
        .unwrap()
        .id()
        .to_owned();
    let running = start(&queue, default_queue().lease(Duration::from_millis(300)));
    let t = running.tracker.clone();
    wait_until(DEADLINE, "the job to start", async || {
        t.runs.load(Ordering::SeqCst) == 1
    })
    .await;
    // An operator fails the job under its current lease: the worker's next
    // heartbeat finds the lease gone.
    let lease = redq::Lease {
        queue: "default".into(),
        id: id.clone(),
        lease_id: 0,
    };
    queue
        .nack(&lease, Duration::from_secs(3600), "taken away")
        .await
        .unwrap();
    wait_until(DEADLINE, "the job to be cancelled", async || {
        t.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.processed, 0);
    let job = queue.inspect(&id).await.unwrap().expect("not acknowledged");
    assert_eq!(job.state, JobState::Scheduled);
}

#[tokio::test]
async fn dead_letters_are_announced_in_process_and_to_other_processes() {
    let server = RedisServer::start();
    let ns = unique_namespace("events");
    let queue = handle(&server, &ns).await;
    let id = queue.push(&FailsNow).await.unwrap().id().to_owned();
    let worker = Worker::new(queue.clone(), registry(), default_queue().schedules(false)).unwrap();
    let mut failures = worker.failures();
    let stop = CancellationToken::new();
    let run = tokio::spawn(worker.run(stop.clone()));
    let event = tokio::time::timeout(DEADLINE, failures.recv())
        .await
        .expect("event in time")
        .unwrap();
    assert_eq!(
        (event.id.as_str(), event.error.as_str(), event.attempts),
        (id.as_str(), "invoice is void", 1)
    );
    assert_eq!(event.name.as_deref(), Some("t.fails_now"));
    // Another process: a separate connection reading the namespace's stream.
    let other = handle(&server, &ns).await;
    let events = other
        .events(10)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .collect::<Vec<_>>();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (
            events[0].job_id.as_str(),
            events[0].queue.as_str(),
            events[0].kind.as_str()
        ),
        (id.as_str(), "default", "dead")
    );
    stop.cancel();
    run.await.unwrap().unwrap();
}

#[tokio::test]
async fn live_workers_are_listed_with_their_identity_and_removed_on_shutdown() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("registry")).await;
    let running = start(
        &queue,
        WorkOptions::new()
            .queues(["default", "mail"])
            .concurrency(4),
    );
    wait_until(DEADLINE, "the worker record", async || {
        queue.workers().await.unwrap().len() == 1
    })
    .await;
    let worker = queue.workers().await.unwrap().remove(0);
    assert_eq!(
        (worker.node, worker.instance),
        (queue.identity().node, queue.identity().instance)
    );
    assert_eq!(worker.queues, ["default", "mail"]);
    assert_eq!((worker.pid, worker.concurrency), (std::process::id(), 4));
    running.shutdown().await;
    assert!(queue.workers().await.unwrap().is_empty());
}

/// Once two workers are listed in `queue`'s namespace: their identities
/// (node, instance), which differ, one of them `own`.
async fn two_listed_apart(queue: &RedisQueue, own: redq::WorkerIdentity) -> Vec<(u64, u32)> {
    wait_until(DEADLINE, "both worker records", async || {
        queue.workers().await.unwrap().len() == 2
    })
    .await;
    let listed: Vec<_> = queue
        .workers()
        .await
        .unwrap()
        .into_iter()
        .map(|w| (w.node, w.instance))
        .collect();
    assert!(listed[0] != listed[1], "{listed:?}");
    assert!(listed.contains(&(own.node, own.instance)), "{listed:?}");
    listed
}

/// Two `Worker`s on clones of one handle are two workers: each listed on
/// its own (before, they shared one entry, which showed whichever beat
/// last) and each leasing under its own identity, the handle's node with
/// an instance of its own for the second.
#[tokio::test]
async fn workers_on_clones_of_one_handle_are_listed_apart_each_under_its_own_identity() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("registry-clones")).await;
    let options = WorkOptions::new().queues(["default"]).concurrency(2);
    let first = start(&queue, options.clone());
    let second = start(&queue.clone(), options);
    let listed = two_listed_apart(&queue, queue.identity()).await;
    assert!(
        listed
            .iter()
            .all(|(node, _)| *node == queue.identity().node),
        "{listed:?}"
    );
    first.shutdown().await;
    second.shutdown().await;
    assert!(queue.workers().await.unwrap().is_empty());
}

/// The same over shards: a second `Worker` on one `ShardedQueue` takes an
/// identity of its own on every shard.
#[tokio::test]
async fn workers_on_one_sharded_queue_are_listed_apart_on_each_shard() {
    let server = RedisServer::start();
    let builder = RedisQueue::builder(&server.url());
    let sharded = redq::ShardedQueue::connect(builder, &unique_namespace("registry-shards"), 2)
        .await
        .unwrap();
    let options = WorkOptions::new().queues(["default"]).schedules(false);
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let worker = Worker::new(sharded.clone(), registry(), options.clone()).unwrap();
            RunningWorker::spawn(
                worker.services(Services::new().with(Arc::new(Tracker::default()))),
            )
        })
        .collect();
    let own = sharded.shards()[0].identity();
    for shard in sharded.shards() {
        two_listed_apart(shard, own).await;
    }
    for worker in workers {
        worker.shutdown().await;
    }
}

/// One `Worker` on each shard alone (`sharded.shards()[i]`), as a service
/// that runs a worker per shard does: each takes an instance of its own,
/// not the shards' shared identity, so they are told apart where an
/// operator merges the shards' registries (`redq --shards N workers`).
#[tokio::test]
async fn a_worker_on_each_shard_alone_has_an_identity_of_its_own() {
    let server = RedisServer::start();
    let builder = RedisQueue::builder(&server.url());
    let sharded = redq::ShardedQueue::connect(builder, &unique_namespace("registry-per-shard"), 3)
        .await
        .unwrap();
    let options = WorkOptions::new().queues(["default"]).schedules(false);
    let workers: Vec<_> = sharded
        .shards()
        .iter()
        .map(|shard| {
            let worker = Worker::new(shard.clone(), registry(), options.clone()).unwrap();
            RunningWorker::spawn(
                worker.services(Services::new().with(Arc::new(Tracker::default()))),
            )
        })
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for shard in sharded.shards() {
        wait_until(DEADLINE, "the shard's worker to be listed", async || {
            shard.workers().await.unwrap().len() == 1
        })
        .await;
        ids.insert(shard.workers().await.unwrap()[0].id.clone());
    }
    assert_eq!(ids.len(), 3, "one identity for three workers: {ids:?}");
    let shared = sharded.shards()[0].identity();
    assert!(
        !ids.contains(&format!("{}-{}", shared.node, shared.instance)),
        "a lone shard's worker took the shards' shared identity: {ids:?}"
    );
    for worker in workers {
        worker.shutdown().await;
    }
}

/// A worker is listed only once it hears its holder channel, so an
/// operator who tells a worker the moment it shows up is heard: listed
/// first, it could not hear a quiet, a stop or a cancel sent then.
#[tokio::test]
async fn a_worker_hears_an_operator_from_the_moment_it_is_listed() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("listed-hears")).await;
    let operator = redq::Operator::from(queue.clone());
    // Fresh workers in turn: each one's listing races its subscription.
    for round in 0..5 {
        let running = start(&queue, WorkOptions::new().queues(["default"]));
        // Looked for without a pause, and told the moment it is listed.
        let give_up_at = std::time::Instant::now() + DEADLINE;
        let id = loop {
            if let Some(worker) = queue.workers().await.unwrap().pop() {
                break worker.id;
            }
            assert!(std::time::Instant::now() < give_up_at, "no worker record");
        };
        assert!(
            operator.quiet_worker(&id).await.unwrap(),
            "round {round}: the listed worker {id} did not hear the quiet"
        );
        running.shutdown().await;
    }
}

#[tokio::test]
async fn services_reach_the_job_and_inline_mode_runs_at_push() {
    let tracker = Arc::new(Tracker::default());
    let inline = JobQueue::inline(Services::new().with(tracker.clone()));
    let pushed = inline.push(&Quick { n: 0 }).await.unwrap();
    assert!(
        matches!(pushed, Pushed::Ran { error: None, .. }),
        "{pushed:?}"
    );
    assert_eq!(tracker.completed.load(Ordering::SeqCst), 1);
    let failed = inline.push(&FailsNow).await.unwrap();
    assert!(
        matches!(failed, Pushed::Ran { error: Some(ref e), .. } if e == "invoice is void"),
        "{failed:?}"
    );
}

#[tokio::test]
async fn worker_options_are_checked_before_running() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("options")).await;
    for bad in [
        WorkOptions::new().concurrency(0),
        WorkOptions::new().claim_batch(0),
        WorkOptions::new().queues(Vec::<String>::new()),
        WorkOptions::new().queues(["bad:name"]),
        WorkOptions::new().lease(Duration::from_millis(5)),
    ] {
        let err = Worker::new(queue.clone(), registry(), bad.clone()).unwrap_err();
        assert!(
            matches!(err, redq::QueueError::Invalid { .. }),
            "{bad:?}: {err}"
        );
    }
}

#[tokio::test]
async fn a_killed_worker_process_job_runs_again_elsewhere_after_its_lease_lapses() {
    let server = RedisServer::start();
    let ns = unique_namespace("kill9");
    let queue = handle(&server, &ns).await;
    let client = server.client().await;
    let id = queue
        .push(&redq_tests::jobs::Recorded {
            tag: "k".into(),
            sleep_ms: 60_000,
        })
        .await
        .unwrap()
        .id()
        .to_owned();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_redq-test-worker"))
        .args([server.url(), ns.clone(), "500".into()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn worker process");
    wait_until(
        DEADLINE,
        "the worker process to start the job",
        async || redq_tests::jobs::recorded_runs(&client, "k").await.len() == 1,
    )
    .await;
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    // A second worker (this process) picks the job up once the lease lapses.
    let mut registry = Registry::new();
    registry.add_job::<redq_tests::jobs::Recorded>();
    let options = WorkOptions::new()
        .queues(["work"])
        .lease(Duration::from_secs(5))
        .grace(Duration::from_millis(100))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .unwrap()
        .services(Services::new().with(client.clone()));
    let stop = CancellationToken::new();
    let handle = tokio::spawn(worker.run(stop.clone()));
    wait_until(DEADLINE, "the job to run again", async || {
        redq_tests::jobs::recorded_runs(&client, "k").await.len() == 2
    })
    .await;
    let runs = redq_tests::jobs::recorded_runs(&client, "k").await;
    assert_eq!(
        runs,
        vec![(id.clone(), 1), (id.clone(), 2)],
        "second run is attempt 2"
    );
    stop.cancel();
    handle.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_worker_runs_the_scheduler_by_default_and_fires_due_schedules() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("scheduled")).await;
    let schedule = redq::schedule::Schedule::new("every-second", "default", "* * * * * *")
        .job_name(Quick::NAME)
        .payload(serde_json::json!({"n": 1}));
    queue.upsert_schedule(schedule).await.unwrap();
    let tracker = Arc::new(Tracker::default());
    let worker = Worker::new(queue.clone(), registry(), default_queue())
        .unwrap()
        .services(Services::new().with(tracker.clone()));
    let stop = CancellationToken::new();
    let handle = tokio::spawn(worker.run(stop.clone()));
    wait_until(DEADLINE, "a scheduled tick's job to run", async || {
        tracker.completed.load(Ordering::SeqCst) >= 1
    })
    .await;
    let info = queue
        .schedule("every-second")
        .await
        .unwrap()
        .expect("schedule");
    assert!(info.last_job_id.is_some(), "{info:?}");
    stop.cancel();
    handle.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_batch_ack_gives_each_job_its_own_outcome() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("ackbatch")).await;
    for n in 0..3 {
        queue.push(&Quick { n }).await.unwrap();
    }
    let jobs = queue
        .claim("default", 3, Duration::from_secs(60))
        .await
        .unwrap();
    let mut leases: Vec<redq::Lease> = jobs.iter().map(|j| j.lease()).collect();
    leases[1].lease_id += 1_000; // a stale token
    leases.push(redq::Lease {
        lease_id: u64::MAX,
        ..leases[0].clone()
    }); // forged
    let outcomes = queue.ack_batch(&leases).await.unwrap();
    assert!(matches!(outcomes[0], Ok(redq::Acked::Completed)));
    assert!(matches!(
        outcomes[1],
        Err(redq::QueueError::LeaseLost { .. })
    ));
    assert!(matches!(outcomes[2], Ok(redq::Acked::Completed)));
    assert!(matches!(
        outcomes[3],
        Err(redq::QueueError::LeaseLost { .. })
    ));
    let counts = queue.counts("default").await.unwrap();
    assert_eq!(counts.leased, 1, "only the stale-token job is still held");
}

/// Records which queue it ran from, in order.
#[derive(Serialize, Deserialize)]
struct Ordered;
impl TypedJob for Ordered {
    const NAME: &'static str = "t.ordered";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let log = cx
            .service::<Arc<Mutex<Vec<String>>>>()
            .expect("log service");
        log.lock().unwrap().push(cx.queue().to_owned());
        Ok(())
    }
}

async fn run_in_order(options: WorkOptions, per_queue: usize) -> Vec<String> {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("order")).await;
    for name in ["high", "low"] {
        let jobs = (0..per_queue)
            .map(|_| NewJob::new(serde_json::json!(null)).name(Ordered::NAME))
            .collect();
        queue.add_batch(name, jobs).await.unwrap();
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut registry = Registry::new();
    registry.add_job::<Ordered>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        options.concurrency(1).schedules(false),
    )
    .unwrap()
    .services(Services::new().with(log.clone()));
    let stop = CancellationToken::new();
    let handle = tokio::spawn(worker.run(stop.clone()));
    wait_until(DEADLINE, "every job to run", async || {
        log.lock().unwrap().len() == 2 * per_queue
    })
    .await;
    stop.cancel();
    handle.await.unwrap().unwrap();
    let order = log.lock().unwrap().clone();
    order
}

#[tokio::test]
async fn strict_order_serves_a_later_queue_only_when_earlier_ones_are_empty() {
    let order = run_in_order(
        WorkOptions::new()
            .queues(["high", "low"])
            .order(redq::worker::QueueOrder::Strict),
        15,
    )
    .await;
    assert!(order[..15].iter().all(|q| q == "high"), "{order:?}");
    assert!(order[15..].iter().all(|q| q == "low"), "{order:?}");
}

#[tokio::test]
async fn weighted_order_serves_every_queue_from_the_start() {
    let order = run_in_order(
        WorkOptions::new().weighted_queues([("high", 1), ("low", 1)]),
        30,
    )
    .await;
    // With equal weights, 20 draws all from one queue happen 2 in a million runs.
    let first = &order[..20];
    assert!(
        first.iter().any(|q| q == "high") && first.iter().any(|q| q == "low"),
        "{order:?}"
    );
}

#[derive(Serialize, Deserialize)]
struct UsesAnyhow;
impl TypedJob for UsesAnyhow {
    const NAME: &'static str = "t.uses_anyhow";
    const MAX_ATTEMPTS: u32 = 1;
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        fn load() -> anyhow::Result<u32> {
            let n: u32 = "not a number".parse()?;
            Ok(n)
        }
        use anyhow::Context as _;
        load().context("loading the invoice")?;
        Ok(())
    }
}

#[tokio::test]
async fn an_anyhow_error_converts_with_question_mark_and_keeps_its_context() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("anyhow")).await;
    let id = queue.push(&UsesAnyhow).await.unwrap().id().to_owned();
    let mut registry = Registry::new();
    registry.add_job::<UsesAnyhow>();
    let worker = Worker::new(queue.clone(), registry, default_queue().schedules(false)).unwrap();
    let stop = CancellationToken::new();
    let handle = tokio::spawn(worker.run(stop.clone()));
    wait_dead(&queue, &id).await;
    let error = dead_error(&queue, &id).await;
    assert_eq!(error, "loading the invoice: invalid digit found in string");
    stop.cancel();
    handle.await.unwrap().unwrap();
}
