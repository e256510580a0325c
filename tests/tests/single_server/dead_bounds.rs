//! A queue's dead-letter bound (`redq::kept::DeadBound`): at most N dead
//! letters and/or none older than an age, enforced when a job of the queue
//! dies (nack, reclaim, a waiter's gate), when the bound is set, and by an
//! explicit trim; what it deletes goes for good (record, notes, detached
//! payload), with a `purged` event; a queue without one loses nothing.

use std::time::{Duration, SystemTime};

use redq::events::EventKind;
use redq::kept::{DeadBound, DeadBoundSet, MIN_DEAD_AGE};
use redq::notes::NoteBatch;
use redq::workflow::{Decision, OnFailure};
use redq::{NewJob, QueueError, RecordFormat, RedisQueue};
use redq_tests::events::{acting, events_after, latest_of_kind, newest_event_id};
use redq_tests::fixtures::*;
use redq_tests::{wait_until, RedisServer};
use serde_json::json;

const HOUR: Duration = Duration::from_secs(3600);

/// Enqueue `n` jobs to `q` and dead-letter them one by one, oldest first,
/// each in its own millisecond (so which is oldest is well defined), each
/// with a progress note. Returns their ids in the order they died.
async fn kill(queue: &RedisQueue, n: usize) -> Vec<String> {
    queue.add_batch("q", numbered(n)).await.unwrap();
    let jobs = claim_n(queue, "q", n).await;
    let mut ids = Vec::new();
    for job in jobs {
        let mut notes = NoteBatch::new();
        notes.progress(&json!({ "n": job.payload["n"] })).unwrap();
        notes.log("about to fail");
        queue.note(&job.lease(), &notes).await.unwrap();
        queue.dead_letter(&job.lease(), "poison").await.unwrap();
        let replied = SystemTime::now();
        ids.push(job.id.clone());
        wait_until(DEADLINE, "the clock to move on", async || {
            SystemTime::now() > replied + Duration::from_millis(2)
        })
        .await;
    }
    ids
}

/// The queue's dead letters, oldest first.
async fn dead_ids(queue: &RedisQueue) -> Vec<String> {
    let page = queue.dead_letters("q", 0, 1000).await.unwrap();
    page.items.into_iter().rev().map(|r| r.id).collect()
}

/// Whether field `id` of `{ns}:<hash>` exists.
async fn stored(server: &RedisServer, queue: &RedisQueue, hash: &str, id: &str) -> bool {
    let key = format!("{{{}}}:{hash}", queue.namespace());
    server
        .cmd(&["HEXISTS", &key, id])
        .await
        .convert::<i64>()
        .expect("HEXISTS is an integer")
        == 1
}

/// Nothing of job `id` is left: record, notes, detached payload.
async fn assert_gone(server: &RedisServer, queue: &RedisQueue, id: &str) {
    for hash in ["jobs", "progress", "logs", "detached"] {
        assert!(
            !stored(server, queue, hash, id).await,
            "job {id}: {hash} left behind"
        );
    }
}

/// Back-date dead letter `id`: it died `ago` before Redis's clock now (the
/// dead set's score is what the bound reads).
async fn died_ago(server: &RedisServer, queue: &RedisQueue, id: &str, ago: Duration) {
    let key = format!("{{{}}}:q:q:dead", queue.namespace());
    let time: Vec<String> = server.cmd(&["TIME"]).await.convert().unwrap();
    let now_ms = time[0].parse::<u64>().unwrap() * 1000 + time[1].parse::<u64>().unwrap() / 1000;
    let at = (now_ms - ago.as_millis() as u64).to_string();
    let changed: i64 = server
        .cmd(&["ZADD", &key, "XX", "CH", &at, id])
        .await
        .convert()
        .unwrap();
    assert_eq!(changed, 1, "dead letter {id} back-dated");
}

#[tokio::test]
async fn a_count_bound_keeps_the_newest_dead_letters_as_more_die() {
    let server = server();
    let queue = queue(&server, "dead-bound-count").await;
    let set = queue
        .set_dead_bound("q", &DeadBound::new().max_count(3))
        .await
        .unwrap();
    assert_eq!(
        set,
        DeadBoundSet {
            replaced: None,
            trimmed: 0
        }
    );
    let ids = kill(&queue, 5).await;
    assert_eq!(dead_ids(&queue).await, ids[2..].to_vec());
    for id in &ids[..2] {
        assert_gone(&server, &queue, id).await;
    }
    for id in &ids[2..] {
        assert!(stored(&server, &queue, "jobs", id).await);
        assert!(stored(&server, &queue, "progress", id).await);
    }
    // Each death past the bound trimmed one, and said so.
    let purged = latest_of_kind(&queue, EventKind::Purged).await;
    assert_eq!(purged.len(), 2, "{purged:?}");
    for event in &purged {
        assert_eq!(event.count, Some(1));
        assert_eq!(event.queue, "q");
        let detail = event.detail.as_deref().unwrap();
        assert!(detail.contains("dead-letter bound (count 3)"), "{detail}");
        assert_eq!(event.by, None);
    }
    let state = queue.dead_bound("q").await.unwrap();
    assert_eq!(state.bound, Some(DeadBound::new().max_count(3)));
    assert_eq!(state.dead, 3);
    assert_eq!(queue.counts("q").await.unwrap().dead, 3);
}

