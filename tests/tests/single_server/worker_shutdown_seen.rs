//! A worker shutting down (its token cancelled) says so: its registry
//! record reads `stopping` at once with its running count kept fresh, as
//! after an operator's stop, and it logs its start, the shutdown's
//! beginning and its end. `shutdown_on_signals` cancels its token on
//! SIGTERM, in a process of its own (this test binary run again): a
//! handler left installed here would keep a SIGTERM from ending the suite.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redq::events::EventKind;
use redq::worker::{
    shutdown_on_signals, CancellationToken, JobCx, JobError, Registry, Services, TypedJob,
    WorkOptions, Worker, WorkerState,
};
use redq::RedisQueue;
use redq_tests::events::latest_of_kind;
use redq_tests::fixtures::handle;
use redq_tests::logs::LogCapture;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

const DEADLINE: Duration = Duration::from_secs(10);
/// Shorter than the heartbeat's interval (5 s): what the record shows this
/// soon, it shows because it changed, not because a beat came round.
const AT_ONCE: Duration = Duration::from_secs(2);
const GRACE: Duration = Duration::from_secs(6);

/// A job that finishes when the test lets it.
#[derive(Serialize, Deserialize)]
struct Finishes;

struct Runs {
    started: AtomicU32,
    finish: Semaphore,
}

impl Default for Runs {
    fn default() -> Self {
        Runs {
            started: AtomicU32::default(),
            finish: Semaphore::new(0),
        }
    }
}

impl TypedJob for Finishes {
    const NAME: &'static str = "tests.shutdown_seen";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let runs = cx.service::<Arc<Runs>>().expect("runs");
        runs.started.fetch_add(1, Ordering::SeqCst);
        runs.finish.acquire().await.expect("open").forget();
        Ok(())
    }
}

/// The worker's record: its state and running count.
async fn shown(queue: &RedisQueue) -> Option<(WorkerState, u64)> {
    let workers = queue.workers().await.unwrap();
    workers.first().map(|w| (w.state, w.in_flight))
}

#[tokio::test]
async fn a_shutdown_shows_the_worker_stopping_at_once_and_is_logged() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("shutdown-seen")).await;
    let ids = [
        queue.push(&Finishes).await.unwrap().id().to_owned(),
        queue.push(&Finishes).await.unwrap().id().to_owned(),
    ];
    let runs = Arc::new(Runs::default());
    let mut registry = Registry::new();
    registry.add_job::<Finishes>();
    let options = WorkOptions::new()
        .concurrency(2)
        .grace(GRACE)
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .unwrap()
        .services(Services::new().with(runs.clone()));
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.run(shutdown.clone()));
    wait_until(
        DEADLINE,
        "both jobs to run, the record to show them",
        async || {
            runs.started.load(Ordering::SeqCst) == 2
                && shown(&queue).await == Some((WorkerState::Running, 2))
        },
    )
    .await;

    shutdown.cancel();
    wait_until(AT_ONCE, "the record to say stopping", async || {
        shown(&queue).await == Some((WorkerState::Stopping, 2))
    })
    .await;
    // One job ends within the grace: the record's count follows.
    runs.finish.add_permits(1);
    wait_until(AT_ONCE, "the record to count one job running", async || {
        shown(&queue).await == Some((WorkerState::Stopping, 1))
    })
    .await;
    // The other outlasts the grace and is released for another worker.
    let report = tokio::time::timeout(DEADLINE, running)
        .await
        .expect("the worker stops after its grace")
        .unwrap()
        .unwrap();
    assert_eq!((report.processed, report.released), (1, 1));
    let mut waiting = 0;
    for id in &ids {
        if let Some(job) = queue.inspect(id).await.unwrap() {
            assert_eq!(job.attempts, 0, "released with no attempt counted");
            waiting += 1;
        }
    }
    assert_eq!(waiting, 1, "one job acknowledged, one released");
    assert_eq!(shown(&queue).await, None, "the record is removed");
    // The operator sees why the job will run again from its start.
    let given_back = latest_of_kind(&queue, EventKind::GivenBack).await;
    let [event] = &given_back[..] else {
        panic!("one given_back event, got {given_back:?}")
    };
    let released = ids.iter().find(|id| **id == event.job_id);
    assert!(released.is_some(), "{event:?} names a job of {ids:?}");
    assert_eq!(event.name.as_deref(), Some(Finishes::NAME));
    let detail = event.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("interrupted at the end of its worker's shutdown grace period, worker "),
        "{detail}"
    );

    let text = logs.text();
    for line in [
        "worker started",
        "shutting down: 2 jobs running, given up to 6 s to finish; the rest are then released for another worker",
        "shutdown grace period over: job released for another worker",
        "1 of 2 running jobs ended within the grace period, 1 released for another worker",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    assert!(text.contains("queues=default concurrency=2"), "{text}");
}

