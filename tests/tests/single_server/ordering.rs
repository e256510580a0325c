//! Ordering keys: jobs sharing a key run one at a time in enqueue order,
//! across every queue of the namespace, through retries, failures and
//! lapsed leases; jobs with other keys or none are not held up.

use std::time::Duration;

use redq::{JobState, NewJob, Queue};
use redq_tests::fixtures::*;
use redq_tests::wait_until;
use serde_json::json;

fn ordered(n: i64, key: &str) -> NewJob {
    NewJob::new(json!({ "n": n })).ordering_key(key)
}

#[tokio::test]
async fn jobs_sharing_a_key_run_one_at_a_time_in_order_and_others_are_not_held_up() {
    let server = server();
    let queue = queue(&server, "order-one-queue").await;
    queue
        .add_batch(
            "q",
            vec![
                ordered(0, "user:1"),
                ordered(1, "user:1"),
                ordered(2, "user:2"),
                NewJob::new(json!({"n": 3})),
                ordered(4, "user:1"),
                ordered(5, "user:2"),
            ],
        )
        .await
        .unwrap();
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.blocked), (3, 3));
    let first = claim_n(&queue, "q", 3).await;
    assert_eq!(numbers(&first), vec![0, 2, 3]);
    let blocked = queue
        .list_jobs("q", JobState::Waiting, 0, 10)
        .await
        .unwrap();
    assert_eq!(blocked.total, 0);

    // Completing the holder of user:1 releases exactly the next of user:1.
    queue.ack(&first[0].lease()).await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![1]);
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    queue.ack(&first[1].lease()).await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![5]);
    assert_eq!(queue.counts("q").await.unwrap().blocked, 1);
}

#[tokio::test]
async fn an_ordering_key_holds_jobs_back_across_queues() {
    let server = server();
    let queue = queue(&server, "order-across").await;
    let a = queue.add("first", ordered(0, "acct:7")).await.unwrap();
    let b = queue.add("second", ordered(1, "acct:7")).await.unwrap();
    queue
        .add("second", NewJob::new(json!({"n": 2})))
        .await
        .unwrap();

    // The other queue's job is blocked, its unkeyed neighbour is not.
    let free = claim_n(&queue, "second", 1).await.remove(0);
    assert_eq!(free.payload, json!({"n": 2}));
    queue.ack(&free.lease()).await.unwrap();
    let counts = queue.counts("second").await.unwrap();
    assert_eq!((counts.waiting, counts.blocked), (0, 1));
    assert_eq!(
        queue.inspect(b.id()).await.unwrap().unwrap().state,
        JobState::Blocked
    );
    // Nothing in it is due until the key is released.
    assert_eq!(queue.next_due("second").await.unwrap(), None);

    let holder = claim_n(&queue, "first", 1).await.remove(0);
    assert_eq!(holder.id, a.id());
    assert!(queue.claim("second", 10, LONG).await.unwrap().is_empty());
    queue.ack(&holder.lease()).await.unwrap();

    // Released: counted as waiting, due now, and claimable.
    let counts = queue.counts("second").await.unwrap();
    assert_eq!((counts.waiting, counts.blocked), (1, 0));
    assert_eq!(
        queue.inspect(b.id()).await.unwrap().unwrap().state,
        JobState::Waiting
    );
    assert_eq!(
        queue.next_due("second").await.unwrap(),
        Some(Duration::ZERO)
    );
    let next = claim_n(&queue, "second", 1).await;
    assert_eq!(next[0].id, b.id());
}

#[tokio::test]
async fn a_retried_job_keeps_its_key_and_runs_again_before_its_successor() {
    let server = server();
    let queue = queue(&server, "order-retry").await;
    queue.add("one", ordered(0, "k")).await.unwrap();
    queue.add("two", ordered(1, "k")).await.unwrap();
    let job = claim_n(&queue, "one", 1).await.remove(0);
    queue
        .nack(&job.lease(), Duration::from_millis(150), "try again")
        .await
        .unwrap();
    // While the retry is pending (scheduled), the successor stays blocked.
    assert!(queue.claim("two", 10, LONG).await.unwrap().is_empty());
    assert_eq!(queue.counts("two").await.unwrap().blocked, 1);
    let mut again = Vec::new();
    wait_until(DEADLINE, "the retry to come due", async || {
        again = queue.claim("one", 10, LONG).await.unwrap();
        !again.is_empty()
    })
    .await;
    assert_eq!(again[0].id, job.id);
    assert_eq!(again[0].attempts, 1);
    assert!(queue.claim("two", 10, LONG).await.unwrap().is_empty());
    queue.ack(&again[0].lease()).await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "two", 1).await), vec![1]);
}

