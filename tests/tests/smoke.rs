use std::time::Duration;

use redq::{Acked, NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};

#[tokio::test]
async fn enqueue_claim_ack_round_trip() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("smoke"))
        .connect()
        .await
        .unwrap();
    let created = queue
        .add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap();
    let jobs = queue
        .claim("emails", 10, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].id, created.id());
    assert_eq!(jobs[0].payload, serde_json::json!({"to": "ada"}));
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    assert_eq!(
        queue.ack(&jobs[0].lease()).await.unwrap(),
        Acked::AlreadyGone
    );
    let counts = queue.counts("emails").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 0));
    assert_eq!(
        queue
            .stats("emails")
            .await
            .unwrap()
            .iter()
            .map(|b| b.processed)
            .sum::<u64>(),
        1
    );
}
