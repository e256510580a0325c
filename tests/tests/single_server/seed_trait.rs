//! The seed `Queue` trait as implemented by `RedisQueue`: the Redis-specific
//! parts (the generic semantics are in queue_trait.rs): fencing of the
//! id-only calls through remembered leases, across handles.

use std::time::Duration;

use redq::{NewJob, Queue, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

async fn two_workers(server: &RedisServer, test: &str) -> (RedisQueue, RedisQueue) {
    let ns = unique_namespace(test);
    (handle(server, &ns).await, handle(server, &ns).await)
}

async fn lapse(queue: &RedisQueue) {
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts("q").await.unwrap().lapsed > 0
    })
    .await;
}

/// Works with any backend: what a user of the trait writes.
async fn claim_one<Q: Queue>(q: &Q, lease: Duration) -> redq::Job {
    let mut jobs = q.claim("q", 1, lease).await.unwrap();
    assert_eq!(jobs.len(), 1);
    jobs.remove(0)
}

#[tokio::test]
async fn a_stale_holder_cannot_complete_retry_or_fail_a_job_another_worker_claimed() {
    let server = server();
    let (a, b) = two_workers(&server, "seed-fencing").await;
    Queue::enqueue(&a, "q", vec![json!("job")]).await.unwrap();
    let stale = claim_one(&a, SHORT).await;
    lapse(&a).await;
    let current = claim_one(&b, LONG).await;
    assert_eq!(
        (current.id.as_str(), current.attempts),
        (stale.id.as_str(), 1)
    );

    let before = digest(&server).await;
    assert_lease_lost(a.complete(&stale.id).await, &stale.id);
    assert_lease_lost(a.retry(&stale.id, Duration::ZERO, "late").await, &stale.id);
    assert_lease_lost(a.fail(&stale.id, "late").await, &stale.id);
    assert_eq!(
        digest(&server).await,
        before,
        "the stale calls changed nothing"
    );

    b.complete(&current.id).await.unwrap();
    assert_eq!(a.counts("q").await.unwrap().leased, 0);
    assert_eq!(Queue::next_due(&a, "q").await.unwrap(), None);
}

#[tokio::test]
async fn a_stale_holder_is_fenced_even_when_it_claimed_through_the_inherent_method() {
    // With the trait in scope, `queue.claim(..)` on a concrete RedisQueue
    // resolves to the inherent method; the id-only calls must stay fenced.
    let server = server();
    let (a, b) = two_workers(&server, "seed-fencing-inherent").await;
    a.add("q", NewJob::new(json!("job"))).await.unwrap();
    let stale = a.claim("q", 1, SHORT).await.unwrap().remove(0);
    lapse(&a).await;
    let current = b.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(current.id, stale.id);

    let before = digest(&server).await;
    assert_lease_lost(a.complete(&stale.id).await, &stale.id);
    assert_lease_lost(a.retry(&stale.id, Duration::ZERO, "late").await, &stale.id);
    assert_lease_lost(a.fail(&stale.id, "late").await, &stale.id);
    assert_eq!(digest(&server).await, before);
    b.complete(&current.id).await.unwrap();
}

#[tokio::test]
async fn a_stale_holder_is_fenced_after_it_reclaimed_and_completed_the_job_itself() {
    let server = server();
    let (a, b) = two_workers(&server, "seed-own-reclaim").await;
    Queue::enqueue(&a, "q", vec![json!(1)]).await.unwrap();
    let first = claim_one(&a, SHORT).await;
    lapse(&a).await;
    // The same handle claims the job again: its remembered lease is the new one.
    let second = claim_one(&a, LONG).await;
    assert_eq!(second.id, first.id);
    a.retry(&second.id, Duration::ZERO, "again").await.unwrap();
    let third = claim_one(&b, LONG).await;
    assert_eq!(third.attempts, 2);
    assert_lease_lost(a.complete(&first.id).await, &first.id);
    b.complete(&third.id).await.unwrap();
}

#[tokio::test]
async fn another_identity_cannot_resolve_a_job_it_does_not_hold() {
    let server = server();
    let (a, b) = two_workers(&server, "seed-other-handle").await;
    Queue::enqueue(&a, "q", vec![json!(1)]).await.unwrap();
    let job = claim_one(&a, LONG).await;
    let before = digest(&server).await;
    assert_lease_lost(b.complete(&job.id).await, &job.id);
    assert_lease_lost(b.retry(&job.id, Duration::ZERO, "x").await, &job.id);
    assert_lease_lost(b.fail(&job.id, "x").await, &job.id);
    assert_eq!(digest(&server).await, before);
    a.complete(&job.id).await.unwrap();
}

