//! Flow control through the driver's API (`redq::flow`): bad specs are
//! refused and write nothing, limits round-trip through Redis, limit keys
//! reach the job record, a rate-limited job comes back without an attempt
//! and holds its key, held jobs are counted, listed and inspected as held,
//! queue-wide limits are split over shards, and a worker on a queue at its
//! limit sleeps rather than spins. Behaviour under load (many workers, the
//! history checker) is in the reliability tests.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use redq::flow::{Limit, LimitScope, Rate};
use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::{JobState, NewJob, QueueError, RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

fn invalid(result: Result<impl std::fmt::Debug, QueueError>) -> String {
    match result {
        Err(e @ QueueError::Invalid { .. }) => e.to_string(),
        other => panic!("expected an Invalid refusal, got {other:?}"),
    }
}

fn keyed(n: u32, key: &str) -> NewJob {
    NewJob::new(json!({ "n": n })).limit_key(key)
}

#[tokio::test]
async fn bad_limits_and_push_backs_are_refused_and_write_nothing() {
    let server = server();
    let queue = queue(&server, "flow-refused").await;
    queue.add("mail", NewJob::new(json!(1))).await.unwrap();
    let job = queue.claim("mail", 1, LONG).await.unwrap().remove(0);
    let before = digest(&server).await;

    let second = Duration::from_secs(1);
    let refusals = [
        (LimitScope::Queue, Limit::concurrency(0), "concurrency"),
        (
            LimitScope::Queue,
            Limit::concurrency(1_000_001),
            "1 to 1000000",
        ),
        (LimitScope::EachKey, Limit::rate(0, second), "rate"),
        (LimitScope::EachKey, Limit::rate(100_001, second), "100000"),
        (
            LimitScope::Queue,
            Limit::rate(5, Duration::ZERO),
            "1 ms to 24 h",
        ),
        (
            LimitScope::Queue,
            Limit::rate(5, Duration::from_secs(24 * 3600 + 1)),
            "1 ms to 24 h",
        ),
        (
            LimitScope::Key(String::new()),
            Limit::concurrency(1),
            "limit key",
        ),
        (
            LimitScope::Key("a\nb".into()),
            Limit::concurrency(1),
            "limit key",
        ),
        (
            LimitScope::Key("k".repeat(513)),
            Limit::concurrency(1),
            "limit key",
        ),
    ];
    for (scope, limit, says) in refusals {
        let text = invalid(queue.set_limit("mail", scope.clone(), limit).await);
        assert!(text.contains(says), "{scope} {limit:?}: {text}");
    }
    invalid(
        queue
            .set_limit("bad:name", LimitScope::Queue, Limit::concurrency(1))
            .await,
    );
    invalid(
        queue
            .clear_limit("mail", LimitScope::Key(String::new()))
            .await,
    );
    let text = invalid(
        queue
            .release_pushing_back(&job.lease(), Duration::ZERO)
            .await,
    );
    assert!(text.contains("1 ms to 24 h"), "{text}");
    invalid(
        queue
            .release_pushing_back(&job.lease(), Duration::from_secs(24 * 3600 + 1))
            .await,
    );
    invalid(queue.add("mail", keyed(1, "")).await);
    invalid(queue.add("mail", keyed(1, "bad\u{7}key")).await);

    assert_eq!(
        digest(&server).await,
        before,
        "a refused call wrote something"
    );
    assert!(queue.limited_queues().await.unwrap().is_empty());
}

#[tokio::test]
async fn limits_set_read_back_and_clear_live() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-round-trip").await;
    assert!(queue.limits("mail").await.unwrap().limit.is_none());

    let wide = Limit::concurrency(20).and_rate(100, Duration::from_secs(1));
    assert!(queue
        .set_limit("mail", LimitScope::Queue, wide)
        .await
        .unwrap());
    assert!(
        !queue
            .set_limit("mail", LimitScope::Queue, wide)
            .await
            .unwrap(),
        "the same limit again changes nothing"
    );
    let each = Limit::concurrency(2);
    queue
        .set_limit("mail", LimitScope::EachKey, each)
        .await
        .unwrap();
    let acme = Limit::concurrency(5).and_rate(10, Duration::from_millis(500));
    let acme_scope = LimitScope::Key("acme".into());
    queue
        .set_limit("mail", acme_scope.clone(), acme)
        .await
        .unwrap();

    let read = queue.limits("mail").await.unwrap();
    assert_eq!(read.queue, "mail");
    assert_eq!(read.limit, wide);
    assert_eq!(read.each_key, each);
    assert_eq!(read.limit.rate, Some(Rate::per_second(100)));
    let acme_use = read
        .keys
        .iter()
        .find(|k| k.key == "acme")
        .expect("the override is listed");
    assert!(acme_use.overridden);
    assert_eq!(acme_use.limit, acme);
    assert_eq!(queue.limited_queues().await.unwrap(), ["mail"]);

    assert!(queue.clear_limit("mail", acme_scope).await.unwrap());
    assert!(queue.clear_limit("mail", LimitScope::Queue).await.unwrap());
    let read = queue.limits("mail").await.unwrap();
    assert!(read.limit.is_none(), "{read:?}");
    assert_eq!(read.each_key, each, "clearing one scope leaves the others");
    assert!(read.keys.iter().all(|k| !k.overridden), "{read:?}");
    assert_eq!(
        queue.limited_queues().await.unwrap(),
        ["mail"],
        "a cleared queue stays flow-aware (its counts stay exact)"
    );
}

