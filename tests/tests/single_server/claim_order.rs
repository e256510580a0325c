//! Claim order: FIFO within a priority, higher priorities first, and what a
//! claimed job carries.

use std::time::{Duration, SystemTime};

use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::unique_namespace;
use serde_json::json;

#[tokio::test]
async fn jobs_of_one_priority_come_out_oldest_first_across_claims() {
    let server = server();
    let queue = queue(&server, "fifo").await;
    for job in numbered(50) {
        queue.add("q", job).await.unwrap();
    }
    let mut claimed = Vec::new();
    loop {
        let jobs = queue.claim("q", 7, LONG).await.unwrap();
        assert!(jobs.len() <= 7);
        if jobs.is_empty() {
            break;
        }
        claimed.extend(jobs);
    }
    assert_eq!(numbers(&claimed), (0..50).collect::<Vec<_>>());
}

#[tokio::test]
async fn higher_priorities_come_out_first_then_oldest_first() {
    let server = server();
    let queue = queue(&server, "priority").await;
    // (n, priority), enqueued in this order.
    let plan = [
        (0, 0u8),
        (1, 5),
        (2, 255),
        (3, 0),
        (4, 5),
        (5, 1),
        (6, 255),
        (7, 0),
    ];
    for (n, priority) in plan {
        queue
            .add("q", NewJob::new(json!({ "n": n })).priority(priority))
            .await
            .unwrap();
    }
    let jobs = claim_n(&queue, "q", 8).await;
    assert_eq!(numbers(&jobs), vec![2, 6, 1, 4, 5, 0, 3, 7]);
    let priorities: Vec<u8> = jobs.iter().map(|j| j.priority).collect();
    assert_eq!(priorities, vec![255, 255, 5, 5, 1, 0, 0, 0]);
}

#[tokio::test]
async fn a_later_high_priority_job_overtakes_waiting_low_priority_ones() {
    let server = server();
    let queue = queue(&server, "overtake").await;
    queue.add_batch("q", numbered(3)).await.unwrap();
    let first = queue.claim("q", 1, LONG).await.unwrap();
    assert_eq!(numbers(&first), vec![0]);
    queue
        .add("q", NewJob::new(json!({"n": 99})).priority(1))
        .await
        .unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 3).await), vec![99, 1, 2]);
}

#[tokio::test]
async fn claim_hands_out_at_most_limit_and_nothing_from_an_empty_queue() {
    let server = server();
    let queue = queue(&server, "limit").await;
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    queue.add_batch("q", numbered(5)).await.unwrap();
    assert_eq!(queue.claim("q", 1, LONG).await.unwrap().len(), 1);
    assert_eq!(queue.claim("q", 3, LONG).await.unwrap().len(), 3);
    assert_eq!(queue.claim("q", 10, LONG).await.unwrap().len(), 1);
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 5));
}

#[tokio::test]
async fn queues_are_claimed_separately() {
    let server = server();
    let queue = queue(&server, "separate").await;
    queue
        .add("deliveries", NewJob::new(json!("d")))
        .await
        .unwrap();
    queue.add("inbox", NewJob::new(json!("i"))).await.unwrap();
    let inbox = claim_n(&queue, "inbox", 1).await;
    assert_eq!(inbox[0].payload, json!("i"));
    assert_eq!(inbox[0].queue, "inbox");
    let deliveries = claim_n(&queue, "deliveries", 1).await;
    assert_eq!(deliveries[0].payload, json!("d"));
}

