//! `redq metrics` on a namespace with no queues (a typo in --namespace, a
//! URL without its /db, a missing --shards): it says so on stderr at start
//! and as a comment on the page, as `redq queues` does, instead of serving
//! a healthy-looking empty page.

use std::time::Duration;

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::metrics::fetch_page;
use crate::seed::connect;
use crate::spawned::Spawned;

#[tokio::test]
async fn a_namespace_without_queues_is_warned_about_at_start_and_on_the_page() {
    let server = RedisServer::start();
    let ns = unique_namespace("metrics-empty");
    let q = connect(&server.url(), &ns).await;
    q.add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    q.close().await;
    let typo = format!("{ns}-typo");
    let mut process = Spawned::start(
        &server.url(),
        &typo,
        &["metrics", "--listen", "127.0.0.1:0"],
    );
    let warned = process
        .stderr_line("no queues in namespace", Duration::from_secs(20))
        .await;
    assert!(warned.contains(&typo), "{warned}");
    assert!(warned.contains("check --namespace"), "{warned}");
    let serving = process
        .stderr_line("serving http://", Duration::from_secs(20))
        .await;
    let addr = serving
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_owned();
    let empty = fetch_page(&addr).await.0;
    assert!(empty.contains("\nredq_up 1\n"), "{empty}");
    assert!(
        empty.starts_with(&format!("# redq: no queues in namespace {typo}; ")),
        "{empty}"
    );

    // Once the namespace has a queue, the note goes.
    let q = connect(&server.url(), &typo).await;
    q.add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    q.close().await;
    let filled = fetch_page(&addr).await.0;
    assert!(!filled.contains("no queues"), "{filled}");
    assert!(filled.contains("\nredq_queues 1\n"), "{filled}");
}