#[derive(Serialize, Deserialize)]
struct Tenant {
    tenant: String,
}

impl TypedJob for Tenant {
    const NAME: &'static str = "flow.tenant";
    const QUEUE: &'static str = "tenants";
    fn limit_key(&self) -> Option<String> {
        Some(self.tenant.clone())
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let runs = cx.service::<Arc<Runs>>().expect("runs service");
        runs.attempts.lock().unwrap().push(cx.attempt());
        if runs.rate_limit_first.swap(0, Ordering::SeqCst) == 1 {
            return Err(JobError::rate_limited(Duration::from_millis(300)));
        }
        runs.done.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[derive(Default)]
struct Runs {
    rate_limit_first: AtomicU32,
    done: AtomicU32,
    attempts: std::sync::Mutex<Vec<u32>>,
}

#[tokio::test]
async fn typed_and_untyped_limit_keys_reach_the_job_record() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-record").await;
    let untyped = queue.add("mail", keyed(1, "acme")).await.unwrap();
    let typed = queue
        .push(&Tenant {
            tenant: "globex".into(),
        })
        .await
        .unwrap();
    let plain = queue.add("mail", NewJob::new(json!(2))).await.unwrap();

    let limit_key = async |id: &str| queue.inspect(id).await.unwrap().expect("the job").limit_key;
    assert_eq!(limit_key(untyped.id()).await.as_deref(), Some("acme"));
    assert_eq!(limit_key(typed.id()).await.as_deref(), Some("globex"));
    assert_eq!(limit_key(plain.id()).await, None);
    let mut queues = queue.limited_queues().await.unwrap();
    queues.sort();
    assert_eq!(
        queues,
        ["mail", "tenants"],
        "a keyed enqueue makes its queue flow-aware"
    );
}

#[tokio::test]
async fn held_jobs_are_counted_listed_and_inspected_as_held() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-held").await;
    queue
        .set_limit("mail", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(
            queue
                .add("mail", keyed(n, "acme"))
                .await
                .unwrap()
                .id()
                .to_owned(),
        );
    }
    queue.add("mail", keyed(9, "globex")).await.unwrap();
    let claimed = queue.claim("mail", 10, LONG).await.unwrap();
    let keys: Vec<_> = claimed
        .iter()
        .map(|j| j.payload["n"].as_u64().unwrap())
        .collect();
    assert_eq!(
        keys,
        [0, 9],
        "one of each key, the other key not blocked behind acme"
    );

