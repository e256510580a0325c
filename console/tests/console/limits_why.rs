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
async fn a_queue_wide_rate_counts_every_job_it_holds_back_and_a_key_says_it_is_the_queues() {
    let (_server, url, ns, q) = start("limits_why_queue").await;
    for n in 0..20 {
        q.add("api", NewJob::new(json!(n))).await.unwrap();
        q.add("api", NewJob::new(json!(n)).limit_key("t1"))
            .await
            .unwrap();
    }
    let set = ["limits", "set", "api", "--rate", "2/10s"];
    assert_exit(&redq(&url, &ns, &set), 0);
    let started = q.claim("api", 10, LEASE).await.unwrap();
    assert_eq!(started.len(), 2, "the rate lets 2 start");

    let listed = json(&redq(&url, &ns, &["limits", "list", "api", "-o", "json"]));
    let api = &listed[0];
    assert_eq!(api["held_by_queue"], 38, "{api}");
    assert_eq!(
        api["blocked"], "its rate window is full (2/2 started)",
        "{api}"
    );
    let t1 = &api["keys"][0];
    assert_eq!(t1["key"], "t1");
    assert_eq!(
        t1["held_by"], "the queue-wide limit: its rate window is full (2/2 started)",
        "{api}"
    );

    let out = redq(&url, &ns, &["limits", "list", "api"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    assert!(table.lines().next().unwrap().contains("WHY"), "{table}");
    let queue = line(&table, &["api", "queue"]);
    assert!(queue.contains(" 38 "), "{table}");
    assert!(queue.contains("its rate window is full"), "{table}");
    let key = line(&table, &["api", "key", "t1"]);
    assert!(key.contains("the queue-wide limit:"), "{table}");
}

#[tokio::test]
async fn held_jobs_with_room_and_no_worker_say_so_and_a_pause_is_said() {
    let (_server, url, ns, q) = start("limits_why_ready").await;
    for n in 0..40 {
        q.add("api", NewJob::new(json!(n)).limit_key("t2"))
            .await
            .unwrap();
    }
    let each = ["limits", "set", "api", "--each-key", "--concurrency", "2"];
    assert_exit(&redq(&url, &ns, &each), 0);
    let out = redq(&url, &ns, &["limits", "list", "api"]);
    let table = stdout(&out);
    let key = line(&table, &["api", "key", "t2"]);
    assert!(key.contains("0/2"), "{table}");
    assert!(key.contains("ready: no worker claimed them"), "{table}");
    let listed = json(&redq(&url, &ns, &["limits", "list", "api", "-o", "json"]));
    assert_eq!(
        listed[0]["keys"][0]["held_by"], "ready: no worker claimed them",
        "{listed}"
    );

    q.pause("api").await.unwrap();
    let out = redq(&url, &ns, &["limits", "list", "api"]);
    let table = stdout(&out);
    assert!(
        line(&table, &["api", "queue"]).contains("paused"),
        "{table}"
    );
    assert!(
        line(&table, &["api", "key", "t2"]).contains("the queue is paused"),
        "{table}"
    );
    let listed = json(&redq(&url, &ns, &["limits", "list", "api", "-o", "json"]));
    assert_eq!(listed[0]["paused"], true, "{listed}");
}

#[tokio::test]
async fn a_replaced_limit_says_what_it_was_and_what_is_over_it() {
    let (_server, url, ns, q) = start("limits_why_set").await;
    for n in 0..5 {
        q.add("api", NewJob::new(json!(n))).await.unwrap();
    }
    let run = |args: &[&str]| redq(&url, &ns, args);
    let both = [
        "limits",
        "set",
        "api",
        "--concurrency",
        "5",
        "--rate",
        "20/1s",
    ];
    assert_eq!(
        stdout(&run(&both)),
        "api: the queue-wide limit is now 5 at once, 20/1s\n"
    );
    assert_eq!(q.claim("api", 5, LEASE).await.unwrap().len(), 5);
    let rate = ["limits", "set", "api", "--rate", "30/1s"];
    assert_eq!(
        stdout(&run(&rate)),
        "api: the queue-wide limit is now 30/1s (was 5 at once, 20/1s); \
         it no longer bounds how many run at once\n"
    );
    let lower = ["limits", "set", "api", "--concurrency", "2"];
    assert_eq!(
        stdout(&run(&lower)),
        "api: the queue-wide limit is now 2 at once (was 30/1s); it no longer bounds \
         how many start per interval; 3 jobs running are over it and will finish \
         (a lowered limit takes nothing back)\n"
    );
    let out = json(&run(&[
        "limits",
        "set",
        "api",
        "--concurrency",
        "1",
        "-o",
        "json",
    ]));
    assert_eq!(out["was"]["concurrency"], 2, "{out}");
    assert_eq!(out["over"], 4, "{out}");
    let each = ["limits", "set", "api", "--each-key", "--concurrency", "2"];
    assert_exit(&run(&each), 0);
    let key = [
        "limits",
        "set",
        "api",
        "--key",
        "acme",
        "--concurrency",
        "3",
        "--allow-unknown",
    ];
    assert_eq!(
        stdout(&run(&key)),
        "api: the key \"acme\" limit is now 3 at once (was the each-key default, 2 at once)\n"
    );
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

#[tokio::test]
async fn over_shards_each_shards_share_is_shown() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("limits_why_shards"));
    let run = |args: &[&str]| {
        let mut all = vec!["--shards", "3"];
        all.extend_from_slice(args);
        redq(&url, &ns, &all)
    };
    let set = [
        "limits",
        "set",
        "api",
        "--concurrency",
        "10",
        "--rate",
        "5/1s",
        "--allow-unknown",
    ];
    assert_exit(&run(&set), 0);
    let out = run(&["limits", "list", "api"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    assert!(
        line(&table, &["api", "queue"])
            .contains("split over 3 shards: 4, 3, 3 at once; 2, 2, 1 per 1s"),
        "{table}"
    );
    let listed = json(&run(&["limits", "list", "api", "-o", "json"]));
    let shards: Vec<&serde_json::Value> = listed[0]["shards"]
        .as_array()
        .expect("shards")
        .iter()
        .map(|s| &s["limit"]["concurrency"])
        .collect();
    assert_eq!(shards, [&json!(4), &json!(3), &json!(3)], "{listed}");
}

#[tokio::test]
async fn a_held_jobs_detail_says_why_it_is_held_and_that_it_was_pushed_back() {
    let (_server, url, ns, q) = start("limits_why_job").await;
    q.set_limit("api", LimitScope::Key("pb".into()), Limit::concurrency(1))
        .await
        .unwrap();
    let first = q
        .add("api", NewJob::new(json!(1)).limit_key("pb"))
        .await
        .unwrap();
    let second = q
        .add("api", NewJob::new(json!(2)).limit_key("pb"))
        .await
        .unwrap();
    let job = q.claim("api", 1, LEASE).await.unwrap().remove(0);
    assert_eq!(job.id, first.id());
    let out = redq(&url, &ns, &["jobs", "show", second.id()]);
    assert_exit(&out, 0);
    let detail = stdout(&out);
    assert!(
        detail.contains("held by       the key's limit: at its concurrency (1/1 running)"),
        "{detail}"
    );
    q.release_pushing_back(&job.lease(), Duration::from_secs(30))
        .await
        .unwrap();
    let out = redq(&url, &ns, &["jobs", "show", first.id()]);
    let detail = stdout(&out);
    assert!(
        detail.contains("held by       the key's limit: pushed back until"),
        "{detail}"
    );
    assert!(
        detail.contains("pushed back   once, last") && detail.contains("key pb for 30000 ms until"),
        "{detail}"
    );
    let shown = json(&redq(
        &url,
        &ns,
        &["jobs", "show", first.id(), "-o", "json"],
    ));
    assert!(
        shown["pushed_back"]
            .as_str()
            .is_some_and(|s| s.starts_with("once")),
        "{shown}"
    );
    let events = stdout(&redq(&url, &ns, &["events", "--kind", "pushed_back"]));
    assert!(
        events.contains("pushed_back") && events.contains(first.id()),
        "{events}"
    );
}
