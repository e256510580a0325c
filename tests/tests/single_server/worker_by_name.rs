//! A job enqueued by name (`NewJob::name`, a schedule's `job_name`) carries
//! no attempt limit of its own; the worker holds it to its registered
//! type's `MAX_ATTEMPTS`, and dead-letters it exactly as a job pushed typed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::schedule::Schedule;
use redq::worker::{
    CancellationToken, JobCx, JobError, JobFailed, Registry, Services, TypedJob, WorkOptions,
    Worker,
};
use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::handle;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(10);

/// The attempt numbers its runs saw, by job id.
type Attempts = Arc<Mutex<Vec<(String, u32)>>>;

/// Fails every run; three attempts, retried at once.
#[derive(Serialize, Deserialize)]
struct SendEmail;
impl TypedJob for SendEmail {
    const NAME: &'static str = "byname.send_email";
    const MAX_ATTEMPTS: u32 = 3;
    fn backoff(_attempt: u32) -> Duration {
        Duration::ZERO
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let seen = cx.service::<Attempts>().expect("attempts service");
        seen.lock()
            .unwrap()
            .push((cx.id().to_owned(), cx.attempt()));
        Err(JobError::retry("mail server down"))
    }
}

struct Started {
    stop: CancellationToken,
    handle: tokio::task::JoinHandle<Result<redq::worker::WorkerReport, redq::QueueError>>,
    failures: tokio::sync::broadcast::Receiver<JobFailed>,
    attempts: Attempts,
}

fn start(queue: &RedisQueue, schedules: bool) -> Started {
    let mut registry = Registry::new();
    registry.add_job::<SendEmail>();
    let attempts = Attempts::default();
    let options = WorkOptions::new().queues(["mail"]).schedules(schedules);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(attempts.clone()));
    let failures = worker.failures();
    let stop = CancellationToken::new();
    let handle = tokio::spawn(worker.run(stop.clone()));
    Started {
        stop,
        handle,
        failures,
        attempts,
    }
}

impl Started {
    async fn stop(self) {
        self.stop.cancel();
        self.handle.await.unwrap().unwrap();
    }

    fn attempts_of(&self, id: &str) -> Vec<u32> {
        let seen = self.attempts.lock().unwrap();
        seen.iter()
            .filter(|(job, _)| job == id)
            .map(|(_, a)| *a)
            .collect()
    }
}

async fn wait_dead(queue: &RedisQueue, id: &str) -> redq::JobRecord {
    wait_until(
        DEADLINE,
        "the job to be dead-lettered",
        async || matches!(queue.inspect(id).await.unwrap(), Some(j) if j.state == JobState::Dead),
    )
    .await;
    queue.inspect(id).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_job_enqueued_by_name_is_dead_lettered_at_its_types_max_attempts() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("byname")).await;
    let id = queue
        .add("mail", NewJob::new(json!(null)).name(SendEmail::NAME))
        .await
        .unwrap()
        .id()
        .to_owned();
    let mut worker = start(&queue, false);
    let job = wait_dead(&queue, &id).await;
    assert_eq!(
        (job.attempts, job.last_error.as_deref()),
        (3, Some("mail server down"))
    );
    assert_eq!(worker.attempts_of(&id), [1, 2, 3]);
    // Announced as any dead letter is: in process and on the events stream.
    let failed = tokio::time::timeout(DEADLINE, worker.failures.recv())
        .await
        .expect("a failure in time")
        .unwrap();
    assert_eq!(
        (failed.id.as_str(), failed.error.as_str(), failed.attempts),
        (id.as_str(), "mail server down", 3)
    );
    let dead: Vec<_> = queue
        .events(50)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .collect();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(
        (
            dead[0].job_id.as_str(),
            dead[0].error.as_str(),
            dead[0].attempts
        ),
        (id.as_str(), "mail server down", 3)
    );
    worker.stop().await;
}

#[tokio::test]
async fn a_job_enqueued_by_name_with_its_own_max_attempts_keeps_them() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("byname-own")).await;
    let id = queue
        .add(
            "mail",
            NewJob::new(json!(null))
                .name(SendEmail::NAME)
                .max_attempts(5),
        )
        .await
        .unwrap()
        .id()
        .to_owned();
    let worker = start(&queue, false);
    let job = wait_dead(&queue, &id).await;
    assert_eq!(
        (job.attempts, job.last_error.as_deref()),
        (5, Some("mail server down"))
    );
    assert_eq!(worker.attempts_of(&id), [1, 2, 3, 4, 5]);
    worker.stop().await;
}

#[tokio::test]
async fn a_cron_fired_job_by_name_is_dead_lettered_at_its_types_max_attempts() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("byname-cron")).await;
    let schedule = Schedule::new("mail-digest", "mail", "* * * * * *")
        .job_name(SendEmail::NAME)
        .payload(json!(null));
    queue.upsert_schedule(schedule).await.unwrap();
    let worker = start(&queue, true);
    let mut first = None;
    wait_until(DEADLINE, "the schedule to fire a job", async || {
        first = queue
            .schedule("mail-digest")
            .await
            .unwrap()
            .and_then(|s| s.last_job_id);
        first.is_some()
    })
    .await;
    let id = first.unwrap();
    let job = wait_dead(&queue, &id).await;
    assert_eq!(
        (job.attempts, job.max_attempts, job.last_error.as_deref()),
        (3, 0, Some("mail server down"))
    );
    assert_eq!(worker.attempts_of(&id), [1, 2, 3]);
    worker.stop().await;
}
