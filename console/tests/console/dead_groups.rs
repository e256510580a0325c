//! Dead-letter groups as an on-call operator uses them, against a real
//! Redis: the console's grouped screen counts every dead letter of a queue
//! (not the newest 500), `r` and `K` on a group name and take the whole
//! group as `redq dead requeue --group` does; a canary that proves nothing
//! does not recommend the rest; `dead list` pages the merged list; the bulk
//! forms ask for `--yes`; `dead groups` lists the signatures and `dead
//! delete --group` deletes one.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::{NewJob, RedisQueue};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Action, Screen};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{console, press, prompt, refresh, run};
use crate::seed::*;

const TIMEOUTS: &str = "timeout after #ms";
const DECLINED: &str = "card declined for cus_#: insufficient funds";

/// `n` jobs of `queue` dead-lettered with the error `error(i)`, the i-th
/// dying after the (i-1)-th.
async fn dead_with(queue: &RedisQueue, name: &str, n: usize, error: impl Fn(usize) -> String) {
    let mut ids = Vec::new();
    for i in 0..n {
        let job = NewJob::new(serde_json::json!({ "n": i })).max_attempts(1);
        ids.push(queue.add(name, job).await.unwrap().id().to_owned());
    }
    let mut done = 0;
    while done < n {
        let claimed = queue
            .claim(name, (n - done).min(1000), Duration::from_secs(60))
            .await
            .unwrap();
        assert!(!claimed.is_empty(), "the jobs enqueued are claimed");
        for job in claimed {
            let i = ids.iter().position(|id| *id == job.id).unwrap();
            queue
                .nack(&job.lease(), Duration::ZERO, &error(i))
                .await
                .unwrap();
            done += 1;
        }
    }
}

/// The review's orders queue: 700 timeouts, then 600 declined cards.
async fn orders(queue: &RedisQueue) {
    dead_with(queue, "orders", 700, |i| format!("timeout after {i}ms")).await;
    dead_with(queue, "orders", 600, |i| {
        format!("card declined for cus_{i}: insufficient funds")
    })
    .await;
    assert_eq!(queue.counts("orders").await.unwrap().dead, 1300);
}

#[tokio::test]
async fn the_grouped_screen_counts_every_dead_letter_and_r_and_k_take_the_whole_group() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("dead-groups-tui"));
    let queue = connect(&url, &ns).await;
    orders(&queue).await;
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    state.apply(Action::Show(Screen::Dead));
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('s')]);

    let groups: Vec<(String, u64, bool)> = state
        .dead_groups()
        .into_iter()
        .map(|g| (g.signature, g.count, g.complete))
        .collect();
    assert_eq!(
        groups,
        [
            (TIMEOUTS.to_owned(), 700, true),
            (DECLINED.to_owned(), 600, true)
        ],
        "both groups, each counted whole"
    );
    let shown = crate::views::screen_text(&state, 120, 24);
    assert!(
        shown.contains("Dead letters (1300): 2 error signatures"),
        "{shown}"
    );
    assert!(!shown.contains("newest 500"), "{shown}");
    assert!(shown.contains("700"), "{shown}");

    // K on the declined cards: 3 of the 600, the other 597 stay dead.
    press(&mut state, &[KeyCode::Down, KeyCode::Char('K')]);
    assert_eq!(
        prompt(&state),
        format!(
            "Requeue 3 of the 600 dead letters with error \"{DECLINED}\" as canaries, and watch \
             them? The other 597 stay dead until you requeue them (r)."
        )
    );
    press(&mut state, &[KeyCode::Char('n')]);

    // r on the timeouts: all 700, and all 700 go back.
    press(&mut state, &[KeyCode::Up, KeyCode::Char('r')]);
    assert_eq!(
        prompt(&state),
        format!("Requeue all 700 dead letters with error \"{TIMEOUTS}\" in queue orders?")
    );
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    let [mutation] = sent.as_slice() else {
        panic!("one requeue, got {sent:?}");
    };
    let ((message, ok), _) = run(&target, &mut state, mutation.clone()).await;
    assert_eq!((message.as_str(), ok), ("requeued 700 dead letters", true));
    let counts = queue.counts("orders").await.unwrap();
    assert_eq!((counts.dead, counts.waiting), (600, 700), "{counts:?}");
}

