//! A connect given up halfway (a deadline around it, a `select!` that took
//! another branch) leaves no connection behind once Redis answers: a
//! service that retries its connect in a loop against a struggling Redis
//! must not add a set of connections each time.

use std::time::Duration;

use redq::{ConnectionFault, QueueError, RedisQueue, ShardedQueue};
use redq_tests::{unique_namespace, wait_until, RedisServer};

/// While Redis answers no command, each connect outlasts a short deadline
/// and is dropped halfway. After the pause, the attempts connect in the
/// background and are closed there.
#[tokio::test]
async fn connects_dropped_halfway_are_closed_once_redis_answers() {
    let server = RedisServer::start();
    let ns = unique_namespace("abandoned");
    let baseline = server.connected_clients().await;

    server.cmd(&["CLIENT", "PAUSE", "3000", "ALL"]).await;
    for _ in 0..3 {
        let single = RedisQueue::builder(&server.url()).namespace(&ns).connect();
        let gave_up = tokio::time::timeout(Duration::from_millis(300), single).await;
        assert!(gave_up.is_err(), "a paused Redis cannot complete a connect");
    }
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &ns, 3);
    let gave_up = tokio::time::timeout(Duration::from_millis(300), sharded).await;
    assert!(gave_up.is_err(), "a paused Redis cannot complete a connect");

    // INFO waits out the pause itself; then the attempts finish and close.
    wait_until(
        Duration::from_secs(10),
        "the abandoned connects' connections to close",
        async || server.connected_clients().await <= baseline,
    )
    .await;
    // The attempts did connect (and the sharded one marked its shards),
    // so the count returning to its baseline is their closing, not their
    // failing.
    let marked = server.cmd(&["GET", &format!("{{{ns}}}:sharded_as")]).await;
    assert!(!marked.is_null(), "the sharded attempt ran to its end");
}

/// A connect refused by the server (a wrong password) leaves no connection
/// retrying in the background either.
#[tokio::test]
async fn refused_connects_leave_no_connection() {
    let server = RedisServer::builder().password("right-Secret-1d9e").start();
    let baseline = server.connected_clients().await;
    let url = format!("redis://:wrong-Secret-77b1@127.0.0.1:{}", server.port());
    for _ in 0..3 {
        let refused = RedisQueue::builder(&url).connect().await;
        let fault = refused
            .as_ref()
            .err()
            .and_then(QueueError::connection_fault);
        assert_eq!(fault, Some(ConnectionFault::LoginRefused), "{refused:?}");
    }
    wait_until(
        Duration::from_secs(5),
        "the refused connects' connections to close",
        async || server.connected_clients().await <= baseline,
    )
    .await;
}