#[tokio::test]
async fn a_queue_without_a_bound_keeps_every_dead_letter() {
    let server = server();
    let queue = queue(&server, "dead-bound-none").await;
    // Another queue's bound is not this one's.
    queue
        .set_dead_bound("other", &DeadBound::new().max_count(1))
        .await
        .unwrap();
    let ids = kill(&queue, 4).await;
    assert_eq!(dead_ids(&queue).await, ids);
    assert!(latest_of_kind(&queue, EventKind::Purged).await.is_empty());
    assert_eq!(queue.dead_bound("q").await.unwrap().bound, None);
    assert_eq!(queue.trim_dead("q").await.unwrap(), 0);
    assert_eq!(dead_ids(&queue).await, ids);
}

#[tokio::test]
async fn setting_a_bound_trims_at_once_and_says_what_it_replaced() {
    let server = server();
    let queue = queue(&server, "dead-bound-set").await;
    let ids = kill(&queue, 6).await;
    let set = queue
        .set_dead_bound("q", &DeadBound::new().max_count(4))
        .await
        .unwrap();
    assert_eq!((set.replaced, set.trimmed), (None, 2));
    assert_eq!(dead_ids(&queue).await, ids[2..].to_vec());
    let set = queue
        .set_dead_bound("q", &DeadBound::new().max_count(1).max_age(HOUR))
        .await
        .unwrap();
    assert_eq!(set.replaced, Some(DeadBound::new().max_count(4)));
    assert_eq!(set.trimmed, 3);
    assert_eq!(dead_ids(&queue).await, vec![ids[5].clone()]);
    for id in &ids[..5] {
        assert_gone(&server, &queue, id).await;
    }
    // The set's event, then its trim's.
    let set_events = latest_of_kind(&queue, EventKind::RetentionSet).await;
    assert_eq!(
        set_events[0].detail.as_deref(),
        Some("dead letters: count 1, age 1h")
    );
    let purged = latest_of_kind(&queue, EventKind::Purged).await;
    assert_eq!(purged[0].count, Some(3));

    // Cleared: the dead letters stay, and later deaths trim nothing.
    let had = queue.clear_dead_bound("q").await.unwrap();
    assert_eq!(had, Some(DeadBound::new().max_count(1).max_age(HOUR)));
    assert_eq!(queue.clear_dead_bound("q").await.unwrap(), None);
    let cleared = latest_of_kind(&queue, EventKind::RetentionCleared).await;
    assert_eq!(
        cleared[0].detail.as_deref(),
        Some("dead letters: count 1, age 1h")
    );
    let more = kill(&queue, 2).await;
    let mut all = vec![ids[5].clone()];
    all.extend(more);
    assert_eq!(dead_ids(&queue).await, all);
}

#[tokio::test]
async fn an_age_bound_deletes_older_dead_letters_when_a_job_dies_and_when_trimmed() {
    let server = server();
    let queue = queue(&server, "dead-bound-age").await;
    let ids = kill(&queue, 4).await;
    queue
        .set_dead_bound("q", &DeadBound::new().max_age(HOUR))
        .await
        .unwrap();
    assert_eq!(dead_ids(&queue).await, ids, "none is an hour old");

    // Two died over an hour ago (on Redis's clock): the next death trims them.
    died_ago(&server, &queue, &ids[0], HOUR + Duration::from_secs(60)).await;
    died_ago(&server, &queue, &ids[1], 2 * HOUR).await;
    let next = kill(&queue, 1).await;
    assert_eq!(
        dead_ids(&queue).await,
        vec![ids[2].clone(), ids[3].clone(), next[0].clone()]
    );
    assert_gone(&server, &queue, &ids[0]).await;
    assert_gone(&server, &queue, &ids[1]).await;
    let purged = latest_of_kind(&queue, EventKind::Purged).await;
    assert_eq!(purged[0].count, Some(2));
    assert!(purged[0].detail.as_deref().unwrap().contains("(age 1h)"));

    // No job dies: an explicit trim applies the age bound, by an operator.
    died_ago(&server, &queue, &ids[2], 3 * HOUR).await;
    let operator = acting(&server, queue.namespace(), "ops@example").await;
    let before = newest_event_id(&queue).await;
    assert_eq!(operator.trim_dead("q").await.unwrap(), 1);
    assert_eq!(
        dead_ids(&queue).await,
        vec![ids[3].clone(), next[0].clone()]
    );
    let events = events_after(&queue, &before).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind, "purged");
    assert_eq!(events[0].by.as_deref(), Some("ops@example"));
    assert_eq!(queue.trim_dead("q").await.unwrap(), 0);
}

