//! `ShardedQueue` on a local 3-primary Redis Cluster: shards on different
//! primaries, unkeyed jobs spread, per-key order kept across queues and
//! shards, fair claims, aggregated counts / dead letters / requeue, and one
//! worker per shard. The seed-trait bodies that hold across shards run in
//! `queue_trait.rs` (`sharded::*`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redq::worker::{
    CancellationToken, JobCx, JobError, JobQueue, Registry, Services, TypedJob, WorkOptions, Worker,
};
use redq::{NewJob, Queue, RedisQueue, ShardedQueue};
use redq_tests::cluster::RedisCluster;
use redq_tests::{unique_namespace, wait_until};
use serde::{Deserialize, Serialize};
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);
const DEADLINE: Duration = Duration::from_secs(10);

async fn sharded(cluster: &RedisCluster, test: &str) -> ShardedQueue {
    let builder = RedisQueue::builder(&cluster.url());
    ShardedQueue::connect(builder, &unique_namespace(test), 3)
        .await
        .expect("connect")
}

async fn waiting_per_shard(q: &ShardedQueue, queue: &str) -> Vec<u64> {
    let mut sizes = Vec::new();
    for shard in q.shards() {
        sizes.push(shard.counts(queue).await.unwrap().waiting);
    }
    sizes
}

#[tokio::test]
async fn each_shard_lives_on_its_own_primary() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "placement").await;
    let primaries: HashSet<usize> = q
        .placement()
        .iter()
        .map(|(ns, slot)| {
            cluster
                .primary_of_slot(*slot)
                .unwrap_or_else(|| panic!("no primary for {ns}"))
        })
        .collect();
    assert_eq!(primaries.len(), 3, "{:?}", q.placement());
}

#[tokio::test]
async fn unkeyed_batches_spread_over_every_shard_and_claims_drain_them_fairly() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "spread").await;
    for batch in 0..3 {
        let payloads = (0..100)
            .map(|n| json!({ "batch": batch, "n": n }))
            .collect();
        q.enqueue("q", payloads).await.unwrap();
    }
    assert_eq!(waiting_per_shard(&q, "q").await, [100, 100, 100]);
    assert_eq!(q.counts("q").await.unwrap().waiting, 300);

    for _ in 0..15 {
        assert_eq!(q.claim("q", 10, LONG).await.unwrap().len(), 10);
    }
    let left = waiting_per_shard(&q, "q").await;
    let (min, max) = (left.iter().min().unwrap(), left.iter().max().unwrap());
    assert!(
        max - min <= 10,
        "claims drain every shard in turn: {left:?}"
    );
    assert_eq!(left.iter().sum::<u64>(), 150);
}

#[tokio::test]
async fn keyed_jobs_keep_per_key_order_across_queues_and_shards() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "order").await;
    const JOBS: u64 = 240;
    const KEYS: u64 = 12;
    for i in 0..JOBS {
        let queue = if i % 3 == 0 { "a" } else { "b" };
        let key = format!("customer-{}", i % KEYS);
        q.enqueue_ordered(queue, vec![(key, json!({ "key": i % KEYS, "seq": i }))])
            .await
            .unwrap();
        if i % 4 == 0 {
            q.enqueue(queue, vec![json!({ "seq": i })]).await.unwrap();
        }
    }
    // The keys spread over the shards, and so do the unkeyed jobs.
    let shards: HashSet<usize> = (0..KEYS)
        .map(|k| q.shard_of_key(&format!("customer-{k}")))
        .collect();
    assert_eq!(shards.len(), 3);

    let seen: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
    let claimers: Vec<_> = (0..4)
        .map(|_| {
            let (q, seen) = (q.clone(), seen.clone());
            tokio::spawn(async move {
                let mut idle = 0;
                while idle < 3 {
                    let mut got = q.claim("a", 5, LONG).await.unwrap();
                    got.extend(q.claim("b", 5, LONG).await.unwrap());
                    idle = if got.is_empty() { idle + 1 } else { 0 };
                    for job in got {
                        if let Some(key) = job.payload["key"].as_u64() {
                            let seq = job.payload["seq"].as_u64().unwrap();
                            seen.lock().unwrap().push((key, seq));
                        }
                        q.complete(&job.id).await.unwrap();
                    }
                    if idle > 0 {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            })
        })
        .collect();
    for claimer in claimers {
        claimer.await.unwrap();
    }
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen.len() as u64, JOBS, "each keyed job ran once");
    let mut last: HashMap<u64, u64> = HashMap::new();
    for (key, seq) in seen.iter() {
        if let Some(previous) = last.insert(*key, *seq) {
            assert!(previous < *seq, "key {key}: {seq} ran after {previous}");
        }
    }
    for queue in ["a", "b"] {
        let counts = q.counts(queue).await.unwrap();
        assert_eq!((counts.waiting, counts.blocked, counts.leased), (0, 0, 0));
    }
}

#[tokio::test]
async fn dedup_keys_hold_across_shards() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "dedup").await;
    for _ in 0..6 {
        q.add("q", NewJob::new(json!(1)).dedup_key("once"))
            .await
            .unwrap();
    }
    assert_eq!(q.counts("q").await.unwrap().waiting, 1);
}

