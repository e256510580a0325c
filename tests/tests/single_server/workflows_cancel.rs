//! Workflows where the review found them wrong: a deleted callback reads
//! as deleted, not pending.

use std::time::Duration;

use redq::workflow::{Batch, WaiterDecision};
use redq::{IfLeased, Job, NewJob, RedisQueue};
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
