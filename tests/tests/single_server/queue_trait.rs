//! The seed `Queue` trait's documented semantics, checked through the trait
//! alone with the same test bodies against both backends: `MemoryQueue`, and
//! `RedisQueue` on a private `redis-server` (and, as `cluster::name`, on a
//! local 3-primary Redis Cluster).
//!
//! Each body is a generic `async fn name<Q: Backend>(q: &Q)`; the
//! `on_both_backends!` list at the bottom turns it into `memory::name` and
//! `redis::name`. A body that passes on one backend and fails on the other is
//! a difference between them, which is a bug.
//!
//! Both backends run on the real clock here (Redis reads its own): leases are
//! short and conditions are awaited with `wait_until`; fixed sleeps are used
//! only to show that something does *not* happen.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use redq::{Job, MemoryQueue, Queue, QueueError, RedisQueue, ShardedQueue};
use redq_tests::cluster::RedisCluster;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::{json, Value};
use tokio::time::Instant;

/// A lease short enough to let lapse in a test.
const LEASE: Duration = Duration::from_millis(150);
/// A lease that never lapses during a test.
const LONG: Duration = Duration::from_secs(30);
/// How long any awaited condition may take.
const PATIENCE: Duration = Duration::from_secs(5);

/// What the bodies need beyond the trait: each backend's own read calls,
/// reduced to what both can report.
trait Backend: Queue + Clone {
    async fn sizes(&self, queue: &str) -> Sizes;
    /// Dead letters as (id, error), oldest first.
    async fn dead(&self, queue: &str) -> Vec<(String, String)>;
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Sizes {
    waiting: u64,
    scheduled: u64,
    leased: u64,
    blocked: u64,
    dead: u64,
    lapsed: u64,
}

impl From<redq::QueueCounts> for Sizes {
    fn from(c: redq::QueueCounts) -> Sizes {
        Sizes {
            waiting: c.waiting,
            scheduled: c.scheduled,
            leased: c.leased,
            blocked: c.blocked,
            dead: c.dead,
            lapsed: c.lapsed,
        }
    }
}

impl Backend for MemoryQueue {
    async fn sizes(&self, queue: &str) -> Sizes {
        self.counts(queue).into()
    }

    async fn dead(&self, queue: &str) -> Vec<(String, String)> {
        self.dead_letters(queue)
    }
}

impl Backend for RedisQueue {
    async fn sizes(&self, queue: &str) -> Sizes {
        self.counts(queue).await.expect("counts").into()
    }

    async fn dead(&self, queue: &str) -> Vec<(String, String)> {
        let page = self
            .dead_letters(queue, 0, 1000)
            .await
            .expect("dead letters");
        page.items
            .into_iter()
            .rev()
            .map(|job| (job.id, job.last_error.unwrap_or_default()))
            .collect()
    }
}

async fn redis_queue(test: &str) -> (RedisServer, RedisQueue) {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace(test))
        .connect()
        .await
        .expect("connecting to the test server");
    (server, queue)
}

impl Backend for ShardedQueue {
    async fn sizes(&self, queue: &str) -> Sizes {
        self.counts(queue).await.expect("counts").into()
    }

    async fn dead(&self, queue: &str) -> Vec<(String, String)> {
        let page = self
            .dead_letters(queue, 0, 1000)
            .await
            .expect("dead letters");
        page.items
            .into_iter()
            .rev()
            .map(|job| (job.id, job.last_error.unwrap_or_default()))
            .collect()
    }
}

/// A queue over 3 shards, one per primary of the shared cluster.
async fn sharded_queue(test: &str) -> (std::sync::Arc<RedisCluster>, ShardedQueue) {
    let cluster = RedisCluster::shared();
    let builder = RedisQueue::builder(&cluster.url());
    let queue = ShardedQueue::connect(builder, &unique_namespace(test), 3)
        .await
        .expect("connecting to the test cluster");
    (cluster, queue)
}

