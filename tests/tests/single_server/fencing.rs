//! Lease fencing: once a lease lapsed and the job was reclaimed or claimed by
//! someone else, the old holder's calls fail with `LeaseLost` and change
//! nothing; repeated and resent calls are harmless.

use std::time::Duration;

use redq::{Acked, Job, Nacked, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

/// Every fenced call of a stale holder is refused and the dataset is
/// unchanged.
async fn assert_stale_holder_changes_nothing(
    server: &RedisServer,
    queue: &RedisQueue,
    stale: &Job,
) {
    let before = digest(server).await;
    let lease = stale.lease();
    assert_lease_lost(queue.ack(&lease).await, &stale.id);
    assert_lease_lost(queue.nack(&lease, Duration::ZERO, "late").await, &stale.id);
    assert_lease_lost(queue.dead_letter(&lease, "late").await, &stale.id);
    assert_lease_lost(queue.extend(&lease, LONG).await, &stale.id);
    assert_lease_lost(queue.release(&lease).await, &stale.id);
    assert_eq!(digest(server).await, before, "a stale call wrote something");
}

async fn lapse(queue: &RedisQueue, name: &str) {
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts(name).await.unwrap().lapsed > 0
    })
    .await;
}

#[tokio::test]
async fn stale_holder_ack_after_reclaim_is_rejected_and_changes_nothing() {
    let server = server();
    let queue = queue(&server, "stale-reclaim").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let stale = queue.claim("q", 1, SHORT).await.unwrap().remove(0);
    lapse(&queue, "q").await;
    assert_eq!(queue.reclaim("q", 10).await.unwrap().requeued, 1);

    assert_stale_holder_changes_nothing(&server, &queue, &stale).await;
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased, counts.dead), (1, 0, 0));
    let record = queue.inspect(&stale.id).await.unwrap().unwrap();
    assert_eq!(record.attempts, 1);
}

#[tokio::test]
async fn stale_holder_calls_after_another_worker_claimed_the_job_are_rejected() {
    let server = server();
    let ns = unique_namespace("stale-reclaimed-by-other");
    let worker_a = handle(&server, &ns).await;
    let worker_b = handle(&server, &ns).await;
    worker_a.add("q", NewJob::new(json!(1))).await.unwrap();
    let stale = worker_a.claim("q", 1, SHORT).await.unwrap().remove(0);
    lapse(&worker_a, "q").await;
    // B's claim reclaims the lapsed lease and takes the job itself.
    let current = worker_b.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(current.id, stale.id);
    assert!(current.lease_id > stale.lease_id);
    assert_eq!(current.attempts, 1);

    assert_stale_holder_changes_nothing(&server, &worker_a, &stale).await;
    let record = worker_a.inspect(&stale.id).await.unwrap().unwrap();
    let b = worker_b.identity();
    assert_eq!(record.holder, Some((b.node, b.instance)));
    assert_eq!(record.lease_id, Some(current.lease_id));

    // The current holder is unaffected.
    assert_eq!(
        worker_b.ack(&current.lease()).await.unwrap(),
        Acked::Completed
    );
    // After completion, the stale holder's ack finds nothing to do.
    assert_eq!(
        worker_a.ack(&stale.lease()).await.unwrap(),
        Acked::AlreadyGone
    );
}

#[tokio::test]
async fn stale_holder_calls_after_the_job_was_dead_lettered_are_rejected() {
    let server = server();
    let queue = queue(&server, "stale-dead").await;
    queue
        .add("q", NewJob::new(json!(1)).max_attempts(1))
        .await
        .unwrap();
    let stale = queue.claim("q", 1, SHORT).await.unwrap().remove(0);
    lapse(&queue, "q").await;
    assert_eq!(queue.reclaim("q", 10).await.unwrap().dead_lettered, 1);
    assert_stale_holder_changes_nothing(&server, &queue, &stale).await;
    assert_eq!(queue.counts("q").await.unwrap().dead, 1);
}

#[tokio::test]
async fn a_lapsed_lease_nobody_reclaimed_yet_can_still_be_extended_and_acked() {
    let server = server();
    let queue = queue(&server, "lapsed-extend").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = queue.claim("q", 1, SHORT).await.unwrap().remove(0);
    lapse(&queue, "q").await;
    queue.extend(&job.lease(), LONG).await.unwrap();
    assert_eq!(queue.counts("q").await.unwrap().lapsed, 0);
    assert_eq!(queue.reclaim("q", 10).await.unwrap().requeued, 0);
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
}

