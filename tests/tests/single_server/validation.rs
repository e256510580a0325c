//! Every rejected input: a typed error naming the argument and the rule, and
//! nothing written in Redis (the dataset digest is unchanged).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::{Acked, JobState, Lease, NewJob, Queue, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use serde_json::json;

const BAD_QUEUE_NAMES: &[&str] = &[
    "",
    "a{b",
    "a}b",
    "{redq}",
    "a:b",
    "a\nb",
    "a\tb",
    "nul\0",
    "del\u{7f}",
    "nel\u{85}",
];

fn bad_queue_names() -> Vec<String> {
    let mut names: Vec<String> = BAD_QUEUE_NAMES.iter().map(|s| s.to_string()).collect();
    names.push("q".repeat(129));
    names
}

#[tokio::test]
async fn invalid_queue_names_are_rejected_by_every_method_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "bad-names").await;
    assert_eq!(dbsize(&server).await, 0, "connecting writes nothing");
    let before = digest(&server).await;
    for name in bad_queue_names() {
        let q = name.as_str();
        let job = || NewJob::new(json!(1));
        assert_invalid(queue.add(q, job()).await, "queue name");
        assert_invalid(queue.add_batch(q, vec![job(), job()]).await, "queue name");
        assert_invalid(queue.claim(q, 1, LONG).await, "queue name");
        assert_invalid(queue.reclaim(q, 10).await, "queue name");
        assert_invalid(queue.next_due(q).await, "queue name");
        assert_invalid(queue.counts(q).await, "queue name");
        assert_invalid(queue.stats(q).await, "queue name");
        assert_invalid(
            queue.list_jobs(q, JobState::Waiting, 0, 10).await,
            "queue name",
        );
        assert_invalid(queue.dead_letters(q, 0, 10).await, "queue name");
        assert_invalid(queue.requeue_dead(q, &["x".into()]).await, "queue name");
        assert_invalid(queue.delete_dead(q, &["x".into()]).await, "queue name");
        assert_invalid(queue.requeue_all_dead(q, |_, _| {}).await, "queue name");
        assert_invalid(queue.purge_dead(q, |_, _| {}).await, "queue name");
        assert_invalid(queue.pause(q).await, "queue name");
        assert_invalid(queue.resume(q).await, "queue name");
        assert_invalid(
            Queue::enqueue(&queue, q, vec![json!(1)]).await,
            "queue name",
        );
        assert_invalid(
            Queue::enqueue_ordered(&queue, q, vec![("k".into(), json!(1))]).await,
            "queue name",
        );
        assert_invalid(Queue::claim(&queue, q, 1, LONG).await, "queue name");
        assert_invalid(Queue::next_due(&queue, q).await, "queue name");
        let lease = Lease {
            queue: name.clone(),
            id: "01JAAAAAAAAAAAAAAAAAAAAAAA".into(),
            lease_id: 1,
        };
        assert_invalid(queue.ack(&lease).await, "queue name");
        assert_invalid(queue.nack(&lease, LONG, "e").await, "queue name");
        assert_invalid(queue.dead_letter(&lease, "e").await, "queue name");
        assert_invalid(queue.extend(&lease, LONG).await, "queue name");
        assert_invalid(queue.release(&lease).await, "queue name");
    }
    assert_eq!(digest(&server).await, before);
    assert_eq!(dbsize(&server).await, 0);
}

#[tokio::test]
async fn queue_name_errors_name_the_value_and_the_rule() {
    let server = server();
    let queue = queue(&server, "name-message").await;
    let err = queue.add("a:b", NewJob::new(json!(1))).await.unwrap_err();
    let message = err.to_string();
    assert!(message.contains("queue name"), "{message}");
    assert!(message.contains("a:b"), "{message}");
    assert!(message.contains("128"), "{message}");
    assert!(message.contains('{') && message.contains(':'), "{message}");

    // A huge value is shortened in the message, not echoed whole.
    let long = "x".repeat(10_000);
    let message = queue
        .add(&long, NewJob::new(json!(1)))
        .await
        .unwrap_err()
        .to_string();
    assert!(message.len() < 400, "{message}");
    assert!(message.contains("10000 bytes"), "{message}");
}

