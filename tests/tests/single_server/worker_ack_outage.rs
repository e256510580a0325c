//! A finished job's acknowledgement that meets a Redis outage, or a stall
//! longer than the command timeout, is sent again while the job's lease
//! lasts (driver/src/worker/acker.rs): the job is not run again, nor
//! charged an attempt, it counts as processed, and the log says what is
//! known rather than "unexpected reply from redis".
//!
//! A failed job's report (its nack) is sent again the same way
//! (driver/src/worker/resend.rs): its one failed attempt is recorded and
//! it waits out its backoff, rather than its lease; and a second send that
//! finds the lease ended by the first is not logged as a lost lease.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::worker::{
    CancellationToken, JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker,
    WorkerProgress,
};
use redq::{JobState, RedisQueue};
use redq_tests::logs::LogCapture;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

const DEADLINE: Duration = Duration::from_secs(10);
/// Short, so an outage outlasts it quickly (a connect under a loaded
/// machine's tests needs some of it).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);
/// Far longer than each test's wait for the ack: a job whose ack was given
/// up on would come back only after it.
const LEASE: Duration = Duration::from_secs(30);

const FAILURE: &str = "told to fail";
/// Far longer than any test: a recorded failure keeps its job scheduled.
const RETRY_AFTER: Duration = Duration::from_secs(3600);

/// A job that finishes when the test lets it, noting each run's attempt:
/// it fails, to be retried in an hour, when the test has said so.
#[derive(Serialize, Deserialize)]
struct Finishes;

struct Runs {
    attempts: Mutex<Vec<u32>>,
    finish: Semaphore,
    fails: AtomicBool,
}

impl Runs {
    fn attempts(&self) -> Vec<u32> {
        self.attempts.lock().unwrap().clone()
    }
}

impl Default for Runs {
    fn default() -> Self {
        Runs {
            attempts: Mutex::default(),
            finish: Semaphore::new(0),
            fails: AtomicBool::new(false),
        }
    }
}

impl TypedJob for Finishes {
    const NAME: &'static str = "tests.ack_outage";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let runs = cx.service::<Arc<Runs>>().expect("runs");
        runs.attempts.lock().unwrap().push(cx.attempt());
        runs.finish.acquire().await.expect("open").forget();
        if runs.fails.load(Ordering::SeqCst) {
            return Err(JobError::retry_after(FAILURE, RETRY_AFTER));
        }
        Ok(())
    }
}

struct Running {
    queue: RedisQueue,
    runs: Arc<Runs>,
    id: String,
    progress: WorkerProgress,
    stop: CancellationToken,
    handle: tokio::task::JoinHandle<Result<redq::worker::WorkerReport, redq::QueueError>>,
}

/// A worker running one `Finishes` job, started: the handler waits for the
/// test's word to finish.
async fn started(server: &RedisServer, test: &str) -> Running {
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace(test))
        .script_calls(redq_tests::fixtures::script_calls())
        .command_timeout(COMMAND_TIMEOUT)
        .connect()
        .await
        .expect("connecting to the test redis");
    let id = queue.push(&Finishes).await.unwrap().id().to_owned();
    let runs = Arc::new(Runs::default());
    let mut registry = Registry::new();
    registry.add_job::<Finishes>();
    let options = WorkOptions::new()
        .lease(LEASE)
        .grace(Duration::from_secs(1))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .unwrap()
        .services(Services::new().with(runs.clone()));
    let progress = worker.progress();
    let stop = CancellationToken::new();
    let handle = tokio::spawn(worker.run(stop.clone()));
    wait_until(DEADLINE, "the job to start", async || {
        runs.attempts() == [1]
    })
    .await;
    Running {
        queue,
        runs,
        id,
        progress,
        stop,
        handle,
    }
}

impl Running {
    /// Acknowledged once, run once, gone from Redis.
    async fn assert_done_once(self, logs: &LogCapture) {
        wait_until(
            DEADLINE,
            "the worker to count the job processed",
            async || self.progress.processed() == 1,
        )
        .await;
        assert_eq!(self.runs.attempts(), [1], "{}", logs.text());
        assert!(
            self.queue.inspect(&self.id).await.unwrap().is_none(),
            "the job is acknowledged"
        );
        self.stop.cancel();
        let report = self.handle.await.unwrap().unwrap();
        assert_eq!(report.processed, 1);
        let text = logs.text();
        assert!(!text.contains("ERROR"), "{text}");
        assert!(!text.contains("unexpected reply"), "{text}");
    }
}

impl Running {
    /// Told to fail, it fails.
    fn fail(&self) {
        self.runs.fails.store(true, Ordering::SeqCst);
        self.runs.finish.add_permits(1);
    }