#[tokio::test]
async fn a_failed_job_releases_the_next_with_its_key() {
    let server = server();
    let queue = queue(&server, "order-fail").await;
    queue.add("one", ordered(0, "k")).await.unwrap();
    queue.add("two", ordered(1, "k")).await.unwrap();
    queue.add("one", ordered(2, "k")).await.unwrap();
    let job = claim_n(&queue, "one", 1).await.remove(0);
    queue.dead_letter(&job.lease(), "poison").await.unwrap();
    assert!(queue.claim("one", 10, LONG).await.unwrap().is_empty());
    let next = claim_n(&queue, "two", 1).await.remove(0);
    assert_eq!(next.payload, json!({"n": 1}));
    // A retry of the new holder keeps the key; failing it for good releases.
    queue
        .nack(&next.lease(), Duration::ZERO, "once")
        .await
        .unwrap();
    assert!(queue.claim("one", 10, LONG).await.unwrap().is_empty());
    let retried = claim_n(&queue, "two", 1).await;
    queue
        .dead_letter(&retried[0].lease(), "enough")
        .await
        .unwrap();
    assert_eq!(numbers(&claim_n(&queue, "one", 1).await), vec![2]);
}

#[tokio::test]
async fn spent_attempts_dead_letter_and_release_the_key() {
    let server = server();
    let queue = queue(&server, "order-spent").await;
    queue
        .add("one", ordered(0, "k").max_attempts(1))
        .await
        .unwrap();
    queue.add("two", ordered(1, "k")).await.unwrap();
    let job = claim_n(&queue, "one", 1).await.remove(0);
    let outcome = queue.nack(&job.lease(), LONG, "spent").await.unwrap();
    assert_eq!(outcome, redq::Nacked::DeadLettered { attempts: 1 });
    assert_eq!(numbers(&claim_n(&queue, "two", 1).await), vec![1]);
}

#[tokio::test]
async fn a_lapsed_lease_brings_the_same_job_back_first() {
    let server = server();
    let queue = queue(&server, "order-lapsed").await;
    queue.add("one", ordered(0, "k")).await.unwrap();
    queue
        .add("one", NewJob::new(json!({"n": 1})))
        .await
        .unwrap();
    queue.add("two", ordered(2, "k")).await.unwrap();
    let job = queue.claim("one", 1, SHORT).await.unwrap().remove(0);
    assert_eq!(job.payload, json!({"n": 0}));
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts("one").await.unwrap().lapsed == 1
    })
    .await;
    // The successor in the other queue is still held back.
    assert!(queue.claim("two", 10, LONG).await.unwrap().is_empty());
    // The lapsed job is reclaimed and handed out before the job behind it.
    let again = queue.claim("one", 1, LONG).await.unwrap();
    assert_eq!(again[0].id, job.id);
    assert_eq!(again[0].attempts, 1);
    assert!(queue.claim("two", 10, LONG).await.unwrap().is_empty());
    queue.ack(&again[0].lease()).await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "two", 1).await), vec![2]);
    assert_eq!(numbers(&claim_n(&queue, "one", 1).await), vec![1]);
}

#[tokio::test]
async fn a_released_job_keeps_its_key() {
    let server = server();
    let queue = queue(&server, "order-release").await;
    queue.add("one", ordered(0, "k")).await.unwrap();
    queue.add("one", ordered(1, "k")).await.unwrap();
    let job = claim_n(&queue, "one", 1).await.remove(0);
    queue.release(&job.lease()).await.unwrap();
    let again = claim_n(&queue, "one", 1).await;
    assert_eq!(again[0].id, job.id);
}