#[tokio::test]
async fn queue_names_at_the_limits_are_accepted() {
    let server = server();
    let queue = queue(&server, "good-names").await;
    let longest = "q".repeat(128);
    for name in [
        longest.as_str(),
        "a",
        "émails-✉",
        "with space",
        "dots.and-dashes_",
    ] {
        let created = queue.add(name, NewJob::new(json!(name))).await.unwrap();
        let jobs = claim_n(&queue, name, 1).await;
        assert_eq!(jobs[0].id, created.id());
        assert_eq!(jobs[0].queue, name);
        assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    }
    let mut expected = vec![longest, "a".into(), "émails-✉".into()];
    expected.extend(["with space".into(), "dots.and-dashes_".into()]);
    expected.sort();
    assert_eq!(queue.queues().await.unwrap(), expected);
}

#[tokio::test]
async fn payload_over_the_limit_is_rejected_with_its_size_and_nothing_is_written() {
    let server = server();
    let queue = RedisQueue::builder(&server.url())
        .namespace(redq_tests::unique_namespace("payload-limit"))
        .payload_limit(64)
        .connect()
        .await
        .unwrap();
    // `"` + 62 bytes + `"` is exactly 64 bytes of JSON.
    let at_limit = json!("a".repeat(62));
    let over = json!("a".repeat(63));
    let before = digest(&server).await;
    match queue.add("q", NewJob::new(over.clone())).await {
        Err(QueueError::PayloadTooLarge { size, limit }) => assert_eq!((size, limit), (65, 64)),
        other => panic!("expected PayloadTooLarge, got {other:?}"),
    }
    let message = queue
        .add("q", NewJob::new(over.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("65") && message.contains("64"),
        "{message}"
    );
    // One oversized job fails the whole batch.
    let batch = vec![NewJob::new(at_limit.clone()), NewJob::new(over)];
    assert!(matches!(
        queue.add_batch("q", batch).await,
        Err(QueueError::PayloadTooLarge { .. })
    ));
    assert_eq!(digest(&server).await, before);
    assert_eq!(dbsize(&server).await, 0);

    queue.add("q", NewJob::new(at_limit.clone())).await.unwrap();
    assert_eq!(claim_n(&queue, "q", 1).await[0].payload, at_limit);
}

#[tokio::test]
async fn bad_job_options_are_rejected_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "bad-options").await;
    let p = || NewJob::new(json!({"x": 1}));
    let too_long = "k".repeat(513);
    let cases: Vec<(&str, NewJob)> = vec![
        ("dedup key", p().dedup_key("")),
        ("dedup key", p().dedup_key(too_long.clone())),
        ("dedup key", p().dedup_key("a\nb")),
        ("dedup key", p().dedup_key("a\u{0}b")),
        ("dedup key", p().dedup_key_for("a\u{1b}[31m", LONG)),
        ("dedup TTL", p().dedup_key_for("k", Duration::ZERO)),
        (
            "dedup TTL",
            p().dedup_key_for("k", Duration::from_secs(11 * 365 * 86_400)),
        ),
        ("ordering key", p().ordering_key("")),
        ("ordering key", p().ordering_key(too_long.clone())),
        ("ordering key", p().ordering_key("line\nbreak")),
        ("ordering key", p().ordering_key("tab\t")),
        ("job name", p().name("")),
        ("job name", p().name("n".repeat(257))),
        ("job name", p().name("bell\u{7}")),
        ("delay", p().delay(Duration::from_secs(11 * 365 * 86_400))),
        ("delay", p().delay(Duration::MAX)),
        (
            "not_before",
            p().not_before(UNIX_EPOCH + Duration::from_secs(200_000_000_000)),
        ),
        ("retry window", p().retry_window(Duration::ZERO)),
        ("retry window", p().retry_window(Duration::MAX)),
    ];
    let before = digest(&server).await;
    for (what, job) in cases {
        assert_invalid(queue.add("q", job.clone()).await, what);
        // A bad job anywhere in a batch fails the whole batch.
        let batch = vec![p(), p().priority(3), job, p()];
        assert_invalid(queue.add_batch("q", batch).await, what);
    }
    assert_eq!(digest(&server).await, before);
    assert_eq!(dbsize(&server).await, 0);

    // The boundaries themselves are fine.
    let ok = vec![
        p().dedup_key("k".repeat(512)),
        p().ordering_key("o".repeat(512)),
        p().name("n".repeat(256)),
        p().priority(255),
        p().delay(Duration::from_secs(10 * 365 * 86_400)),
        p().not_before(UNIX_EPOCH),
        p().retry_window(Duration::from_millis(1)),
        p().dedup_key_for("ttl", Duration::from_millis(1)),
    ];
    let outcomes = queue.add_batch("q", ok).await.unwrap();
    assert_eq!(outcomes.len(), 8);
}

