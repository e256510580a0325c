//! One `Worker` over a whole `ShardedQueue` on the local 3-primary cluster:
//! typed pushes land on the shard their key routes to, the worker is woken
//! by and runs jobs from every shard, failures retry with their backoff and
//! dead-letter on their own shard, and shutdown releases what it did not
//! finish to the shard it came from.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::events::EventKind;
use redq::worker::{
    JobCx, JobError, JobQueue, Pushed, Registry, Services, TypedJob, WorkOptions, Worker,
};
use redq::{JobState, RedisQueue, ShardedQueue};
use redq_tests::cluster::RedisCluster;
use redq_tests::events::latest_of_kind;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

const DEADLINE: Duration = Duration::from_secs(10);
const BACKOFF: Duration = Duration::from_millis(200);

async fn sharded(cluster: &RedisCluster, test: &str) -> ShardedQueue {
    let builder = RedisQueue::builder(&cluster.url());
    ShardedQueue::connect(builder, &unique_namespace(test), 3)
        .await
        .expect("connect")
}

/// When each job id was started, attempt by attempt.
#[derive(Default)]
struct Runs(Mutex<HashMap<String, Vec<Instant>>>);

impl Runs {
    fn record(cx: &JobCx) {
        let runs = cx.service::<Arc<Runs>>().expect("runs service");
        let mut map = runs.0.lock().unwrap();
        map.entry(cx.id().to_owned())
            .or_default()
            .push(Instant::now());
    }
    fn completed(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn starts(&self, id: &str) -> Vec<Instant> {
        self.0.lock().unwrap().get(id).cloned().unwrap_or_default()
    }
}

/// A job pinned to a shard by its ordering key.
#[derive(Serialize, Deserialize)]
struct Keyed {
    key: Option<String>,
}
impl TypedJob for Keyed {
    const NAME: &'static str = "sw.keyed";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        Ok(())
    }
    fn ordering_key(&self) -> Option<String> {
        self.key.clone()
    }
}

/// Always fails; three attempts, a short fixed backoff.
#[derive(Serialize, Deserialize)]
struct Failing {
    key: String,
}
impl TypedJob for Failing {
    const NAME: &'static str = "sw.failing";
    const MAX_ATTEMPTS: u32 = 3;
    fn backoff(_attempt: u32) -> Duration {
        BACKOFF
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        Err(JobError::retry("the remote said no"))
    }
    fn ordering_key(&self) -> Option<String> {
        Some(self.key.clone())
    }
}

/// Runs until the worker's grace period is over, ignoring shutdown.
#[derive(Serialize, Deserialize)]
struct Stubborn {
    key: String,
}
impl TypedJob for Stubborn {
    const NAME: &'static str = "sw.stubborn";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    }
    fn ordering_key(&self) -> Option<String> {
        Some(self.key.clone())
    }
}

/// Outlives its worker's lease several times over; the worker extends it.
#[derive(Serialize, Deserialize)]
struct Long {
    key: String,
}
impl TypedJob for Long {
    const NAME: &'static str = "sw.long";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        tokio::time::sleep(Duration::from_millis(400)).await;
        Ok(())
    }
    fn ordering_key(&self) -> Option<String> {
        Some(self.key.clone())
    }
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.add_job::<Long>();
    registry.add_job::<Keyed>();
    registry.add_job::<Failing>();
    registry.add_job::<Stubborn>();
    registry
}

/// One worker over every shard. An hour of max idle: an idle worker learns
/// of new work only from the shards' wake-ups.
fn start(q: &ShardedQueue, runs: &Arc<Runs>, options: WorkOptions) -> RunningWorker {
    let options = options
        .queues(["default"])
        .max_idle(Duration::from_secs(3600))
        .schedules(false);
    let worker = Worker::new(q.clone(), registry(), options)
        .expect("options")
        .services(Services::new().with(runs.clone()));
    RunningWorker::spawn(worker)
}

async fn wait_subscribed(cluster: &RedisCluster, q: &ShardedQueue) {
    wait_until(
        DEADLINE,
        "the worker to listen on every shard",
        async || {
            q.shards()
                .iter()
                .all(|shard| cluster.subscribers(&shard.wake_channel()) == 1)
        },
    )
    .await;
}