async fn cluster_queue(test: &str) -> (std::sync::Arc<RedisCluster>, RedisQueue) {
    let cluster = RedisCluster::shared();
    let queue = RedisQueue::builder(&cluster.url())
        .namespace(unique_namespace(test))
        .connect()
        .await
        .expect("connecting to the test cluster");
    (cluster, queue)
}

fn payloads(numbers: impl IntoIterator<Item = i64>) -> Vec<Value> {
    numbers.into_iter().map(|n| json!({ "n": n })).collect()
}

fn keyed(jobs: &[(&str, i64)]) -> Vec<(String, Value)> {
    jobs.iter()
        .map(|(key, n)| (key.to_string(), json!({ "n": n })))
        .collect()
}

/// The `n` of each job's payload, in claim order.
fn numbers(jobs: &[Job]) -> Vec<i64> {
    jobs.iter()
        .map(|job| job.payload["n"].as_i64().expect("payload has n"))
        .collect()
}

fn attempts(jobs: &[Job]) -> Vec<u32> {
    jobs.iter().map(|job| job.attempts).collect()
}

/// Claims until something comes back (a lease lapsing, a retry coming due).
async fn claim_eventually<Q: Queue>(q: &Q, queue: &str, limit: usize, lease: Duration) -> Vec<Job> {
    let mut claimed = Vec::new();
    wait_until(
        PATIENCE,
        &format!("a job to claim in {queue}"),
        async || {
            claimed = q.claim(queue, limit, lease).await.expect("claim");
            !claimed.is_empty()
        },
    )
    .await;
    claimed
}

/// Claims while a job should still be held back (by a lease or a retry
/// delay of length `hold` that started after `since`), asserting nothing
/// comes out. A machine too slow to ask before `hold` passed may rightly get
/// the job back: then it is returned for the test to go on with, rather
/// than failing the test.
async fn claim_while_held<Q: Queue>(
    q: &Q,
    queue: &str,
    lease: Duration,
    since: Instant,
    hold: Duration,
) -> Vec<Job> {
    let jobs = q.claim(queue, 10, lease).await.expect("claim");
    // Redis counts whole milliseconds: allow for one lost to rounding.
    let in_time = since.elapsed() < hold - Duration::from_millis(2);
    assert!(
        jobs.is_empty() || !in_time,
        "claimed {:?} after {:?}, while held for {hold:?}",
        numbers(&jobs),
        since.elapsed()
    );
    jobs
}

async fn wait_for_lapse<Q: Backend>(q: &Q, queue: &str, lapsed: u64) {
    wait_until(PATIENCE, "the lease to lapse", async || {
        q.sizes(queue).await.lapsed == lapsed
    })
    .await;
}

fn assert_lease_lost(result: Result<(), QueueError>, id: &str) {
    match result {
        Err(QueueError::LeaseLost { id: lost, lease_id }) => {
            assert_eq!(lost, id);
            assert_eq!(lease_id, 0, "no lease of this handle is outstanding");
        }
        other => panic!("expected LeaseLost for {id}, got {other:?}"),
    }
}

fn assert_invalid<T: std::fmt::Debug>(result: Result<T, QueueError>, what: &str) {
    match result {
        Err(QueueError::Invalid { what: got, .. }) => assert_eq!(got, what),
        other => panic!("expected an invalid {what}, got {other:?}"),
    }
}

// ---------------------------------------------------------------- claiming

