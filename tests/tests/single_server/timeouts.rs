//! A stalled Redis: calls fail with a typed timeout after the configured
//! command timeout, and the same handle works again once Redis answers.

use std::time::{Duration, Instant};

use redq::{NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until};
use serde_json::json;

#[tokio::test]
async fn a_stalled_write_times_out_with_a_typed_error_and_the_handle_recovers() {
    let server = server();
    let timeout = Duration::from_millis(200);
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("timeout"))
        .command_timeout(timeout)
        .connect()
        .await
        .unwrap();
    queue.add("q", NewJob::new(json!("before"))).await.unwrap();

    // Writes (and write scripts) are held by the server; reads are not.
    server.cmd(&["CLIENT", "PAUSE", "2000", "WRITE"]).await;
    let stalled = || NewJob::new(json!("stalled")).dedup_key("stalled-once");
    let started = Instant::now();
    let err = queue.add("q", stalled()).await.unwrap_err();
    assert!(
        matches!(err, QueueError::Timeout(t) if t == timeout),
        "{err:?}"
    );
    assert!(started.elapsed() >= timeout, "timed out early");
    // The call gave up while its script was still held by the pause: the
    // server still shows it blocked, so the error came from the timeout and
    // not from the pause ending.
    let held = server.clients().await.into_iter().any(|c| {
        matches!(c.field("cmd"), Some("evalsha" | "fcall"))
            && c.field("flags").is_some_and(|f| f.contains('b'))
    });
    assert!(held, "the stalled enqueue is no longer held by the pause");
    assert!(err.to_string().contains("may or may not"), "{err}");
    // Read-only calls are not held up by a write pause.
    assert_eq!(queue.counts("q").await.unwrap().waiting, 1);

    // Retrying the timed-out enqueue until it succeeds: every timed-out
    // attempt is still applied once the pause ends, and the dedup key makes
    // them one job.
    let mut outcome = None;
    wait_until(DEADLINE, "the handle to enqueue again", async || {
        outcome = queue.add("q", stalled()).await.ok();
        outcome.is_some()
    })
    .await;
    let outcome = outcome.unwrap();
    queue.add("q", NewJob::new(json!("after"))).await.unwrap();
    let jobs = queue.claim("q", 10, LONG).await.unwrap();
    let payloads: Vec<_> = jobs.iter().map(|j| j.payload.clone()).collect();
    assert_eq!(
        payloads,
        [json!("before"), json!("stalled"), json!("after")]
    );
    assert_eq!(jobs[1].id, outcome.id());
}
