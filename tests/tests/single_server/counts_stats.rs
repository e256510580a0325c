//! What operators read: counts by state, throughput buckets, listings, and
//! pausing a queue.

use std::time::{Duration, SystemTime};

use redq::{JobState, NewJob, QueueCounts, StatsBucket, STATS_BUCKET};
use redq_tests::fixtures::*;
use redq_tests::wait_until;
use serde_json::json;

fn sizes(c: &QueueCounts) -> [u64; 6] {
    [
        c.waiting,
        c.scheduled,
        c.leased,
        c.dead,
        c.blocked,
        c.lapsed,
    ]
}

fn totals(buckets: &[StatsBucket]) -> (u64, u64) {
    buckets
        .iter()
        .fold((0, 0), |(p, f), b| (p + b.processed, f + b.failed))
}

#[tokio::test]
async fn counts_report_every_state_in_one_snapshot() {
    let server = server();
    let queue = queue(&server, "counts").await;
    let empty = queue.counts("q").await.unwrap();
    assert_eq!(empty.queue, "q");
    assert_eq!(sizes(&empty), [0; 6]);
    assert!(!empty.paused);
    assert_eq!(empty.head_enqueued_at, None);
    let skew = empty
        .now
        .duration_since(SystemTime::now())
        .unwrap_or_else(|e| e.duration());
    assert!(skew < Duration::from_secs(2), "redis clock {skew:?} away");

    // 2 to lease, 1 to lapse, 1 to die, 1 delayed, 1 blocked, 2 waiting.
    queue
        .add_batch(
            "q",
            vec![
                NewJob::new(json!("lease-1")).ordering_key("k"),
                NewJob::new(json!("lease-2")),
                NewJob::new(json!("die")),
                NewJob::new(json!("lapse")),
                NewJob::new(json!("later")).delay(Duration::from_secs(3600)),
                NewJob::new(json!("blocked")).ordering_key("k"),
                NewJob::new(json!("wait-1")),
                NewJob::new(json!("wait-2")),
            ],
        )
        .await
        .unwrap();
    let all = queue.counts("q").await.unwrap();
    assert_eq!(sizes(&all), [6, 1, 0, 0, 1, 0]);
    let head = all.head_enqueued_at.expect("a head job");
    assert!(head <= SystemTime::now());
    queue.claim("q", 2, LONG).await.unwrap();
    let dying = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(dying.payload, json!("die"));
    queue.dead_letter(&dying.lease(), "x").await.unwrap();
    let lapsing = queue.claim("q", 1, SHORT).await.unwrap();
    assert_eq!(lapsing[0].payload, json!("lapse"));
    wait_until(DEADLINE, "the short lease to lapse", async || {
        queue.counts("q").await.unwrap().lapsed == 1
    })
    .await;
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(sizes(&counts), [2, 1, 3, 1, 1, 1]);
    // Other queues are unaffected.
    assert_eq!(sizes(&queue.counts("other").await.unwrap()), [0; 6]);
}

#[tokio::test]
async fn stats_count_processed_and_failed_per_bucket() {
    let server = server();
    let queue = queue(&server, "stats").await;
    assert!(queue.stats("q").await.unwrap().is_empty());
    queue.add_batch("q", numbered(6)).await.unwrap();
    let jobs = claim_n(&queue, "q", 6).await;
    for job in &jobs[..3] {
        queue.ack(&job.lease()).await.unwrap();
    }
    queue
        .nack(&jobs[3].lease(), Duration::ZERO, "retry")
        .await
        .unwrap();
    queue.dead_letter(&jobs[4].lease(), "dead").await.unwrap();
    queue.release(&jobs[5].lease()).await.unwrap();
    let buckets = queue.stats("q").await.unwrap();
    assert_eq!(totals(&buckets), (3, 2), "{buckets:?}");
    let width = STATS_BUCKET.as_millis();
    let now = SystemTime::now();
    for pair in buckets.windows(2) {
        assert!(pair[0].start < pair[1].start, "oldest first");
    }
    for bucket in &buckets {
        let start = bucket.start.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(start.as_millis() % width, 0, "aligned to the bucket width");
        assert!(bucket.start <= now && bucket.start + STATS_BUCKET * 2 > now);
    }
    // Stats are per queue, and the key expires when idle.
    assert!(queue.stats("other").await.unwrap().is_empty());
    let key = format!("{{{}}}:q:q:stats", queue.namespace());
    let ttl: i64 = server.cmd(&["PTTL", &key]).await.convert().unwrap();
    assert!(ttl > 0, "the stats key has a TTL ({ttl})");
}

#[tokio::test]
async fn a_reclaimed_lease_counts_as_failed() {
    let server = server();
    let queue = queue(&server, "stats-reclaim").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let _job = queue.claim("q", 1, SHORT).await.unwrap();
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts("q").await.unwrap().lapsed == 1
    })
    .await;
    queue.reclaim("q", 10).await.unwrap();
    assert_eq!(totals(&queue.stats("q").await.unwrap()), (0, 1));
}

