//! `redq limits` and `redq jobs show` say what holds jobs back and why, as
//! the real binary against a real Redis: the jobs a queue-wide limit holds
//! (unkeyed, and of keys with room of their own), a key's reason (its own
//! limit, the queue's, or none and no worker), a pause, each shard's share;
//! `limits set` says what a limit replaced; `--concurrency` is judged by
//! redq's own rule; a held job's detail says why it is held and that it was
//! pushed back.

use std::time::Duration;

use crate::seed::*;
use redq::flow::{Limit, LimitScope};
use redq::{NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

const LEASE: Duration = Duration::from_secs(60);

async fn start(name: &str) -> (RedisServer, String, String, RedisQueue) {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace(name));
    let q = connect(&url, &ns).await;
    (server, url, ns, q)
}

/// The table line of `redq limits list` whose cells start with `starts`.
fn line<'a>(table: &'a str, starts: &[&str]) -> &'a str {
    table
        .lines()
        .find(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.starts_with(starts)
        })
        .unwrap_or_else(|| panic!("no line {starts:?} in:\n{table}"))
}

#[tokio::test]
async fn a_concurrency_out_of_range_is_judged_by_redqs_rule() {
    let (_server, url, ns, q) = start("limits_why_parse").await;
    q.add("api", NewJob::new(json!(1))).await.unwrap();
    for typed in ["99999999999", "-1", "0", "two"] {
        let out = redq(&url, &ns, &["limits", "set", "api", "--concurrency", typed]);
        assert_exit(&out, 2);
        let said = stderr(&out);
        assert!(
            said.contains(&format!("invalid concurrency \"{typed}\""))
                && said.contains("a concurrency limit is 1 to 1000000 jobs at once"),
            "{typed}: {said}"
        );
        assert!(
            !said.contains("4294967295") && !said.contains("-- -1"),
            "{typed}: {said}"
        );
    }
    assert_eq!(q.limits("api").await.unwrap().limit, Limit::none());
}
