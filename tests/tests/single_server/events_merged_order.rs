//! Events merged from several streams (the shards', or the main and the
//! traffic stream) keep each stream's order: entry ids compare as the
//! numbers they are, so `…-10` comes after `…-9`, and within one stream
//! nothing is reordered.

use redq::events::EventCursor;
use redq::{RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;

/// Thirteen events in one millisecond of one shard's stream, copied from a
/// real `paused` event with entry ids `T-0` to `T-12`.
async fn thirteen_in_one_millisecond(server: &redq_tests::RedisServer, namespace: &str) -> u64 {
    let stream = format!("{{{namespace}}}:events");
    let entries = server.cmd(&["XRANGE", &stream, "-", "+"]).await;
    let fields: Vec<String> = match entries.into_array().pop().map(|e| e.into_array()) {
        Some(mut entry) => entry
            .pop()
            .unwrap()
            .into_array()
            .into_iter()
            .map(|v| v.convert::<String>().unwrap())
            .collect(),
        None => panic!("no event to copy"),
    };
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 60_000;
    for seq in 0..13 {
        let id = format!("{ms}-{seq}");
        let mut args = vec!["XADD", &stream, &id];
        args.extend(fields.iter().map(String::as_str));
        server.cmd(&args).await;
    }
    ms
}

#[tokio::test]
async fn merged_events_keep_each_streams_order_past_sequence_nine() {
    let server = server();
    let namespace = redq_tests::unique_namespace("events-merged");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &namespace, 3)
        .await
        .unwrap();
    sharded.pause("q").await.unwrap();
    let operator = sharded.operator();
    let first = operator.shards()[0].namespace().to_owned();
    let ms = thirteen_in_one_millisecond(&server, &first).await;
    let ours = |ids: Vec<String>| -> Vec<String> {
        ids.into_iter()
            .filter(|id| id.starts_with(&format!("{ms}-")))
            .collect()
    };
    let expected: Vec<String> = (0..13).map(|seq| format!("{ms}-{seq}")).collect();

    // Oldest first, as `redq events` prints them.
    let since = operator
        .events_since(EventCursor::Start)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_id)
        .collect();
    assert_eq!(ours(since), expected);

    // Newest first, as the console's Events screen reads the latest.
    let latest = operator
        .events(100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_id)
        .collect();
    let mut newest_first = expected.clone();
    newest_first.reverse();
    assert_eq!(ours(latest), newest_first);
}