#[tokio::test]
async fn a_reclaim_that_dead_letters_trims_to_the_bound() {
    let server = server();
    let queue = queue(&server, "dead-bound-reclaim").await;
    let ids = kill(&queue, 2).await;
    queue
        .set_dead_bound("q", &DeadBound::new().max_count(2))
        .await
        .unwrap();
    queue
        .add("q", NewJob::new(json!({ "n": 9 })).max_attempts(1))
        .await
        .unwrap();
    let held = queue.claim("q", 1, Duration::from_millis(1)).await.unwrap();
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.reclaim("q", 10).await.unwrap().dead_lettered == 1
    })
    .await;
    assert_eq!(
        dead_ids(&queue).await,
        vec![ids[1].clone(), held[0].id.clone()]
    );
    assert_gone(&server, &queue, &ids[0]).await;
}

#[tokio::test]
async fn a_detached_dead_letter_trimmed_leaves_no_payload() {
    let server = server();
    let format = RecordFormat::Detached { min_bytes: 64 };
    let queue = queue_in_format(&server, "dead-bound-detached", format).await;
    let big = "x".repeat(200);
    queue
        .add_batch(
            "q",
            (0..3)
                .map(|i| NewJob::new(json!({ "n": i, "big": big })))
                .collect(),
        )
        .await
        .unwrap();
    assert_eq!(hlen(&server, &queue, "detached").await, 3);
    let jobs = claim_n(&queue, "q", 3).await;
    queue
        .set_dead_bound("q", &DeadBound::new().max_count(1))
        .await
        .unwrap();
    for job in &jobs {
        queue.dead_letter(&job.lease(), "poison").await.unwrap();
    }
    assert_eq!(queue.counts("q").await.unwrap().dead, 1);
    assert_eq!(hlen(&server, &queue, "detached").await, 1);
    assert_eq!(hlen(&server, &queue, "jobs").await, 1);
}

#[tokio::test]
async fn an_invalid_bound_is_refused_with_nothing_written() {
    let server = server();
    let queue = queue(&server, "dead-bound-invalid").await;
    kill(&queue, 2).await;
    let before = digest(&server).await;
    let refused = [
        (DeadBound::new(), "dead-letter bound"),
        (DeadBound::new().max_count(0), "dead-letter count"),
        (
            DeadBound::new().max_count(u32::MAX as u64 + 1),
            "dead-letter count",
        ),
        (
            DeadBound::new().max_age(MIN_DEAD_AGE - Duration::from_millis(1)),
            "dead-letter age",
        ),
        (
            DeadBound::new().max_age(Duration::from_secs(11 * 365 * 86_400)),
            "dead-letter age",
        ),
    ];
    for (bound, what) in refused {
        let result = queue.set_dead_bound("q", &bound).await;
        if let Err(QueueError::Invalid { rule, .. }) = &result {
            assert!(!rule.contains("Some("), "{rule}");
        }
        assert_invalid(result, what);
    }
    let message = queue
        .set_dead_bound("q", &DeadBound::new().max_age(Duration::from_secs(30)))
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("at least 1 minute"), "{message}");
    assert_eq!(digest(&server).await, before, "a refused bound wrote");
    assert_eq!(queue.dead_bound("q").await.unwrap().bound, None);
}

#[tokio::test]
async fn a_waiter_dead_lettered_by_its_gate_or_an_operator_trims_to_the_bound() {
    let server = server();
    let queue = queue(&server, "dead-bound-waiter").await;
    let first = kill(&queue, 1).await;
    queue
        .set_dead_bound("q", &DeadBound::new().max_count(1))
        .await
        .unwrap();
    let charge = queue
        .add("pay", NewJob::new(json!("charge")))
        .await
        .unwrap();
    let auto = NewJob::new(json!("auto")).after([charge.id()]);
    let auto = queue.add("q", auto).await.unwrap().id().to_owned();
    let held = NewJob::new(json!("held"))
        .after([charge.id()])
        .on_dependency_failure(OnFailure::Hold);
    let held = queue.add("q", held).await.unwrap().id().to_owned();
    let job = queue.claim("pay", 1, LONG).await.unwrap().remove(0);
    queue.dead_letter(&job.lease(), "declined").await.unwrap();

    // The claim decides the waiter its gate failed: dead, and the older
    // dead letter is trimmed.
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(dead_ids(&queue).await, vec![auto.clone()]);
    assert_gone(&server, &queue, &first[0]).await;

    // An operator's dead-letter decision trims too.
    queue
        .decide_held(&held, Decision::DeadLetter, "ops")
        .await
        .unwrap();
    assert_eq!(dead_ids(&queue).await, vec![held.clone()]);
    assert_gone(&server, &queue, &auto).await;
}

#[tokio::test]
async fn an_operators_dead_letter_of_a_waiting_job_trims_to_the_bound() {
    let server = server();
    let queue = queue(&server, "dead-bound-operator").await;
    let first = kill(&queue, 1).await;
    queue
        .set_dead_bound("q", &DeadBound::new().max_count(1))
        .await
        .unwrap();
    let waiting = queue
        .add("q", NewJob::new(json!("poison")))
        .await
        .unwrap()
        .id()
        .to_owned();
    queue.dead_letter_job(&waiting, "set aside").await.unwrap();
    assert_eq!(dead_ids(&queue).await, vec![waiting]);
    assert_gone(&server, &queue, &first[0]).await;
}