/// A key for each shard, found by the queue's own routing.
fn key_per_shard(q: &ShardedQueue) -> Vec<String> {
    (0..q.shards().len())
        .map(|shard| {
            (0..)
                .map(|n| format!("key-{n}"))
                .find(|key| q.shard_of_key(key) == shard)
                .expect("some key routes to every shard")
        })
        .collect()
}

#[tokio::test]
async fn typed_pushes_land_on_their_keys_shard_and_one_worker_runs_jobs_from_every_shard() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "sw-every").await;
    let runs = Arc::new(Runs::default());
    let keys = key_per_shard(&q);
    let jobs = JobQueue::new(q.clone());
    let mut per_shard = vec![0; keys.len()];
    for round in 0..10 {
        for key in &keys {
            let key = format!("{key}-{round}");
            let shard = q.shard_of_key(&key);
            let pushed = jobs.push(&Keyed { key: Some(key) }).await.unwrap();
            assert!(matches!(pushed, Pushed::Queued { .. }));
            for (i, other) in q.shards().iter().enumerate() {
                let found = other.inspect(pushed.id()).await.unwrap().is_some();
                assert_eq!(found, i == shard, "job on shard {i}, routed to {shard}");
            }
            per_shard[shard] += 1;
        }
    }
    assert!(per_shard.iter().all(|n| *n > 0), "{per_shard:?}");

    let running = start(&q, &runs, WorkOptions::new().concurrency(4));
    let first = per_shard.iter().sum::<usize>();
    wait_until(DEADLINE, "the jobs already queued to run", async || {
        runs.completed() == first
    })
    .await;
    // Idle now: only the shards' wake-ups can start what comes next. Unkeyed
    // pushes spread round-robin over the shards.
    wait_subscribed(&cluster, &q).await;
    for _ in 0..30 {
        q.push(&Keyed { key: None }).await.unwrap();
    }
    let total = first + 30;
    wait_until(DEADLINE, "every job of every shard to run", async || {
        runs.completed() == total
    })
    .await;
    wait_until(DEADLINE, "every shard to be drained", async || {
        let mut left = 0;
        for shard in q.shards() {
            let counts = shard.counts("default").await.unwrap();
            left += counts.waiting + counts.leased + counts.scheduled;
        }
        left == 0
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.processed as usize, total);
    assert_eq!(report.failed, 0);
}

#[tokio::test]
async fn a_failing_job_retries_after_its_backoff_and_is_dead_lettered_on_its_own_shard() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "sw-fail").await;
    let runs = Arc::new(Runs::default());
    let keys = key_per_shard(&q);
    let mut pushed = Vec::new();
    for key in &keys {
        let id = q.push(&Failing { key: key.clone() }).await.unwrap();
        pushed.push((q.shard_of_key(key), id.id().to_owned()));
    }
    let worker = Worker::new(
        q.clone(),
        registry(),
        WorkOptions::new()
            .queues(["default"])
            .max_idle(Duration::from_secs(3600))
            .schedules(false),
    )
    .unwrap()
    .services(Services::new().with(runs.clone()));
    let mut failures = worker.failures();
    let running = RunningWorker::spawn(worker);

    for (shard, id) in &pushed {
        let home = &q.shards()[*shard];
        wait_until(DEADLINE, "the job to be dead-lettered", async || {
            matches!(home.inspect(id).await.unwrap(), Some(j) if j.state == JobState::Dead)
        })
        .await;
        let job = home.inspect(id).await.unwrap().unwrap();
        assert_eq!(job.attempts, 3, "{job:?}");
        assert_eq!(job.last_error.as_deref(), Some("the remote said no"));
        let starts = runs.starts(id);
        assert_eq!(starts.len(), 3, "three attempts");
        for pair in starts.windows(2) {
            assert!(
                pair[1] - pair[0] >= BACKOFF,
                "each retry waits its backoff: {:?}",
                pair[1] - pair[0]
            );
        }
    }
    let mut dead = Vec::new();
    for _ in &pushed {
        let event = tokio::time::timeout(DEADLINE, failures.recv())
            .await
            .expect("a dead-letter event")
            .unwrap();
        assert_eq!(event.attempts, 3);
        dead.push(event.id);
    }
    dead.sort();
    let mut ids: Vec<String> = pushed.iter().map(|(_, id)| id.clone()).collect();
    ids.sort();
    assert_eq!(dead, ids);
    assert_eq!(q.counts("default").await.unwrap().dead, 3);

    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (0, 9));
}