#[tokio::test]
async fn a_claimed_job_carries_its_lease_and_the_lease_records_the_holder() {
    let server = server();
    let ns = unique_namespace("holder");
    let queue = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .identity(u64::MAX, u32::MAX)
        .connect()
        .await
        .unwrap();
    assert_eq!(queue.identity().node, u64::MAX);
    queue.add_batch("q", numbered(3)).await.unwrap();
    let before = SystemTime::now();
    let jobs = queue.claim("q", 2, Duration::from_secs(30)).await.unwrap();
    let after = queue.claim("q", 1, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    for job in &jobs {
        assert_eq!(job.attempts, 0, "the first claim sees 0 attempts");
        assert!(job.lease_id > 0);
        let expiry = job.lease_expires_at;
        assert!(expiry > before + Duration::from_secs(29), "{expiry:?}");
        assert!(expiry < SystemTime::now() + Duration::from_secs(31));
        let record = queue.inspect(&job.id).await.unwrap().unwrap();
        assert_eq!(record.state, JobState::Leased);
        assert_eq!(record.lease_id, Some(job.lease_id));
        assert_eq!(record.lease_expires_at, Some(job.lease_expires_at));
        assert_eq!(record.holder, Some((u64::MAX, u32::MAX)));
    }
    // Lease ids are fresh and increasing: they are fencing tokens.
    assert!(jobs[0].lease_id < jobs[1].lease_id);
    assert!(jobs[1].lease_id < after[0].lease_id);
}

#[tokio::test]
async fn handles_get_distinct_identities_by_default() {
    let server = server();
    let ns = unique_namespace("identities");
    let a = handle(&server, &ns).await;
    let b = handle(&server, &ns).await;
    assert_ne!(a.identity(), b.identity());
    a.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&b, "q", 1).await.remove(0);
    let record = a.inspect(&job.id).await.unwrap().unwrap();
    let identity = b.identity();
    assert_eq!(record.holder, Some((identity.node, identity.instance)));
}

#[tokio::test]
async fn a_released_job_is_due_again_at_once_in_its_old_place_without_an_attempt() {
    let server = server();
    let queue = queue(&server, "release").await;
    queue.add_batch("q", numbered(3)).await.unwrap();
    let first = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue.release(&first.lease()).await.unwrap();
    // A resent release under the same lease is harmless.
    queue.release(&first.lease()).await.unwrap();
    let jobs = claim_n(&queue, "q", 3).await;
    assert_eq!(numbers(&jobs), vec![0, 1, 2]);
    assert_eq!(jobs[0].id, first.id);
    assert_eq!(jobs[0].attempts, 0);
    assert!(jobs[0].lease_id > first.lease_id);
    // Releasing counted nothing as failed.
    let failed: u64 = queue
        .stats("q")
        .await
        .unwrap()
        .iter()
        .map(|b| b.failed)
        .sum();
    assert_eq!(failed, 0);
}

#[tokio::test]
async fn extend_pushes_the_lease_expiry_out() {
    let server = server();
    let queue = queue(&server, "extend").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = queue.claim("q", 1, SHORT).await.unwrap().remove(0);
    let expiry = queue
        .extend(&job.lease(), Duration::from_secs(60))
        .await
        .unwrap();
    assert!(expiry > SystemTime::now() + Duration::from_secs(59));
    let record = queue.inspect(&job.id).await.unwrap().unwrap();
    assert_eq!(record.lease_expires_at, Some(expiry));
    // Well after the original lease would have lapsed, it is still held.
    let original = job.lease_expires_at + Duration::from_millis(200);
    redq_tests::wait_until(DEADLINE, "the original expiry to pass", async || {
        SystemTime::now() > original
    })
    .await;
    assert_eq!(queue.counts("q").await.unwrap().lapsed, 0);
    queue.reclaim("q", 10).await.unwrap();
    assert!(queue.claim("q", 1, LONG).await.unwrap().is_empty());
    assert_eq!(
        queue.ack(&job.lease()).await.unwrap(),
        redq::Acked::Completed
    );
}