#[tokio::test]
async fn a_repeated_ack_is_already_gone_and_changes_nothing() {
    let server = server();
    let queue = queue(&server, "repeat-ack").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
    let before = digest(&server).await;
    for _ in 0..3 {
        assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::AlreadyGone);
    }
    assert_eq!(digest(&server).await, before);
    let processed: u64 = queue
        .stats("q")
        .await
        .unwrap()
        .iter()
        .map(|b| b.processed)
        .sum();
    assert_eq!(processed, 1, "a repeated ack is not counted again");
}

#[tokio::test]
async fn a_resent_nack_under_the_same_lease_is_harmless() {
    let server = server();
    let ns = unique_namespace("resent-nack");
    let worker_a = handle(&server, &ns).await;
    let worker_b = handle(&server, &ns).await;
    worker_a.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&worker_a, "q", 1).await.remove(0);
    let first = worker_a
        .nack(&job.lease(), Duration::ZERO, "boom")
        .await
        .unwrap();
    assert!(matches!(first, Nacked::Retrying { attempts: 1, .. }));
    let before = digest(&server).await;
    let resent = worker_a
        .nack(&job.lease(), Duration::ZERO, "boom")
        .await
        .unwrap();
    assert!(matches!(resent, Nacked::Retrying { attempts: 1, .. }));
    assert_eq!(
        digest(&server).await,
        before,
        "a resent nack wrote something"
    );

    // Even after someone else claimed the retry, the resend changes nothing.
    let current = claim_n(&worker_b, "q", 1).await.remove(0);
    assert_eq!(current.attempts, 1);
    let before = digest(&server).await;
    worker_a
        .nack(&job.lease(), Duration::ZERO, "boom")
        .await
        .unwrap();
    assert_eq!(digest(&server).await, before);
    assert_eq!(
        worker_b.ack(&current.lease()).await.unwrap(),
        Acked::Completed
    );
}

#[tokio::test]
async fn a_resent_dead_letter_reports_dead_and_changes_nothing() {
    let server = server();
    let queue = queue(&server, "resent-dead").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    assert_eq!(
        queue.dead_letter(&job.lease(), "poison").await.unwrap(),
        Nacked::DeadLettered { attempts: 1 }
    );
    let before = digest(&server).await;
    assert_eq!(
        queue.dead_letter(&job.lease(), "poison").await.unwrap(),
        Nacked::DeadLettered { attempts: 1 }
    );
    assert_eq!(digest(&server).await, before);
}

#[tokio::test]
async fn after_a_nack_the_same_lease_can_no_longer_ack_extend_or_release() {
    let server = server();
    let queue = queue(&server, "nack-then-ack").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue
        .nack(&job.lease(), Duration::from_secs(60), "e")
        .await
        .unwrap();
    let before = digest(&server).await;
    assert_lease_lost(queue.ack(&job.lease()).await, &job.id);
    assert_lease_lost(queue.extend(&job.lease(), LONG).await, &job.id);
    assert_lease_lost(queue.release(&job.lease()).await, &job.id);
    assert_eq!(digest(&server).await, before);
}

#[tokio::test]
async fn after_a_release_the_same_lease_can_no_longer_ack_or_nack() {
    let server = server();
    let queue = queue(&server, "release-then-nack").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.release(&job.lease()).await.unwrap();
    let before = digest(&server).await;
    assert_lease_lost(queue.ack(&job.lease()).await, &job.id);
    assert_lease_lost(queue.nack(&job.lease(), Duration::ZERO, "e").await, &job.id);
    assert_lease_lost(queue.dead_letter(&job.lease(), "e").await, &job.id);
    assert_lease_lost(queue.extend(&job.lease(), LONG).await, &job.id);
    assert_eq!(digest(&server).await, before);
    let again = claim_n(&queue, "q", 1).await;
    assert_eq!(again[0].attempts, 0);
}

#[tokio::test]
async fn a_lease_id_from_another_job_is_rejected() {
    let server = server();
    let queue = queue(&server, "cross-lease").await;
    queue.add_batch("q", numbered(2)).await.unwrap();
    let jobs = claim_n(&queue, "q", 2).await;
    let mut forged = jobs[0].lease();
    forged.lease_id = jobs[1].lease_id;
    let before = digest(&server).await;
    assert_lease_lost(queue.ack(&forged).await, &jobs[0].id);
    assert_lease_lost(queue.nack(&forged, Duration::ZERO, "e").await, &jobs[0].id);
    assert_eq!(digest(&server).await, before);
}