#[tokio::test]
async fn shutdown_releases_unfinished_jobs_to_the_shard_they_came_from() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "sw-stop").await;
    let runs = Arc::new(Runs::default());
    let keys = key_per_shard(&q);
    let mut pushed = Vec::new();
    for key in &keys {
        let id = q.push(&Stubborn { key: key.clone() }).await.unwrap();
        pushed.push((q.shard_of_key(key), id.id().to_owned()));
    }
    let running = start(
        &q,
        &runs,
        WorkOptions::new()
            .concurrency(3)
            .grace(Duration::from_millis(100)),
    );
    wait_until(DEADLINE, "a job of every shard to be running", async || {
        runs.completed() == pushed.len()
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (0, 0));
    for (shard, id) in &pushed {
        let job = q.shards()[*shard].inspect(id).await.unwrap().unwrap();
        assert_eq!(job.state, JobState::Waiting, "released: {job:?}");
        assert_eq!(job.attempts, 0, "a release counts no attempt");
    }
}

#[tokio::test]
async fn leases_are_extended_on_each_jobs_own_shard_so_long_jobs_run_once() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "sw-long").await;
    let runs = Arc::new(Runs::default());
    let mut ids = Vec::new();
    for key in key_per_shard(&q) {
        ids.push(q.push(&Long { key }).await.unwrap().id().to_owned());
    }
    let running = start(
        &q,
        &runs,
        WorkOptions::new()
            .concurrency(3)
            .lease(Duration::from_millis(90)),
    );
    wait_until(DEADLINE, "every long job to complete", async || {
        q.counts("default").await.unwrap().leased == 0 && runs.completed() == 3
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (3, 0));
    for id in &ids {
        assert_eq!(runs.starts(id).len(), 1, "never reclaimed while running");
        assert!(q.inspect(id).await.unwrap().is_none(), "acknowledged");
    }
}

/// A worker over shards claims from each shard in turn: with every shard
/// full and one job per claim, its first jobs come from every shard alike.
#[tokio::test]
async fn claims_rotate_so_no_shard_waits_for_another_to_drain() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "sw-fair").await;
    let runs = Arc::new(Runs::default());
    let keys = key_per_shard(&q);
    let mut shard_of = HashMap::new();
    for round in 0..20 {
        for key in &keys {
            let key = format!("{key}-{round}");
            let shard = q.shard_of_key(&key);
            let pushed = q.push(&Keyed { key: Some(key) }).await.unwrap();
            shard_of.insert(pushed.id().to_owned(), shard);
        }
    }
    let running = start(&q, &runs, WorkOptions::new().concurrency(1).claim_batch(1));
    wait_until(DEADLINE, "the first dozen jobs to run", async || {
        runs.completed() >= 12
    })
    .await;
    running.shutdown().await;
    let mut started: Vec<(Instant, usize)> = runs
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(id, at)| (at[0], shard_of[id]))
        .collect();
    started.sort();
    let first: Vec<usize> = started.iter().take(12).map(|(_, shard)| *shard).collect();
    for shard in 0..keys.len() {
        let n = first.iter().filter(|s| **s == shard).count();
        assert_eq!(n, 4, "shard {shard} ran {n} of the first 12: {first:?}");
    }
}