async fn claims_oldest_first_with_fresh_job_fields<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads(0..3)).await.unwrap();
    q.enqueue("q", payloads(3..5)).await.unwrap();
    let before = SystemTime::now();
    let jobs = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(numbers(&jobs), [0, 1, 2, 3, 4]);
    let slack = Duration::from_secs(1);
    for job in &jobs {
        assert_eq!(job.queue, "q");
        assert_eq!(job.attempts, 0, "the first claim sees 0 attempts");
        assert_eq!(job.priority, 0);
        assert_eq!(job.ordering_key, None);
        assert_eq!(job.name, None);
        assert_eq!(job.max_attempts, 0);
        assert!(job.enqueued_at <= before + slack);
        assert!(job.lease_expires_at >= before + LONG - slack);
        assert!(job.lease_expires_at <= SystemTime::now() + LONG + slack);
    }
    let ids: HashSet<_> = jobs.iter().map(|job| &job.id).collect();
    assert_eq!(ids.len(), jobs.len(), "ids are unique");
    assert!(
        jobs.windows(2).all(|w| w[0].lease_id < w[1].lease_id),
        "lease ids grow: {:?}",
        jobs.iter().map(|job| job.lease_id).collect::<Vec<_>>()
    );
}

async fn claim_takes_at_most_limit<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads(0..5)).await.unwrap();
    assert_eq!(numbers(&q.claim("q", 2, LONG).await.unwrap()), [0, 1]);
    assert_eq!(numbers(&q.claim("q", 2, LONG).await.unwrap()), [2, 3]);
    assert_eq!(numbers(&q.claim("q", 2, LONG).await.unwrap()), [4]);
    assert!(q.claim("q", 2, LONG).await.unwrap().is_empty());
    assert!(q.claim("never-used", 2, LONG).await.unwrap().is_empty());
}

async fn queues_are_claimed_separately<Q: Backend>(q: &Q) {
    q.enqueue("a", payloads([0, 1])).await.unwrap();
    q.enqueue("b", payloads([10])).await.unwrap();
    q.enqueue("a", payloads([2])).await.unwrap();
    let b = q.claim("b", 10, LONG).await.unwrap();
    assert_eq!(numbers(&b), [10]);
    assert_eq!(b[0].queue, "b");
    assert_eq!(numbers(&q.claim("a", 10, LONG).await.unwrap()), [0, 1, 2]);
    assert_eq!(q.next_due("c").await.unwrap(), None);
}

async fn concurrent_claims_hand_out_each_job_once<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads(0..60)).await.unwrap();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                loop {
                    let jobs = q.claim("q", 3, LONG).await.unwrap();
                    if jobs.is_empty() {
                        return seen;
                    }
                    for job in jobs {
                        q.complete(&job.id).await.unwrap();
                        seen.push(job.id);
                    }
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    let unique: HashSet<_> = all.iter().collect();
    assert_eq!((all.len(), unique.len()), (60, 60));
    assert_eq!(q.sizes("q").await, Sizes::default());
}

// ------------------------------------------------------------------ leases

async fn lease_hides_job_until_it_lapses<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0])).await.unwrap();
    let started = Instant::now();
    let first = q.claim("q", 10, LEASE).await.unwrap();
    assert_eq!(attempts(&first), [0]);
    let mut second = claim_while_held(q, "q", LEASE, started, LEASE).await;
    if second.is_empty() {
        second = claim_eventually(q, "q", 10, LEASE).await;
    }
    assert!(
        started.elapsed() >= LEASE - Duration::from_millis(2),
        "came back after {:?}, before its {LEASE:?} lease lapsed",
        started.elapsed()
    );
    assert_eq!(second[0].id, first[0].id);
    assert_eq!(attempts(&second), [1], "a lapsed lease counts an attempt");
    assert!(second[0].lease_id > first[0].lease_id, "a fresh lease id");

    let third = claim_eventually(q, "q", 10, LEASE).await;
    assert_eq!(
        (third[0].id.as_str(), third[0].attempts),
        (first[0].id.as_str(), 2)
    );
}

async fn lapsed_lease_comes_back_first<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0])).await.unwrap();
    assert_eq!(numbers(&q.claim("q", 1, LEASE).await.unwrap()), [0]);
    q.enqueue("q", payloads([1, 2])).await.unwrap();
    wait_for_lapse(q, "q", 1).await;
    let jobs = q.claim("q", 2, LONG).await.unwrap();
    assert_eq!(numbers(&jobs), [0, 1], "the reclaimed job keeps its place");
    assert_eq!(attempts(&jobs), [1, 0]);
    assert_eq!(numbers(&q.claim("q", 2, LONG).await.unwrap()), [2]);
}

