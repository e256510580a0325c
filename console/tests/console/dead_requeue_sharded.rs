//! `redq --shards N dead requeue Q --all --attempts K` over more dead
//! letters than a merged listing reaches (10 000 rows): the check of the
//! attempt count reads each shard on its own, so it neither fails on the
//! merge's window nor requeues half.

use std::time::Duration;

use futures::{stream, StreamExt};
use redq::{NewJob, RedisQueue, ShardedQueue};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

const DEAD: usize = 10_500;

/// `n` dead letters of `name` on `shard`, each allowed 3 runs and dead at
/// its third.
async fn dead_on(shard: &RedisQueue, name: &str, n: usize) {
    let mut left = n;
    while left > 0 {
        let chunk = left.min(1000);
        let jobs = (0..chunk)
            .map(|i| {
                NewJob::new(serde_json::json!({ "n": i }))
                    .max_attempts(3)
                    .attempts(2)
            })
            .collect();
        shard.add_batch(name, jobs).await.unwrap();
        let leased = shard
            .claim(name, chunk, Duration::from_secs(60))
            .await
            .unwrap();
        stream::iter(leased)
            .for_each_concurrent(32, |job| async move {
                shard
                    .nack(&job.lease(), Duration::ZERO, "HTTP 503")
                    .await
                    .unwrap();
            })
            .await;
        left -= chunk;
    }
}

#[tokio::test]
async fn a_bulk_requeue_with_attempts_reads_past_the_merge_window() {
    let server = RedisServer::start();
    let ns = unique_namespace("dead-requeue-sharded");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &ns, 3)
        .await
        .unwrap();
    for shard in sharded.shards() {
        dead_on(shard, "huge", DEAD / 3).await;
    }
    let out = redq(
        &server.url(),
        &ns,
        &[
            "--shards",
            "3",
            "dead",
            "requeue",
            "huge",
            "--all",
            "--yes",
            "--attempts",
            "1",
        ],
    );
    assert_exit(&out, 0);
    let mut requeued = 0;
    for shard in sharded.shards() {
        let counts = shard.counts("huge").await.unwrap();
        assert_eq!(counts.dead, 0, "{counts:?}");
        requeued += counts.waiting;
    }
    assert_eq!(requeued, DEAD as u64, "{}", stdout(&out));

    // A count at the jobs' max is still refused, nothing written.
    for shard in sharded.shards() {
        dead_on(shard, "again", 10).await;
    }
    let out = redq(
        &server.url(),
        &ns,
        &[
            "--shards",
            "3",
            "dead",
            "requeue",
            "again",
            "--all",
            "--yes",
            "--attempts",
            "3",
        ],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("max attempts is 3"),
        "{}",
        stderr(&out)
    );
}