/// A primary that hangs (SIGSTOP: its connections stay open, nothing is
/// answered) holds up only its own shard's jobs. A worker over the shards
/// waits at most a second for a shard's claim, runs every job of the shards
/// that answer well within the handle's 10 s command timeout, and runs the
/// hung shard's jobs, those its late claim leased included, once it answers
/// again: sooner than their 30 s leases could lapse.
#[tokio::test]
async fn a_hung_shard_holds_up_only_its_own_jobs() {
    // Its own cluster (a node is stopped), whose node timeout outlasts the
    // test: the stopped primary is not failed over.
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    let q = sharded(&cluster, "sw-hung").await;
    let runs = Arc::new(Runs::default());
    let keys = key_per_shard(&q);
    let mut ids_by_shard = vec![Vec::new(); keys.len()];
    for round in 0..40 {
        for key in &keys {
            let key = format!("{key}-{round}");
            let shard = q.shard_of_key(&key);
            let pushed = q.push(&Keyed { key: Some(key) }).await.unwrap();
            ids_by_shard[shard].push(pushed.id().to_owned());
        }
    }
    let hung = 0;
    let slot = redq::shards::slot_of(q.shards()[hung].namespace());
    let primary = cluster
        .primary_of_slot(slot)
        .expect("a primary serves the slot");
    let frozen = cluster.freeze(primary);

    let running = start(&q, &runs, WorkOptions::new().concurrency(8));
    let answering: Vec<&String> = ids_by_shard
        .iter()
        .enumerate()
        .filter(|(shard, _)| *shard != hung)
        .flat_map(|(_, ids)| ids)
        .collect();
    wait_until(
        Duration::from_secs(6),
        "every job of the shards that answer to run",
        async || answering.iter().all(|id| !runs.starts(id).is_empty()),
    )
    .await;
    assert!(
        ids_by_shard[hung]
            .iter()
            .all(|id| runs.starts(id).is_empty()),
        "nothing of the hung shard ran"
    );

    drop(frozen);
    wait_until(
        Duration::from_secs(10),
        "the hung shard's jobs to run once it answers",
        async || {
            ids_by_shard
                .iter()
                .flatten()
                .all(|id| !runs.starts(id).is_empty())
        },
    )
    .await;
    let report = running.shutdown().await;
    assert_eq!(
        report.processed as usize,
        ids_by_shard.iter().flatten().count()
    );
    assert_eq!(report.failed, 0);
}

/// `n` ordering keys that route to `shard`.
fn keys_on(q: &ShardedQueue, shard: usize, n: usize) -> Vec<String> {
    (0..)
        .map(|i| format!("on-{shard}-{i}"))
        .filter(|key| q.shard_of_key(key) == shard)
        .take(n)
        .collect()
}

/// The jobs a hung shard's claim leases to a worker that has no slot for
/// them when it answers are given back (no attempt counted), not left to
/// lapse: here every slot holds a job that runs until shutdown, so the
/// worker gives them back as it stops.
#[tokio::test]
async fn a_late_claims_jobs_without_a_slot_are_given_back() {
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    let q = sharded(&cluster, "sw-late").await;
    let runs = Arc::new(Runs::default());
    let mut late = Vec::new();
    for key in keys_on(&q, 0, 10) {
        let pushed = q.push(&Keyed { key: Some(key) }).await.unwrap();
        late.push(pushed.id().to_owned());
    }
    let mut stubborn = keys_on(&q, 1, 2);
    stubborn.extend(keys_on(&q, 2, 2));
    let fourth = stubborn.pop().expect("four keys");
    for key in stubborn {
        q.push(&Stubborn { key }).await.unwrap();
    }
    let slot = redq::shards::slot_of(q.shards()[0].namespace());
    let primary = cluster
        .primary_of_slot(slot)
        .expect("a primary serves the slot");
    let frozen = cluster.freeze(primary);
    // Three stubborn jobs cannot fill four slots, so wherever the rotation
    // starts, the first claim asks the hung shard too and goes on without
    // it after a second; the fourth, pushed then, fills the last slot. The
    // worker polls: its wake-up subscriber connects to every primary, the
    // stopped one too, and so hears nothing while it is stopped.
    let options = WorkOptions::new()
        .queues(["default"])
        .concurrency(4)
        .max_idle(Duration::from_millis(200))
        .grace(Duration::from_millis(100))
        .schedules(false);
    let worker = Worker::new(q.clone(), registry(), options)
        .expect("options")
        .services(Services::new().with(runs.clone()));
    let running = RunningWorker::spawn(worker);
    wait_until(DEADLINE, "three stubborn jobs to be running", async || {
        runs.completed() == 3
    })
    .await;
    q.push(&Stubborn { key: fourth }).await.unwrap();
    wait_until(DEADLINE, "the fourth to be running", async || {
        runs.completed() == 4
    })
    .await;
    drop(frozen);
    let hung = &q.shards()[0];
    wait_until(
        DEADLINE,
        "the late claim to lease the hung shard's jobs",
        async || hung.counts("default").await.unwrap().leased > 0,
    )
    .await;
    let report = running.shutdown().await;
    assert_eq!((report.processed, report.failed), (0, 0));
    assert!(
        late.iter().all(|id| runs.starts(id).is_empty()),
        "no slot: none ran"
    );
    for id in &late {
        let job = hung.inspect(id).await.unwrap().unwrap();
        assert_eq!(job.state, JobState::Waiting, "given back: {job:?}");
        assert_eq!(job.attempts, 0, "a give-back counts no attempt");
    }
}