#[tokio::test]
async fn a_delayed_successor_is_released_as_scheduled() {
    let server = server();
    let queue = queue(&server, "order-delayed").await;
    queue.add("q", ordered(0, "k")).await.unwrap();
    queue
        .add("q", ordered(1, "k").delay(Duration::from_millis(300)))
        .await
        .unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.ack(&job.lease()).await.unwrap();
    // Released, but not due yet.
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(queue.counts("q").await.unwrap().scheduled, 1);
    wait_until(DEADLINE, "the successor to come due", async || {
        !queue.claim("q", 10, LONG).await.unwrap().is_empty()
    })
    .await;
}

#[tokio::test]
async fn a_requeued_dead_letter_waits_behind_the_current_holder_of_its_key() {
    let server = server();
    let queue = queue(&server, "order-requeue").await;
    queue.add("q", ordered(0, "k")).await.unwrap();
    queue.add("q", ordered(1, "k")).await.unwrap();
    let dead = claim_n(&queue, "q", 1).await.remove(0);
    queue.dead_letter(&dead.lease(), "x").await.unwrap();
    let holder = claim_n(&queue, "q", 1).await.remove(0);
    assert_eq!(holder.payload, json!({"n": 1}));
    let report = queue
        .requeue_dead("q", std::slice::from_ref(&dead.id))
        .await
        .unwrap();
    assert_eq!(report.done, 1);
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(queue.counts("q").await.unwrap().blocked, 1);
    queue.ack(&holder.lease()).await.unwrap();
    let again = claim_n(&queue, "q", 1).await;
    assert_eq!(again[0].id, dead.id);
    assert_eq!(again[0].attempts, 0);
}

#[tokio::test]
async fn seed_enqueue_ordered_holds_each_key_until_the_earlier_job_is_complete_or_failed() {
    let server = server();
    let queue = queue(&server, "order-seed").await;
    Queue::enqueue_ordered(
        &queue,
        "deliveries",
        vec![
            ("inbox:a".into(), json!("a1")),
            ("inbox:b".into(), json!("b1")),
            ("inbox:a".into(), json!("a2")),
        ],
    )
    .await
    .unwrap();
    Queue::enqueue_ordered(&queue, "activities", vec![("inbox:a".into(), json!("a3"))])
        .await
        .unwrap();
    Queue::enqueue(&queue, "activities", vec![json!("free")])
        .await
        .unwrap();

    let first = Queue::claim(&queue, "deliveries", 10, LONG).await.unwrap();
    let payloads: Vec<_> = first.iter().map(|j| j.payload.clone()).collect();
    assert_eq!(payloads, vec![json!("a1"), json!("b1")]);
    let other = Queue::claim(&queue, "activities", 10, LONG).await.unwrap();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].payload, json!("free"));

    // Retrying a1 keeps the key held.
    Queue::retry(&queue, &first[0].id, Duration::ZERO, "later")
        .await
        .unwrap();
    let again = Queue::claim(&queue, "deliveries", 10, LONG).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, first[0].id);
    // Completing it releases a2, then failing a2 releases a3.
    Queue::complete(&queue, &again[0].id).await.unwrap();
    let a2 = Queue::claim(&queue, "deliveries", 10, LONG).await.unwrap();
    assert_eq!(a2[0].payload, json!("a2"));
    assert!(Queue::claim(&queue, "activities", 10, LONG)
        .await
        .unwrap()
        .is_empty());
    Queue::fail(&queue, &a2[0].id, "bad").await.unwrap();
    let a3 = Queue::claim(&queue, "activities", 10, LONG).await.unwrap();
    assert_eq!(a3[0].payload, json!("a3"));
}

#[tokio::test]
async fn many_jobs_on_one_key_across_two_queues_come_out_in_enqueue_order() {
    let server = server();
    let queue = queue(&server, "order-many").await;
    for n in 0..20 {
        let name = if n % 3 == 0 { "x" } else { "y" };
        queue.add(name, ordered(n, "k")).await.unwrap();
    }
    let mut seen = Vec::new();
    while seen.len() < 20 {
        let mut progressed = false;
        for name in ["y", "x"] {
            for job in queue.claim(name, 10, LONG).await.unwrap() {
                seen.push(job.payload["n"].as_i64().unwrap());
                queue.ack(&job.lease()).await.unwrap();
                progressed = true;
            }
        }
        assert!(progressed, "stuck after {seen:?}");
    }
    assert_eq!(seen, (0..20).collect::<Vec<_>>());
}
