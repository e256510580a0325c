//! `redq queues` as text carries every count `-o json` does: a queue whose
//! backlog is held by its limits or whose leases lapsed says so in the
//! table, not only to scripts.

use std::collections::BTreeMap;
use std::time::Duration;

use redq::flow::{Limit, LimitScope};
use redq::NewJob;
use redq_tests::{unique_namespace, wait_until, RedisServer};

use crate::seed::{assert_exit, connect, json, redq, stdout};

/// The table's one queue row, each cell under its column's name.
fn row_by_column(table: &str, queue: &str) -> BTreeMap<String, String> {
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(queue))
        .unwrap_or_else(|| panic!("no row for {queue}:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells.len(), header.len(), "{table}");
    header
        .iter()
        .zip(cells)
        .map(|(h, c)| (h.to_string(), c.to_owned()))
        .collect()
}

#[tokio::test]
async fn the_queues_table_shows_held_jobs_and_lapsed_leases_as_json_does() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("queues_cli"));
    let q = connect(&url, &ns).await;
    // One at a time per tenant: the first job of acme takes its slot and
    // keeps it with a lease that lapses (no worker left to reclaim it), so
    // the other two are held behind it.
    q.set_limit("emails", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    for n in 0..3 {
        q.add(
            "emails",
            NewJob::new(serde_json::json!(n)).limit_key("acme"),
        )
        .await
        .unwrap();
    }
    let taken = q
        .claim("emails", 3, Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "the limit lets one start");
    wait_until(Duration::from_secs(5), "the lease to lapse", async || {
        q.counts("emails").await.unwrap().lapsed == 1
    })
    .await;

    let out = redq(&url, &ns, &["queues"]);
    assert_exit(&out, 0);
    let row = row_by_column(&stdout(&out), "emails");
    let shown = |column: &str| row.get(column).map(String::as_str);
    assert_eq!(shown("WAITING"), Some("0"), "{row:?}");
    assert_eq!(shown("HELD"), Some("2"), "{row:?}");
    assert_eq!(shown("LEASED"), Some("1"), "{row:?}");
    assert_eq!(shown("LAPSED"), Some("1"), "{row:?}");

    // Every count the JSON gives is a column of the table, with its value.
    let listed = json(&redq(&url, &ns, &["queues", "-o", "json"]));
    let counts = listed[0].as_object().unwrap();
    for (name, value) in counts.iter().filter(|(_, v)| v.is_u64()) {
        let column = name.to_uppercase();
        assert_eq!(
            shown(&column),
            Some(value.to_string().as_str()),
            "{column} in {row:?}"
        );
    }
}

/// A namespace (or database) with no queues at all is almost always the
/// wrong one: `redq queues` and `redq dead list` say so on stderr instead
/// of an empty table that reads as "all clear", and still exit 0.
#[tokio::test]
async fn a_namespace_with_no_queues_says_to_check_the_namespace_and_database() {
    let server = RedisServer::start();
    let ns = unique_namespace("orders");
    let q = connect(&server.url(), &ns).await;
    q.add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let typo = format!("{ns}x");
    for args in [&["queues"][..], &["dead", "list"][..]] {
        let out = redq(&server.url(), &typo, args);
        assert_exit(&out, 0);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            said.contains(&format!("no queues in namespace {typo}"))
                && said.contains("--namespace")
                && said.contains("database"),
            "{args:?}: {said}"
        );
        // The right namespace has a queue: nothing said.
        let out = redq(&server.url(), &ns, args);
        assert_exit(&out, 0);
        assert!(out.stderr.is_empty(), "{args:?}");
    }
}
