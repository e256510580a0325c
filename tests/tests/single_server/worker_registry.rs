//! The worker registry's heartbeat (`lua/worker_beat.lua`) tells a worker
//! that died from a Redis that kept every worker away: a stall as long as
//! the TTL (CLIENT PAUSE here) records no `worker_lost` for live workers.

use std::time::Duration;

use fred::interfaces::LuaInterface;
use fred::types::Value;
use redq_tests::{lua, unique_namespace, RedisServer};

/// A short TTL, so a test's silence can outlast it.
const TTL_MS: u64 = 500;

struct Registry {
    client: fred::clients::Client,
    reader: redq::RedisQueue,
    sha: String,
    ns: String,
}

impl Registry {
    async fn new(server: &RedisServer, ns: &str) -> Registry {
        let client = server.client().await;
        let sha = lua::load(&client, &lua::compose(lua::source("worker_beat"))).await;
        Registry {
            client,
            reader: redq_tests::fixtures::handle(server, ns).await,
            sha,
            ns: ns.to_owned(),
        }
    }

    /// One beat of worker `id`; the ids it found lost.
    async fn beat(&self, id: &str) -> Vec<String> {
        let keys = redq::keys::Keys::new(&self.ns).worker_beat().0;
        let before = self.lost().await;
        let _: Value = self
            .client
            .evalsha(
                self.sha.clone(),
                keys,
                vec![
                    id.to_owned(),
                    "{}".into(),
                    TTL_MS.to_string(),
                    "600000".into(),
                ],
            )
            .await
            .expect("worker_beat");
        let after = self.lost().await;
        after.into_iter().skip(before.len()).collect()
    }

    /// The `worker_lost` events so far, oldest first: the workers named.
    async fn lost(&self) -> Vec<String> {
        let mut lost: Vec<String> = self
            .reader
            .events(1000)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == "worker_lost")
            .filter_map(|e| e.detail)
            .map(|detail| match detail.split_once(", last seen ") {
                Some((id, _)) => id.to_owned(),
                None => panic!("a worker_lost detail says when it was last seen: {detail}"),
            })
            .collect();
        lost.reverse();
        lost
    }
}

#[tokio::test]
async fn a_stall_as_long_as_the_ttl_loses_no_live_worker_but_a_dead_one_is_found() {
    let server = RedisServer::start();
    let ns = unique_namespace("registry-stall");
    let registry = Registry::new(&server, &ns).await;
    assert!(registry.beat("1-1").await.is_empty());
    assert!(registry.beat("2-2").await.is_empty());

    // Redis answers no one for longer than the TTL: no worker could beat.
    server
        .cmd(&["CLIENT", "PAUSE", &(TTL_MS + 300).to_string(), "ALL"])
        .await;
    // The first beat after it finds its own previous beat as old as its
    // peer's: nobody is lost, and the peer, beating next, is still there.
    assert_eq!(registry.beat("1-1").await, Vec::<String>::new());
    assert_eq!(registry.beat("2-2").await, Vec::<String>::new());

    // A worker that really stopped (2-2 beats no more) is found by the
    // next beat of a worker whose own beats kept coming.
    tokio::time::sleep(Duration::from_millis(TTL_MS / 2)).await;
    assert!(registry.beat("1-1").await.is_empty());
    tokio::time::sleep(Duration::from_millis(TTL_MS / 2 + 100)).await;
    assert_eq!(registry.beat("1-1").await, ["2-2"]);
}
