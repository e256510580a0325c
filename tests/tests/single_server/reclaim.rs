//! Failed attempts: nack with backoff, reclaim of lapsed leases (inside claim
//! and the explicit bounded call), max attempts and the retry window.

use std::time::{Duration, SystemTime};

use redq::{JobState, Nacked, NewJob, Reclaimed};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until};
use serde_json::json;

fn failed_total(buckets: &[redq::StatsBucket]) -> u64 {
    buckets.iter().map(|b| b.failed).sum()
}

#[tokio::test]
async fn explicit_reclaim_is_bounded_and_counts_an_attempt_per_lapsed_lease() {
    let server = server();
    let ns = unique_namespace("reclaim-explicit");
    let queue = redq::RedisQueue::builder(&server.url())
        .namespace(&ns)
        .identity(4242, 7)
        .connect()
        .await
        .unwrap();
    queue.add_batch("q", numbered(3)).await.unwrap();
    let held = queue.claim("q", 3, SHORT).await.unwrap();
    assert_eq!(queue.reclaim("q", 10).await.unwrap(), Reclaimed::default());
    wait_until(DEADLINE, "all three leases to lapse", async || {
        queue.counts("q").await.unwrap().lapsed == 3
    })
    .await;

    let first = queue.reclaim("q", 2).await.unwrap();
    assert_eq!(
        first,
        Reclaimed {
            requeued: 2,
            dead_lettered: 0,
            still_lapsed: 1
        }
    );
    let second = queue.reclaim("q", 2).await.unwrap();
    assert_eq!((second.requeued, second.still_lapsed), (1, 0));

    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased, counts.lapsed), (3, 0, 0));
    for job in &held {
        let record = queue.inspect(&job.id).await.unwrap().unwrap();
        assert_eq!(record.state, JobState::Waiting);
        assert_eq!(record.attempts, 1);
        assert_eq!(record.holder, None);
        let error = record.last_error.unwrap();
        assert!(error.contains("lease expired"), "{error}");
        assert!(error.contains("4242") && error.contains('7'), "{error}");
    }
    assert_eq!(failed_total(&queue.stats("q").await.unwrap()), 3);
    // Back in their old order, each with one failed attempt.
    let again = claim_n(&queue, "q", 3).await;
    assert_eq!(numbers(&again), vec![0, 1, 2]);
    assert!(again.iter().all(|j| j.attempts == 1));
}

#[tokio::test]
async fn claim_reclaims_a_lapsed_lease_and_hands_the_job_out_again() {
    let server = server();
    let queue = queue(&server, "reclaim-in-claim").await;
    queue.add("q", NewJob::new(json!("job"))).await.unwrap();
    let first = queue.claim("q", 1, SHORT).await.unwrap().remove(0);
    assert!(queue.claim("q", 1, LONG).await.unwrap().is_empty());
    let mut again = Vec::new();
    wait_until(
        DEADLINE,
        "the lapsed job to be handed out again",
        async || {
            again = queue.claim("q", 1, LONG).await.unwrap();
            !again.is_empty()
        },
    )
    .await;
    assert!(SystemTime::now() >= first.lease_expires_at);
    assert_eq!(again[0].id, first.id);
    assert_eq!(again[0].attempts, 1);
    assert!(again[0].lease_id > first.lease_id);
}

#[tokio::test]
async fn reclaim_dead_letters_once_max_attempts_are_spent() {
    let server = server();
    let queue = queue(&server, "reclaim-spent").await;
    let id = queue
        .add("q", NewJob::new(json!(1)).max_attempts(2).name("flaky"))
        .await
        .unwrap();
    for expected_attempts in 0..2 {
        let mut job = Vec::new();
        wait_until(DEADLINE, "the job to be claimable", async || {
            job = queue.claim("q", 1, SHORT).await.unwrap();
            !job.is_empty()
        })
        .await;
        assert_eq!(job[0].attempts, expected_attempts);
        wait_until(DEADLINE, "the lease to lapse", async || {
            queue.counts("q").await.unwrap().lapsed == 1
        })
        .await;
    }
    let reclaimed = queue.reclaim("q", 10).await.unwrap();
    assert_eq!((reclaimed.requeued, reclaimed.dead_lettered), (0, 1));
    let record = queue.inspect(id.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Dead);
    assert_eq!(record.attempts, 2);
    assert!(record.died_at.is_some());
    let events = queue
        .events(10)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .collect::<Vec<_>>();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].job_id, id.id());
    assert_eq!(events[0].kind, "dead");
    assert_eq!(events[0].attempts, 2);
    assert_eq!(events[0].name.as_deref(), Some("flaky"));
    assert!(events[0].error.contains("lease expired"));
}