/// Fresh jobs of priority 0 wait in a list, every other waiting job in a
/// sorted set (lua/lib/waiting.lua); whatever structure a job is in, claims and
/// listings see one queue in priority-then-enqueue order.
#[tokio::test]
async fn jobs_back_in_the_queue_keep_their_place_among_fresh_ones() {
    let server = server();
    let queue = queue(&server, "merged").await;
    let n = |n: i64| NewJob::new(json!({ "n": n }));
    // Enqueue order: 1, 2, D (delayed, 10), 3, 4.
    queue.add_batch("q", vec![n(1), n(2)]).await.unwrap();
    let delayed = queue
        .add("q", n(10).delay(Duration::from_millis(150)))
        .await
        .unwrap();
    queue.add_batch("q", vec![n(3), n(4)]).await.unwrap();
    let due = queue
        .inspect(delayed.id())
        .await
        .unwrap()
        .unwrap()
        .due_at
        .unwrap();
    redq_tests::wait_until(DEADLINE, "the delayed job to be due", async || {
        SystemTime::now() > due + Duration::from_millis(20)
    })
    .await;
    // This claim promotes D, the oldest due job after 1: it comes back at
    // its enqueue place, between 2 and 3. Then 1 fails and is retried at once.
    let first = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(numbers(std::slice::from_ref(&first)), vec![1]);
    queue
        .nack(&first.lease(), Duration::ZERO, "try again")
        .await
        .unwrap();
    // A priority job enqueued last goes first.
    queue.add("q", n(99).priority(5)).await.unwrap();

    let expected = vec![99, 1, 2, 10, 3, 4];
    let page_numbers = |page: &redq::Page<redq::JobRecord>| -> Vec<i64> {
        page.items
            .iter()
            .map(|r| r.payload["n"].as_i64().unwrap())
            .collect()
    };
    for size in [1usize, 2, 4, 6] {
        let mut listed = Vec::new();
        for offset in (0..expected.len()).step_by(size) {
            let page = queue
                .list_jobs("q", JobState::Waiting, offset as u64, size)
                .await
                .unwrap();
            assert_eq!(page.total, expected.len() as u64);
            assert!(page.items.iter().all(|r| r.state == JobState::Waiting));
            listed.extend(page_numbers(&page));
        }
        assert_eq!(listed, expected, "pages of {size}");
    }
    // A fresh job in the list is inspected as waiting like the others.
    let three = queue
        .list_jobs("q", JobState::Waiting, 4, 1)
        .await
        .unwrap()
        .items
        .remove(0);
    let inspected = queue.inspect(&three.id).await.unwrap().unwrap();
    assert_eq!(inspected.state, JobState::Waiting);
    assert_eq!(inspected.payload, json!({ "n": 3 }));

    let mut claimed = Vec::new();
    for _ in 0..expected.len() {
        claimed.extend(queue.claim("q", 1, LONG).await.unwrap());
    }
    assert_eq!(numbers(&claimed), expected);
    assert_eq!(claimed[1].attempts, 1, "the retried job kept its attempt");
    assert!(queue.claim("q", 1, LONG).await.unwrap().is_empty());
}

/// A claim normally splices the new lease into the record's bytes, which
/// needs the old lease cleared; a record that still carries one (written by
/// hand here, as a foreign writer or an older script might) takes the slow
/// path and is leased just the same, payload intact.
#[tokio::test]
async fn a_waiting_record_that_still_carries_a_lease_is_claimed_correctly() {
    let server = server();
    let queue = queue(&server, "stale-lease").await;
    queue
        .add("q", NewJob::new(json!({ "n": 1, "text": "kept" })))
        .await
        .unwrap();
    let first = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    // Put the job back to waiting without clearing the lease in its record.
    let ns = queue.namespace();
    let leased = format!("{{{ns}}}:q:q:leased");
    let waiting = format!("{{{ns}}}:q:q:waiting");
    // Its score only orders it among waiting jobs, and it is the only one.
    let score = (255u64 << 44) + 1;
    let _: fred::types::Value = server.cmd(&["ZREM", &leased, &first.id]).await;
    let _: fred::types::Value = server
        .cmd(&["ZADD", &waiting, &score.to_string(), &first.id])
        .await;

    let again = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(again.id, first.id);
    assert!(again.lease_id > first.lease_id);
    assert_eq!(again.payload, json!({ "n": 1, "text": "kept" }));
    let record = queue.inspect(&again.id).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Leased);
    assert_eq!(record.lease_id, Some(again.lease_id));
    assert_lease_lost(queue.ack(&first.lease()).await, &first.id);
    assert_eq!(
        queue.ack(&again.lease()).await.unwrap(),
        redq::Acked::Completed
    );
}