/// A primary that hangs while its jobs run holds up only its own jobs'
/// acknowledgements: acks go to each shard on their own, so those waiting
/// on the stopped primary do not hold up the others' (whose leases would
/// otherwise fill the worker's room for leases and stop its claims).
#[tokio::test]
async fn acks_for_a_hung_shard_hold_up_no_other_shards_acks() {
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    let q = sharded(&cluster, "sw-acks").await;
    let runs = Arc::new(Runs::default());
    let mut hung_ids = Vec::new();
    for key in keys_on(&q, 0, 8) {
        hung_ids.push(q.push(&Long { key }).await.unwrap().id().to_owned());
    }
    let running = start(&q, &runs, WorkOptions::new().concurrency(8));
    wait_until(
        DEADLINE,
        "the hung shard's eight jobs to be running",
        async || runs.completed() == 8,
    )
    .await;
    let slot = redq::shards::slot_of(q.shards()[0].namespace());
    let primary = cluster
        .primary_of_slot(slot)
        .expect("a primary serves the slot");
    // They finish within 400 ms, while it is stopped: their acks wait.
    let frozen = cluster.freeze(primary);
    let mut others = Vec::new();
    for shard in [1, 2] {
        for key in keys_on(&q, shard, 60) {
            let pushed = q.push(&Keyed { key: Some(key) }).await.unwrap();
            others.push(pushed.id().to_owned());
        }
    }
    wait_until(
        Duration::from_secs(6),
        "every job of the shards that answer to run",
        async || others.iter().all(|id| !runs.starts(id).is_empty()),
    )
    .await;
    drop(frozen);
    let report = running.shutdown().await;
    assert_eq!(report.processed as usize, hung_ids.len() + others.len());
    assert_eq!(report.failed, 0);
}

/// A worker started while a primary hangs cannot connect its wake-up
/// subscriber (on a cluster it connects to every primary): it tries again
/// until it can, so once the primary answers the worker listens on every
/// shard and is woken by new work, where it used to poll for good.
#[tokio::test]
async fn a_worker_started_while_a_primary_hangs_listens_once_it_answers() {
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    // A short command timeout: the subscriber's connection gives up soon.
    let builder = RedisQueue::builder(&cluster.url()).command_timeout(Duration::from_secs(2));
    let q = ShardedQueue::connect(builder, &unique_namespace("sw-listen"), 3)
        .await
        .expect("connect");
    let runs = Arc::new(Runs::default());
    let slot = redq::shards::slot_of(q.shards()[0].namespace());
    let primary = cluster
        .primary_of_slot(slot)
        .expect("a primary serves the slot");
    let frozen = cluster.freeze(primary);
    let running = start(&q, &runs, WorkOptions::new().concurrency(4));
    // Listed once its first try to connect the subscriber has failed (a
    // worker waits for its subscriber before it lists itself).
    wait_until(
        DEADLINE,
        "the worker to be listed on an answering shard",
        async || !q.shards()[1].workers().await.unwrap().is_empty(),
    )
    .await;
    drop(frozen);
    wait_subscribed(&cluster, &q).await;
    // An hour of max idle (`start`): only a wake-up starts this job.
    let key = keys_on(&q, 1, 1).pop().expect("a key");
    let id = q
        .push(&Keyed { key: Some(key) })
        .await
        .unwrap()
        .id()
        .to_owned();
    wait_until(DEADLINE, "the wake-up to start the new job", async || {
        !runs.starts(&id).is_empty()
    })
    .await;
    running.shutdown().await;
}