    let counts = queue.counts("mail").await.unwrap();
    assert_eq!((counts.held, counts.leased, counts.waiting), (2, 2, 0));
    let page = queue
        .list_jobs("mail", JobState::Held, 0, 10)
        .await
        .unwrap();
    assert_eq!(page.total, 2);
    let listed: Vec<_> = page.items.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(listed, [ids[1].as_str(), ids[2].as_str()], "in claim order");
    assert!(page
        .items
        .iter()
        .all(|j| j.state == JobState::Held && j.limit_key.as_deref() == Some("acme")));
    let held = queue.inspect(&ids[2]).await.unwrap().unwrap();
    assert_eq!(held.state, JobState::Held);

    let limits = queue.limits("mail").await.unwrap();
    assert_eq!((limits.leased, limits.held), (2, 2));
    let acme = limits.keys.iter().find(|k| k.key == "acme").unwrap();
    assert_eq!((acme.leased, acme.held, acme.ready), (1, 2, false));
    assert_eq!(acme.limit, Limit::concurrency(1));
    assert!(!acme.overridden);

    // A raised limit lets the held jobs start at once.
    queue
        .set_limit(
            "mail",
            LimitScope::Key("acme".into()),
            Limit::concurrency(3),
        )
        .await
        .unwrap();
    assert_eq!(queue.claim("mail", 10, LONG).await.unwrap().len(), 2);
    assert_eq!(queue.counts("mail").await.unwrap().held, 0);
}

#[tokio::test]
async fn held_jobs_are_cancelled_and_deleted_by_id_and_by_state() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-held-surgery").await;
    queue
        .set_limit("mail", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..6 {
        ids.push(
            queue
                .add("mail", keyed(n, "acme"))
                .await
                .unwrap()
                .id()
                .to_owned(),
        );
    }
    let running = queue.claim("mail", 10, LONG).await.unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(queue.counts("mail").await.unwrap().held, 5);

    assert!(matches!(
        queue.cancel(&ids[1], "ops").await.unwrap(),
        redq::CancelOutcome::Cancelled {
            from: JobState::Held,
            ..
        }
    ));
    queue
        .delete_job(&ids[2], redq::IfLeased::Refuse)
        .await
        .unwrap();
    assert_eq!(queue.counts("mail").await.unwrap().held, 3);
    let deleted = queue
        .delete_all("mail", JobState::Held, redq::IfLeased::Refuse, |_, _| {})
        .await
        .unwrap();
    assert_eq!(deleted, 3);
    let limits = queue.limits("mail").await.unwrap();
    assert_eq!((limits.held, limits.leased), (0, 1), "{limits:?}");

    queue.add("mail", keyed(7, "acme")).await.unwrap();
    let cancelled = queue
        .cancel_all("mail", JobState::Held, "ops", |_, _| {})
        .await
        .unwrap();
    assert_eq!(cancelled, 1);
    assert_eq!(queue.counts("mail").await.unwrap().held, 0);
}