#[tokio::test]
async fn counts_dead_letters_and_requeue_aggregate_over_shards() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "dead").await;
    for n in 0..6 {
        q.enqueue("q", vec![json!({ "n": n })]).await.unwrap();
    }
    assert_eq!(waiting_per_shard(&q, "q").await, [2, 2, 2]);
    let jobs = q.claim("q", 10, LONG).await.unwrap();
    assert_eq!(jobs.len(), 6);
    for job in &jobs {
        q.fail(&job.id, "broken").await.unwrap();
    }
    let counts = q.counts("q").await.unwrap();
    assert_eq!((counts.dead, counts.leased), (6, 0));
    let page = q.dead_letters("q", 0, 4).await.unwrap();
    assert_eq!((page.total, page.items.len()), (6, 4));
    let rest = q.dead_letters("q", 4, 4).await.unwrap();
    assert_eq!(rest.items.len(), 2);
    let one = vec![jobs[0].id.clone(), "01JAAAAAAAAAAAAAAAAAAAAAAA".to_owned()];
    let report = q.requeue_dead("q", &one).await.unwrap();
    assert_eq!((report.done, report.not_found, report.dead_left), (1, 1, 5));
    let mut progress = Vec::new();
    let requeued = q
        .requeue_all_dead("q", |done, left| progress.push((done, left)))
        .await
        .unwrap();
    assert_eq!(requeued, 5);
    // Counted over every shard: "left" includes the shards not reached yet.
    assert_eq!(progress.first().map(|p| p.0 + p.1), Some(5));
    assert_eq!(progress.last(), Some(&(5, 0)));
    let counts = q.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.dead), (6, 0));
    assert!(q.inspect(&jobs[3].id).await.unwrap().is_some());
    q.pause("q").await.unwrap();
    assert!(q.claim("q", 10, LONG).await.unwrap().is_empty());
    q.resume("q").await.unwrap();
    assert_eq!(q.claim("q", 10, LONG).await.unwrap().len(), 6);
    assert_eq!(q.queues().await.unwrap(), ["q"]);
}

#[derive(Default)]
struct Ran(AtomicU32);

#[derive(Serialize, Deserialize)]
struct Tick;
impl TypedJob for Tick {
    const NAME: &'static str = "s.tick";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Arc<Ran>>()
            .expect("counter")
            .0
            .fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn one_worker_per_shard_runs_every_job() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "workers").await;
    let ran = Arc::new(Ran::default());
    let stop = CancellationToken::new();
    let mut handles = Vec::new();
    for shard in q.shards() {
        let mut registry = Registry::new();
        registry.add_job::<Tick>();
        // An hour of max idle and no hand-off: only wake-ups start the jobs.
        let options = WorkOptions::new()
            .queues(["default"])
            .max_idle(Duration::from_secs(3600))
            .handoff(false)
            .schedules(false);
        let worker = Worker::new(shard.clone(), registry, options)
            .unwrap()
            .services(Services::new().with(ran.clone()));
        handles.push(tokio::spawn(worker.run(stop.clone())));
    }
    wait_until(DEADLINE, "each shard's worker to subscribe", async || {
        q.shards()
            .iter()
            .all(|shard| cluster.subscribers(&shard.wake_channel()) == 1)
    })
    .await;
    // Typed pushes go through each shard's handle; spread them by hand.
    for i in 0..90 {
        let shard = &q.shards()[i % 3];
        JobQueue::new(shard.clone()).push(&Tick).await.unwrap();
    }
    wait_until(DEADLINE, "every job to run", async || {
        ran.0.load(Ordering::SeqCst) == 90
    })
    .await;
    stop.cancel();
    let mut processed = Vec::new();
    for handle in handles {
        processed.push(handle.await.unwrap().unwrap().processed);
    }
    assert_eq!(processed, [30, 30, 30]);
}

