//! A job whose name no handler is registered for on the worker that claims
//! it: retried after a backoff by default (a newer worker may have its
//! type, as in a rolling deploy), dead-lettered at once when the worker is
//! told so; a job with no name is dead-lettered at once either way.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use redq::worker::{
    JobCx, JobError, Registry, Services, TypedJob, UnknownNames, WorkOptions, Worker,
};
use redq::{JobRecord, JobState, NewJob, RedisQueue};
use redq_tests::fixtures::handle;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(10);

/// The attempt number of each run.
type Seen = Arc<AtomicU32>;

/// What the old workers have.
#[derive(Serialize, Deserialize)]
struct OldType;
impl TypedJob for OldType {
    const NAME: &'static str = "rollout.old_type";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

/// What producers ship before every worker has it.
#[derive(Serialize, Deserialize)]
struct NewType;
impl TypedJob for NewType {
    const NAME: &'static str = "rollout.new_type";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Seen>()
            .expect("seen service")
            .store(cx.attempt(), Ordering::SeqCst);
        Ok(())
    }
}

/// A worker of queue `default` that has only [`OldType`].
fn old_worker(queue: &RedisQueue, options: WorkOptions) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<OldType>();
    let options = options.queues(["default"]).schedules(false);
    RunningWorker::spawn(Worker::new(queue.clone(), registry, options).expect("options"))
}

async fn add(queue: &RedisQueue, job: NewJob) -> String {
    queue.add("default", job).await.unwrap().id().to_owned()
}

fn new_type_job() -> NewJob {
    NewJob::new(json!(null)).name(NewType::NAME)
}

async fn wait_for(queue: &RedisQueue, id: &str, state: JobState) -> JobRecord {
    wait_until(
        DEADLINE,
        &format!("the job to be {state:?}"),
        async || matches!(queue.inspect(id).await.unwrap(), Some(j) if j.state == state),
    )
    .await;
    queue.inspect(id).await.unwrap().unwrap()
}

#[track_caller]
fn assert_unknown_error(job: &JobRecord) {
    let error = job.last_error.as_deref().unwrap_or_default();
    assert!(
        error.contains(
            "unknown job name \"rollout.new_type\": no handler registered on this worker"
        ),
        "{error}"
    );
    assert!(
        error.contains("rollout.old_type"),
        "lists what is registered: {error}"
    );
}

#[tokio::test]
async fn by_default_an_unknown_name_is_retried_after_a_backoff_and_runs_where_it_is_known() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("unknown-retry")).await;
    let id = add(&queue, new_type_job()).await;
    let before = SystemTime::now();
    let old = old_worker(&queue, WorkOptions::new());
    let job = wait_for(&queue, &id, JobState::Scheduled).await;
    assert_unknown_error(&job);
    assert_eq!(job.attempts, 1);
    // The default backoff's first delay is at least half a second: an
    // unlimited job does not come straight back to the worker that cannot
    // run it.
    let due_in = job.due_at.unwrap().duration_since(before).unwrap();
    assert!(due_in >= Duration::from_millis(500), "due in {due_in:?}");
    old.shutdown().await;

    // The deploy reaches a worker that has the type.
    let mut registry = Registry::new();
    registry.add_job::<NewType>();
    let seen = Seen::default();
    let options = WorkOptions::new().queues(["default"]).schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(seen.clone()));
    let new = RunningWorker::spawn(worker);
    wait_until(DEADLINE, "the job to run and be acknowledged", async || {
        queue.inspect(&id).await.unwrap().is_none()
    })
    .await;
    assert!(
        seen.load(Ordering::SeqCst) >= 2,
        "ran after its failed attempt"
    );
    new.shutdown().await;
}

#[tokio::test]
async fn a_retried_unknown_name_is_dead_lettered_once_the_jobs_own_attempts_are_spent() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("unknown-spent")).await;
    let id = add(&queue, new_type_job().max_attempts(2)).await;
    let old = old_worker(&queue, WorkOptions::new());
    let job = wait_for(&queue, &id, JobState::Dead).await;
    assert_eq!(job.attempts, 2);
    assert_unknown_error(&job);
    old.shutdown().await;
}

#[tokio::test]
async fn told_to_dead_letter_a_worker_dead_letters_an_unknown_name_at_once() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("unknown-dead")).await;
    let id = add(&queue, new_type_job().max_attempts(25)).await;
    let old = old_worker(
        &queue,
        WorkOptions::new().unknown_names(UnknownNames::DeadLetter),
    );
    let job = wait_for(&queue, &id, JobState::Dead).await;
    assert_eq!(job.attempts, 1);
    assert_unknown_error(&job);
    old.shutdown().await;
}

#[tokio::test]
async fn a_job_without_a_name_is_dead_lettered_at_once_even_when_unknown_names_retry() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("unknown-nameless")).await;
    let id = add(&queue, NewJob::new(json!(null)).max_attempts(25)).await;
    let old = old_worker(&queue, WorkOptions::new());
    let job = wait_for(&queue, &id, JobState::Dead).await;
    assert_eq!(job.attempts, 1);
    let error = job.last_error.unwrap_or_default();
    assert!(error.contains("job has no name"), "{error}");
    old.shutdown().await;
}
