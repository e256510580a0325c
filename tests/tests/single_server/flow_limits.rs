//! Concurrency limits on real Redis: workers in this process and another
//! never exceed a queue-wide or a per-key concurrency (judged from the
//! server's record of every lease), a slot is the lease itself (it frees
//! when a dead holder's lease lapses, and a stale ack frees nothing), a
//! throttled key holds up no other key, and limits compose with priorities,
//! ordering keys and live changes.

use std::time::Duration;

use redq::flow::{Limit, LimitScope};
use redq::{Job, NewJob, RedisQueue};
use redq_tests::fixtures::{assert_lease_lost, numbers};
use redq_tests::wait_until;
use serde_json::json;

use super::flow_support::{Bench, Tenant, Q};

const LEASE: Duration = Duration::from_secs(30);
const DEADLINE: Duration = Duration::from_secs(30);

/// Job `n` with limit key `key`.
fn keyed(key: &str, n: i64) -> NewJob {
    NewJob::new(json!({ "n": n })).limit_key(key)
}

async fn claim(queue: &RedisQueue, n: usize) -> Vec<Job> {
    queue.claim(Q, n, LEASE).await.expect("claim")
}

/// Claims and acks one job at a time until a claim finds nothing; returns
/// the jobs' numbers in the order they were claimed.
async fn run_one_by_one(queue: &RedisQueue) -> Vec<i64> {
    let mut order = Vec::new();
    loop {
        let jobs = claim(queue, 1).await;
        let Some(job) = jobs.first() else {
            return order;
        };
        order.extend(numbers(&jobs));
        queue.ack(&job.lease()).await.expect("ack");
    }
}

/// Waits until a claim hands out a job (a lapsed lease is reclaimed by a
/// claim); returns what that claim handed out.
async fn claim_when_free(queue: &RedisQueue) -> Vec<Job> {
    let mut got = Vec::new();
    wait_until(DEADLINE, "a claim to get the key's slot back", async || {
        got = claim(queue, 10).await;
        !got.is_empty()
    })
    .await;
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_in_two_processes_never_exceed_the_queue_or_a_keys_concurrency() {
    let bench = Bench::new("flow-concurrency").await;
    bench.limit(LimitScope::Queue, Limit::concurrency(4)).await;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(2))
        .await;
    // The other process first, claiming before there is work, so the
    // in-process workers cannot drain the queue while it starts.
    let process = bench.process();
    process.await_claiming(Duration::from_secs(60)).await;
    // A hot key (a third of the jobs), four others, and jobs with no key.
    for n in 0..240u64 {
        let key = match n % 6 {
            0 | 1 => Some("hot".to_owned()),
            5 => None,
            k => Some(format!("k{k}")),
        };
        bench
            .queue
            .push(&Tenant { key, ms: 3 + n % 8 })
            .await
            .expect("push");
    }
    let workers: Vec<_> = (0..3).map(|_| bench.worker(4)).collect();
    bench.await_drained(Duration::from_secs(120)).await;
    for w in workers {
        w.shutdown().await;
    }
    let ran_elsewhere = process.end();
    assert!(
        ran_elsewhere > 0,
        "the other process ran no job, so it tested nothing"
    );
    let report = bench.check().await;
    report.assert_ok();
    // Both limits were reached, so both were tested.
    assert_eq!(report.get("limit_max_leased_queue"), 4, "{report}");
    assert_eq!(report.get("limit_max_leased_key"), 2, "{report}");
    assert_eq!(report.get("server_acks"), 240, "{report}");
}

#[tokio::test]
async fn a_dead_holders_slot_frees_when_its_lease_lapses() {
    let bench = Bench::new("flow-lapse").await;
    let queue = &bench.queue;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(1))
        .await;
    queue
        .add_batch(Q, vec![keyed("k", 1), keyed("k", 2)])
        .await
        .expect("enqueue");
    // The holder takes the key's one slot and dies: it never acks.
    let dead = queue
        .claim(Q, 10, Duration::from_millis(300))
        .await
        .expect("claim");
    assert_eq!(numbers(&dead), [1]);
    assert!(claim(queue, 10).await.is_empty(), "the key's slot is taken");
    assert_eq!(bench.counts().await.held, 1);
    // Once its lease lapses a claim reclaims it, and the slot is free.
    let next = claim_when_free(queue).await;
    assert_eq!(next.len(), 1, "one slot, one job: {:?}", numbers(&next));
    queue.ack(&next[0].lease()).await.expect("ack");
    wait_until(DEADLINE, "the other job to run", async || {
        run_one_by_one(queue).await;
        bench.counts().await.held + bench.counts().await.scheduled == 0
    })
    .await;
    let report = bench.check().await;
    report.assert_ok();
    assert_eq!(report.get("server_reclaims"), 1, "{report}");
    assert_eq!(report.get("limit_max_leased_key"), 1, "{report}");
}