#[tokio::test]
async fn add_durable_lands_on_the_jobs_shard_and_waits_for_its_replica() {
    let cluster = RedisCluster::shared();
    let builder = RedisQueue::builder(&cluster.url()).pool_size(1);
    let q = ShardedQueue::connect(builder, &unique_namespace("durable"), 3)
        .await
        .expect("connect");
    // Keyed: on the key's shard, confirmed by that shard's replica.
    let keyed = NewJob::new(json!({"n": 1})).ordering_key("customer-42");
    let durable = q
        .add_durable("payments", keyed, 1, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(durable.confirmed && durable.replicas >= 1, "{durable:?}");
    let home = q.shard_of_key("customer-42");
    for (i, shard) in q.shards().iter().enumerate() {
        let found = shard.inspect(durable.enqueued.id()).await.unwrap();
        assert_eq!(found.is_some(), i == home, "shard {i} of key shard {home}");
    }
    // Unkeyed: rotated like any enqueue, three calls reach three shards.
    for n in 0..3 {
        let durable = q
            .add_durable("bulk", NewJob::new(json!(n)), 1, Duration::from_secs(5))
            .await
            .unwrap();
        assert!(durable.confirmed, "{durable:?}");
    }
    assert_eq!(waiting_per_shard(&q, "bulk").await, vec![1, 1, 1]);
    // Asking more replicas than a shard has times out, the job still added.
    let short = q
        .add_durable("bulk", NewJob::new(json!(9)), 2, Duration::from_millis(50))
        .await
        .unwrap();
    assert!(!short.confirmed && short.replicas == 1, "{short:?}");
    assert_eq!(q.counts("bulk").await.unwrap().waiting, 4);
}

/// The seed trait over a shard whose primary hangs (stopped, not failed
/// over): a claim waits at most a second for it and returns the other
/// shards' jobs, where it used to wait the 10 s command timeout on every
/// visit; `next_due` answers from the others; later claims do not ask the
/// hung shard again while its late claim is outstanding. Once the primary
/// answers, what that late claim leased is given back at once (no attempt
/// counted), not left to its 30 s lease.
#[tokio::test]
async fn the_seed_trait_goes_on_with_the_other_shards_while_one_hangs() {
    // Its own cluster (a node is stopped), whose node timeout outlasts the
    // test: the stopped primary is not failed over.
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    let q = sharded(&cluster, "seed-hung").await;
    let hung = 0;
    let mut ids: Vec<Vec<String>> = vec![Vec::new(); q.shards().len()];
    for (shard, handle) in q.shards().iter().enumerate() {
        for n in 0..2 {
            let job = NewJob::new(json!({ "shard": shard, "n": n }));
            ids[shard].push(handle.add("work", job).await.unwrap().id().to_owned());
        }
    }
    let slot = redq::shards::slot_of(q.shards()[hung].namespace());
    let frozen = cluster.freeze(
        cluster
            .primary_of_slot(slot)
            .expect("a primary serves the slot"),
    );

    let answering: HashSet<&String> = ids[1..].iter().flatten().collect();
    let mut claimed = HashSet::new();
    for _ in 0..3 {
        let got = tokio::time::timeout(Duration::from_secs(5), Queue::claim(&q, "work", 10, LONG))
            .await
            .expect("a claim within 5 s, not the 10 s command timeout")
            .expect("the other shards answer");
        for job in got {
            assert!(
                answering.contains(&job.id),
                "a job of the hung shard: {}",
                job.id
            );
            Queue::complete(&q, &job.id).await.unwrap();
            claimed.insert(job.id);
        }
    }
    assert_eq!(
        claimed.len(),
        answering.len(),
        "every job of the shards that answer"
    );
    let due = tokio::time::timeout(Duration::from_secs(5), Queue::next_due(&q, "work"))
        .await
        .expect("next_due within 5 s");
    assert!(due.is_ok(), "the others answer: {due:?}");

    drop(frozen);
    let mut given_back = Vec::new();
    wait_until(
        DEADLINE,
        "the hung shard's jobs to be claimable again",
        async || {
            given_back.extend(Queue::claim(&q, "work", 10, LONG).await.unwrap_or_default());
            given_back.len() == ids[hung].len()
        },
    )
    .await;
    for job in &given_back {
        assert!(ids[hung].contains(&job.id), "{}", job.id);
        assert_eq!(job.attempts, 0, "the give-back counted no attempt: {job:?}");
    }
}

/// The way back from the record formats over shards on three primaries:
/// the operator counts every shard's compact and detached records, and
/// rewrites them in bounded steps on each shard's own primary (no
/// `CROSSSLOT`); the jobs claim with their payloads after.
#[tokio::test]
async fn over_shards_on_a_cluster_records_are_counted_and_rewritten_on_each_primary() {
    let cluster = RedisCluster::shared();
    let q = sharded(&cluster, "rewrite").await;
    let operator = q.operator();
    operator
        .set_record_format(redq::RecordFormat::CompactDetached { min_bytes: 100 })
        .await
        .unwrap();
    let large = "x".repeat(200);
    for i in 0..30 {
        let payload = match i % 2 {
            0 => json!({ "i": i }),
            _ => json!({ "i": i, "pad": large }),
        };
        operator.add("q", NewJob::new(payload)).await.unwrap();
    }
    let newer = operator.newer_records().await.unwrap();
    assert_eq!((newer.compact, newer.detached), (15, 15), "{newer:?}");
    operator
        .set_record_format(redq::RecordFormat::Standard)
        .await
        .unwrap();
    let done = operator.rewrite_records().await.unwrap();
    assert_eq!((done.compact, done.detached, done.left_leased), (15, 15, 0));
    assert_eq!(operator.newer_records().await.unwrap().total(), 0);
    let mut seen = Vec::new();
    for shard in q.shards() {
        for job in shard.claim("q", 30, LONG).await.unwrap() {
            let i = job.payload["i"].as_u64().unwrap();
            assert_eq!(job.payload.get("pad").is_some(), i % 2 == 1, "job {i}");
            seen.push(i);
        }
    }
    seen.sort();
    assert_eq!(seen, (0..30).collect::<Vec<_>>());
}
