//! `redq events --follow` after Redis lost its data names the last event it
//! printed, not where a feed merely started (`--from now` on the main
//! stream: an event it never showed).

use std::time::Duration;

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::{connect, dead_letters};
use crate::spawned::Spawned;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_history_names_the_last_event_printed_not_one_never_shown() {
    let mut server = RedisServer::start();
    let ns = unique_namespace("events_shown");
    let q = connect(&server.url(), &ns).await;
    // A dead letter on the main stream, before the follower starts.
    dead_letters(&q, "webhooks", 1, "before").await;
    let never_shown = q
        .operator()
        .events_since(redq::events::EventCursor::Start)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .map(|e| e.event_id)
        .next_back()
        .expect("the dead event");
    let mut follower = Spawned::start(
        &server.url(),
        &ns,
        &[
            "events",
            "--follow",
            "--from",
            "now",
            "--traffic",
            "-o",
            "json",
        ],
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    q.add("webhooks", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let line = follower.stdout_line(Duration::from_secs(10)).await;
    let printed: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(printed["kind"], "enqueued", "{line}");
    let printed = printed["event_id"].as_str().unwrap().to_owned();
    q.close().await;

    server.kill9();
    follower
        .stderr_line("is not answering since", Duration::from_secs(15))
        .await;
    server.restart();
    let lost = follower
        .stderr_line("the event history restarted", Duration::from_secs(15))
        .await;
    assert!(
        lost.contains(&format!("the last one shown was {printed}")),
        "{lost}"
    );
    assert!(!lost.contains(&never_shown), "{lost}");
    follower.interrupt();
    assert!(follower.exit(Duration::from_secs(5)).await.success());
}
