//! Concurrent single enqueues on one handle are coalesced into batches:
//! fewer script calls, and every caller still gets its own outcome.

use std::collections::HashSet;

use futures::future::join_all;
use redq::{Enqueued, NewJob, QueueError, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

#[tokio::test]
async fn concurrent_adds_share_script_calls_and_each_gets_its_own_id() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("coalesce"))
        .connect()
        .await
        .unwrap();
    server.cmd(&["CONFIG", "RESETSTAT"]).await;
    let adds = (0..500).map(|i| queue.add("mail", NewJob::new(json!({ "i": i }))));
    let outcomes = join_all(adds).await;
    let ids: HashSet<String> = outcomes
        .iter()
        .map(|o| match o {
            Ok(Enqueued::Created(id)) => id.clone(),
            other => panic!("expected a created job, got {other:?}"),
        })
        .collect();
    assert_eq!(ids.len(), 500, "every add created its own job");
    assert_eq!(queue.counts("mail").await.unwrap().waiting, 500);
    let calls = server.script_calls().await;
    assert!(calls > 0, "the count sees no script call");
    assert!(
        calls < 250,
        "500 concurrent adds took {calls} script calls: not coalesced"
    );
}

#[tokio::test]
async fn dedup_holds_across_a_coalesced_batch() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("coalesce-dedup"))
        .connect()
        .await
        .unwrap();
    let adds = (0..50).map(|i| {
        queue.add(
            "mail",
            NewJob::new(json!({ "i": i })).dedup_key("welcome:ada"),
        )
    });
    let outcomes: Vec<Enqueued> = join_all(adds)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let created: Vec<&Enqueued> = outcomes
        .iter()
        .filter(|o| matches!(o, Enqueued::Created(_)))
        .collect();
    assert_eq!(created.len(), 1, "{outcomes:?}");
    assert!(
        outcomes.iter().all(|o| o.id() == created[0].id()),
        "every duplicate names the one job"
    );
    assert_eq!(queue.counts("mail").await.unwrap().waiting, 1);
}

#[tokio::test]
async fn a_bad_job_fails_only_its_own_add() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("coalesce-bad"))
        .payload_limit(64)
        .connect()
        .await
        .unwrap();
    let adds = (0..40).map(|i| {
        let payload = if i == 7 {
            json!("x".repeat(100))
        } else {
            json!({ "i": i })
        };
        queue.add("mail", NewJob::new(payload))
    });
    let outcomes = join_all(adds).await;
    for (i, outcome) in outcomes.iter().enumerate() {
        match (i, outcome) {
            (7, Err(QueueError::PayloadTooLarge { .. })) => {}
            (7, other) => panic!("the oversized job: {other:?}"),
            (_, Ok(Enqueued::Created(_))) => {}
            (_, other) => panic!("job {i}: {other:?}"),
        }
    }
    assert_eq!(queue.counts("mail").await.unwrap().waiting, 39);
}
