//! `redq --shards N retention show|set`: each shard keeps to the bounds on
//! its own, so the sentence says the bound is a shard's, and how far the
//! whole queue may go, rather than state a total it does not keep to.

use redq::{NewJob, RedisQueue, ShardedQueue};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

#[tokio::test]
async fn retention_over_shards_says_its_bounds_are_each_shards() {
    let server = RedisServer::start();
    let ns = unique_namespace("retention-sharded");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &ns, 3)
        .await
        .unwrap();
    sharded
        .add("kq", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let out = redq(
        &server.url(),
        &ns,
        &[
            "--shards",
            "3",
            "retention",
            "set",
            "kq",
            "--max-count",
            "5",
        ],
    );
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains(
            "at most 5 of each outcome on each of its 3 shards (up to 3 times that in all)"
        ),
        "{said}"
    );
    let out = redq(
        &server.url(),
        &ns,
        &["--shards", "3", "-o", "json", "retention", "show", "kq"],
    );
    assert_exit(&out, 0);
    let shown = json(&out);
    assert_eq!(shown["shards"], 3, "{shown}");
    assert_eq!(shown["max_count"], 5, "{shown}");

    // One namespace: the bound is the queue's, said as before.
    let single = unique_namespace("retention-single");
    let queue = RedisQueue::builder(&server.url())
        .namespace(&single)
        .connect()
        .await
        .unwrap();
    queue
        .add("kq", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let out = redq(
        &server.url(),
        &single,
        &["retention", "set", "kq", "--max-count", "5"],
    );
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(said.contains("at most 5 of each outcome;"), "{said}");
}