/// Expiry alone does not take a job away: until a claim reclaims it, the
/// holder may still complete it.
async fn lapsed_lease_is_held_until_reclaimed<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0])).await.unwrap();
    let job = q.claim("q", 1, LEASE).await.unwrap().remove(0);
    wait_for_lapse(q, "q", 1).await;
    q.complete(&job.id).await.unwrap();
    assert!(q.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(q.sizes("q").await, Sizes::default());
}

// --------------------------------------------------- complete, retry, fail

async fn complete_removes_job_for_good<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0, 1])).await.unwrap();
    let jobs = q.claim("q", 2, LEASE).await.unwrap();
    for job in &jobs {
        q.complete(&job.id).await.unwrap();
    }
    q.complete(&jobs[0].id)
        .await
        .expect("a repeated complete is harmless");
    q.complete(&ulid_like())
        .await
        .expect("an unknown id is complete");
    assert_eq!(q.sizes("q").await, Sizes::default());
    assert_eq!(q.next_due("q").await.unwrap(), None);
    // Long enough for the leases to have lapsed, had they still existed.
    tokio::time::sleep(LEASE * 2).await;
    assert!(q.claim("q", 10, LONG).await.unwrap().is_empty());
}

async fn retry_brings_job_back_after_delay<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0])).await.unwrap();
    let job = q.claim("q", 1, LONG).await.unwrap().remove(0);
    let delay = Duration::from_millis(300);
    let started = Instant::now();
    q.retry(&job.id, delay, "boom").await.unwrap();
    // Only a claim moves a retry that came due out of `scheduled`.
    let sizes = q.sizes("q").await;
    assert_eq!((sizes.scheduled, sizes.leased), (1, 0));

    let mut again = claim_while_held(q, "q", LONG, started, delay).await;
    if again.is_empty() {
        again = claim_eventually(q, "q", 10, LONG).await;
    }
    assert!(
        started.elapsed() >= delay - Duration::from_millis(2),
        "retried after {:?}, before its {delay:?} delay",
        started.elapsed()
    );
    assert_eq!(again[0].id, job.id);
    assert_eq!(attempts(&again), [1]);

    q.retry(&job.id, Duration::ZERO, "boom again")
        .await
        .unwrap();
    let now = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(attempts(&now), [2], "a zero delay is due at once");
    q.complete(&job.id).await.unwrap();
    assert_eq!(q.sizes("q").await, Sizes::default());
}

async fn retried_job_keeps_its_place<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0])).await.unwrap();
    let job = q.claim("q", 1, LONG).await.unwrap().remove(0);
    q.enqueue("q", payloads([1])).await.unwrap();
    q.retry(&job.id, Duration::from_millis(50), "later")
        .await
        .unwrap();
    // Job 1 is claimable all along, so there is no condition to await.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let jobs = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(numbers(&jobs), [0, 1]);
    assert_eq!(attempts(&jobs), [1, 0]);
}

async fn fail_dead_letters_job<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads([0, 1])).await.unwrap();
    let jobs = q.claim("q", 2, LEASE).await.unwrap();
    q.fail(&jobs[0].id, "bad payload").await.unwrap();
    // Errors are kept up to 4096 bytes, cut on a character boundary.
    q.fail(&jobs[1].id, &"é".repeat(3000)).await.unwrap();
    let mut dead = q.dead("q").await;
    dead.sort();
    let mut expected = vec![
        (jobs[0].id.clone(), "bad payload".to_owned()),
        (jobs[1].id.clone(), "é".repeat(2048)),
    ];
    expected.sort();
    assert_eq!(dead, expected);
    assert_eq!(
        q.sizes("q").await,
        Sizes {
            dead: 2,
            ..Sizes::default()
        }
    );
    assert_eq!(
        q.next_due("q").await.unwrap(),
        None,
        "dead jobs are not due"
    );
    tokio::time::sleep(LEASE * 2).await;
    assert!(
        q.claim("q", 10, LONG).await.unwrap().is_empty(),
        "a failed job is not reclaimed when its old lease would have lapsed"
    );
}

