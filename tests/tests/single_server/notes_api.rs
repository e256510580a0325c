//! Notes (progress, log lines) through the untyped API: `RedisQueue::note`
//! and `extend_noting` are fenced by the lease, bounded by the scripts, and
//! the notes go when the job leaves for good (an ack told it has notes, a
//! dead-letter delete or purge), not before.

use std::time::Duration;

use redq::notes::{MAX_LINE_BYTES, MAX_LOG_BYTES, MAX_LOG_LINES, MAX_PROGRESS_BYTES};
use redq::{Completion, JobState, NewJob, NoteBatch, QueueError, RedisQueue};
use redq_tests::fixtures::handle;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

/// One job enqueued and claimed: its id and lease.
async fn claimed(queue: &RedisQueue, lease: Duration) -> redq::Job {
    queue
        .add("reports", NewJob::new(json!({"month": 11})))
        .await
        .unwrap();
    queue.claim("reports", 1, lease).await.unwrap().remove(0)
}

fn batch(progress: Option<serde_json::Value>, lines: &[&str]) -> NoteBatch {
    let mut notes = NoteBatch::new();
    if let Some(progress) = progress {
        notes.progress(&progress).unwrap();
    }
    for line in lines {
        notes.log(line);
    }
    notes
}

/// How many entries the namespace's progress and logs hashes hold.
async fn stored(server: &RedisServer, ns: &str) -> (i64, i64) {
    let count = async |key: &str| -> i64 {
        server
            .cmd(&["HLEN", &format!("{{{ns}}}:{key}")])
            .await
            .convert()
            .unwrap()
    };
    (count("progress").await, count("logs").await)
}

#[tokio::test]
async fn notes_are_stored_under_the_lease_and_read_back() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-api");
    let queue = handle(&server, &ns).await;
    let job = claimed(&queue, Duration::from_secs(30)).await;
    assert!(!job.noted, "a fresh job has no notes");
    assert!(queue.notes(&job.id).await.unwrap().is_empty());

    let lease = job.lease();
    queue
        .note(
            &lease,
            &batch(Some(json!({"rows": 10})), &["opened the ledger"]),
        )
        .await
        .unwrap();
    queue
        .extend_noting(
            &lease,
            Duration::from_secs(30),
            &batch(Some(json!({"rows": 20})), &["two\nlines"]),
        )
        .await
        .unwrap();
    let notes = queue.notes(&job.id).await.unwrap();
    assert_eq!(notes.progress, Some(json!({"rows": 20})), "the latest wins");
    assert_eq!(notes.log, ["opened the ledger", "two", "lines"]);

    // The record says it has notes, so the next claim's holder knows.
    let record = queue.inspect(&job.id).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Leased);
}

