//! The restart notice with `--shards` against real servers: a failed-over
//! primary of a Redis Cluster (a new server run answering for its shards)
//! names its shards and counts their jobs alone; shards sharing one
//! `redis-server` killed and started again without persistence are named
//! together, their jobs lost.

use std::time::Duration;

use redq::{NewJob, RedisQueue, ShardedQueue};
use redq_tests::cluster::RedisCluster;
use redq_tests::{unique_namespace, wait_until, RedisServer};

use crate::server_conditions::Console;

/// Waiting jobs put on each shard: a sum cannot pass for one shard's.
const PER_SHARD: [u64; 3] = [3, 5, 7];

async fn seed(url: &str, base: &str) -> ShardedQueue {
    let q = ShardedQueue::connect(RedisQueue::builder(url), base, 3)
        .await
        .expect("connecting the sharded queue");
    for (shard, n) in PER_SHARD.into_iter().enumerate() {
        for i in 0..n {
            q.shards()[shard]
                .add("emails", NewJob::new(serde_json::json!({ "n": i })))
                .await
                .unwrap();
        }
    }
    q
}

fn waiting(console: &Console) -> u64 {
    let rows = &console.state.data.queues;
    rows.iter().map(|r| r.counts.waiting).sum()
}

/// Until every job is shown, the servers read, and one more refresh.
async fn watching(console: &mut Console) {
    let total: u64 = PER_SHARD.iter().sum();
    console
        .until("the jobs and the servers read", |s| {
            s.data.loaded && s.data.queues.iter().map(|r| r.counts.waiting).sum::<u64>() == total
        })
        .await;
    let seen = console.state.data.updated_at;
    console
        .until("another refresh", move |s| s.data.updated_at > seen)
        .await;
    assert!(console.state.server.restarts.is_empty());
    assert_eq!(waiting(console), total);
}

/// `shard 1` or `shards 0 and 2`, and the verb that goes with it.
fn named(shards: &[usize]) -> (String, &'static str) {
    match shards {
        [one] => (format!("shard {one}"), "holds"),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(usize::to_string).collect();
            (format!("shards {} and {last}", rest.join(", ")), "hold")
        }
        [] => unreachable!("a restart holds a shard"),
    }
}

/// `field:N` of an `INFO` reply.
fn info_number(info: &str, field: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|n| n.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_over_primary_names_its_own_shards_and_counts_their_jobs() {
    let cluster = RedisCluster::start();
    let (url, base) = (cluster.url(), unique_namespace("restart_cluster"));
    let q = seed(&url, &base).await;
    let primaries: Vec<usize> = q
        .placement()
        .iter()
        .map(|(_, slot)| cluster.primary_of_slot(*slot).expect("a primary"))
        .collect();
    let killed = primaries[1];
    let on_killed: Vec<usize> = (0..3).filter(|&s| primaries[s] == killed).collect();
    // Its replica, which takes over, holds every job first.
    let mut replica = None;
    wait_until(
        Duration::from_secs(20),
        "the replica caught up",
        async || {
            replica = replica.or_else(|| cluster.replica_of(killed));
            let Some(replica) = replica else { return false };
            let sent = info_number(
                &cluster.cli(killed, &["INFO", "replication"]),
                "master_repl_offset",
            );
            let got = info_number(
                &cluster.cli(replica, &["INFO", "replication"]),
                "slave_repl_offset",
            );
            sent.is_some() && sent == got
        },
    )
    .await;

    let mut console = Console::start_sharded(&url, &base, 3).await;
    watching(&mut console).await;
    cluster.kill9(killed);
    console
        .until("the restart to be said", |s| !s.server.restarts.is_empty())
        .await;

    let restarts = console.state.server.restarts.clone();
    assert_eq!(restarts.len(), 1, "{restarts:?}");
    let restart = &restarts[0];
    let held: u64 = on_killed.iter().map(|&s| PER_SHARD[s]).sum();
    assert_eq!(restart.shards, on_killed);
    assert_eq!((restart.jobs_before, restart.jobs_after), (held, held));
    let (whose, holds) = named(&on_killed);
    let text = restart.text();
    assert!(
        text.ends_with(&format!(
            "; data reloaded: {whose} held {held} jobs before and {holds} {held} now"
        )),
        "{text}"
    );
    let screen = screen_words(&console);
    assert!(
        screen.contains(&format!("data reloaded: {whose} held")),
        "{screen}"
    );
}

/// The screen's words, one space between: a notice wraps at the terminal's
/// width where its length puts it (its uptime has one digit or two), so a
/// phrase is looked for across rows.
fn screen_words(console: &Console) -> String {
    console
        .screen()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_on_one_restarted_server_are_named_together_and_said_lost() {
    let mut server = RedisServer::start();
    let (url, base) = (server.url(), unique_namespace("restart_shared"));
    let _q = seed(&url, &base).await;
    let mut console = Console::start_sharded(&url, &base, 3).await;
    watching(&mut console).await;

    server.restart();
    console
        .until("the restart to be said", |s| !s.server.restarts.is_empty())
        .await;
    let restarts = console.state.server.restarts.clone();
    assert_eq!(restarts.len(), 1, "{restarts:?}");
    let text = restarts[0].text();
    assert!(
        text.ends_with(": shards 0, 1 and 2 held 15 jobs before and hold none now; data lost?"),
        "{text}"
    );
    let screen = screen_words(&console);
    assert!(
        screen.contains("shards 0, 1 and 2 held 15 jobs before"),
        "{screen}"
    );
}
