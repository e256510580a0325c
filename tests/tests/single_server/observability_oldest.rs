//! The oldest ready job's age reads the longest-waiting job of any
//! priority, not the claim order's head: a job starved by a stream of
//! higher-priority jobs stays visible to an age alert.

use std::time::{Duration, SystemTime};

use redq::NewJob;
use redq_tests::fixtures::*;
use serde_json::json;

async fn enqueued_at(queue: &redq::RedisQueue, id: &str) -> SystemTime {
    queue
        .inspect(id)
        .await
        .unwrap()
        .expect("the job")
        .enqueued_at
}

#[tokio::test]
async fn a_starved_low_priority_job_stays_the_oldest_ready() {
    let server = server();
    let queue = queue(&server, "oldest-bands").await;
    // Plain (the fifo list), then priority 1 (the zset's lowest band).
    let plain = queue.add("q", NewJob::new(json!("plain"))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    queue
        .add("q", NewJob::new(json!("low")).priority(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Newer jobs of higher priorities head the claim order.
    for p in [9, 200, 255] {
        queue
            .add("q", NewJob::new(json!(p)).priority(p))
            .await
            .unwrap();
    }
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(counts.waiting, 5);
    let oldest = enqueued_at(&queue, plain.id()).await;
    assert_eq!(counts.head_enqueued_at, Some(oldest));
    assert_eq!(counts.ready_since(), Some(oldest));
    let age = counts.now.duration_since(oldest).unwrap();
    assert!(age >= Duration::from_secs(1), "age {age:?}");

    // Claim order stays by priority: the oldest is claimed last.
    let claimed = claim_n(&queue, "q", 5).await;
    assert_eq!(claimed[4].id, plain.id());
    assert_eq!(queue.counts("q").await.unwrap().head_enqueued_at, None);
}

#[tokio::test]
async fn the_oldest_in_a_lower_band_of_the_zset_is_found() {
    let server = server();
    let queue = queue(&server, "oldest-zset").await;
    let low = queue
        .add("q", NewJob::new(json!("low")).priority(3))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for p in [4, 4, 100] {
        queue
            .add("q", NewJob::new(json!(p)).priority(p))
            .await
            .unwrap();
    }
    queue.add("q", NewJob::new(json!("plain"))).await.unwrap();
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(counts.waiting, 5);
    assert_eq!(
        counts.head_enqueued_at,
        Some(enqueued_at(&queue, low.id()).await)
    );
}