#[tokio::test]
async fn bad_claim_and_lease_arguments_are_rejected_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "bad-claims").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let probe = queue.claim("q", 1, LONG).await.unwrap();
    let lease = probe[0].lease();
    let before = digest(&server).await;

    assert_invalid(queue.claim("q", 1, Duration::ZERO).await, "lease");
    assert_invalid(
        queue.claim("q", 1, Duration::from_micros(999)).await,
        "lease",
    );
    assert_invalid(queue.claim("q", 1, Duration::MAX).await, "lease");
    assert_invalid(Queue::claim(&queue, "q", 0, Duration::ZERO).await, "lease");
    assert_invalid(queue.extend(&lease, Duration::ZERO).await, "lease");
    assert_invalid(queue.nack(&lease, Duration::MAX, "e").await, "retry delay");
    assert_invalid(queue.reclaim("q", 0).await, "reclaim limit");
    assert_invalid(queue.reclaim("q", 10_001).await, "reclaim limit");
    assert_invalid(
        queue.list_jobs("q", JobState::Waiting, 0, 0).await,
        "page size",
    );
    assert_invalid(
        queue.list_jobs("q", JobState::Waiting, 0, 1001).await,
        "page size",
    );
    // Blocked jobs are listed by their own walk, bounded the same way.
    assert_invalid(
        queue.list_jobs("q", JobState::Blocked, 0, 1001).await,
        "page size",
    );
    assert_invalid(queue.dead_letters("q", 0, 0).await, "page size");
    assert_invalid(queue.events(0).await, "event count");
    assert_invalid(queue.events(10_001).await, "event count");
    assert_eq!(digest(&server).await, before);

    // The boundaries are accepted.
    assert!(queue.claim("q", 1000, LONG).await.unwrap().is_empty());
    assert!(queue
        .claim("q", 1, Duration::from_millis(1))
        .await
        .unwrap()
        .is_empty());
    queue.reclaim("q", 10_000).await.unwrap();
    queue
        .list_jobs("q", JobState::Leased, 0, 1000)
        .await
        .unwrap();
    queue.events(10_000).await.unwrap();
    assert_eq!(queue.ack(&lease).await.unwrap(), Acked::Completed);
}

#[tokio::test]
async fn malformed_job_ids_are_rejected_as_invalid_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "bad-ids").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let before = digest(&server).await;
    for id in ["", "a\nb", "tab\there", &"i".repeat(65)] {
        let lease = Lease {
            queue: "q".into(),
            id: id.to_owned(),
            lease_id: 1,
        };
        assert_invalid(queue.ack(&lease).await, "job id");
        assert_invalid(queue.nack(&lease, LONG, "e").await, "job id");
        assert_invalid(queue.dead_letter(&lease, "e").await, "job id");
        assert_invalid(queue.extend(&lease, LONG).await, "job id");
        assert_invalid(queue.release(&lease).await, "job id");
        assert_invalid(queue.inspect(id).await, "job id");
        assert_invalid(queue.requeue_dead("q", &[id.to_owned()]).await, "job id");
        assert_invalid(queue.delete_dead("q", &[id.to_owned()]).await, "job id");
        assert_invalid(Queue::complete(&queue, id).await, "job id");
        assert_invalid(Queue::retry(&queue, id, LONG, "e").await, "job id");
        assert_invalid(Queue::fail(&queue, id, "e").await, "job id");
    }
    assert_eq!(digest(&server).await, before);
}