/// Set in the process [`sigterm_cancels_the_token_of_shutdown_on_signals`]
/// starts, so the test it runs there does its part.
const SIGNAL_CHILD: &str = "REDQ_TEST_SIGNAL_CHILD";

/// A handler that stops when told and returns `JobError::stopped()`.
#[derive(Serialize, Deserialize)]
struct Cooperates;

impl TypedJob for Cooperates {
    const NAME: &'static str = "tests.cooperates";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let runs = cx.service::<Arc<Runs>>().expect("runs");
        runs.started.fetch_add(1, Ordering::SeqCst);
        // Either the shutdown fires its cancellation, or the test lets it
        // stop on its own (not shutting down).
        tokio::select! {
            () = cx.cancelled() => {}
            permit = runs.finish.acquire() => permit.expect("open").forget(),
        }
        Err(JobError::stopped())
    }
}

/// A handler that cooperates with a shutdown (stops at `cx.cancelled()` and
/// returns `JobError::stopped()`) is given back with no attempt counted, as
/// one the grace period's end interrupts, not charged a failed attempt; the
/// same error outside a shutdown is an ordinary retry, so it cannot spin.
#[tokio::test]
async fn a_handler_that_stops_for_the_shutdown_is_given_back_without_an_attempt() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("stopped-for-shutdown")).await;
    let runs = Arc::new(Runs::default());
    let start = |queue: &RedisQueue| {
        let mut registry = Registry::new();
        registry.add_job::<Cooperates>();
        let options = WorkOptions::new()
            .concurrency(1)
            .grace(GRACE)
            .schedules(false);
        Worker::new(queue.clone(), registry, options)
            .unwrap()
            .services(Services::new().with(runs.clone()))
    };

    // Not shutting down: a retry, one attempt counted.
    let early = queue.push(&Cooperates).await.unwrap().id().to_owned();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(start(&queue).run(shutdown.clone()));
    wait_until(DEADLINE, "the job to run", async || {
        runs.started.load(Ordering::SeqCst) == 1
    })
    .await;
    runs.finish.add_permits(1);
    wait_until(
        DEADLINE,
        "the run to count as a failed attempt",
        async || {
            queue
                .inspect(&early)
                .await
                .unwrap()
                .is_some_and(|job| job.attempts == 1)
        },
    )
    .await;
    let job = queue.inspect(&early).await.unwrap().unwrap();
    let error = job.last_error.unwrap_or_default();
    assert!(error.contains("not shutting down"), "{error}");
    queue
        .delete_job(&early, redq::IfLeased::VoidLease)
        .await
        .unwrap();

    // Shutting down: given back at once, no attempt, the worker says so.
    let id = queue.push(&Cooperates).await.unwrap().id().to_owned();
    wait_until(DEADLINE, "the second job to run", async || {
        runs.started.load(Ordering::SeqCst) == 2
    })
    .await;
    let began = std::time::Instant::now();
    shutdown.cancel();
    let report = tokio::time::timeout(DEADLINE, running)
        .await
        .expect("the worker stops")
        .unwrap()
        .unwrap();
    assert!(began.elapsed() < GRACE, "it did not wait out the grace");
    assert_eq!(report.failed, 1, "only the first run failed: {report:?}");
    let job = queue.inspect(&id).await.unwrap().expect("given back");
    assert_eq!(job.state, redq::JobState::Waiting);
    assert_eq!(job.attempts, 0, "no attempt counted");
    let given_back = latest_of_kind(&queue, EventKind::GivenBack).await;
    let [event] = &given_back[..] else {
        panic!("one given_back event, got {given_back:?}")
    };
    assert_eq!(event.job_id, id);
    let detail = event.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("stopped by its handler for its worker's shutdown, worker "),
        "{detail}"
    );
    let said = logs.text();
    assert!(
        said.contains(
            "stopped early for the shutdown: job released for another worker, no attempt counted"
        ),
        "{said}"
    );
}

