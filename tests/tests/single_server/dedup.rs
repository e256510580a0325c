//! Dedup keys: a duplicate returns the live job's id and creates nothing.

use std::time::{Duration, SystemTime};

use redq::{Enqueued, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{wait_until, RedisServer};
use serde_json::json;

fn keyed(n: i64) -> NewJob {
    NewJob::new(json!({ "n": n })).dedup_key("invoice:42")
}

/// Enqueue a duplicate and check it returns `id` and writes nothing (no new
/// job, no new payload).
async fn assert_duplicate_of(server: &RedisServer, queue: &RedisQueue, id: &str, n: i64) {
    let jobs_before = hlen(server, queue, "jobs").await;
    let payloads_before = stored_payloads(server, queue).await;
    let outcome = queue.add("q", keyed(n)).await.unwrap();
    assert_eq!(outcome, Enqueued::Duplicate(id.to_owned()));
    assert_eq!(hlen(server, queue, "jobs").await, jobs_before);
    assert_eq!(stored_payloads(server, queue).await, payloads_before);
}

#[tokio::test]
async fn a_duplicate_returns_the_existing_id_while_the_job_waits_is_leased_or_retries() {
    let server = server();
    let queue = queue(&server, "dedup-live").await;
    let first = queue.add("q", keyed(0)).await.unwrap();
    let Enqueued::Created(id) = first else {
        panic!("first enqueue creates: {first:?}");
    };
    // Waiting.
    assert_duplicate_of(&server, &queue, &id, 1).await;
    // Leased.
    let job = claim_n(&queue, "q", 1).await.remove(0);
    assert_eq!(job.payload, json!({"n": 0}));
    assert_duplicate_of(&server, &queue, &id, 2).await;
    // Awaiting a retry (scheduled).
    queue
        .nack(&job.lease(), Duration::from_secs(60), "boom")
        .await
        .unwrap();
    assert_eq!(queue.counts("q").await.unwrap().scheduled, 1);
    assert_duplicate_of(&server, &queue, &id, 3).await;
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled, counts.leased), (0, 1, 0));
}

#[tokio::test]
async fn a_duplicate_of_a_delayed_job_returns_its_id() {
    let server = server();
    let queue = queue(&server, "dedup-scheduled").await;
    let first = queue
        .add("q", keyed(0).delay(Duration::from_secs(3600)))
        .await
        .unwrap();
    assert_duplicate_of(&server, &queue, first.id(), 1).await;
    assert_eq!(queue.counts("q").await.unwrap().scheduled, 1);
}

#[tokio::test]
async fn a_duplicate_returns_the_id_while_a_lapsed_job_awaits_reclaim_and_after() {
    let server = server();
    let queue = queue(&server, "dedup-lapsed").await;
    let first = queue.add("q", keyed(0)).await.unwrap();
    let _job = queue.claim("q", 1, SHORT).await.unwrap();
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts("q").await.unwrap().lapsed == 1
    })
    .await;
    assert_duplicate_of(&server, &queue, first.id(), 1).await;
    assert_eq!(queue.reclaim("q", 10).await.unwrap().requeued, 1);
    assert_duplicate_of(&server, &queue, first.id(), 2).await;
}

#[tokio::test]
async fn the_key_is_free_again_after_the_job_completes() {
    let server = server();
    let queue = queue(&server, "dedup-ack").await;
    let first = queue.add("q", keyed(0)).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.ack(&job.lease()).await.unwrap();
    let second = queue.add("q", keyed(1)).await.unwrap();
    assert!(matches!(second, Enqueued::Created(_)), "{second:?}");
    assert_ne!(second.id(), first.id());
    assert_eq!(claim_n(&queue, "q", 1).await[0].payload, json!({"n": 1}));
}