#[tokio::test]
async fn unknown_job_ids_are_reported_and_change_nothing() {
    let server = server();
    let queue = queue(&server, "unknown-ids").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    queue.add("q", NewJob::new(json!(2))).await.unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap();
    let before = digest(&server).await;
    let unknown = "01JUNKNOWNUNKNOWNUNKNOWN00".to_owned();
    let lease = Lease {
        queue: "q".into(),
        id: unknown.clone(),
        lease_id: held[0].lease_id,
    };

    assert_eq!(queue.inspect(&unknown).await.unwrap(), None);
    // An ack for a job that does not exist (any more) is harmless.
    assert_eq!(queue.ack(&lease).await.unwrap(), Acked::AlreadyGone);
    assert_lease_lost(queue.nack(&lease, LONG, "e").await, &unknown);
    assert_lease_lost(queue.dead_letter(&lease, "e").await, &unknown);
    assert_lease_lost(queue.extend(&lease, LONG).await, &unknown);
    assert_lease_lost(queue.release(&lease).await, &unknown);
    let report = queue
        .requeue_dead("q", std::slice::from_ref(&unknown))
        .await
        .unwrap();
    assert_eq!((report.done, report.not_found), (0, 1));
    let report = queue
        .delete_dead("q", std::slice::from_ref(&unknown))
        .await
        .unwrap();
    assert_eq!((report.done, report.not_found), (0, 1));
    // A real job id, but not a dead letter: not found either.
    let waiting_id = held[0].id.clone();
    let report = queue
        .requeue_dead("q", std::slice::from_ref(&waiting_id))
        .await
        .unwrap();
    assert_eq!((report.done, report.not_found), (0, 1));
    let report = queue.delete_dead("q", &[waiting_id]).await.unwrap();
    assert_eq!((report.done, report.not_found), (0, 1));
    // The seed trait: retry and fail of an unknown job name it.
    for result in [
        Queue::retry(&queue, &unknown, LONG, "e").await,
        Queue::fail(&queue, &unknown, "e").await,
    ] {
        match result {
            Err(QueueError::JobNotFound { id }) => assert_eq!(id, unknown),
            other => panic!("expected JobNotFound, got {other:?}"),
        }
    }
    assert_eq!(digest(&server).await, before);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (1, 1));
}

#[tokio::test]
async fn a_lease_naming_the_wrong_queue_is_lost_and_changes_nothing() {
    let server = server();
    let queue = queue(&server, "wrong-queue").await;
    queue.add("a", NewJob::new(json!(1))).await.unwrap();
    queue.add("b", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "a", 1).await.remove(0);
    let before = digest(&server).await;
    let mut wrong = job.lease();
    wrong.queue = "b".into();
    assert_lease_lost(queue.ack(&wrong).await, &job.id);
    assert_lease_lost(queue.nack(&wrong, LONG, "e").await, &job.id);
    assert_lease_lost(queue.extend(&wrong, LONG).await, &job.id);
    assert_lease_lost(queue.release(&wrong).await, &job.id);
    assert_eq!(digest(&server).await, before);
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
}

#[tokio::test]
async fn bad_connection_settings_are_rejected_before_connecting() {
    let server = server();
    for namespace in ["", "a{b}", "a:b", "x\n"] {
        let result = RedisQueue::builder(&server.url())
            .namespace(namespace)
            .connect()
            .await;
        assert_invalid(result, "namespace");
    }
    let result = RedisQueue::builder(&server.url())
        .namespace("n".repeat(129))
        .connect()
        .await;
    assert_invalid(result, "namespace");
    assert_invalid(
        RedisQueue::builder(&server.url())
            .pool_size(0)
            .connect()
            .await,
        "pool size",
    );
    assert_invalid(
        RedisQueue::builder(&server.url())
            .payload_limit(0)
            .connect()
            .await,
        "payload limit",
    );
    assert_eq!(dbsize(&server).await, 0);
}

#[tokio::test]
async fn not_before_in_the_past_or_before_the_epoch_means_due_now() {
    let server = server();
    let queue = queue(&server, "past").await;
    queue
        .add(
            "q",
            NewJob::new(json!(1)).not_before(SystemTime::now() - Duration::from_secs(3600)),
        )
        .await
        .unwrap();
    queue
        .add(
            "q",
            NewJob::new(json!(2)).not_before(UNIX_EPOCH - Duration::from_secs(5)),
        )
        .await
        .unwrap();
    assert_eq!(claim_n(&queue, "q", 2).await.len(), 2);
}