/// `complete`, `retry` and `fail` act on a claimed job only.
async fn transitions_need_a_claimed_job<Q: Backend>(q: &Q) {
    let unknown = ulid_like();
    assert!(matches!(
        q.retry(&unknown, Duration::ZERO, "x").await,
        Err(QueueError::JobNotFound { id }) if id == unknown
    ));
    assert!(matches!(
        q.fail(&unknown, "x").await,
        Err(QueueError::JobNotFound { id }) if id == unknown
    ));

    q.enqueue("q", payloads([0, 1])).await.unwrap();
    let backing_off = q.claim("q", 1, LONG).await.unwrap().remove(0);
    q.retry(&backing_off.id, LONG, "later").await.unwrap();
    let id = backing_off.id.as_str();
    assert_lease_lost(q.complete(id).await, id);
    assert_lease_lost(q.retry(id, Duration::ZERO, "x").await, id);
    assert_lease_lost(q.fail(id, "x").await, id);

    let dead = q.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(numbers(std::slice::from_ref(&dead)), [1]);
    q.fail(&dead.id, "gone").await.unwrap();
    let id = dead.id.as_str();
    assert_lease_lost(q.complete(id).await, id);
    assert_lease_lost(q.retry(id, Duration::ZERO, "x").await, id);
    assert_lease_lost(q.fail(id, "again").await, id);
    assert_eq!(q.dead("q").await, [(dead.id.clone(), "gone".to_owned())]);

    let sizes = q.sizes("q").await;
    assert_eq!((sizes.scheduled, sizes.dead, sizes.leased), (1, 1, 0));
}

// ---------------------------------------------------------------- next_due

async fn next_due_tells_how_long_to_sleep<Q: Backend>(q: &Q) {
    assert_eq!(q.next_due("q").await.unwrap(), None, "nothing pending");
    q.enqueue("q", payloads([0])).await.unwrap();
    assert_eq!(q.next_due("q").await.unwrap(), Some(Duration::ZERO));

    let lease = Duration::from_secs(2);
    let job = q.claim("q", 1, lease).await.unwrap().remove(0);
    let until_expiry = q
        .next_due("q")
        .await
        .unwrap()
        .expect("the lease is pending");
    assert!(
        until_expiry > lease - Duration::from_millis(500) && until_expiry <= lease,
        "a claimed job is due for reclaim when its lease lapses, got {until_expiry:?}"
    );

    let delay = Duration::from_millis(400);
    q.retry(&job.id, delay, "later").await.unwrap();
    let until_retry = q
        .next_due("q")
        .await
        .unwrap()
        .expect("the retry is pending");
    assert!(
        until_retry > delay - Duration::from_millis(300) && until_retry <= delay,
        "a retry is due after its delay, got {until_retry:?}"
    );
    wait_until(PATIENCE, "the retry to come due", async || {
        q.next_due("q").await.unwrap() == Some(Duration::ZERO)
    })
    .await;
    let job = q.claim("q", 1, LONG).await.unwrap().remove(0);
    q.complete(&job.id).await.unwrap();
    assert_eq!(q.next_due("q").await.unwrap(), None);
    assert_eq!(q.next_due("other").await.unwrap(), None);
}

// ----------------------------------------------------------- ordering keys

