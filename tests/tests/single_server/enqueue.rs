//! Enqueueing: single and batch, what is recorded, delays and not-before
//! times.

use std::time::{Duration, SystemTime};

use redq::{Enqueued, JobState, NewJob};
use redq_tests::fixtures::*;
use redq_tests::wait_until;
use serde_json::json;

#[tokio::test]
async fn add_records_the_job_with_every_option() {
    let server = server();
    let queue = queue(&server, "add-record").await;
    let before = SystemTime::now() - Duration::from_secs(1);
    let outcome = queue
        .add(
            "emails",
            NewJob::new(json!({"to": "ada"}))
                .priority(7)
                .dedup_key("welcome:ada")
                .ordering_key("user:ada")
                .max_attempts(5)
                .retry_window(Duration::from_secs(3600))
                .name("send_welcome"),
        )
        .await
        .unwrap();
    let Enqueued::Created(id) = outcome.clone() else {
        panic!("expected a new job, got {outcome:?}");
    };
    assert_eq!(id.len(), 26, "a ULID: {id}");
    assert_eq!(outcome.id(), id);

    let record = queue.inspect(&id).await.unwrap().expect("job exists");
    assert_eq!(record.id, id);
    assert_eq!(record.queue, "emails");
    assert_eq!(record.state, JobState::Waiting);
    assert_eq!(record.payload, json!({"to": "ada"}));
    assert_eq!(record.priority, 7);
    assert_eq!(record.attempts, 0);
    assert_eq!(record.max_attempts, 5);
    assert_eq!(record.name.as_deref(), Some("send_welcome"));
    assert_eq!(record.dedup_key.as_deref(), Some("welcome:ada"));
    assert_eq!(record.ordering_key.as_deref(), Some("user:ada"));
    assert_eq!(record.retry_window, Some(Duration::from_secs(3600)));
    assert_eq!(
        (record.lease_id, record.holder, record.last_error.clone()),
        (None, None, None)
    );
    assert!(record.enqueued_at >= before && record.enqueued_at <= SystemTime::now());

    let job = claim_n(&queue, "emails", 1).await.remove(0);
    assert_eq!(job.id, id);
    assert_eq!(job.priority, 7);
    assert_eq!(job.max_attempts, 5);
    assert_eq!(job.name.as_deref(), Some("send_welcome"));
    assert_eq!(job.ordering_key.as_deref(), Some("user:ada"));
    assert_eq!(job.enqueued_at, record.enqueued_at);
    assert_eq!(queue.queues().await.unwrap(), vec!["emails".to_owned()]);
}

#[tokio::test]
async fn a_job_without_options_gets_the_documented_defaults() {
    let server = server();
    let queue = queue(&server, "defaults").await;
    let id = queue.add("q", NewJob::new(json!(null))).await.unwrap();
    let record = queue.inspect(id.id()).await.unwrap().unwrap();
    assert_eq!(record.payload, json!(null));
    assert_eq!((record.priority, record.max_attempts), (0, 0));
    assert_eq!(record.state, JobState::Waiting);
    assert_eq!(
        (record.name, record.dedup_key, record.ordering_key),
        (None, None, None)
    );
    assert_eq!(record.retry_window, None);
    assert_eq!(record.due_at, None);
}

#[tokio::test]
async fn batch_outcomes_come_back_in_input_order() {
    let server = server();
    let queue = queue(&server, "batch-order").await;
    let existing = queue
        .add("q", NewJob::new(json!("first")).dedup_key("k1"))
        .await
        .unwrap();
    let outcomes = queue
        .add_batch(
            "q",
            vec![
                NewJob::new(json!({"n": 0})),
                NewJob::new(json!({"n": 1})).dedup_key("k1"),
                NewJob::new(json!({"n": 2})).dedup_key("k2"),
                NewJob::new(json!({"n": 3})).dedup_key("k2"),
                NewJob::new(json!({"n": 4})),
            ],
        )
        .await
        .unwrap();
    assert_eq!(outcomes.len(), 5);
    assert!(matches!(outcomes[0], Enqueued::Created(_)));
    assert_eq!(outcomes[1], Enqueued::Duplicate(existing.id().to_owned()));
    assert!(matches!(outcomes[2], Enqueued::Created(_)));
    // A duplicate of a job created earlier in the same batch.
    assert_eq!(
        outcomes[3],
        Enqueued::Duplicate(outcomes[2].id().to_owned())
    );
    assert!(matches!(outcomes[4], Enqueued::Created(_)));

    let jobs = claim_n(&queue, "q", 4).await;
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            existing.id(),
            outcomes[0].id(),
            outcomes[2].id(),
            outcomes[4].id()
        ]
    );
}

#[tokio::test]
async fn an_empty_batch_writes_nothing() {
    let server = server();
    let queue = queue(&server, "empty-batch").await;
    assert!(queue.add_batch("q", Vec::new()).await.unwrap().is_empty());
    assert_eq!(dbsize(&server).await, 0);
}

#[tokio::test]
async fn a_batch_larger_than_one_script_call_keeps_fifo_order() {
    let server = server();
    let queue = queue(&server, "big-batch").await;
    let n = redq::limits::ENQUEUE_CHUNK * 2 + 500;
    let outcomes = queue.add_batch("q", numbered(n)).await.unwrap();
    assert_eq!(outcomes.len(), n);
    assert_eq!(queue.counts("q").await.unwrap().waiting, n as u64);
    let mut claimed = Vec::new();
    loop {
        let jobs = queue.claim("q", 1000, LONG).await.unwrap();
        if jobs.is_empty() {
            break;
        }
        claimed.extend(jobs);
    }
    let order = numbers(&claimed);
    assert_eq!(order.len(), n);
    if let Some(i) = (0..n).find(|&i| order[i] != i as i64) {
        panic!("FIFO broken at position {i}: got job {}", order[i]);
    }
    let claimed_ids: Vec<&str> = claimed.iter().map(|j| j.id.as_str()).collect();
    let enqueued_ids: Vec<&str> = outcomes.iter().map(Enqueued::id).collect();
    assert!(claimed_ids == enqueued_ids, "ids differ from the outcomes");
}