#[tokio::test]
async fn the_key_is_free_again_after_the_job_is_dead_lettered() {
    let server = server();
    let queue = queue(&server, "dedup-dead").await;
    let first = queue.add("q", keyed(0).max_attempts(1)).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.nack(&job.lease(), LONG, "spent").await.unwrap();
    assert_eq!(queue.counts("q").await.unwrap().dead, 1);
    let second = queue.add("q", keyed(1)).await.unwrap();
    assert!(matches!(second, Enqueued::Created(_)), "{second:?}");
    // Requeueing the old dead letter does not take the key back: the new job
    // holds it, and further duplicates return the new job's id.
    queue
        .requeue_dead("q", &[first.id().to_owned()])
        .await
        .unwrap();
    assert_duplicate_of(&server, &queue, second.id(), 2).await;
}

#[tokio::test]
async fn dedup_keys_span_every_queue_of_the_namespace_but_not_other_namespaces() {
    let server = server();
    let queue = queue(&server, "dedup-span").await;
    let first = queue.add("a", keyed(0)).await.unwrap();
    let other_queue = queue.add("b", keyed(1)).await.unwrap();
    assert_eq!(other_queue, Enqueued::Duplicate(first.id().to_owned()));
    assert_eq!(queue.counts("b").await.unwrap().waiting, 0);

    let elsewhere = self::queue(&server, "dedup-span-other").await;
    let created = elsewhere.add("a", keyed(2)).await.unwrap();
    assert!(matches!(created, Enqueued::Created(_)));
}

#[tokio::test]
async fn ttl_mode_holds_the_key_after_completion_until_the_ttl_passes() {
    let server = server();
    let queue = queue(&server, "dedup-ttl").await;
    let ttl = Duration::from_millis(400);
    let started = SystemTime::now();
    let first = queue
        .add("q", NewJob::new(json!(0)).dedup_key_for("digest:ada", ttl))
        .await
        .unwrap();
    let enqueued = SystemTime::now();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.ack(&job.lease()).await.unwrap();
    let mut outcome = None;
    wait_until(DEADLINE, "the dedup TTL to pass", async || {
        let asked = SystemTime::now();
        let o = queue
            .add("q", NewJob::new(json!(1)).dedup_key_for("digest:ada", ttl))
            .await
            .unwrap();
        let created = matches!(o, Enqueued::Created(_));
        if !created {
            // Until the TTL passes, the completed job's id comes back.
            assert_eq!(o, Enqueued::Duplicate(first.id().to_owned()));
            assert!(asked < enqueued + ttl + Duration::from_millis(50));
        }
        outcome = Some(o);
        created
    })
    .await;
    assert!(started.elapsed().unwrap() >= ttl - Duration::from_millis(50));
    let jobs = claim_n(&queue, "q", 1).await;
    assert_eq!(jobs[0].id, outcome.unwrap().id());
}

#[tokio::test]
async fn ttl_mode_lets_a_new_job_in_after_the_ttl_even_while_the_first_waits() {
    let server = server();
    let queue = queue(&server, "dedup-ttl-waiting").await;
    let ttl = Duration::from_millis(200);
    let first = queue
        .add("q", NewJob::new(json!(0)).dedup_key_for("k", ttl))
        .await
        .unwrap();
    assert_eq!(
        queue
            .add("q", NewJob::new(json!(1)).dedup_key_for("k", ttl))
            .await
            .unwrap(),
        Enqueued::Duplicate(first.id().to_owned())
    );
    wait_until(DEADLINE, "the TTL to pass", async || {
        matches!(
            queue
                .add("q", NewJob::new(json!(2)).dedup_key_for("k", ttl))
                .await
                .unwrap(),
            Enqueued::Created(_)
        )
    })
    .await;
    let jobs = claim_n(&queue, "q", 2).await;
    assert_eq!(jobs[0].payload, json!(0));
    assert_eq!(jobs[1].payload, json!(2));
}

#[tokio::test]
async fn jobs_without_a_dedup_key_are_never_duplicates() {
    let server = server();
    let queue = queue(&server, "no-dedup").await;
    let outcomes = queue
        .add_batch("q", vec![NewJob::new(json!(1)), NewJob::new(json!(1))])
        .await
        .unwrap();
    assert!(outcomes.iter().all(|o| matches!(o, Enqueued::Created(_))));
    assert_ne!(outcomes[0].id(), outcomes[1].id());
}