#[tokio::test]
async fn the_store_keeps_the_last_lines_within_the_bounds() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-caps");
    let queue = handle(&server, &ns).await;
    let job = claimed(&queue, Duration::from_secs(30)).await;
    let lease = job.lease();

    // One line a call: the bound is the store's, not only the batch's.
    for i in 0..(MAX_LOG_LINES + 20) {
        queue
            .note(&lease, &batch(None, &[&format!("line {i}")]))
            .await
            .unwrap();
    }
    let log = queue.notes(&job.id).await.unwrap().log;
    assert_eq!(log.len(), MAX_LOG_LINES);
    assert_eq!(
        log.first().map(String::as_str),
        Some("line 20"),
        "oldest dropped"
    );
    assert_eq!(log.last().map(String::as_str), Some("line 119"));

    // Long lines: each cut, and the bytes bounded.
    let long = "x".repeat(MAX_LINE_BYTES * 3);
    for _ in 0..30 {
        queue.note(&lease, &batch(None, &[&long])).await.unwrap();
    }
    let log = queue.notes(&job.id).await.unwrap().log;
    assert!(log.iter().all(|l| l.len() <= MAX_LINE_BYTES));
    let bytes: usize = log.iter().map(|l| l.len() + 1).sum();
    assert!(bytes <= MAX_LOG_BYTES, "{bytes} bytes kept");
    assert!(
        bytes > MAX_LOG_BYTES - MAX_LINE_BYTES - 1,
        "{bytes} bytes kept"
    );

    // Progress over the bound is refused before anything is sent.
    let mut notes = NoteBatch::new();
    let refused = notes.progress(&"p".repeat(MAX_PROGRESS_BYTES));
    assert!(
        matches!(
            refused,
            Err(QueueError::Invalid {
                what: "job progress",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(notes.is_empty());
}

#[tokio::test]
async fn a_stale_holders_notes_are_refused_and_change_nothing() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-stale");
    let queue = handle(&server, &ns).await;
    let stale = claimed(&queue, Duration::from_millis(50)).await;
    queue
        .note(
            &stale.lease(),
            &batch(Some(json!("mine")), &["first holder"]),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    // The lapsed lease is reclaimed by the next claim, which re-leases it.
    let current = queue
        .claim("reports", 1, Duration::from_secs(30))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(current.id, stale.id);
    assert!(
        current.noted,
        "the claim carries the earlier attempt's notes"
    );

    let late = batch(Some(json!("stale")), &["stale holder"]);
    let refused = queue.note(&stale.lease(), &late).await;
    assert!(
        matches!(refused, Err(QueueError::LeaseLost { .. })),
        "{refused:?}"
    );
    let refused = queue
        .extend_noting(&stale.lease(), Duration::from_secs(30), &late)
        .await;
    assert!(
        matches!(refused, Err(QueueError::LeaseLost { .. })),
        "{refused:?}"
    );
    let notes = queue.notes(&stale.id).await.unwrap();
    assert_eq!(notes.progress, Some(json!("mine")));
    assert_eq!(notes.log, ["first holder"]);
}

#[tokio::test]
async fn an_ack_told_of_notes_deletes_them_and_one_not_told_leaves_them() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-ack");
    let queue = handle(&server, &ns).await;
    let told = claimed(&queue, Duration::from_secs(30)).await;
    let untold = claimed(&queue, Duration::from_secs(30)).await;
    for job in [&told, &untold] {
        queue
            .note(&job.lease(), &batch(Some(json!(1)), &["ran"]))
            .await
            .unwrap();
    }
    assert_eq!(stored(&server, &ns).await, (2, 2));
    let outcomes = queue
        .ack_batch_with(
            &[told.lease(), untold.lease()],
            &[Completion::new().noted(), Completion::new()],
        )
        .await
        .unwrap();
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    assert!(queue.notes(&told.id).await.unwrap().is_empty());
    // Not told: the ack issued no note command, so they stay (the worker
    // always tells; this is what the flag saves).
    assert!(!queue.notes(&untold.id).await.unwrap().is_empty());
}

#[tokio::test]
async fn notes_survive_a_retry_and_a_dead_letter_and_go_with_the_dead_letter() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-dead");
    let queue = handle(&server, &ns).await;
    queue
        .add("reports", NewJob::new(json!({})).max_attempts(2))
        .await
        .unwrap();
    for attempt in 1..=2 {
        let job = queue
            .claim("reports", 1, Duration::from_secs(30))
            .await
            .unwrap()
            .remove(0);
        assert_eq!(job.noted, attempt > 1);
        queue
            .note(
                &job.lease(),
                &batch(
                    Some(json!({"attempt": attempt})),
                    &[&format!("attempt {attempt}")],
                ),
            )
            .await
            .unwrap();
        queue
            .nack(&job.lease(), Duration::ZERO, "ledger locked")
            .await
            .unwrap();
        let notes = queue.notes(&job.id).await.unwrap();
        assert_eq!(notes.progress, Some(json!({"attempt": attempt})));
        assert_eq!(notes.log.len(), attempt, "kept through the retry");
    }
    let dead = queue.dead_letters("reports", 0, 10).await.unwrap().items;
    assert_eq!(dead.len(), 1);
    assert_eq!(
        queue.notes(&dead[0].id).await.unwrap().log,
        ["attempt 1", "attempt 2"]
    );
    queue
        .delete_dead("reports", &[dead[0].id.clone()])
        .await
        .unwrap();
    assert!(queue.notes(&dead[0].id).await.unwrap().is_empty());
    assert_eq!(stored(&server, &ns).await, (0, 0));
}

#[tokio::test]
async fn deleting_a_job_with_notes_deletes_them() {
    let server = RedisServer::start();
    let ns = unique_namespace("notes-delete");
    let queue = handle(&server, &ns).await;
    let job = claimed(&queue, Duration::from_secs(30)).await;
    queue
        .note(&job.lease(), &batch(Some(json!("half")), &["ran"]))
        .await
        .unwrap();
    queue
        .nack(&job.lease(), Duration::from_secs(60), "try later")
        .await
        .unwrap();
    assert!(!queue.notes(&job.id).await.unwrap().is_empty());
    queue
        .delete_job(&job.id, redq::IfLeased::Refuse)
        .await
        .unwrap();
    assert!(queue.notes(&job.id).await.unwrap().is_empty());
    assert_eq!(stored(&server, &ns).await, (0, 0));
}