/// A worker's listener for each shard subscribes on that shard's own
/// primary, so a primary that hangs deafens only its own shard, whichever
/// it is: the jobs pushed to the other shards start at once, where an hour
/// of max idle (`start`) would otherwise keep them waiting. (fred sends a
/// `SUBSCRIBE` to the primary of its client id's slot, a random one: a
/// hung primary deafened every listener that happened to sit on it.)
#[tokio::test]
async fn a_hung_primary_deafens_only_its_own_shards_listener() {
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    let q = sharded(&cluster, "sw-hears").await;
    let runs = Arc::new(Runs::default());
    let running = start(&q, &runs, WorkOptions::new().concurrency(4));
    wait_subscribed(&cluster, &q).await;
    let primaries: Vec<usize> = q
        .shards()
        .iter()
        .map(|shard| {
            let slot = redq::shards::slot_of(shard.namespace());
            cluster
                .primary_of_slot(slot)
                .expect("a primary serves the slot")
        })
        .collect();
    for (shard, &primary) in q.shards().iter().zip(&primaries) {
        assert_eq!(
            cluster.subscribers_on(primary, &shard.wake_channel()),
            1,
            "{} is listened to on its own primary",
            shard.namespace()
        );
    }
    for (hung, &primary) in primaries.iter().enumerate() {
        let frozen = cluster.freeze(primary);
        let mut pushed = Vec::new();
        for shard in (0..primaries.len()).filter(|&s| s != hung) {
            let key = keys_on(&q, shard, 1 + hung).pop().expect("a key");
            let job = q.push(&Keyed { key: Some(key) }).await.unwrap();
            pushed.push(job.id().to_owned());
        }
        wait_until(
            DEADLINE,
            &format!("the jobs of the other shards to start while shard {hung}'s primary hangs"),
            async || pushed.iter().all(|id| !runs.starts(id).is_empty()),
        )
        .await;
        drop(frozen);
    }
    running.shutdown().await;
}

/// A job whose payload is as large as its pad, on no shard in particular.
#[derive(Serialize, Deserialize)]
struct Padded {
    pad: String,
}
impl TypedJob for Padded {
    const NAME: &'static str = "sw.padded";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        Runs::record(cx);
        Ok(())
    }
}

/// Every node of `cluster` closes a connection whose reply outgrows 64 KB
/// from now on (`on`), or none (`!on`, the default).
fn lose_large_replies(cluster: &RedisCluster, on: bool) {
    let limit = if on {
        "normal 65536 65536 0"
    } else {
        "normal 0 0 0"
    };
    for node in 0..cluster.nodes().len() {
        let said = cluster.cli(
            node,
            &["CONFIG", "SET", "client-output-buffer-limit", limit],
        );
        assert_eq!(said.trim(), "OK", "node {node}: {said}");
    }
}

/// A worker of `Keyed` and `Padded` jobs over `q`'s queue `default`,
/// recording in `runs`: its two-minute leases outlast every test's wait,
/// so a job left to its lease fails the test.
fn long_lease_worker(q: &ShardedQueue, runs: &Arc<Runs>) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<Keyed>().add_job::<Padded>();
    let options = WorkOptions::new()
        .queues(["default"])
        .lease(Duration::from_secs(120))
        .max_idle(Duration::from_secs(3600))
        .schedules(false);
    let worker = Worker::new(q.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(runs.clone()));
    RunningWorker::spawn(worker)
}