#[tokio::test]
async fn pool_sizes_at_the_limits_work_and_beyond_them_are_refused() {
    let server = server();
    for size in [1, 64] {
        let queue = RedisQueue::builder(&server.url())
            .namespace(redq_tests::unique_namespace("pool"))
            .pool_size(size)
            .connect()
            .await
            .unwrap();
        queue.add("q", NewJob::new(json!(size))).await.unwrap();
        assert_eq!(claim_n(&queue, "q", 1).await[0].payload, json!(size));
    }
    assert_invalid(
        RedisQueue::builder(&server.url())
            .pool_size(65)
            .connect()
            .await,
        "pool size",
    );
}

#[tokio::test]
async fn a_page_offset_past_any_queue_is_an_empty_page() {
    let server = server();
    let queue = queue(&server, "huge-offset").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    for offset in [u32::MAX as u64, u32::MAX as u64 + 1, 1 << 53, u64::MAX] {
        let page = queue
            .list_jobs("q", JobState::Waiting, offset, 10)
            .await
            .unwrap();
        assert_eq!((page.total, page.items.len()), (1, 0), "offset {offset}");
        let dead = queue.dead_letters("q", offset, 10).await.unwrap();
        assert!(dead.items.is_empty());
    }
}

#[tokio::test]
async fn requeueing_or_deleting_no_ids_touches_nothing() {
    let server = server();
    let queue = queue(&server, "no-ids").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.dead_letter(&job.lease(), "x").await.unwrap();
    let before = digest(&server).await;
    let report = queue.requeue_dead("q", &[]).await.unwrap();
    assert_eq!((report.done, report.not_found, report.dead_left), (0, 0, 1));
    let report = queue.delete_dead("q", &[]).await.unwrap();
    assert_eq!((report.done, report.not_found, report.dead_left), (0, 0, 1));
    assert_eq!(digest(&server).await, before);
}

#[tokio::test]
async fn a_forged_lease_id_beyond_any_issued_is_lost_and_changes_nothing() {
    let server = server();
    let queue = queue(&server, "forged-lease").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    let before = digest(&server).await;
    for lease_id in [1 << 53, u64::MAX] {
        let mut forged = job.lease();
        forged.lease_id = lease_id;
        assert_lease_lost(queue.ack(&forged).await, &job.id);
        assert_lease_lost(queue.nack(&forged, LONG, "e").await, &job.id);
        assert_lease_lost(queue.dead_letter(&forged, "e").await, &job.id);
        assert_lease_lost(queue.extend(&forged, LONG).await, &job.id);
        assert_lease_lost(queue.release(&forged).await, &job.id);
    }
    assert_eq!(digest(&server).await, before);
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
}

/// A batch of zero jobs sent straight to the batch scripts (the driver never
/// sends one) is an empty reply that writes nothing, not a Redis error from
/// a command called with no arguments.
#[tokio::test]
async fn empty_batches_sent_to_the_scripts_do_nothing() {
    let server = server();
    let queue = queue(&server, "empty-batch").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let client = server.client().await;
    let before = digest(&server).await;
    for name in ["enqueue", "ack"] {
        let sha = redq_tests::lua::load(
            &client,
            &redq_tests::lua::compose(redq_tests::lua::source(name)),
        )
        .await;
        let count: &[fred::types::Value] = if name == "enqueue" {
            &["1000".into(), "0".into(), "".into(), "".into(), "".into()]
        } else {
            &["0".into()]
        };
        let reply = redq_tests::lua::evalsha(&client, &sha, queue.namespace(), "q", count)
            .await
            .unwrap_or_else(|e| panic!("{name} with 0 jobs: {e}"));
        assert_eq!(reply, fred::types::Value::Array(vec![]), "{name}");
    }
    assert_eq!(digest(&server).await, before);
}

#[tokio::test]
async fn a_claim_of_zero_is_answered_without_a_round_trip() {
    let server = server();
    let queue = queue(&server, "claim-zero").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    server.reset_stats().await;
    assert!(queue.claim("q", 0, LONG).await.unwrap().is_empty());
    assert!(Queue::claim(&queue, "q", 0, LONG).await.unwrap().is_empty());
    let seen = server.seen_since_reset().await;
    let scripts: Vec<_> = seen
        .commands
        .iter()
        .filter(|(name, _)| name.starts_with("eval") || name.starts_with("fcall"))
        .collect();
    assert!(scripts.is_empty(), "a claim of 0 ran a script: {scripts:?}");
}
