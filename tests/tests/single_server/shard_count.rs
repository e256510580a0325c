//! A sharded queue's namespaces say which shard count they belong to: a
//! `ShardedQueue::connect` (its producers and workers) marks them, and
//! `ShardedQueue::attach` (an operator's tool) refuses a count the marks
//! contradict, since the namespaces of another count can overlap with the
//! right ones and show a plausible part of the queue.

use redq::{NewJob, QueueError, RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;
use redq_tests::unique_namespace;
use serde_json::json;

#[tokio::test]
async fn an_operator_attaching_with_another_shard_count_is_refused_and_writes_nothing() {
    let server = server();
    let base = unique_namespace("shard-count");
    let builder = || RedisQueue::builder(&server.url());
    // Before any producer connected, nothing is marked: any count attaches.
    let early = ShardedQueue::attach(builder(), &base, 4).await.unwrap();
    assert_eq!(early.shards().len(), 4);
    let keys_before = server.cmd(&["DBSIZE"]).await.as_i64().unwrap();
    assert_eq!(keys_before, 0, "attach wrote nothing");

    let producer = ShardedQueue::connect(builder(), &base, 3).await.unwrap();
    for n in 0..12 {
        producer.add("orders", NewJob::new(json!(n))).await.unwrap();
    }
    let right = ShardedQueue::attach(builder(), &base, 3).await.unwrap();
    assert_eq!(right.operator().counts("orders").await.unwrap().waiting, 12);

    // Every other count is refused, whether its namespaces overlap with
    // the right ones or not (the base's own mark is read either way), and
    // the refused handles' connections are closed, not left open.
    let baseline = server.connected_clients().await;
    for wrong in [2, 4, 5] {
        match ShardedQueue::attach(builder(), &base, wrong).await {
            Err(QueueError::Invalid { what, value, rule }) => {
                assert_eq!(what, "shard count");
                assert_eq!(value, wrong.to_string());
                assert!(rule.contains("spread over 3 shards"), "{rule}");
            }
            other => panic!("{wrong} shards were not refused: {other:?}"),
        }
    }
    redq_tests::wait_until(
        std::time::Duration::from_secs(5),
        "the refused attaches' connections to close",
        async || server.connected_clients().await <= baseline,
    )
    .await;
    // The base namespace, read alone, says where its queue is.
    let alone = RedisQueue::builder(&server.url())
        .namespace(&base)
        .connect()
        .await
        .unwrap();
    assert_eq!(alone.spread_over().await.unwrap(), Some(3));
}
