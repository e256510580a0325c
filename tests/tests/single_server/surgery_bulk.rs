//! The bulk forms: every job of a queue in a state, in batches of
//! `SURGERY_BATCH` per script call with progress after each, on one
//! namespace and over the shards of a `ShardedQueue`.

use std::time::Duration;

use redq::surgery::SURGERY_BATCH;
use redq::{IfLeased, JobState, NewJob, RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;
use serde_json::json;

const LATER: Duration = Duration::from_secs(3600);

fn delayed(n: usize, by: Duration) -> Vec<NewJob> {
    (0..n)
        .map(|i| NewJob::new(json!({ "n": i })).delay(by))
        .collect()
}

#[tokio::test]
async fn promote_all_moves_every_scheduled_job_in_bounded_batches_with_progress() {
    let server = server();
    let queue = queue(&server, "bulk-promote").await;
    let n = SURGERY_BATCH * 2 + 7;
    queue.add_batch("q", delayed(n, LATER)).await.unwrap();
    let mut reports = Vec::new();
    let done = queue
        .promote_all("q", |done, left| reports.push((done, left)))
        .await
        .unwrap();
    assert_eq!(done, n as u64);
    let batch = SURGERY_BATCH as u64;
    assert_eq!(
        reports,
        vec![(batch, n as u64 - batch), (2 * batch, 7), (n as u64, 0)]
    );
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (n as u64, 0));
}

#[tokio::test]
async fn retry_all_now_promotes_only_the_jobs_backing_off_past_a_batch_of_delayed_ones() {
    let server = server();
    let queue = queue(&server, "bulk-retry").await;
    // Backing off for two hours: behind the delayed jobs in the schedule.
    queue
        .add_batch(
            "q",
            (0..20).map(|i| NewJob::new(json!({ "n": i }))).collect(),
        )
        .await
        .unwrap();
    for job in claim_n(&queue, "q", 20).await {
        queue.nack(&job.lease(), 2 * LATER, "boom").await.unwrap();
    }
    let delayed_count = SURGERY_BATCH + 30;
    queue
        .add_batch("q", delayed(delayed_count, LATER))
        .await
        .unwrap();

    let mut rounds = 0;
    let done = queue.retry_all_now("q", |_, _| rounds += 1).await.unwrap();
    assert_eq!(done, 20);
    assert!(
        rounds >= 2,
        "one round cannot have passed {delayed_count} delayed jobs"
    );
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(
        (counts.waiting, counts.scheduled),
        (20, delayed_count as u64)
    );
    let retried = claim_n(&queue, "q", 20).await;
    assert!(retried.iter().all(|j| j.attempts == 1));
}

#[tokio::test]
async fn delete_all_empties_one_state_and_leaves_the_others() {
    let server = server();
    let queue = queue(&server, "bulk-delete").await;
    queue
        .add_batch("q", delayed(SURGERY_BATCH + 3, Duration::ZERO))
        .await
        .unwrap();
    queue.add_batch("q", delayed(5, LATER)).await.unwrap();
    let done = queue
        .delete_all("q", JobState::Waiting, IfLeased::Refuse, |_, _| {})
        .await
        .unwrap();
    assert_eq!(done, SURGERY_BATCH as u64 + 3);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (0, 5));
    assert_eq!(hlen(&server, &queue, "jobs").await, 5);
}

#[tokio::test]
async fn deleting_all_leased_jobs_needs_force_and_writes_nothing_without() {
    let server = server();
    let queue = queue(&server, "bulk-leased").await;
    queue.add_batch("q", numbered(4)).await.unwrap();
    let held = claim_n(&queue, "q", 4).await;
    let before = digest(&server).await;
    assert_invalid(
        queue
            .delete_all("q", JobState::Leased, IfLeased::Refuse, |_, _| {})
            .await,
        "state",
    );
    assert_eq!(digest(&server).await, before);
    let done = queue
        .delete_all("q", JobState::Leased, IfLeased::VoidLease, |_, _| {})
        .await
        .unwrap();
    assert_eq!(done, 4);
    assert_lease_lost(queue.extend(&held[0].lease(), LONG).await, &held[0].id);
}

#[tokio::test]
async fn deleting_all_blocked_jobs_of_one_queue_leaves_another_queues_behind_the_same_keys() {
    let server = server();
    let queue = queue(&server, "bulk-blocked").await;
    // More blocked members than one batch examines, spread over two queues.
    let per_queue = SURGERY_BATCH / 2 + 20;
    for name in ["a", "b"] {
        let jobs = (0..per_queue)
            .map(|i| NewJob::new(json!({ "n": i })).ordering_key(format!("k{}", i % 3)))
            .collect();
        queue.add_batch(name, jobs).await.unwrap();
    }
    let blocked_a = queue.counts("a").await.unwrap().blocked;
    let blocked_b = queue.counts("b").await.unwrap().blocked;
    assert!(blocked_a + blocked_b > SURGERY_BATCH as u64);
    let done = queue
        .delete_all("a", JobState::Blocked, IfLeased::Refuse, |_, _| {})
        .await
        .unwrap();
    assert_eq!(done, blocked_a);
    assert_eq!(queue.counts("a").await.unwrap().blocked, 0);
    assert_eq!(queue.counts("b").await.unwrap().blocked, blocked_b);
}

