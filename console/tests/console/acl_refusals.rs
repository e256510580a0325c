//! A Redis user whose ACL lacks a command a read needs (a viewer without
//! `+time`, which the counts script calls), against a real redis-server:
//! the CLI names what was denied or where to find it (`ACL LOG`) and, run
//! with `--read-only`, neither advises `--read-only` nor speaks of a
//! change; the console says "refused by ACL", never "unreachable"; and
//! the exporter says the reason on stderr once, not only to its scraper.

use std::time::Duration;

use redq::NewJob;
use redq_console::failure::read_failed;
use redq_console::tui::state::{Action, Update};
use redq_tests::acl::{set_user, user_url, viewer_acl};
use redq_tests::{unique_namespace, RedisServer};

use crate::common::*;
use crate::metrics::fetch_page;
use crate::outage::screen_at;
use crate::seed::{assert_exit, connect, redq, stderr};
use crate::spawned::Spawned;

const PASSWORD: &str = "acl-refusals-s3cret";

/// A server with one queue in `ns`, and the URL of a viewer that may not
/// run TIME.
async fn viewer_without_time(ns: &str) -> (RedisServer, String) {
    let server = RedisServer::start();
    connect(&server.url(), ns)
        .await
        .add("emails", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    let rules: Vec<String> = viewer_acl(ns, PASSWORD)
        .into_iter()
        .filter(|rule| rule != "+time")
        .collect();
    set_user(&server, &rules).await;
    let url = user_url(&server, "viewer", PASSWORD);
    (server, url)
}

#[tokio::test]
async fn a_read_refused_by_acl_under_read_only_says_what_to_grant_not_to_use_read_only() {
    let ns = unique_namespace("acl_refusals_cli");
    let (_server, url) = viewer_without_time(&ns).await;
    let out = redq(&url, &ns, &["--read-only", "queues"]);
    assert_exit(&out, 1);
    let said = stderr(&out);
    assert!(said.contains("Redis refused"), "{said}");
    assert!(
        said.contains("ACL LOG") || said.contains("The command denied is TIME"),
        "{said}"
    );
    assert!(said.contains("grant it to this user"), "{said}");
    assert!(!said.contains("--read-only"), "{said}");
    assert!(!said.contains("change"), "{said}");
    assert!(!said.contains(PASSWORD), "{said}");
    // A subcommand that only reads gets the same advice without the flag.
    let out = redq(&url, &ns, &["queues"]);
    assert_exit(&out, 1);
    let said = stderr(&out);
    assert!(said.contains("grant it to this user"), "{said}");
    assert!(!said.contains("--read-only"), "{said}");
    assert!(!said.contains("change"), "{said}");
}

#[tokio::test]
async fn the_console_says_refused_by_acl_not_unreachable() {
    let ns = unique_namespace("acl_refusals_tui");
    let (_server, url) = viewer_without_time(&ns).await;
    let viewer = connect(&url, &ns).await;
    let error = viewer
        .counts("emails")
        .await
        .expect_err("the counts script calls TIME");
    let failure = read_failed(&error);

    let mut state = loaded();
    state.apply(Action::Received(Update::Unreachable {
        error: failure,
        at: now() + Duration::from_secs(60),
    }));
    let screen = screen_at(&state, now() + Duration::from_secs(120));
    assert!(screen.contains("refused by ACL"), "{screen}");
    assert!(screen.contains("refused by Redis's ACL since"), "{screen}");
    assert!(!screen.contains("unreachable"), "{screen}");
    assert!(!screen.contains("reconnecting"), "{screen}");
    assert!(!screen.contains("retrying"), "{screen}");
}

#[tokio::test]
async fn the_exporter_says_why_redq_up_is_0_on_stderr_once() {
    let ns = unique_namespace("acl_refusals_metrics");
    let (_server, url) = viewer_without_time(&ns).await;
    let mut exporter = Spawned::start(&url, &ns, &["metrics", "--listen", "127.0.0.1:0"]);
    let line = exporter
        .stderr_line("serving http://", Duration::from_secs(20))
        .await;
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    for _ in 0..3 {
        let page = fetch_page(&addr).await.0;
        assert!(page.contains("\nredq_up 0"), "{page}");
    }
    let reason = exporter
        .stderr_line("Redis refused", Duration::from_secs(5))
        .await;
    assert!(reason.contains("could not read Redis"), "{reason}");
    assert!(!reason.contains(PASSWORD), "{reason}");
    // Said once for three scrapes with the same reason.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let said_again = tokio::time::timeout(
        Duration::from_millis(500),
        exporter.stderr_line("Redis refused", Duration::from_secs(1)),
    )
    .await;
    assert!(said_again.is_err(), "{:?}", exporter.stderr_seen);
}