    /// Its one failure recorded: scheduled for its retry in an hour, one
    /// attempt counted, run once; the worker counts one failure and logs
    /// no error and no lost lease.
    async fn assert_failed_once(self, logs: &LogCapture) {
        let retrying = async || {
            let record = self.queue.inspect(&self.id).await.ok().flatten();
            record.is_some_and(|r| r.state == JobState::Scheduled)
        };
        wait_until(DEADLINE, "the failure to be recorded", retrying).await;
        // And the worker to have heard so: a send after the first may be
        // on its way.
        let reported = async || self.progress.in_flight() + self.progress.recording() == 0;
        wait_until(DEADLINE, "the worker to finish with the job", reported).await;
        let record = self.queue.inspect(&self.id).await.unwrap().unwrap();
        assert_eq!(record.attempts, 1, "{}", logs.text());
        assert_eq!(record.last_error.as_deref(), Some(FAILURE));
        let due_in = record
            .due_at
            .unwrap()
            .duration_since(std::time::SystemTime::now());
        assert!(
            due_in.unwrap() > RETRY_AFTER - Duration::from_secs(60),
            "retried after its own delay, not reclaimed: {record:?}"
        );
        assert_eq!(self.runs.attempts(), [1]);
        self.stop.cancel();
        let report = self.handle.await.unwrap().unwrap();
        assert_eq!((report.processed, report.failed), (0, 1));
        let text = logs.text();
        assert!(!text.contains("ERROR"), "{text}");
        assert!(!text.contains("lease was lost"), "{text}");
    }
}

#[tokio::test]
async fn a_failure_that_meets_a_redis_restart_is_sent_again_while_the_lease_lasts() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::WARN);
    let mut server = RedisServer::builder().appendonly_always().start();
    let running = started(&server, "nack-restart").await;
    server.kill9();
    running.fail();
    wait_until(DEADLINE, "the failure's report to fail", async || {
        logs.text().contains("recording the job's failure failed")
    })
    .await;
    server.restart();
    running.assert_failed_once(&logs).await;
    let text = logs.text();
    assert!(
        text.contains("recording the job's failure failed; sending it again while its lease lasts"),
        "{text}"
    );
}

#[tokio::test]
async fn a_failure_redis_records_late_is_not_called_a_lost_lease() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = RedisServer::start();
    let running = started(&server, "nack-paused").await;
    // As for the late ack: the first send is applied once the pause ends,
    // and the next finds the lease it ended.
    server.cmd(&["CLIENT", "PAUSE", "5000", "ALL"]).await;
    running.fail();
    running.assert_failed_once(&logs).await;
    let text = logs.text();
    assert!(text.contains("redis command timed out after 2 s"), "{text}");
    // The send that found the failure recorded tells the retry that one
    // scheduled: in an hour, not at once.
    let retry_in_ms = text
        .split("failed; will retry")
        .nth(1)
        .and_then(|line| line.split("retry_in_ms=").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .map(|ms| ms.parse::<u64>().unwrap());
    assert!(
        retry_in_ms.is_some_and(|ms| ms > 3_500_000),
        "{retry_in_ms:?} {text}"
    );
}

#[tokio::test]
async fn an_ack_that_meets_a_redis_restart_is_sent_again_while_the_lease_lasts() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::WARN);
    let mut server = RedisServer::builder().appendonly_always().start();
    let running = started(&server, "ack-restart").await;
    server.kill9();
    running.runs.finish.add_permits(1);
    // The ack has been tried, and failed, while Redis was down (longer
    // than the command timeout).
    wait_until(DEADLINE, "the ack to fail", async || {
        logs.text().contains("acknowledg")
    })
    .await;
    server.restart();
    running.assert_done_once(&logs).await;
    let text = logs.text();
    assert!(
        text.contains(
            "acknowledging finished jobs failed; sending it again while their leases last"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn an_ack_redis_answers_late_is_counted_once_and_not_called_a_protocol_error() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = RedisServer::start();
    let running = started(&server, "ack-paused").await;
    // Every client stalls for 5 s, over two command timeouts: the ack is sent,
    // its reply comes too late, it is sent again, and once the pause ends
    // the first send is applied and the next finds the job done.
    server.cmd(&["CLIENT", "PAUSE", "5000", "ALL"]).await;
    running.runs.finish.add_permits(1);
    running.assert_done_once(&logs).await;
    let text = logs.text();
    assert!(text.contains("redis command timed out after 2 s"), "{text}");
    assert!(
        text.contains("completed: an acknowledgement that went unanswered had been applied"),
        "{text}"
    );
}

/// A job whose handler returned while Redis is paused is not running: the
/// worker counts it as recording its outcome, its shutdown line says so,
/// and when the grace ends before Redis answers, the last line says its
/// outcome was never confirmed, rather than that a running job did not end.
#[tokio::test]
async fn a_finished_job_whose_ack_waits_on_redis_is_not_counted_as_running() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = RedisServer::start();
    let running = started(&server, "ack-recording").await;
    server.cmd(&["CLIENT", "PAUSE", "6000", "ALL"]).await;
    running.runs.finish.add_permits(1);
    let progress = &running.progress;
    wait_until(
        DEADLINE,
        "the handler to return, its ack waiting",
        async || (progress.in_flight(), progress.recording()) == (0, 1),
    )
    .await;
    running.stop.cancel();
    let report = running.handle.await.unwrap().unwrap();
    assert_eq!((report.processed, report.released), (0, 0));
    let text = logs.text();
    for line in [
        "shutting down: 0 jobs running (1 more finished, its outcome being recorded), given up to 1 s",
        "0 of 0 running jobs ended within the grace period, 0 released for another worker; a \
         finished job's outcome was never confirmed by Redis",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
}