#[tokio::test]
async fn the_same_identity_may_resolve_jobs_claimed_through_another_handle() {
    // A clone shares the handle; a handle built with the same identity (a
    // restarted process with a configured identity) holds the same leases.
    let server = server();
    let ns = unique_namespace("seed-same-identity");
    let connect = || {
        RedisQueue::builder(&server.url())
            .namespace(&ns)
            .identity(77, 3)
            .connect()
    };
    let first = connect().await.unwrap();
    Queue::enqueue(&first, "q", vec![json!(1), json!(2), json!(3)])
        .await
        .unwrap();
    let jobs = first.claim("q", 3, LONG).await.unwrap();
    let clone = first.clone();
    clone.complete(&jobs[0].id).await.unwrap();
    let restarted = connect().await.unwrap();
    restarted
        .retry(&jobs[1].id, Duration::from_secs(60), "later")
        .await
        .unwrap();
    restarted.fail(&jobs[2].id, "bad").await.unwrap();
    let counts = first.counts("q").await.unwrap();
    assert_eq!((counts.leased, counts.scheduled, counts.dead), (0, 1, 1));
    // The retried job is no longer held by anyone: nothing to complete.
    assert_lease_lost(first.complete(&jobs[1].id).await, &jobs[1].id);
}

#[tokio::test]
async fn complete_of_a_finished_or_unknown_job_is_harmless() {
    let server = server();
    let queue = queue(&server, "seed-complete-twice").await;
    Queue::enqueue(&queue, "q", vec![json!(1)]).await.unwrap();
    let job = claim_one(&queue, LONG).await;
    queue.complete(&job.id).await.unwrap();
    let before = digest(&server).await;
    queue.complete(&job.id).await.unwrap();
    queue.complete("01JUNKNOWNUNKNOWNUNKNOWN00").await.unwrap();
    assert_eq!(digest(&server).await, before);
    match queue.retry(&job.id, Duration::ZERO, "x").await {
        Err(QueueError::JobNotFound { id }) => assert_eq!(id, job.id),
        other => panic!("expected JobNotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn seed_jobs_carry_the_documented_fields() {
    let server = server();
    let queue = queue(&server, "seed-fields").await;
    Queue::enqueue(&queue, "deliveries", vec![json!({"to": "x"}), json!([1])])
        .await
        .unwrap();
    Queue::enqueue(&queue, "deliveries", Vec::new())
        .await
        .unwrap();
    let jobs = Queue::claim(&queue, "deliveries", 10, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].queue, "deliveries");
    assert_eq!(jobs[0].payload, json!({"to": "x"}));
    assert_eq!(jobs[1].payload, json!([1]));
    assert!(jobs.iter().all(|j| j.attempts == 0 && !j.id.is_empty()));
    queue.retry(&jobs[0].id, Duration::ZERO, "e").await.unwrap();
    let again = Queue::claim(&queue, "deliveries", 10, LONG).await.unwrap();
    assert_eq!(again[0].attempts, 1);
}

#[tokio::test]
async fn next_due_is_none_when_empty_zero_when_waiting_and_the_delay_when_scheduled() {
    let server = server();
    let queue = queue(&server, "seed-next-due").await;
    assert_eq!(Queue::next_due(&queue, "q").await.unwrap(), None);
    let delay = Duration::from_secs(60);
    queue
        .add("q", NewJob::new(json!(1)).delay(delay))
        .await
        .unwrap();
    let due = Queue::next_due(&queue, "q").await.unwrap().unwrap();
    assert!(
        due > delay - Duration::from_secs(5) && due <= delay,
        "{due:?}"
    );
    Queue::enqueue(&queue, "q", vec![json!(2)]).await.unwrap();
    assert_eq!(
        Queue::next_due(&queue, "q").await.unwrap(),
        Some(Duration::ZERO)
    );
    // A paused queue has nothing due: workers may sleep.
    queue.pause("q").await.unwrap();
    assert_eq!(Queue::next_due(&queue, "q").await.unwrap(), None);
    queue.resume("q").await.unwrap();
    assert_eq!(
        Queue::next_due(&queue, "q").await.unwrap(),
        Some(Duration::ZERO)
    );
}
