//! A handle says once that it lost its connection to Redis, in words, and
//! when it has it back (`driver/src/connection_watch.rs`): during an
//! outage the calls' own timeouts read as a slow Redis, when nothing is
//! listening at all. A handle closed on purpose says nothing.

use std::time::Duration;

use redq::NewJob;
use redq_tests::fixtures::handle;
use redq_tests::logs::LogCapture;
use redq_tests::{unique_namespace, wait_until, RedisServer};

const DEADLINE: Duration = Duration::from_secs(15);

const LOST: &str = "lost the connection to Redis at";
const BACK: &str = "reconnected to Redis at";

#[tokio::test]
async fn a_lost_redis_is_said_once_in_words_and_its_return_too() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let mut server = RedisServer::builder().appendonly_always().start();
    let queue = handle(&server, &unique_namespace("watch")).await;
    let job = || NewJob::new(serde_json::json!(1));
    queue.add("q", job()).await.unwrap();

    server.kill9();
    wait_until(DEADLINE, "the loss to be said", async || {
        logs.text().contains(LOST)
    })
    .await;
    let text = logs.text();
    let line = text.lines().find(|l| l.contains(LOST)).unwrap();
    let port = server.url().rsplit(':').next().unwrap().to_owned();
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
    // The pooled connections lose the same Redis: one line.
    assert_eq!(text.matches(LOST).count(), 1, "{text}");

    server.restart();
    wait_until(DEADLINE, "the return to be said", async || {
        logs.text().contains(BACK)
    })
    .await;
    queue.add("q", job()).await.unwrap();
    assert_eq!(queue.counts("q").await.unwrap().waiting, 2);
    let text = logs.text();
    assert!(
        text.contains("connection refused: nothing listens there")
            || text.contains("the connection was closed"),
        "{text}"
    );
    assert!(!text.contains("Error {"), "no Debug text: {text}");
}

#[tokio::test]
async fn a_handle_closed_on_purpose_says_nothing() {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::INFO);
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("watch-closed")).await;
    queue
        .add("q", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    queue.close().await;
    // Past the moment a loss would be said (1 s): nothing to wait for but
    // the time itself.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let text = logs.text();
    assert!(!text.contains(LOST), "{text}");
}
