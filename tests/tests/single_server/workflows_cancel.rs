//! Workflows where the review found them wrong: deciding a job that waits
//! on nothing says what it is; a deleted callback reads as deleted, not
//! pending.

use std::time::Duration;

use redq::workflow::{Batch, Decision, WaiterDecision};
use redq::{IfLeased, Job, JobState, NewJob, QueueError, RedisQueue, Retention};
use redq_tests::fixtures::handle;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

const LEASE: Duration = Duration::from_secs(30);

/// Claim what `queue` hands out now and acknowledge it; how many.
async fn run_all(queue: &RedisQueue, name: &str) -> usize {
    let jobs = queue.claim(name, 1000, LEASE).await.unwrap();
    let leases: Vec<_> = jobs.iter().map(Job::lease).collect();
    if !leases.is_empty() {
        for outcome in queue.ack_batch(&leases).await.unwrap() {
            outcome.unwrap();
        }
    }
    jobs.len()
}

/// The rule of a refused decision about a job that is no waiter.
async fn refusal(queue: &RedisQueue, id: &str) -> String {
    match queue.decide_held(id, Decision::Release, "ops").await {
        Err(QueueError::Invalid {
            what: "waiter",
            rule,
            ..
        }) => rule,
        other => panic!("{id}: {other:?}"),
    }
}

#[tokio::test]
async fn deciding_a_job_that_waits_on_nothing_says_what_it_is() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-decide-words")).await;
    let waiting = queue.add("mail", NewJob::new(json!(1))).await.unwrap();
    let id = waiting.id();
    assert_eq!(
        refusal(&queue, id).await,
        format!("job {id} (queue mail, state waiting) waits on nothing: there is nothing to release or fail")
    );

    let dead = queue.add("ledger", NewJob::new(json!(2))).await.unwrap();
    let job = queue.claim("ledger", 10, LEASE).await.unwrap();
    for job in &job {
        queue.dead_letter(&job.lease(), "boom").await.unwrap();
    }
    assert!(refusal(&queue, dead.id())
        .await
        .contains("(queue ledger, state dead) waits on nothing"));

    // A batch's on_success cancelled by the batch's failure: kept, and said.
    queue
        .set_retention("pdf", &Retention::new().max_count(100))
        .await
        .unwrap();
    let batch = Batch::new()
        .job("pages", NewJob::new(json!("p")))
        .on_success("pdf", NewJob::new(json!("pdf")));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let job = queue.claim("pages", 1, LEASE).await.unwrap().remove(0);
    queue.dead_letter(&job.lease(), "kaput").await.unwrap();
    assert_eq!(run_all(&queue, "pdf").await, 0);
    let callback = handle.callbacks[0].id();
    let rule = refusal(&queue, callback).await;
    assert!(rule.contains("was cancelled by its batch"), "{rule}");
    assert!(rule.contains("OnFailure::Hold"), "{rule}");

    // No trace at all: not found, as before.
    assert!(matches!(
        queue
            .decide_held("01NOSUCHJOB0000000000000", Decision::Release, "ops")
            .await,
        Err(QueueError::JobNotFound { .. })
    ));
    assert_eq!(
        queue.inspect(id).await.unwrap().unwrap().state,
        JobState::Waiting
    );
}

#[tokio::test]
async fn a_deleted_callback_reads_as_deleted_not_pending() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-deleted-waiter")).await;
    let batch = Batch::new()
        .job("work", NewJob::new(json!(1)))
        .on_complete("after", NewJob::new(json!("a")))
        .on_complete("after", NewJob::new(json!("b")));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let deleted = handle.callbacks[0].id();
    queue.delete_job(deleted, IfLeased::Refuse).await.unwrap();
    let decisions = |status: redq::workflow::GateStatus| {
        status
            .waiters
            .iter()
            .map(|w| w.decision)
            .collect::<Vec<_>>()
    };
    let status = queue.gate(handle.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        decisions(status),
        [WaiterDecision::Deleted, WaiterDecision::Pending]
    );
    // Its batch still finishes and releases the other one.
    assert_eq!(run_all(&queue, "work").await, 1);
    assert_eq!(run_all(&queue, "after").await, 1);
    let status = queue.gate(handle.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        decisions(status),
        [WaiterDecision::Deleted, WaiterDecision::Released]
    );
}