#[tokio::test]
async fn a_stale_ack_after_a_reclaim_frees_no_slot() {
    let bench = Bench::new("flow-stale").await;
    let queue = &bench.queue;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(1))
        .await;
    queue
        .add_batch(Q, (1..=3).map(|n| keyed("k", n)).collect())
        .await
        .expect("enqueue");
    let stale = queue
        .claim(Q, 10, Duration::from_millis(300))
        .await
        .expect("claim")
        .remove(0);
    let current = claim_when_free(queue).await.remove(0);
    // The stale holder comes back and acks: refused, and the key's one slot
    // stays with the current holder.
    assert_lease_lost(queue.ack(&stale.lease()).await, &stale.id);
    assert!(
        claim(queue, 10).await.is_empty(),
        "a stale ack freed the slot"
    );
    let limits = queue.limits(Q).await.expect("limits");
    let k = limits.keys.iter().find(|u| u.key == "k").expect("key k");
    assert_eq!(k.leased, 1, "{limits:?}");
    // The current holder's ack frees it.
    queue.ack(&current.lease()).await.expect("ack");
    assert_eq!(claim(queue, 10).await.len(), 1);
    let report = bench.check().await;
    assert!(report.violations.is_empty(), "{report}");
}

#[tokio::test]
async fn a_throttled_key_holds_up_no_other_key_and_no_unkeyed_job() {
    let bench = Bench::new("flow-hol").await;
    let queue = &bench.queue;
    bench
        .limit(LimitScope::Key("slow".into()), Limit::concurrency(1))
        .await;
    // The slow key's jobs come first, so they are at the head of the queue.
    let mut jobs: Vec<NewJob> = (0..3).map(|n| keyed("slow", n)).collect();
    jobs.extend((100..120).map(|n| keyed("fast", n)));
    jobs.extend((200..210).map(|n| NewJob::new(json!({ "n": n }))));
    queue.add_batch(Q, jobs).await.expect("enqueue");
    let holder = claim(queue, 1).await;
    assert_eq!(
        numbers(&holder),
        [0],
        "the head of the queue is the slow key's"
    );
    // While the slow key is at its limit, everything else runs.
    let others = run_one_by_one(queue).await;
    let mut expected: Vec<i64> = (100..120).chain(200..210).collect();
    let mut ran = others.clone();
    ran.sort_unstable();
    expected.sort_unstable();
    assert_eq!(ran, expected, "in claim order: {others:?}");
    let counts = bench.counts().await;
    assert_eq!((counts.held, counts.leased), (2, 1), "{counts:?}");
    queue.ack(&holder[0].lease()).await.expect("ack");
    assert_eq!(run_one_by_one(queue).await, [1, 2]);
    bench.check().await.assert_ok();
}

#[tokio::test]
async fn a_keys_held_jobs_start_by_priority_then_in_order() {
    let bench = Bench::new("flow-priority").await;
    let queue = &bench.queue;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(1))
        .await;
    queue.add(Q, keyed("k", 0)).await.expect("enqueue");
    let holder = claim(queue, 1).await;
    queue
        .add_batch(
            Q,
            vec![
                keyed("k", 1),
                keyed("k", 2),
                keyed("k", 3).priority(9),
                keyed("k", 4).priority(5),
            ],
        )
        .await
        .expect("enqueue");
    assert!(claim(queue, 10).await.is_empty(), "the key is at its limit");
    queue.ack(&holder[0].lease()).await.expect("ack");
    assert_eq!(run_one_by_one(queue).await, [3, 4, 1, 2]);
    bench.check().await.assert_ok();
}

#[tokio::test]
async fn limits_compose_with_ordering_keys() {
    let bench = Bench::new("flow-ordering").await;
    let queue = &bench.queue;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(2))
        .await;
    // Jobs 1-3 share an ordering key and limit key "k"; 4-5 only the limit key.
    let mut jobs: Vec<NewJob> = (1..=3).map(|n| keyed("k", n).ordering_key("o")).collect();
    jobs.extend((4..=5).map(|n| keyed("k", n)));
    queue.add_batch(Q, jobs).await.expect("enqueue");
    // Two slots: the first of the ordering key and the first other job; 2
    // waits behind 1 for its ordering key, 5 for a slot.
    let first = claim(queue, 10).await;
    assert_eq!(numbers(&first), [1, 4]);
    queue.ack(&first[0].lease()).await.expect("ack");
    let second = claim(queue, 10).await;
    assert_eq!(
        numbers(&second),
        [2],
        "the ordering key's next goes before 5"
    );
    for job in first[1..].iter().chain(&second) {
        queue.ack(&job.lease()).await.expect("ack");
    }
    assert_eq!(run_one_by_one(queue).await, [3, 5]);
    let report = bench.check().await;
    report.assert_ok();
    assert_eq!(report.get("limit_max_leased_key"), 2, "{report}");
}

#[tokio::test]
async fn a_raised_limit_starts_held_jobs_without_new_enqueues() {
    let bench = Bench::new("flow-raise").await;
    let queue = &bench.queue;
    bench
        .limit(LimitScope::EachKey, Limit::concurrency(1))
        .await;
    queue
        .add_batch(Q, (1..=4).map(|n| keyed("k", n)).collect())
        .await
        .expect("enqueue");
    assert_eq!(claim(queue, 10).await.len(), 1);
    assert!(claim(queue, 10).await.is_empty());
    let changed = queue
        .set_limit(Q, LimitScope::EachKey, Limit::concurrency(3))
        .await
        .expect("raise");
    assert!(changed);
    let more = claim(queue, 10).await;
    assert_eq!(
        numbers(&more),
        [2, 3],
        "the raised limit lets two more start"
    );
    assert_eq!(bench.counts().await.held, 1);
    let report = bench.check().await;
    assert!(report.violations.is_empty(), "{report}");
    assert_eq!(report.get("limit_max_leased_key"), 3, "{report}");
}