/// A shard's claim whose reply was lost after it leased a job
/// (`driver/src/worker/lost_claims.rs`): the worker looks on that shard
/// and gives the job back at once, and it runs on its first attempt
/// instead of after its two-minute lease. The reply is lost for real:
/// Redis closes a connection whose reply outgrows
/// `client-output-buffer-limit`, after the claim ran.
#[tokio::test]
async fn a_shards_claim_whose_reply_was_lost_gives_its_job_back_on_that_shard() {
    let cluster = RedisCluster::start();
    let builder = RedisQueue::builder(&cluster.url()).command_timeout(Duration::from_secs(2));
    let q = ShardedQueue::connect(builder, &unique_namespace("sw-lost-claim"), 3)
        .await
        .expect("connect");
    let runs = Arc::new(Runs::default());
    let running = long_lease_worker(&q, &runs);
    // A job on every shard first: their claims' replies show the worker
    // each shard's clock, so its next claims there carry deadlines.
    for key in key_per_shard(&q) {
        q.push(&Keyed { key: Some(key) }).await.unwrap();
    }
    wait_until(DEADLINE, "a job on every shard to run", async || {
        runs.completed() == 3
    })
    .await;

    lose_large_replies(&cluster, true);
    let pad = "x".repeat(200_000);
    let id = q.push(&Padded { pad }).await.unwrap().id().to_owned();
    wait_until(
        Duration::from_secs(30),
        "the lost claim's job to be given back on its shard",
        async || {
            for shard in q.shards() {
                let lost = latest_of_kind(shard, EventKind::ClaimLost).await;
                if lost.iter().any(|event| event.job_id == id) {
                    return true;
                }
            }
            false
        },
    )
    .await;
    assert!(runs.starts(&id).is_empty(), "no reply, no run");
    lose_large_replies(&cluster, false);

    wait_until(Duration::from_secs(30), "the job to run", async || {
        !runs.starts(&id).is_empty()
    })
    .await;
    let report = running.shutdown().await;
    assert_eq!(runs.starts(&id).len(), 1, "once");
    assert_eq!(report.processed, 4);
    for shard in q.shards() {
        assert_eq!(shard.counts("default").await.unwrap().leased, 0);
    }
}

/// The whole way, at random, over shards: every node's client connections
/// are killed again and again (`CLIENT KILL TYPE normal`, every 25 ms or
/// so), replies over 64 KB are lost for 8 rounds of every 15, and the
/// worker runs a mix of small jobs and 100 KB ones from all three shards.
/// Claims on every shard fail at any point, as do acks, looks and
/// give-backs; yet every job runs exactly once, well before its two-minute
/// lease could lapse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_worker_whose_connections_keep_failing_runs_every_job_once() {
    let cluster = RedisCluster::start();
    let builder = RedisQueue::builder(&cluster.url()).command_timeout(Duration::from_secs(2));
    let q = ShardedQueue::connect(builder, &unique_namespace("sw-soak"), 3)
        .await
        .expect("connect");
    let mut ids = Vec::new();
    for i in 0..90 {
        let pad = if i % 4 == 0 {
            "x".repeat(100_000)
        } else {
            i.to_string()
        };
        ids.push(q.push(&Padded { pad }).await.unwrap().id().to_owned());
    }
    let runs = Arc::new(Runs::default());
    let running = long_lease_worker(&q, &runs);

    let cluster = Arc::new(cluster);
    // Set when the test ends, passed or not: the runtime waits for the
    // fault thread before it drops.
    let done = Stop::default();
    let faults = tokio::task::spawn_blocking({
        let (cluster, done) = (cluster.clone(), done.0.clone());
        move || {
            let mut rounds = 0u32;
            while !done.load(Ordering::Relaxed) {
                match rounds % 15 {
                    0 => lose_large_replies(&cluster, true),
                    8 => lose_large_replies(&cluster, false),
                    _ => {}
                }
                for node in 0..cluster.nodes().len() {
                    cluster.cli(node, &["CLIENT", "KILL", "TYPE", "normal"]);
                }
                rounds += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            lose_large_replies(&cluster, false);
        }
    });
    wait_until(Duration::from_secs(90), "every job to run", async || {
        runs.completed() == ids.len()
    })
    .await;
    drop(done);
    faults.await.expect("the fault thread");
    let report = running.shutdown().await;

    for id in &ids {
        assert_eq!(runs.starts(id).len(), 1, "{id} ran once");
    }
    assert_eq!(runs.completed(), ids.len(), "no job but those pushed");
    assert_eq!(report.processed, 90);
    assert!(report.claims_lost >= 1, "{report:?}");
}

/// Tells a thread to stop when dropped, a panic's unwinding included.
#[derive(Default)]
struct Stop(Arc<AtomicBool>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