#[tokio::test]
async fn a_dead_set_beyond_the_screen_bound_shows_its_counts_as_lower_bounds() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("dead-groups-bound"));
    let queue = connect(&url, &ns).await;
    let bound = redq_console::dead_census::SCREEN_BOUND;
    dead_with(&queue, "orders", bound + 1, |i| {
        format!("timeout after {i}ms")
    })
    .await;
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    state.apply(Action::Show(Screen::Dead));
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('s')]);
    let group = &state.dead_groups()[0];
    assert_eq!((group.count, group.complete), (bound as u64, false));
    let shown = crate::views::screen_text(&state, 140, 24);
    assert!(shown.contains("≥10,000"), "{shown}");
    assert!(
        shown.contains("≥: counted over the newest 10,000 dead letters of orders"),
        "{shown}"
    );
    press(&mut state, &[KeyCode::Char('r')]);
    assert!(
        prompt(&state).starts_with(&format!(
            "Requeue every one of the at least 10000 dead letters with error \"{TIMEOUTS}\""
        )),
        "{}",
        prompt(&state)
    );
    // The CLI counts them all.
    let out = redq(&url, &ns, &["dead", "groups", "orders", "-o", "json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)["groups"][0]["count"], bound as u64 + 1);
}

#[tokio::test]
async fn a_canary_that_proves_nothing_exits_3_and_does_not_recommend_the_rest() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("dead-groups-canary"));
    let queue = connect(&url, &ns).await;
    dead_with(&queue, "orders", 5, |i| format!("timeout after {i}ms")).await;
    queue.pause("orders").await.unwrap();
    let args = [
        "dead", "requeue", "orders", "--group", TIMEOUTS, "--canary", "1", "--watch", "1s",
    ];
    let out = redq(&url, &ns, &args);
    assert_exit(&out, 3);
    let said = stdout(&out);
    assert!(!said.contains("to requeue the rest"), "{said}");
    assert!(
        said.contains("4 dead letters of the group still dead; no canary finished within 1s"),
        "{said}"
    );
    assert_eq!(
        stderr(&out),
        "redq: no canary finished within 1s (is orders paused, or does no worker serve it?); \
         nothing proves the fix yet\n"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["-o", "json"]);
    let out = redq(&url, &ns, &json_args);
    assert_exit(&out, 3);
    let report = json(&out);
    assert_eq!(report["verdict"], "unproven", "{report}");
    assert_eq!(
        report["canaries"][0]["outcome"]["fate"], "pending",
        "{report}"
    );
    assert_eq!(report["rest"], 3, "{report}");

    // Completed canaries do recommend the rest (with --yes).
    queue.resume("orders").await.unwrap();
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move {
            loop {
                for job in queue
                    .claim("orders", 10, Duration::from_secs(30))
                    .await
                    .unwrap()
                {
                    queue.ack(&job.lease()).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let out = tokio::task::spawn_blocking({
        let (url, ns) = (url.clone(), ns.clone());
        move || {
            redq(
                &url,
                &ns,
                &[
                    "dead", "requeue", "orders", "--group", TIMEOUTS, "--canary", "1", "--watch",
                    "20s",
                ],
            )
        }
    })
    .await
    .unwrap();
    worker.abort();
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains(&format!(
            "to requeue the rest: redq dead requeue orders --group '{TIMEOUTS}' --yes"
        )),
        "{}",
        stdout(&out)
    );
}

#[tokio::test]
async fn dead_list_pages_the_merged_list_newest_first_across_queues() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("dead-list-merged"));
    let queue = connect(&url, &ns).await;
    let mut newest_first = Vec::new();
    for (name, i) in [("emails", 0), ("orders", 1), ("emails", 2), ("orders", 3)] {
        dead_with(&queue, name, 1, |_| format!("error {i}")).await;
        // Each dies after the one before, or in the same millisecond with
        // a later id (ids are ULIDs): the merged order is the reverse.
        let page = queue.dead_letters(name, 0, 1).await.unwrap();
        newest_first.insert(0, page.items[0].id.clone());
    }
    let out = redq(&url, &ns, &["dead", "list", "--limit", "1"]);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(said.contains(&newest_first[0]), "{said}");
    assert_eq!(
        said.lines().count(),
        3,
        "a header, one row, the footer:\n{said}"
    );
    assert!(said.contains("(1 of 4, from 1)"), "{said}");
    let out = redq(
        &url,
        &ns,
        &[
            "dead", "list", "--offset", "1", "--limit", "2", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    let ids: Vec<String> = json(&out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, newest_first[1..3]);
    let out = redq(
        &url,
        &ns,
        &["dead", "list", "--offset", "9999", "--limit", "2"],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("accepted are up to 10000 rows"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn bulk_requeues_ask_for_yes_and_groups_are_listed_and_deleted_from_the_cli() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("dead-groups-cli"));
    let queue = connect(&url, &ns).await;
    dead_with(&queue, "orders", 3, |i| format!("timeout after {i}ms")).await;
    dead_with(&queue, "orders", 2, |i| {
        format!("card declined for cus_{i}: insufficient funds")
    })
    .await;

    for (args, says) in [
        (
            vec!["dead", "requeue", "orders", "--all"],
            "redq: dead requeue orders --all would requeue all 5 dead letters of orders; add --yes to do it\n",
        ),
        (
            vec!["dead", "requeue", "orders", "--group", TIMEOUTS],
            "redq: dead requeue orders --group 'timeout after #ms' would requeue all 3 dead letters with that error signature; add --yes to do it\n",
        ),
        (
            vec!["dead", "delete", "orders", "--group", DECLINED],
            "redq: dead delete orders --group 'card declined for cus_#: insufficient funds' would delete for good all 2 dead letters with that error signature; add --yes to do it\n",
        ),
    ] {
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 2);
        assert_eq!(stderr(&out), says, "{args:?}");
        assert_eq!(queue.counts("orders").await.unwrap().dead, 5, "{args:?}");
    }

    let out = redq(&url, &ns, &["dead", "groups"]);
    assert_exit(&out, 0);
    let said = stdout(&out);
    let lines: Vec<&str> = said.lines().collect();
    assert!(lines[0].starts_with("COUNT  QUEUE   SIGNATURE"), "{said}");
    assert!(
        lines[1].starts_with("    3  orders  timeout after #ms"),
        "{said}"
    );
    // The newest as example (these died within a millisecond or two).
    assert!(lines[1].contains("Z  timeout after "), "{said}");
    assert!(
        lines[2].starts_with("    2  orders  card declined"),
        "{said}"
    );
    let out = redq(&url, &ns, &["dead", "groups", "orders", "-o", "json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(report["dead"], 5, "{report}");
    let first = &report["groups"][0];
    assert_eq!(
        (&first["queue"], &first["signature"], &first["count"]),
        (
            &serde_json::json!("orders"),
            &serde_json::json!(TIMEOUTS),
            &serde_json::json!(3)
        ),
        "{report}"
    );
    assert!(
        first["example"]
            .as_str()
            .unwrap()
            .starts_with("timeout after "),
        "{report}"
    );
    assert!(first["newest"].as_str().unwrap() >= first["oldest"].as_str().unwrap());
    let out = redq(&url, &ns, &["dead", "groups", "ordres"]);
    assert_exit(&out, 1);

    let out = redq(
        &url,
        &ns,
        &[
            "dead", "delete", "orders", "--group", DECLINED, "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], 2);
    assert_eq!(queue.counts("orders").await.unwrap().dead, 3);
    let out = redq(
        &url,
        &ns,
        &["dead", "requeue", "orders", "--all", "--yes", "-o", "json"],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], 3);
}

/// The console counts a queue's groups again only now and then: a dead set
/// that grew keeps its census for a while (counting reads every record,
/// payload and all, which each refresh would weigh on a strained Redis),
/// and one that shrank (a requeue the operator just ran) is counted again
/// at once.
#[tokio::test]
async fn the_consoles_census_is_kept_while_the_dead_set_grows_and_recounted_when_it_shrinks() {
    let server = RedisServer::start();
    let ns = unique_namespace("census_cache");
    let q = connect(&server.url(), &ns).await;
    dead_with(&q, "orders", 3, |i| format!("timeout after {i}ms")).await;
    let target = Target::single(connect(&server.url(), &ns).await);
    let mut cache = redq_console::dead_census::CensusCache::default();
    let far = || std::time::Instant::now() + Duration::from_secs(30);
    let counted = |census: &redq_console::dead_census::QueueCensus| {
        census.groups.iter().map(|g| g.count).sum::<u64>()
    };

    let first = cache.census(&target, "orders", 3, far()).await.unwrap();
    assert_eq!(counted(&first), 3);
    dead_with(&q, "orders", 2, |i| format!("timeout after {i}ms")).await;
    let grown = cache.census(&target, "orders", 5, far()).await.unwrap();
    assert_eq!(counted(&grown), 3, "kept while the dead set only grew");

    let dead = q.dead_letters("orders", 0, 10).await.unwrap().items;
    q.requeue_dead("orders", &[dead[0].id.clone()])
        .await
        .unwrap();
    let shrunk = cache.census(&target, "orders", 4, far()).await.unwrap();
    assert_eq!(counted(&shrunk), 4, "counted again once some left");
}