async fn ordering_key_holds_later_jobs<Q: Backend>(q: &Q) {
    q.enqueue_ordered("q", keyed(&[("k", 0), ("k", 1), ("j", 2)]))
        .await
        .unwrap();
    q.enqueue("q", payloads([3])).await.unwrap();
    let jobs = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(
        numbers(&jobs),
        [0, 2, 3],
        "1 waits for 0; other keys do not"
    );
    assert_eq!(jobs[0].ordering_key.as_deref(), Some("k"));
    assert_eq!(jobs[1].ordering_key.as_deref(), Some("j"));
    assert_eq!(q.sizes("q").await.blocked, 1);
    assert!(q.claim("q", 10, LONG).await.unwrap().is_empty());

    q.complete(&jobs[0].id).await.unwrap();
    let next = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(numbers(&next), [1], "completing 0 releases 1");
    assert_eq!(next[0].ordering_key.as_deref(), Some("k"));
    for job in jobs.iter().skip(1).chain(&next) {
        q.complete(&job.id).await.unwrap();
    }
    assert_eq!(q.sizes("q").await, Sizes::default());
}

async fn ordering_key_spans_queues<Q: Backend>(q: &Q) {
    q.enqueue_ordered("a", keyed(&[("k", 0)])).await.unwrap();
    q.enqueue_ordered("b", keyed(&[("k", 1)])).await.unwrap();
    q.enqueue("b", payloads([2])).await.unwrap();

    let b = q.claim("b", 10, LONG).await.unwrap();
    assert_eq!(numbers(&b), [2], "1 waits for 0 in another queue");
    q.complete(&b[0].id).await.unwrap();
    assert_eq!(q.sizes("b").await.blocked, 1);
    assert_eq!(
        q.next_due("b").await.unwrap(),
        None,
        "a blocked job is not due"
    );

    let a = q.claim("a", 10, LONG).await.unwrap();
    assert_eq!(numbers(&a), [0]);
    assert!(q.claim("b", 10, LONG).await.unwrap().is_empty());
    q.fail(&a[0].id, "nope").await.unwrap();
    assert_eq!(q.dead("a").await, [(a[0].id.clone(), "nope".to_owned())]);

    assert_eq!(q.next_due("b").await.unwrap(), Some(Duration::ZERO));
    let b = q.claim("b", 10, LONG).await.unwrap();
    assert_eq!(numbers(&b), [1], "failing 0 releases 1");
    assert_eq!(attempts(&b), [0]);
}

async fn ordering_key_held_through_retry_and_lapse<Q: Backend>(q: &Q) {
    q.enqueue_ordered("q", keyed(&[("k", 0), ("k", 1)]))
        .await
        .unwrap();
    let first = q.claim("q", 10, LEASE).await.unwrap();
    assert_eq!(numbers(&first), [0]);

    let delay = Duration::from_millis(200);
    let started = Instant::now();
    q.retry(&first[0].id, delay, "later").await.unwrap();
    // 1 still waits while 0 backs off.
    let mut retried = claim_while_held(q, "q", LEASE, started, delay).await;
    if retried.is_empty() {
        retried = claim_eventually(q, "q", 10, LEASE).await;
    }
    assert_eq!((numbers(&retried), attempts(&retried)), (vec![0], vec![1]));

    let reclaimed = claim_eventually(q, "q", 10, LONG).await;
    assert_eq!(
        (numbers(&reclaimed), attempts(&reclaimed)),
        (vec![0], vec![2]),
        "a lapsed lease brings the same job back, and 1 still waits"
    );

    q.complete(&reclaimed[0].id).await.unwrap();
    let next = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!((numbers(&next), attempts(&next)), (vec![1], vec![0]));
}

async fn jobs_without_a_key_are_not_held_up<Q: Backend>(q: &Q) {
    q.enqueue_ordered("q", keyed(&[("k", 0)])).await.unwrap();
    q.enqueue("q", payloads([1])).await.unwrap();
    q.enqueue_ordered("q", keyed(&[("k", 2)])).await.unwrap();
    q.enqueue("q", payloads([3])).await.unwrap();
    q.enqueue_ordered("other", keyed(&[("k", 4)]))
        .await
        .unwrap();

    let jobs = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(numbers(&jobs), [0, 1, 3]);
    assert!(q.claim("other", 10, LONG).await.unwrap().is_empty());

    q.complete(&jobs[0].id).await.unwrap();
    assert!(
        q.claim("other", 10, LONG).await.unwrap().is_empty(),
        "the key passes to the earliest job queued behind it: 2, not 4"
    );
    let second = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(numbers(&second), [2]);
    q.complete(&second[0].id).await.unwrap();
    assert_eq!(numbers(&q.claim("other", 10, LONG).await.unwrap()), [4]);
}