#[tokio::test]
async fn a_paused_queue_hands_out_nothing_until_resumed() {
    let server = server();
    let queue = queue(&server, "pause").await;
    queue.add_batch("q", numbered(3)).await.unwrap();
    queue.add("other", NewJob::new(json!("o"))).await.unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);

    queue.pause("q").await.unwrap();
    queue.pause("q").await.unwrap();
    assert!(queue.counts("q").await.unwrap().paused);
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(queue.next_due("q").await.unwrap(), None);
    // Enqueueing still works, and held leases run to their end.
    queue.add("q", NewJob::new(json!({"n": 3}))).await.unwrap();
    assert_eq!(queue.counts("q").await.unwrap().waiting, 3);
    queue.ack(&held.lease()).await.unwrap();
    // Other queues are not paused.
    assert!(!queue.counts("other").await.unwrap().paused);
    assert_eq!(claim_n(&queue, "other", 1).await[0].payload, json!("o"));

    queue.resume("q").await.unwrap();
    assert!(!queue.counts("q").await.unwrap().paused);
    assert_eq!(queue.next_due("q").await.unwrap(), Some(Duration::ZERO));
    assert_eq!(numbers(&claim_n(&queue, "q", 3).await), vec![1, 2, 3]);
    // Resuming a queue that is not paused is harmless.
    queue.resume("q").await.unwrap();
}

#[tokio::test]
async fn listings_page_through_each_state_in_its_order() {
    let server = server();
    let queue = queue(&server, "listings").await;
    queue.add_batch("q", numbered(5)).await.unwrap();
    queue
        .add("q", NewJob::new(json!({"n": 9})).priority(9))
        .await
        .unwrap();
    for (n, secs) in [(20, 300), (21, 100), (22, 200)] {
        queue
            .add(
                "q",
                NewJob::new(json!({ "n": n })).delay(Duration::from_secs(secs)),
            )
            .await
            .unwrap();
    }
    let ns = |page: &redq::Page<redq::JobRecord>| -> Vec<i64> {
        page.items
            .iter()
            .map(|r| r.payload["n"].as_i64().unwrap())
            .collect()
    };

    // Waiting: claim order, paged.
    let page1 = queue.list_jobs("q", JobState::Waiting, 0, 4).await.unwrap();
    let page2 = queue.list_jobs("q", JobState::Waiting, 4, 4).await.unwrap();
    assert_eq!((page1.total, page2.total), (6, 6));
    assert_eq!(ns(&page1), vec![9, 0, 1, 2]);
    assert_eq!(ns(&page2), vec![3, 4]);
    assert!(page1.items.iter().all(|r| r.state == JobState::Waiting));
    // Scheduled: soonest due first, with the due time.
    let scheduled = queue
        .list_jobs("q", JobState::Scheduled, 0, 10)
        .await
        .unwrap();
    assert_eq!(ns(&scheduled), vec![21, 22, 20]);
    let due = scheduled.items[0].due_at.unwrap();
    assert!(due > SystemTime::now() + Duration::from_secs(90));
    // Leased: soonest expiry first, with holder and lease.
    queue.claim("q", 1, Duration::from_secs(120)).await.unwrap();
    queue.claim("q", 1, Duration::from_secs(60)).await.unwrap();
    let leased = queue.list_jobs("q", JobState::Leased, 0, 10).await.unwrap();
    assert_eq!(ns(&leased), vec![0, 9]);
    let identity = queue.identity();
    for record in &leased.items {
        assert_eq!(record.holder, Some((identity.node, identity.instance)));
        assert!(record.lease_id.is_some() && record.lease_expires_at.is_some());
    }
    // An offset past the end is an empty page with the total.
    let past = queue
        .list_jobs("q", JobState::Waiting, 1000, 10)
        .await
        .unwrap();
    assert_eq!((past.total, past.items.len()), (4, 0));
}

/// A delayed job past its time that no claim has moved (every worker gone)
/// is still scheduled, and counts say it is due and since when, so an
/// operator and an age alert see a backlog rather than an idle queue.
#[tokio::test]
async fn counts_say_which_scheduled_jobs_are_past_their_time() {
    let server = server();
    let queue = queue(&server, "counts-due").await;
    let soon = NewJob::new(json!("soon")).delay(Duration::from_millis(200));
    let later = NewJob::new(json!("later")).delay(Duration::from_secs(3600));
    queue.add_batch("q", vec![soon, later]).await.unwrap();
    let before = queue.counts("q").await.unwrap();
    assert_eq!(
        (before.scheduled, before.due, before.due_since),
        (2, 0, None)
    );
    assert_eq!(before.ready_since(), None);
    let due_at = queue
        .list_jobs("q", JobState::Scheduled, 0, 10)
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|j| j.due_at)
        .min()
        .expect("a due time");

    wait_until(Duration::from_secs(5), "the delay to pass", async || {
        queue.counts("q").await.unwrap().due == 1
    })
    .await;
    let past = queue.counts("q").await.unwrap();
    assert_eq!((past.waiting, past.scheduled, past.due), (0, 2, 1));
    assert_eq!(past.due_since, Some(due_at));
    assert_eq!(past.ready_since(), Some(due_at));

    // A claim moves it to waiting and leases it: nothing is due any more.
    claim_n(&queue, "q", 1).await;
    let claimed = queue.counts("q").await.unwrap();
    assert_eq!(
        (claimed.scheduled, claimed.due, claimed.due_since),
        (1, 0, None)
    );
}