#[test]
fn sigterm_cancels_the_token_of_shutdown_on_signals() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "worker_shutdown_seen::waits_for_a_signal",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SIGNAL_CHILD, "1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("running this test binary again");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut heard = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        heard.push(line.clone());
        // libtest's "test … ... " comes first on its line.
        if line.ends_with("listening") {
            break;
        }
    }
    assert!(
        heard.last().is_some_and(|l| l.ends_with("listening")),
        "{heard:?}"
    );
    // What Kubernetes, Docker and systemd send.
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    heard.extend(lines.map(Result::unwrap));
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {heard:?}");
    assert!(heard.iter().any(|l| l.contains("cancelled")), "{heard:?}");
}

/// The part of [`sigterm_cancels_the_token_of_shutdown_on_signals`] run
/// in a process of its own: nothing when run by hand.
#[tokio::test]
#[ignore = "run by sigterm_cancels_the_token_of_shutdown_on_signals in a process of its own"]
async fn waits_for_a_signal() {
    if std::env::var_os(SIGNAL_CHILD).is_none() {
        return;
    }
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let token = shutdown_on_signals();
    println!("listening");
    tokio::time::timeout(DEADLINE, token.cancelled())
        .await
        .expect("SIGTERM cancels the token");
    let text = logs.text();
    assert!(
        text.contains("SIGTERM received: shutting down gracefully"),
        "{text}"
    );
    println!("cancelled");
}

/// A job that runs until the test lets it finish, or until its worker's
/// shutdown, and then gives itself back; it notes when it heard of the
/// shutdown.
#[derive(Serialize, Deserialize)]
struct HearsShutdown;

#[derive(Default)]
struct Heard {
    runs: Runs,
    shutdown_heard_at: std::sync::Mutex<Option<std::time::Instant>>,
}

impl TypedJob for HearsShutdown {
    const NAME: &'static str = "tests.hears_shutdown";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let heard = cx.service::<Arc<Heard>>().expect("heard");
        heard.runs.started.fetch_add(1, Ordering::SeqCst);
        tokio::select! {
            permit = heard.runs.finish.acquire() => {
                permit.expect("open").forget();
                Ok(())
            }
            () = cx.cancelled() => {
                *heard.shutdown_heard_at.lock().unwrap() = Some(std::time::Instant::now());
                Err(JobError::stopped())
            }
        }
    }
}

/// How long a call on a paused Redis waits here before giving up: what the
/// claim loop would wait, had the shutdown to wait for it.
const PAUSED_CALL_TIMEOUT: Duration = Duration::from_secs(6);

/// A shutdown asked for while the claim loop waits on a Redis that does not
/// answer (a `CLIENT PAUSE`; an outage alike) begins at once: the running
/// jobs hear of it, and the grace period counts from the request. It used to begin only once the loop's unpark or
/// claim had waited out the command timeout, which a platform's kill
/// deadline (Docker's 10 s, Kubernetes' 30 s) counts against.
#[tokio::test]
async fn a_shutdown_asked_for_while_redis_does_not_answer_begins_at_once() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("shutdown-paused"))
        .command_timeout(PAUSED_CALL_TIMEOUT)
        .connect()
        .await
        .expect("connecting to the test redis");
    queue.push(&HearsShutdown).await.unwrap();
    queue.push(&HearsShutdown).await.unwrap();
    let heard = Arc::new(Heard::default());
    let mut registry = Registry::new();
    registry.add_job::<HearsShutdown>();
    let options = WorkOptions::new()
        .concurrency(2)
        .grace(Duration::from_secs(1))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options).unwrap();
    let progress = worker.progress();
    let worker = worker.services(Services::new().with(heard.clone()));
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.run(shutdown.clone()));
    wait_until(DEADLINE, "both jobs to run", async || {
        heard.runs.started.load(Ordering::SeqCst) == 2
    })
    .await;
    // Redis stops answering; one job finishes, so the loop goes back to
    // Redis for more work (an unpark, a claim) and waits there.
    server.cmd(&["CLIENT", "PAUSE", "10000", "ALL"]).await;
    heard.runs.finish.add_permits(1);
    wait_until(
        DEADLINE,
        "the finished job's ack to wait on Redis",
        async || progress.recording() == 1,
    )
    .await;
    let asked = std::time::Instant::now();
    shutdown.cancel();
    wait_until(
        DEADLINE,
        "the running job to hear of the shutdown",
        async || heard.shutdown_heard_at.lock().unwrap().is_some(),
    )
    .await;
    let heard_after = heard.shutdown_heard_at.lock().unwrap().unwrap() - asked;
    assert!(
        heard_after < PAUSED_CALL_TIMEOUT / 2,
        "heard {heard_after:?} after the request: not at once"
    );
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the worker stops")
        .unwrap()
        .unwrap();
}
