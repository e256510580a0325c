//! A pause that reached only some shards (a `pause` whose later shards
//! failed, or one shard paused by hand) says how far it got: `paused 1/3`
//! in `redq queues`, its JSON and the Queues screen's badge, since claims
//! go on in the other shards; a whole pause reads `paused`, as in one
//! namespace.

use std::time::{Duration, SystemTime};

use redq::{NewJob, RedisQueue, ShardedQueue};
use redq_console::aggregate::Target;
use redq_console::tui::source;
use redq_console::tui::state::{Action, Badge, Focus, Settings, State, Update};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

/// The STATE cell of `queue`'s row in `redq queues`.
fn state_cell(url: &str, ns: &str, queue: &str) -> String {
    let out = redq(url, ns, &["--shards", "3", "queues"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    let row = table
        .lines()
        .find(|l| l.starts_with(queue))
        .unwrap_or_else(|| panic!("no {queue} row:\n{table}"));
    let after_counts = row.rsplit("  ").next().unwrap_or("");
    after_counts.trim().to_owned()
}

#[tokio::test]
async fn a_pause_on_some_shards_says_how_far_it_got() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("pause-partial");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&url), &ns, 3)
        .await
        .unwrap();
    for i in 0..6 {
        sharded
            .add("orders", NewJob::new(serde_json::json!({ "n": i })))
            .await
            .unwrap();
    }
    sharded.shards()[1].pause("orders").await.unwrap();

    assert_eq!(state_cell(&url, &ns, "orders"), "paused 1/3");
    let out = redq(&url, &ns, &["--shards", "3", "-o", "json", "queues"]);
    assert_exit(&out, 0);
    let rows = json(&out);
    assert_eq!(rows[0]["paused"], true, "{rows}");
    assert_eq!(rows[0]["paused_in"], serde_json::json!([1]), "{rows}");

    // The Queues screen's badge says the same.
    let target = Target::connect(RedisQueue::builder(&url), &ns, 3)
        .await
        .unwrap();
    let snapshot = source::fetch(&target, &Focus::Overview).await.unwrap();
    let mut state = State::new(Settings {
        url: target.redacted_url().to_owned(),
        namespace: ns.clone(),
        shards: target.shard_namespaces(),
        read_only: false,
        refresh: Duration::from_secs(1),
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: SystemTime::now(),
    }));
    let row = &state.data.queues[0];
    let badges = state.badges(row, state.redis_time(SystemTime::now()));
    assert!(
        badges.contains(&Badge::Paused("paused 1/3".into())),
        "{badges:?}"
    );
    assert_eq!(
        badges
            .iter()
            .find(|b| matches!(b, Badge::Paused(_)))
            .map(Badge::text),
        Some("PAUSED 1/3".to_owned())
    );

    // Paused on every shard: plain `paused`, as one namespace says it.
    sharded.pause("orders").await.unwrap();
    assert_eq!(state_cell(&url, &ns, "orders"), "paused");
}
