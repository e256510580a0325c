//! `redq workers -o json` says a gone worker's state as the table does, so
//! that a script counting `state == "running"` counts live workers only.

use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

#[tokio::test]
async fn a_gone_worker_is_in_state_gone_in_json_as_in_the_table() {
    let server = RedisServer::start();
    let ns = unique_namespace("workers-json-gone");
    let url = server.url();
    // A worker that beat 20 s ago and died: listed, as gone.
    vanished_worker(&server, &ns, &["reports"], serde_json::json!({})).await;

    let out = redq(&url, &ns, &["workers", "-o", "json"]);
    assert_exit(&out, 0);
    let listed = json(&out);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], "77-1", "{listed}");
    assert_eq!(listed[0]["gone"], true, "{listed}");
    assert_eq!(listed[0]["state"], "gone", "{listed}");
    let running = listed
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["state"] == "running")
        .count();
    assert_eq!(running, 0, "a dead worker counted as running: {listed}");
    // Its last report said 2 jobs in flight: kept as such, not as jobs
    // running now (the table's RUNNING says `-`).
    assert!(listed[0]["in_flight"].is_null(), "{listed}");
    assert_eq!(listed[0]["last_in_flight"], 2, "{listed}");

    // The table says the same.
    let out = redq(&url, &ns, &["workers"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    let row = table.lines().find(|l| l.starts_with("77-1")).unwrap_or("");
    assert!(row.trim_end().ends_with("gone"), "{table}");
}