#[tokio::test]
async fn a_pushed_back_job_returns_without_an_attempt_and_its_key_waits() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-pushback").await;
    let first = queue.add("api", keyed(1, "acme")).await.unwrap();
    queue.add("api", keyed(2, "acme")).await.unwrap();
    queue.add("api", keyed(3, "globex")).await.unwrap();
    let job = queue.claim("api", 1, LONG).await.unwrap().remove(0);
    assert_eq!(job.id, first.id());

    let push_back = Duration::from_millis(600);
    let pushed_at = SystemTime::now();
    queue
        .release_pushing_back(&job.lease(), push_back)
        .await
        .unwrap();
    let record = queue.inspect(&job.id).await.unwrap().unwrap();
    assert_eq!(record.attempts, 0, "a push-back counts no attempt");
    assert_eq!(record.last_error, None);
    let mut stale = job.lease();
    stale.lease_id += 1;
    assert!(
        matches!(
            queue.release_pushing_back(&stale, push_back).await,
            Err(QueueError::LeaseLost { .. })
        ),
        "fenced: a lease it was never held under changes nothing"
    );

    let limits = queue.limits("api").await.unwrap();
    let acme = limits.keys.iter().find(|k| k.key == "acme").unwrap();
    assert!(
        acme.pushed_back_until.is_some_and(|t| t > pushed_at),
        "{acme:?}"
    );
    assert_eq!(acme.held, 2);
    let others = queue.claim("api", 10, LONG).await.unwrap();
    let got: Vec<_> = others
        .iter()
        .map(|j| j.payload["n"].as_u64().unwrap())
        .collect();
    assert_eq!(
        got,
        [3],
        "acme starts nothing while pushed back; globex is not blocked"
    );

    let mut again = Vec::new();
    wait_until(
        DEADLINE,
        "acme to start again after its push-back",
        async || {
            again.extend(queue.claim("api", 10, LONG).await.unwrap());
            !again.is_empty()
        },
    )
    .await;
    assert!(
        SystemTime::now().duration_since(pushed_at).unwrap() >= push_back,
        "started before the push-back was over"
    );
    assert_eq!(again[0].id, job.id, "the same job first, in its place");
    assert_eq!(again[0].attempts, 0);
}

#[tokio::test]
async fn a_pushed_back_job_without_a_key_pushes_its_whole_queue_back() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-queue-pushback").await;
    for n in 0..2 {
        queue.add("api", NewJob::new(json!(n))).await.unwrap();
    }
    let job = queue.claim("api", 1, LONG).await.unwrap().remove(0);
    let pushed_at = SystemTime::now();
    let push_back = Duration::from_millis(500);
    queue
        .release_pushing_back(&job.lease(), push_back)
        .await
        .unwrap();
    let limits = queue.limits("api").await.unwrap();
    assert!(
        limits.pushed_back_until.is_some_and(|t| t > pushed_at),
        "{limits:?}"
    );
    assert_eq!(
        queue.limited_queues().await.unwrap(),
        ["api"],
        "a push-back makes it flow-aware"
    );
    assert!(
        queue.claim("api", 10, LONG).await.unwrap().is_empty(),
        "the queue starts nothing while pushed back"
    );
    let mut again = Vec::new();
    wait_until(DEADLINE, "the queue to start again", async || {
        again.extend(queue.claim("api", 10, LONG).await.unwrap());
        !again.is_empty()
    })
    .await;
    assert!(SystemTime::now().duration_since(pushed_at).unwrap() >= push_back);
    assert_eq!(again[0].id, job.id, "back in its place, first");
    assert_eq!(again[0].attempts, 0);
}

#[tokio::test]
async fn a_worker_releases_a_rate_limited_job_and_runs_it_again_on_the_same_attempt() {
    let server = RedisServer::start();
    let queue = queue(&server, "flow-worker-429").await;
    let runs = Arc::new(Runs::default());
    runs.rate_limit_first.store(1, Ordering::SeqCst);
    let pushed = queue
        .push(&Tenant {
            tenant: "acme".into(),
        })
        .await
        .unwrap();
    let mut registry = Registry::new();
    registry.add_job::<Tenant>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        WorkOptions::new().queues(["tenants"]).concurrency(2),
    )
    .unwrap()
    .services(Services::new().with(runs.clone()));
    let running = RunningWorker::spawn(worker);
    wait_until(DEADLINE, "the job to run to completion", async || {
        runs.done.load(Ordering::SeqCst) == 1
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(
        *runs.attempts.lock().unwrap(),
        [1, 1],
        "the same attempt twice"
    );
    assert_eq!(report.failed, 0, "a rate-limited run is no failed attempt");
    assert!(queue.inspect(pushed.id()).await.unwrap().is_none(), "acked");
}

#[tokio::test]
async fn a_memory_worker_runs_a_rate_limited_job_again_after_its_retry_after() {
    let queue = redq::MemoryQueue::new();
    let runs = Arc::new(Runs::default());
    runs.rate_limit_first.store(1, Ordering::SeqCst);
    queue
        .push(&Tenant {
            tenant: "acme".into(),
        })
        .await
        .unwrap();
    let mut registry = Registry::new();
    registry.add_job::<Tenant>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        WorkOptions::new().queues(["tenants"]),
    )
    .unwrap()
    .services(Services::new().with(runs.clone()));
    let started = std::time::Instant::now();
    let running = RunningWorker::spawn(worker);
    wait_until(DEADLINE, "the job to run to completion", async || {
        runs.done.load(Ordering::SeqCst) == 1
    })
    .await;
    let report = running.shutdown().await;
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "ran again before its retry-after"
    );
    assert_eq!(*runs.attempts.lock().unwrap(), [1, 1]);
    assert_eq!((report.processed, report.failed), (1, 0));
}