#[tokio::test]
async fn nack_schedules_a_retry_after_the_delay() {
    let server = server();
    let queue = queue(&server, "nack-delay").await;
    let id = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    let delay = Duration::from_millis(300);
    let before = SystemTime::now();
    let outcome = queue
        .nack(&job.lease(), delay, "503 upstream")
        .await
        .unwrap();
    let after = SystemTime::now();
    let Nacked::Retrying { attempts, due_at } = outcome else {
        panic!("expected a retry, got {outcome:?}");
    };
    assert_eq!(attempts, 1);
    let slack = Duration::from_millis(20);
    assert!(due_at + slack >= before + delay && due_at <= after + delay + slack);

    let record = queue.inspect(id.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Scheduled);
    assert_eq!(
        record.due_at,
        Some(due_at),
        "inspect shows the retry's due time"
    );
    assert_eq!(record.last_error.as_deref(), Some("503 upstream"));
    let next = queue.next_due("q").await.unwrap().unwrap();
    assert!(next > Duration::ZERO && next <= delay, "{next:?}");

    let mut again = Vec::new();
    wait_until(DEADLINE, "the retry to come due", async || {
        let asked = SystemTime::now();
        again = queue.claim("q", 1, LONG).await.unwrap();
        if again.is_empty() {
            assert!(asked < due_at + Duration::from_millis(50));
        }
        !again.is_empty()
    })
    .await;
    assert!(SystemTime::now() + Duration::from_millis(20) >= due_at);
    assert_eq!(again[0].attempts, 1);
    assert_eq!(failed_total(&queue.stats("q").await.unwrap()), 1);
}

#[tokio::test]
async fn unlimited_attempts_keep_retrying() {
    let server = server();
    let queue = queue(&server, "unlimited").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    for attempt in 1..=12u32 {
        let job = claim_n(&queue, "q", 1).await.remove(0);
        assert_eq!(job.attempts, attempt - 1);
        let outcome = queue.nack(&job.lease(), Duration::ZERO, "again").await;
        assert!(
            matches!(outcome, Ok(Nacked::Retrying { attempts, .. }) if attempts == attempt),
            "{outcome:?}"
        );
    }
}

#[tokio::test]
async fn nack_dead_letters_when_max_attempts_are_spent() {
    let server = server();
    let queue = queue(&server, "nack-spent").await;
    queue
        .add("q", NewJob::new(json!(1)).max_attempts(3))
        .await
        .unwrap();
    for attempt in 1..=3u32 {
        let job = claim_n(&queue, "q", 1).await.remove(0);
        let outcome = queue.nack(&job.lease(), Duration::ZERO, "e").await.unwrap();
        if attempt < 3 {
            assert!(matches!(outcome, Nacked::Retrying { .. }), "{outcome:?}");
        } else {
            assert_eq!(outcome, Nacked::DeadLettered { attempts: 3 });
        }
    }
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled, counts.dead), (0, 0, 1));
}

#[tokio::test]
async fn a_failure_after_the_retry_window_dead_letters() {
    let server = server();
    let queue = queue(&server, "retry-window").await;
    let window = Duration::from_millis(300);
    queue
        .add("q", NewJob::new(json!(1)).retry_window(window))
        .await
        .unwrap();
    // Inside the window a failure retries.
    let job = claim_n(&queue, "q", 1).await.remove(0);
    let inside = queue
        .nack(&job.lease(), Duration::ZERO, "early")
        .await
        .unwrap();
    assert!(matches!(inside, Nacked::Retrying { .. }), "{inside:?}");
    let job = claim_n(&queue, "q", 1).await.remove(0);
    let window_ends = job.enqueued_at + window;
    wait_until(DEADLINE, "the retry window to pass", async || {
        SystemTime::now() > window_ends + Duration::from_millis(20)
    })
    .await;
    let after = queue
        .nack(&job.lease(), Duration::ZERO, "late")
        .await
        .unwrap();
    assert_eq!(after, Nacked::DeadLettered { attempts: 2 });
}

#[tokio::test]
async fn a_lapsed_lease_after_the_retry_window_dead_letters() {
    let server = server();
    let queue = queue(&server, "retry-window-lapse").await;
    queue
        .add(
            "q",
            NewJob::new(json!(1)).retry_window(Duration::from_millis(100)),
        )
        .await
        .unwrap();
    let _job = queue.claim("q", 1, SHORT).await.unwrap();
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts("q").await.unwrap().lapsed == 1
    })
    .await;
    assert!(queue.claim("q", 1, LONG).await.unwrap().is_empty());
    assert_eq!(queue.counts("q").await.unwrap().dead, 1);
}