#[tokio::test]
async fn a_delayed_job_is_not_claimable_before_it_is_due_then_is() {
    let server = server();
    let queue = queue(&server, "delay").await;
    let delay = Duration::from_millis(800);
    let before = SystemTime::now();
    let id = queue
        .add("q", NewJob::new(json!("later")).delay(delay))
        .await
        .unwrap();
    let after = SystemTime::now();
    queue.add("q", NewJob::new(json!("now"))).await.unwrap();

    let first = claim_n(&queue, "q", 1).await;
    assert_eq!(first[0].payload, json!("now"));
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (0, 1));
    let record = queue.inspect(id.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Scheduled);
    let due = record.due_at.expect("a scheduled job has a due time");
    let slack = Duration::from_millis(20);
    assert!(due + slack >= before + delay && due <= after + delay + slack);

    let mut got = Vec::new();
    wait_until(
        DEADLINE,
        "the delayed job to become claimable",
        async || {
            let asked = SystemTime::now();
            got = queue.claim("q", 10, LONG).await.unwrap();
            if got.is_empty() {
                // Refused only while it was not due yet.
                assert!(asked < due + Duration::from_millis(50));
            }
            !got.is_empty()
        },
    )
    .await;
    assert!(SystemTime::now() >= due - Duration::from_millis(50));
    assert_eq!(got[0].id, id.id());
    assert_eq!(got[0].payload, json!("later"));
}

#[tokio::test]
async fn not_before_holds_a_job_until_that_time() {
    let server = server();
    let queue = queue(&server, "not-before").await;
    let at = SystemTime::now() + Duration::from_millis(400);
    queue
        .add("q", NewJob::new(json!("at")).not_before(at))
        .await
        .unwrap();
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(queue.counts("q").await.unwrap().scheduled, 1);
    let mut got = Vec::new();
    wait_until(DEADLINE, "the job to come due", async || {
        got = queue.claim("q", 10, LONG).await.unwrap();
        !got.is_empty()
    })
    .await;
    assert!(SystemTime::now() + Duration::from_millis(50) >= at);
    assert_eq!(got[0].payload, json!("at"));
}

#[tokio::test]
async fn with_both_delay_and_not_before_the_later_applies() {
    let server = server();
    let queue = queue(&server, "later-wins").await;
    let soon = SystemTime::now() + Duration::from_millis(50);
    let a = queue
        .add(
            "q",
            NewJob::new(json!("a"))
                .delay(Duration::from_secs(3600))
                .not_before(soon),
        )
        .await
        .unwrap();
    let b = queue
        .add(
            "q",
            NewJob::new(json!("b"))
                .delay(Duration::from_millis(1))
                .not_before(SystemTime::now() + Duration::from_secs(3600)),
        )
        .await
        .unwrap();
    for id in [a.id(), b.id()] {
        let due = queue.inspect(id).await.unwrap().unwrap().due_at.unwrap();
        assert!(due > SystemTime::now() + Duration::from_secs(3500), "{id}");
    }
}

#[tokio::test]
async fn queues_lists_every_queue_enqueued_to_sorted() {
    let server = server();
    let queue = queue(&server, "queue-list").await;
    assert!(queue.queues().await.unwrap().is_empty());
    for name in ["zeta", "alpha", "mid", "alpha"] {
        queue.add(name, NewJob::new(json!(1))).await.unwrap();
    }
    assert_eq!(queue.queues().await.unwrap(), vec!["alpha", "mid", "zeta"]);
    // Claiming from, counting or pausing a queue does not register it.
    queue.claim("other", 1, LONG).await.unwrap();
    queue.counts("other2").await.unwrap();
    assert_eq!(queue.queues().await.unwrap().len(), 3);
}

/// The seed's Enqueue carries attempts already recorded (a job moved from
/// another system): they count toward max_attempts from the first claim,
/// and a job with none left is refused before anything is written.
#[tokio::test]
async fn a_job_enqueued_with_attempts_already_made_has_only_the_rest() {
    let server = server();
    let queue = queue(&server, "add-attempts").await;
    let moved = queue
        .add("q", NewJob::new(json!("moved")).max_attempts(3).attempts(2))
        .await
        .unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    assert_eq!((job.id.as_str(), job.attempts), (moved.id(), 2));
    let outcome = queue
        .nack(&job.lease(), Duration::ZERO, "still failing")
        .await
        .unwrap();
    assert!(
        matches!(outcome, redq::Nacked::DeadLettered { attempts: 3 }),
        "{outcome:?}"
    );

    let before = digest(&server).await;
    let spent = NewJob::new(json!("spent")).max_attempts(3).attempts(3);
    let err = queue.add("q", spent).await.unwrap_err();
    let message = err.to_string();
    assert!(message.contains("attempts"), "{message}");
    assert!(
        message.contains("must be below max_attempts (3)"),
        "{message}"
    );
    let batch = vec![
        NewJob::new(json!(1)),
        NewJob::new(json!(2)).max_attempts(1).attempts(1),
    ];
    assert!(queue.add_batch("q", batch).await.is_err());
    assert_eq!(digest(&server).await, before, "a refused enqueue wrote");

    // Unlimited attempts take any count.
    queue
        .add("u", NewJob::new(json!("u")).attempts(7))
        .await
        .unwrap();
    assert_eq!(claim_n(&queue, "u", 1).await[0].attempts, 7);
}