/// Two namespaces on one server as the two shards of a ShardedQueue.
async fn two_shards(server: &redq_tests::RedisServer, test: &str) -> ShardedQueue {
    let builder = RedisQueue::builder(&server.url());
    ShardedQueue::connect(builder, &redq_tests::unique_namespace(test), 2)
        .await
        .unwrap()
}

#[tokio::test]
async fn over_shards_each_change_reaches_the_shard_holding_the_job() {
    let server = server();
    let sharded = two_shards(&server, "bulk-sharded-ids").await;
    let operator = sharded.operator();
    let mut ids = Vec::new();
    for i in 0..8 {
        let job = NewJob::new(json!({ "n": i })).delay(LATER);
        ids.push(operator.add("q", job).await.unwrap().id().to_owned());
    }
    for shard in sharded.shards() {
        assert!(
            shard.counts("q").await.unwrap().scheduled > 0,
            "the jobs did not spread"
        );
    }
    for id in &ids[..4] {
        operator.promote(id).await.unwrap();
    }
    for id in &ids[4..6] {
        operator.edit_payload(id, &json!("edited")).await.unwrap();
    }
    for id in &ids[6..] {
        operator.delete_job(id, IfLeased::Refuse).await.unwrap();
    }
    let counts = operator.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (4, 2));
    assert_eq!(
        operator.inspect(&ids[4]).await.unwrap().unwrap().payload,
        json!("edited")
    );
    assert!(operator.inspect(&ids[7]).await.unwrap().is_none());
}

#[tokio::test]
async fn over_shards_a_bulk_change_counts_its_progress_over_all_of_them() {
    let server = server();
    let sharded = two_shards(&server, "bulk-sharded-all").await;
    let operator = sharded.operator();
    for i in 0..10 {
        operator
            .add("q", NewJob::new(json!(i)).delay(LATER))
            .await
            .unwrap();
    }
    let mut reports = Vec::new();
    let done = operator
        .promote_all("q", |done, left| reports.push((done, left)))
        .await
        .unwrap();
    assert_eq!(done, 10);
    assert_eq!(reports.last(), Some(&(10, 0)));
    // "left" covers the shard not reached yet.
    assert_eq!(reports[0].0 + reports[0].1, 10);
    let deleted = operator
        .delete_all("q", JobState::Waiting, IfLeased::Refuse, |_, _| {})
        .await
        .unwrap();
    assert_eq!(deleted, 10);
    assert_eq!(operator.counts("q").await.unwrap().waiting, 0);
}

/// On the shared test cluster, one shard per primary: each by-id change
/// reaches the primary holding the job, and a bulk change goes over all.
#[tokio::test]
async fn on_a_cluster_each_change_reaches_the_primary_holding_the_job() {
    let cluster = redq_tests::cluster::RedisCluster::shared();
    let builder = RedisQueue::builder(&cluster.url());
    let sharded =
        ShardedQueue::connect(builder, &redq_tests::unique_namespace("surgery-cluster"), 3)
            .await
            .expect("connecting to the test cluster");
    let operator = sharded.operator();
    let mut ids = Vec::new();
    for i in 0..9 {
        let job = NewJob::new(json!({ "n": i })).delay(LATER);
        ids.push(operator.add("q", job).await.unwrap().id().to_owned());
    }
    for id in &ids[..3] {
        operator.promote(id).await.unwrap();
    }
    for id in &ids[3..6] {
        operator.edit_payload(id, &json!("edited")).await.unwrap();
        assert_eq!(
            operator.inspect(id).await.unwrap().unwrap().payload,
            json!("edited")
        );
    }
    operator
        .delete_job(&ids[6], IfLeased::Refuse)
        .await
        .unwrap();
    assert!(operator.inspect(&ids[6]).await.unwrap().is_none());
    let counts = operator.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (3, 5));
    let done = operator
        .delete_all("q", JobState::Scheduled, IfLeased::Refuse, |_, _| {})
        .await
        .unwrap();
    assert_eq!(done, 5);
    let done = operator
        .delete_all("q", JobState::Waiting, IfLeased::Refuse, |_, _| {})
        .await
        .unwrap();
    assert_eq!(done, 3);
}