/// Two namespaces on one server as the two shards of a ShardedQueue.
async fn two_shards(server: &RedisServer, test: &str) -> ShardedQueue {
    let builder = RedisQueue::builder(&server.url());
    ShardedQueue::connect(builder, &unique_namespace(test), 2)
        .await
        .unwrap()
}

#[tokio::test]
async fn over_shards_a_queue_wide_limit_is_split_and_read_back_whole() {
    let server = server();
    let sharded = two_shards(&server, "flow-sharded").await;
    let operator = sharded.operator();

    let before = digest(&server).await;
    let text = invalid(
        operator
            .set_limit("mail", LimitScope::Queue, Limit::concurrency(1))
            .await,
    );
    assert!(
        text.contains("a queue-wide concurrency of 1 cannot be split over 2 shards; at least 2"),
        "{text}"
    );
    assert_eq!(
        digest(&server).await,
        before,
        "a refused split wrote something"
    );

    let limit = Limit::concurrency(5).and_rate(7, Duration::from_secs(1));
    assert!(operator
        .set_limit("mail", LimitScope::Queue, limit)
        .await
        .unwrap());
    sharded
        .set_limit("mail", LimitScope::EachKey, Limit::concurrency(2))
        .await
        .unwrap();
    let shares: Vec<_> =
        futures::future::join_all(sharded.shards().iter().map(|s| s.limits("mail")))
            .await
            .into_iter()
            .map(|l| l.unwrap())
            .collect();
    assert_eq!(
        shares[0].limit,
        Limit::concurrency(3).and_rate(4, Duration::from_secs(1))
    );
    assert_eq!(
        shares[1].limit,
        Limit::concurrency(2).and_rate(3, Duration::from_secs(1))
    );
    assert!(
        shares.iter().all(|s| s.each_key == Limit::concurrency(2)),
        "each key on every shard"
    );
    assert_eq!(
        operator.limits("mail").await.unwrap().limit,
        limit,
        "the shares add up"
    );
    assert_eq!(sharded.limited_queues().await.unwrap(), ["mail"]);

    // A limit key's jobs meet on its shard, so its limit is exact.
    for n in 0..4 {
        sharded.add("mail", keyed(n, "acme")).await.unwrap();
    }
    let home = sharded.shard_of_key("acme");
    let held_on = |i: usize| sharded.shards()[i].counts("mail");
    assert_eq!(held_on(home).await.unwrap().held, 4);
    assert_eq!(held_on(1 - home).await.unwrap().held, 0);
    // An ordering key decides first: that job lives with its ordering key.
    let ordering = (0..)
        .map(|i| format!("order-{i}"))
        .find(|key| sharded.shard_of_key(key) != home)
        .unwrap();
    sharded
        .add("mail", keyed(9, "acme").ordering_key(ordering))
        .await
        .unwrap();
    assert_eq!(held_on(1 - home).await.unwrap().held, 1);
    assert_eq!(held_on(home).await.unwrap().held, 4);
    let read = sharded.limits("mail").await.unwrap();
    assert_eq!(read.held, 5);
    let acme: Vec<_> = read.keys.iter().filter(|k| k.key == "acme").collect();
    assert_eq!(acme.len(), 1, "one key, its use added over the shards");
    assert_eq!(acme[0].held, 5);

    assert!(sharded
        .clear_limit("mail", LimitScope::Queue)
        .await
        .unwrap());
    assert!(operator.limits("mail").await.unwrap().limit.is_none());
}