async fn released_job_keeps_its_place<Q: Backend>(q: &Q) {
    q.enqueue_ordered("q", keyed(&[("k", 0), ("k", 1)]))
        .await
        .unwrap();
    q.enqueue("q", payloads([2])).await.unwrap();
    let first = q.claim("q", 1, LONG).await.unwrap();
    assert_eq!(numbers(&first), [0]);
    q.complete(&first[0].id).await.unwrap();
    assert_eq!(
        numbers(&q.claim("q", 10, LONG).await.unwrap()),
        [1, 2],
        "1 was queued before 2"
    );
}

/// The seed promises "up to `limit`": a caller handing over its free
/// capacity gets no jobs for 0 (and nothing is claimed), and a limit above
/// the cap of 1000 gets 1000, with the rest left waiting.
async fn claim_up_to_limit_answers_zero_and_caps_a_large_limit<Q: Backend>(q: &Q) {
    q.enqueue("q", payloads(0..1001)).await.unwrap();
    assert!(q.claim("q", 0, LONG).await.unwrap().is_empty());
    assert_eq!(
        q.sizes("q").await.waiting,
        1001,
        "a claim of 0 took nothing"
    );
    let claimed = q.claim("q", 5000, LONG).await.unwrap();
    assert_eq!(claimed.len(), 1000);
    assert_eq!(q.sizes("q").await.waiting, 1);
}

// -------------------------------------------------------------- validation

async fn invalid_arguments_are_refused_and_change_nothing<Q: Backend>(q: &Q) {
    for name in ["", "a:b", "a{b", "a}b", "a\nb", &"q".repeat(129)] {
        assert_invalid(q.enqueue(name, payloads([0])).await, "queue name");
        assert_invalid(
            q.enqueue_ordered(name, keyed(&[("k", 0)])).await,
            "queue name",
        );
        assert_invalid(q.claim(name, 1, LONG).await, "queue name");
        assert_invalid(q.next_due(name).await, "queue name");
    }
    assert_invalid(q.claim("", 0, LONG).await, "queue name");
    assert_invalid(q.claim("q", 0, Duration::ZERO).await, "lease");
    assert_invalid(q.claim("q", 1, Duration::ZERO).await, "lease");
    assert_invalid(q.claim("q", 1, Duration::from_micros(500)).await, "lease");
    assert_invalid(q.complete("").await, "job id");
    assert_invalid(q.retry("", Duration::ZERO, "x").await, "job id");
    assert_invalid(q.fail("a\nb", "x").await, "job id");

    // One bad job refuses the whole batch.
    for bad_key in ["", "a\nb", &"k".repeat(513)] {
        let jobs = keyed(&[("k", 0), (bad_key, 1)]);
        assert_invalid(q.enqueue_ordered("q", jobs).await, "ordering key");
    }
    let huge = json!("x".repeat(1024 * 1024));
    assert!(matches!(
        q.enqueue("q", vec![json!(1), huge]).await,
        Err(QueueError::PayloadTooLarge { .. })
    ));
    let deepest = nested(redq::limits::MAX_PAYLOAD_DEPTH);
    let too_deep = nested(redq::limits::MAX_PAYLOAD_DEPTH + 1);
    assert_invalid(
        q.enqueue("q", vec![deepest.clone(), too_deep]).await,
        "payload",
    );
    assert_eq!(q.sizes("q").await, Sizes::default());
    assert_eq!(q.next_due("q").await.unwrap(), None);

    // The deepest accepted payload reads back as it was written.
    q.enqueue("q", vec![deepest.clone()]).await.unwrap();
    let job = q.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(job.payload, deepest);
    q.complete(&job.id).await.unwrap();

    // A retry delay over ten years is refused, leaving the job claimed.
    q.enqueue("q", payloads([0])).await.unwrap();
    let job = q.claim("q", 1, LONG).await.unwrap().remove(0);
    let eleven_years = Duration::from_secs(11 * 365 * 24 * 3600);
    assert_invalid(q.retry(&job.id, eleven_years, "x").await, "retry delay");
    q.complete(&job.id).await.unwrap();
}

