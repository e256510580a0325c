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

/// `./test` runs part of the suite a second time on Valkey by putting a
/// directory first on PATH whose `redis-server` is Valkey's, and says which
/// server it means in `REDQ_EXPECT_SERVER` (`redis` or `valkey`). This proves
/// the servers the harness starts are that one, so a Valkey run that quietly
/// ran on Redis fails.
#[tokio::test]
async fn the_harness_starts_the_server_the_run_asked_for() {
    let expected = std::env::var("REDQ_EXPECT_SERVER").unwrap_or_else(|_| "redis".to_owned());
    let server = RedisServer::start();
    let info: String = server.cmd(&["INFO", "server"]).await.convert().unwrap();
    // Valkey reports `server_name:valkey` (and a `valkey_version`); Redis 7
    // has no server_name field.
    let started = if info.lines().any(|l| l.trim() == "server_name:valkey") {
        "valkey"
    } else {
        "redis"
    };
    assert_eq!(started, expected, "INFO server:\n{info}");
}