#[derive(Serialize, Deserialize)]
struct Hold;

impl TypedJob for Hold {
    const NAME: &'static str = "flow.hold";
    const QUEUE: &'static str = "narrow";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.cancelled().await;
        Ok(())
    }
}

/// Script calls the server ran since the last reset.
async fn script_calls(server: &RedisServer) -> i64 {
    server.seen_since_reset().await.script_calls()
}

#[tokio::test]
async fn a_worker_on_a_queue_at_its_limit_sleeps_instead_of_claiming_in_a_loop() {
    for handoff in [true, false] {
        let server = RedisServer::start();
        let queue = queue(&server, "flow-no-spin").await;
        queue
            .set_limit("narrow", LimitScope::Queue, Limit::concurrency(1))
            .await
            .unwrap();
        for _ in 0..5 {
            queue.push(&Hold).await.unwrap();
        }
        let mut registry = Registry::new();
        registry.add_job::<Hold>();
        let options = WorkOptions::new()
            .queues(["narrow"])
            .concurrency(4)
            .handoff(handoff)
            .schedules(false);
        let running = RunningWorker::spawn(Worker::new(queue.clone(), registry, options).unwrap());
        wait_until(DEADLINE, "one job to run", async || {
            queue.counts("narrow").await.unwrap().leased == 1
        })
        .await;
        server.reset_stats().await;
        let window = Duration::from_secs(3);
        tokio::time::sleep(window).await;
        // One script call of the test's own, so the count is seen to work.
        assert_eq!(
            queue.counts("narrow").await.unwrap().leased,
            1,
            "the limit held"
        );
        let calls = script_calls(&server).await;
        assert!(calls >= 1, "the count misses the test's own script call");
        let calls = calls - 1;
        println!(
            "handoff {handoff}: {calls} script calls in {window:?} with the queue at its limit"
        );
        assert!(
            calls <= 15,
            "handoff {handoff}: {calls} script calls in {window:?}: the worker claims in a loop"
        );
        running.shutdown().await;
    }
}

#[tokio::test]
async fn a_sharded_worker_on_a_queue_at_its_split_limit_sleeps_too() {
    let server = RedisServer::start();
    let sharded = two_shards(&server, "flow-no-spin-sharded").await;
    sharded
        .set_limit("narrow", LimitScope::Queue, Limit::concurrency(2))
        .await
        .unwrap();
    // Unkeyed pushes rotate over the shards: each gets some.
    for _ in 0..8 {
        sharded.push(&Hold).await.unwrap();
    }
    let mut registry = Registry::new();
    registry.add_job::<Hold>();
    let options = WorkOptions::new()
        .queues(["narrow"])
        .concurrency(6)
        .schedules(false);
    let running = RunningWorker::spawn(Worker::new(sharded.clone(), registry, options).unwrap());
    wait_until(DEADLINE, "one job to run on each shard", async || {
        sharded.counts("narrow").await.unwrap().leased == 2
    })
    .await;
    server.reset_stats().await;
    let window = Duration::from_secs(3);
    tokio::time::sleep(window).await;
    let leased = sharded.counts("narrow").await.unwrap().leased;
    let calls = script_calls(&server).await;
    assert!(calls >= 2, "the count misses the test's own script calls");
    let calls = calls - 2;
    println!("sharded: {calls} script calls in {window:?} with both shards at their share");
    assert!(
        calls <= 15,
        "{calls} script calls in {window:?}: the worker claims in a loop"
    );
    assert_eq!(leased, 2, "each shard held its share");
    running.shutdown().await;
}