/// A payload of `depth` nested arrays around a number.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(0), |inner, _| json!([inner]))
}

/// A well-formed id that names no job.
fn ulid_like() -> String {
    "01JAAAAAAAAAAAAAAAAAAAAAAA".to_owned()
}

macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(&redq::MemoryQueue::new()).await;
                }
            )*
        }

        mod redis {
            $(
                #[tokio::test]
                async fn $test() {
                    let (_server, queue) = super::redis_queue(stringify!($test)).await;
                    super::$test(&queue).await;
                }
            )*
        }

        /// `RedisQueue` on a 3-primary Redis Cluster shared by these tests.
        mod cluster {
            $(
                #[tokio::test]
                async fn $test() {
                    let (_cluster, queue) = super::cluster_queue(stringify!($test)).await;
                    super::$test(&queue).await;
                }
            )*
        }
    };
}

on_both_backends!(
    claims_oldest_first_with_fresh_job_fields,
    claim_takes_at_most_limit,
    queues_are_claimed_separately,
    concurrent_claims_hand_out_each_job_once,
    lease_hides_job_until_it_lapses,
    lapsed_lease_comes_back_first,
    lapsed_lease_is_held_until_reclaimed,
    complete_removes_job_for_good,
    retry_brings_job_back_after_delay,
    retried_job_keeps_its_place,
    fail_dead_letters_job,
    transitions_need_a_claimed_job,
    next_due_tells_how_long_to_sleep,
    ordering_key_holds_later_jobs,
    ordering_key_spans_queues,
    ordering_key_held_through_retry_and_lapse,
    jobs_without_a_key_are_not_held_up,
    released_job_keeps_its_place,
    claim_up_to_limit_answers_zero_and_caps_a_large_limit,
    invalid_arguments_are_refused_and_change_nothing,
);

/// A `ShardedQueue` promises FIFO and priority order per shard only (see
/// `redq::shards`), so the bodies that assume one global order among jobs
/// of different enqueue calls do not apply to it: claims_oldest_first_…
/// (also compares lease ids, which are per shard), queues_are_claimed_…,
/// lapsed_lease_comes_back_first, retried_job_keeps_its_place,
/// ordering_key_holds_later_jobs, jobs_without_a_key_are_not_held_up and
/// released_job_keeps_its_place. Everything else holds across shards.
macro_rules! on_sharded_backend {
    ($($test:ident),* $(,)?) => {
        /// `ShardedQueue` over 3 shards on the shared 3-primary cluster.
        mod sharded {
            $(
                #[tokio::test]
                async fn $test() {
                    let (_cluster, queue) = super::sharded_queue(stringify!($test)).await;
                    super::$test(&queue).await;
                }
            )*
        }
    };
}

on_sharded_backend!(
    claim_takes_at_most_limit,
    concurrent_claims_hand_out_each_job_once,
    lease_hides_job_until_it_lapses,
    lapsed_lease_is_held_until_reclaimed,
    complete_removes_job_for_good,
    retry_brings_job_back_after_delay,
    fail_dead_letters_job,
    transitions_need_a_claimed_job,
    next_due_tells_how_long_to_sleep,
    ordering_key_spans_queues,
    ordering_key_held_through_retry_and_lapse,
    claim_up_to_limit_answers_zero_and_caps_a_large_limit,
    invalid_arguments_are_refused_and_change_nothing,
);
