//! The driver on a local Redis Cluster (3 primaries, 1 replica each): cluster
//! URLs, scripts on every primary (and reloaded after `SCRIPT FLUSH`), the
//! worker runtime with its pub/sub wake-ups, and the operator calls, with no
//! `CROSSSLOT` anywhere. The trait-level tests run on a cluster too
//! (`queue_trait.rs`, `cluster::*`).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::util::redis_keyslot;
use redq::events::EventKind;
use redq::kept::Retention;
use redq::schedule::Schedule;
use redq::worker::{
    CancellationToken, JobCx, JobError, JobQueue, Registry, Services, TypedJob, WorkOptions,
    Worker, WorkerReport,
};
use redq::{Completion, JobResult, NewJob, QueueError, RedisQueue};
use redq_tests::cluster::RedisCluster;
use redq_tests::events::latest_of_kind;
use redq_tests::{unique_namespace, wait_until};
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

const DEADLINE: Duration = Duration::from_secs(10);

async fn connect(cluster: &RedisCluster, ns: &str) -> RedisQueue {
    RedisQueue::builder(&cluster.url())
        .namespace(ns)
        .connect()
        .await
        .expect("connecting to the cluster")
}

fn slot_of(ns: &str) -> u16 {
    redis_keyslot(format!("{{{ns}}}:jobs").as_bytes())
}

/// A namespace named after `test` whose slot the node `primary` serves.
fn namespace_on(cluster: &RedisCluster, test: &str, primary: usize) -> String {
    loop {
        let ns = unique_namespace(test);
        if cluster.primary_of_slot(slot_of(&ns)) == Some(primary) {
            return ns;
        }
    }
}

/// Runs of [`Count`], and of those, how many were not the job's first
/// attempt.
#[derive(Default)]
struct Counter(AtomicU32, AtomicU32);

#[derive(Serialize, Deserialize)]
struct Count;
impl TypedJob for Count {
    const NAME: &'static str = "c.count";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let counter = cx.service::<Arc<Counter>>().expect("counter");
        counter.0.fetch_add(1, Ordering::SeqCst);
        if cx.attempt() > 1 {
            counter.1.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct Refuse;
impl TypedJob for Refuse {
    const NAME: &'static str = "c.refuse";
    const MAX_ATTEMPTS: u32 = 1;
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        Err(JobError::fail("refused"))
    }
}

fn start_worker(
    queue: &RedisQueue,
    options: WorkOptions,
    counter: Arc<Counter>,
) -> (
    CancellationToken,
    JoinHandle<Result<WorkerReport, QueueError>>,
) {
    let mut registry = Registry::new();
    registry.add_job::<Count>().add_job::<Refuse>();
    let worker = Worker::new(queue.clone(), registry, options.schedules(false))
        .expect("options")
        .services(Services::new().with(counter));
    let stop = CancellationToken::new();
    (stop.clone(), tokio::spawn(worker.run(stop)))
}

/// Called by `EVALSHA`, each primary runs the scripts, and again after every
/// node's `SCRIPT FLUSH` (NOSCRIPT reloads them where needed).
#[tokio::test]
async fn every_primary_runs_the_scripts_and_reloads_them_after_a_flush() {
    every_primary_runs_the_scripts_again_after_a_flush(redq::ScriptCalls::Eval).await;
}

/// Called as Redis Functions, each primary gets the libraries at its first
/// call, and again after every node's `FUNCTION FLUSH`.
#[tokio::test]
async fn every_primary_runs_the_scripts_as_functions_and_reloads_them_after_a_flush() {
    every_primary_runs_the_scripts_again_after_a_flush(redq::ScriptCalls::Functions).await;
}

async fn every_primary_runs_the_scripts_again_after_a_flush(calls: redq::ScriptCalls) {
    let cluster = RedisCluster::shared();
    let functions = calls == redq::ScriptCalls::Functions;
    for primary in 0..3 {
        let ns = namespace_on(&cluster, "primaries", primary);
        let queue = RedisQueue::builder(&cluster.url())
            .namespace(&ns)
            .script_calls(calls)
            .connect()
            .await
            .expect("connecting to the cluster");
        queue
            .add("q", NewJob::new(serde_json::json!(1)))
            .await
            .unwrap();
        if functions {
            let enqueue = redq::lua::function_name("enqueue").unwrap();
            let listed = cluster.cli(primary, &["FUNCTION", "LIST", "LIBRARYNAME", enqueue]);
            assert!(listed.contains(enqueue), "primary {primary}: {listed}");
        }
        for node in 0..cluster.nodes().len() {
            if !functions {
                assert_eq!(cluster.cli(node, &["SCRIPT", "FLUSH"]).trim(), "OK");
            } else if cluster.cli(node, &["ROLE"]).starts_with("master") {
                // On the primaries: a replica refuses the write, and
                // follows its primary's flush.
                assert_eq!(cluster.cli(node, &["FUNCTION", "FLUSH"]).trim(), "OK");
            }
        }
        let jobs = queue.claim("q", 10, Duration::from_secs(30)).await.unwrap();
        assert_eq!(jobs.len(), 1, "namespace on primary {primary}");
        queue.ack(&jobs[0].lease()).await.unwrap();
        let counts = queue.counts("q").await.unwrap();
        assert_eq!((counts.waiting, counts.leased), (0, 0));
    }
}

#[tokio::test]
async fn an_idle_worker_on_a_cluster_wakes_on_enqueue_without_polling() {
    let cluster = RedisCluster::shared();
    // The wake channel is published on the namespace's primary; the
    // subscriber connects wherever fred puts it. Try each primary.
    for primary in 0..3 {
        let queue = connect(&cluster, &namespace_on(&cluster, "wake", primary)).await;
        let counter = Arc::new(Counter::default());
        // Hand-off off: the enqueue must wake the worker, not lease to it.
        let options = WorkOptions::new()
            .queues(["default"])
            .max_idle(Duration::from_secs(3600))
            .handoff(false);
        let (stop, handle) = start_worker(&queue, options, counter.clone());
        wait_until(
            DEADLINE,
            "the worker to subscribe to wake-ups",
            async || cluster.subscribers(&queue.wake_channel()) == 1,
        )
        .await;
        JobQueue::new(queue.clone()).push(&Count).await.unwrap();
        wait_until(
            Duration::from_secs(5),
            "the idle worker to run the new job",
            async || counter.0.load(Ordering::SeqCst) == 1,
        )
        .await;
        stop.cancel();
        let report = handle.await.unwrap().unwrap();
        assert_eq!(report.processed, 1);
    }
}

/// Wake-ups and hand-offs stay on the namespace's shard (lua/lib/notify.lua):
/// an idle worker, parked or not, starts each new job, and its primary sends
/// no PUBLISH over the cluster bus, which would cost every other node (5
/// here) CPU for each job; its shard messages go to its replica alone. A
/// cluster of its own: the bus counters are the whole node's.
#[tokio::test]
async fn wake_ups_and_hand_offs_stay_on_the_namespaces_shard() {
    let cluster = RedisCluster::start();
    // A shard message goes to the replicas node 0 knows of, and a fresh
    // cluster's primaries learn of theirs a moment after it is up.
    wait_until(DEADLINE, "node 0 to know its replica", async || {
        cluster.replica_of(0).is_some()
    })
    .await;
    for handoff in [false, true] {
        let queue = connect(&cluster, &namespace_on(&cluster, "shard-wake", 0)).await;
        let counter = Arc::new(Counter::default());
        let options = WorkOptions::new()
            .queues(["default"])
            .max_idle(Duration::from_secs(3600))
            .handoff(handoff);
        let (stop, handle) = start_worker(&queue, options, counter.clone());
        wait_until(
            DEADLINE,
            "the worker to listen on its primary, both kinds",
            async || {
                cluster.subscribers_on(0, &queue.wake_channel()) == 1
                    && cluster.shard_subscribers_on(0, &queue.wake_channel()) == 1
            },
        )
        .await;
        let plain = cluster.bus_messages_sent(0, "publish");
        let shard = cluster.bus_messages_sent(0, "publishshard");
        for n in 1..=5 {
            JobQueue::new(queue.clone()).push(&Count).await.unwrap();
            wait_until(DEADLINE, "the idle worker to run the new job", async || {
                counter.0.load(Ordering::SeqCst) == n
            })
            .await;
        }
        assert_eq!(
            cluster.bus_messages_sent(0, "publish") - plain,
            0,
            "hand-off {handoff}: nothing published plainly"
        );
        assert!(
            cluster.bus_messages_sent(0, "publishshard") - shard >= 5,
            "hand-off {handoff}: each job's message went to the replica"
        );
        stop.cancel();
        assert_eq!(handle.await.unwrap().unwrap().processed, 5);
    }
}

/// A manual failover (`CLUSTER FAILOVER TAKEOVER`) moves the namespace's
/// slot to the replica and leaves the old primary's connections up; the server ends their shard
/// subscriptions there with an `sunsubscribe` that fred does not pass on.
/// The worker's listener finds its hand-off channel unsubscribed (it checks
/// every 5 s, driver/src/worker/wake.rs), subscribes on the new primary, and
/// parked or not it starts each new job again.
#[tokio::test]
async fn after_a_manual_failover_the_worker_listens_on_the_new_primary() {
    let cluster = RedisCluster::start();
    let ns = namespace_on(&cluster, "shard-failover", 0);
    let queue = connect(&cluster, &ns).await;
    let counter = Arc::new(Counter::default());
    let options = WorkOptions::new()
        .queues(["default"])
        .max_idle(Duration::from_secs(3600));
    let (stop, handle) = start_worker(&queue, options, counter.clone());
    let wake = queue.wake_channel();
    wait_until(DEADLINE, "the worker to listen on its shard", async || {
        cluster.shard_subscribers_on(0, &wake) == 1
    })
    .await;
    wait_until(DEADLINE, "node 0 to know its replica", async || {
        cluster.replica_of(0).is_some()
    })
    .await;
    let replica = cluster.replica_of(0).unwrap();
    // TAKEOVER: promoted at once, without the handshake with its primary
    // that a plain manual failover needs and gives up after 5 s (CI's busy
    // cluster gave it up); the old primary learns of it from the bus, keeps
    // its connections and ends its shard subscriptions the same way.
    assert_eq!(
        cluster
            .cli(replica, &["CLUSTER", "FAILOVER", "TAKEOVER"])
            .trim(),
        "OK"
    );
    wait_until(DEADLINE, "the replica to serve the slot", async || {
        cluster.primary_of_slot(slot_of(&ns)) == Some(replica)
    })
    .await;
    // Two of the listener's 5 s checks, and room for a busy machine.
    wait_until(
        Duration::from_secs(20),
        "the worker to listen on the new primary",
        async || cluster.shard_subscribers_on(replica, &wake) == 1,
    )
    .await;
    for n in 1..=3 {
        JobQueue::new(queue.clone()).push(&Count).await.unwrap();
        wait_until(DEADLINE, "the idle worker to run the new job", async || {
            counter.0.load(Ordering::SeqCst) == n
        })
        .await;
    }
    stop.cancel();
    assert_eq!(handle.await.unwrap().unwrap().processed, 3);
}

/// A hand-off made after a manual failover moved the namespace's slot, and
/// before the worker's listener noticed (it checks every 5 s), is published
/// on the new primary, where the worker has no shard subscription yet: it
/// reaches no one. The worker finds the job when it leaves its park and
/// gives it back, so the job runs on its first attempt within seconds, not
/// after its two-minute lease with an attempt counted
/// (driver/src/worker/unheard.rs).
#[tokio::test]
async fn a_hand_off_lost_in_a_failover_runs_on_its_first_attempt_without_waiting_for_the_lease() {
    let cluster = RedisCluster::start();
    let ns = namespace_on(&cluster, "lost-in-failover", 0);
    let queue = connect(&cluster, &ns).await;
    let counter = Arc::new(Counter::default());
    let options = WorkOptions::new()
        .queues(["default"])
        .max_idle(Duration::from_secs(3600))
        .lease(Duration::from_secs(120));
    let (stop, handle) = start_worker(&queue, options, counter.clone());
    let wake = queue.wake_channel();
    let parked = format!("{{{ns}}}:q:default:parked");
    let park_left = |node: usize| -> i64 {
        let reply = cluster.cli(node, &["PTTL", &parked]);
        reply.trim().parse().unwrap_or(-2)
    };
    let mut primary = 0;
    wait_until(DEADLINE, "the worker to listen on its shard", async || {
        cluster.shard_subscribers_on(primary, &wake) == 1
    })
    .await;
    // Each try moves the slot to the replica and pushes a job at once. A
    // try whose listener followed the slot before the push (its check fell
    // in between) proves nothing: its job is heard and runs, and the next
    // try moves the slot back.
    let push = JobQueue::new(queue.clone());
    let mut pushed = 0;
    let lost = loop {
        assert!(
            pushed < 4,
            "the listener followed the slot before every push"
        );
        wait_until(DEADLINE, "the worker to park", async || {
            park_left(primary) >= 1000
        })
        .await;
        wait_until(DEADLINE, "the primary to know its replica", async || {
            cluster.replica_of(primary).is_some()
        })
        .await;
        let replica = cluster.replica_of(primary).unwrap();
        let takeover = cluster.cli(replica, &["CLUSTER", "FAILOVER", "TAKEOVER"]);
        assert_eq!(takeover.trim(), "OK");
        wait_until(DEADLINE, "the replica to serve the slot", async || {
            cluster.primary_of_slot(slot_of(&ns)) == Some(replica)
        })
        .await;
        primary = replica;
        // While the nodes agree on the move, a push may be redirected until
        // the client gives up: refused before it ran, so pushed again.
        let mut id = None;
        wait_until(DEADLINE, "a push to go through", async || {
            id = push.push(&Count).await.ok().map(|p| p.id().to_owned());
            id.is_some()
        })
        .await;
        pushed += 1;
        let id = id.unwrap();
        let state = queue.inspect(&id).await.unwrap().map(|job| job.state);
        // Subscriptions only come back: none now, none when the job was
        // handed.
        let unheard = cluster.shard_subscribers_on(primary, &wake) == 0;
        if state == Some(redq::JobState::Leased) && unheard {
            break id;
        }
        wait_until(
            Duration::from_secs(20),
            "the worker to listen on the new primary",
            async || cluster.shard_subscribers_on(primary, &wake) == 1,
        )
        .await;
        wait_until(DEADLINE, "the try's job to run", async || {
            counter.0.load(Ordering::SeqCst) == pushed
        })
        .await;
    };
    wait_until(
        Duration::from_secs(30),
        "the lost hand-off to run",
        async || counter.0.load(Ordering::SeqCst) == pushed,
    )
    .await;
    assert_eq!(counter.1.load(Ordering::SeqCst), 0, "on its first attempt");
    let given_back: Vec<String> = latest_of_kind(&queue, EventKind::HandoffLost)
        .await
        .into_iter()
        .map(|e| e.job_id)
        .collect();
    // An earlier try's job may have been lost too (its listener back
    // between the hand-off and the check): this one is there, once.
    assert_eq!(
        given_back.iter().filter(|id| **id == lost).count(),
        1,
        "recorded as a lost hand-off: {given_back:?}"
    );
    let counted = queue.metric_totals("default").await.unwrap().handoffs_lost;
    assert_eq!(
        counted,
        given_back.len() as u64,
        "each give-back counted once for the queue's alarm"
    );
    stop.cancel();
    assert_eq!(handle.await.unwrap().unwrap().processed, pushed as u64);
}

#[tokio::test]
async fn many_jobs_run_on_workers_over_a_cluster() {
    let cluster = RedisCluster::shared();
    let queue = connect(&cluster, &unique_namespace("many")).await;
    let push = JobQueue::new(queue.clone());
    for _ in 0..200 {
        push.push(&Count).await.unwrap();
    }
    let counter = Arc::new(Counter::default());
    let options = WorkOptions::new().queues(["default"]).concurrency(8);
    let workers: Vec<_> = (0..2)
        .map(|_| start_worker(&queue, options.clone(), counter.clone()))
        .collect();
    wait_until(DEADLINE, "every job to run", async || {
        counter.0.load(Ordering::SeqCst) >= 200
    })
    .await;
    let mut processed = 0;
    for (stop, handle) in workers {
        stop.cancel();
        processed += handle.await.unwrap().unwrap().processed;
    }
    assert_eq!(processed, 200);
    assert_eq!(counter.0.load(Ordering::SeqCst), 200, "each ran once");
    let counts = queue.counts("default").await.unwrap();
    assert_eq!((counts.waiting, counts.leased, counts.dead), (0, 0, 0));
}

#[tokio::test]
async fn dead_letters_events_requeue_and_operator_calls_work_on_a_cluster() {
    let cluster = RedisCluster::shared();
    let queue = connect(&cluster, &unique_namespace("operator")).await;
    let id = JobQueue::new(queue.clone())
        .push(&Refuse)
        .await
        .unwrap()
        .id()
        .to_owned();
    let (stop, handle) = start_worker(
        &queue,
        WorkOptions::new().queues(["default"]),
        Arc::default(),
    );
    wait_until(DEADLINE, "the job to be dead-lettered", async || {
        queue.counts("default").await.unwrap().dead == 1
    })
    .await;
    stop.cancel();
    handle.await.unwrap().unwrap();

    let events = queue
        .events(10)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .collect::<Vec<_>>();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].job_id, id);
    let dead = queue.dead_letters("default", 0, 10).await.unwrap();
    assert_eq!(dead.total, 1);
    assert_eq!(queue.queues().await.unwrap(), ["default"]);
    assert!(!queue.stats("default").await.unwrap().is_empty());
    queue.pause("default").await.unwrap();
    assert!(queue.counts("default").await.unwrap().paused);
    queue.resume("default").await.unwrap();
    let requeued = queue.requeue_all_dead("default", |_, _| {}).await.unwrap();
    assert_eq!(requeued, 1);
    assert_eq!(queue.counts("default").await.unwrap().waiting, 1);
    let stats = queue.server_stats().await.unwrap();
    assert!(stats.used_memory_bytes > 0);

    queue
        .upsert_schedule(Schedule::new("hourly", "default", "0 0 * * * *"))
        .await
        .unwrap();
    assert_eq!(queue.list_schedules().await.unwrap().len(), 1);
    queue.trigger_schedule("hourly").await.unwrap();
    assert_eq!(queue.counts("default").await.unwrap().waiting, 2);
}

/// `server_stats` reads the primary that holds the namespace (the bench's
/// Redis CPU and memory a job come from it): 64 MB put on one primary show
/// in the figures of a namespace there, and not in those of a namespace on
/// another. It used to ask any node.
#[tokio::test]
async fn server_stats_read_the_namespaces_own_primary() {
    const FILLER: u64 = 64 << 20;
    let cluster = RedisCluster::shared();
    let there = connect(&cluster, &namespace_on(&cluster, "stats-there", 0)).await;
    let elsewhere = connect(&cluster, &namespace_on(&cluster, "stats-else", 1)).await;
    let filler = format!("{{{}}}:filler", there.namespace());
    let offset = (FILLER - 1).to_string();
    assert_eq!(
        cluster.cli(0, &["SETRANGE", &filler, &offset, "x"]).trim(),
        FILLER.to_string()
    );
    for _ in 0..5 {
        let used_there = there.server_stats().await.unwrap().used_memory_bytes;
        let used_elsewhere = elsewhere.server_stats().await.unwrap().used_memory_bytes;
        assert!(used_there > FILLER, "the filler's primary: {used_there}");
        assert!(used_elsewhere < FILLER, "another primary: {used_elsewhere}");
    }
    cluster.cli(0, &["DEL", &filler]);
}

#[tokio::test]
async fn cluster_and_sentinel_schemes_are_accepted_and_others_refused() {
    let cluster = RedisCluster::shared();
    // A single seed node is enough: fred learns the rest from CLUSTER SLOTS.
    let one_seed = format!("redis-cluster://{}", cluster.nodes()[4].addr());
    let queue = RedisQueue::builder(&one_seed)
        .namespace(unique_namespace("seed"))
        .connect()
        .await
        .unwrap();
    queue
        .add("q", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();

    match RedisQueue::connect("redis-sentinel://127.0.0.1:1").await {
        Err(QueueError::Config(message)) => {
            assert!(message.contains("sentinel"), "{message}")
        }
        other => panic!("a sentinel URL without a service name: {other:?}"),
    }
    match RedisQueue::connect("memcached://127.0.0.1:1").await {
        Err(QueueError::Config(message)) => {
            assert!(message.contains("redis-cluster://"), "{message}")
        }
        other => panic!("an unknown scheme: {other:?}"),
    }
}

/// Waiting for a kept result hears the job finish while every other
/// primary hangs: the wait subscribes on its namespace's own primary, where
/// fred would send it to the primary of its client id's slot, any of the
/// three, and a hung one would leave the wait to its deadline.
#[tokio::test]
async fn wait_for_hears_a_finish_while_the_other_primaries_hang() {
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    let ns = unique_namespace("wait-hung");
    let queue = connect(&cluster, &ns).await;
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let job = queue
        .add("q", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let own = cluster
        .primary_of_slot(slot_of(&ns))
        .expect("a primary serves the slot");
    let waiter = {
        let queue = queue.clone();
        let id = job.id().to_owned();
        tokio::spawn(async move { queue.wait_for(&id, Duration::from_secs(60)).await })
    };
    wait_until(
        DEADLINE,
        "the wait to subscribe on its namespace's primary",
        async || cluster.subscribers_on(own, &queue.finished_channel()) == 1,
    )
    .await;
    // The primaries of a slot in each third of the slot space: all three.
    let primaries: BTreeSet<usize> = [0, 5461, 10923]
        .into_iter()
        .map(|slot| {
            cluster
                .primary_of_slot(slot)
                .expect("a primary serves the slot")
        })
        .collect();
    assert_eq!(primaries.len(), 3, "three primaries: {primaries:?}");
    let others = primaries.into_iter().filter(|&primary| primary != own);
    let _frozen: Vec<_> = others.map(|p| cluster.freeze(p)).collect();
    let held = queue
        .claim("q", 1, Duration::from_secs(30))
        .await
        .unwrap()
        .remove(0);
    queue
        .ack_with(&held.lease(), Completion::new().result(&"done").unwrap())
        .await
        .unwrap();
    let outcome = tokio::time::timeout(DEADLINE, waiter)
        .await
        .expect("the finish heard, not the wait's deadline")
        .unwrap()
        .unwrap();
    let JobResult::Kept(kept) = outcome else {
        panic!("not kept: {outcome:?}");
    };
    assert_eq!(kept.result, Some(serde_json::json!("done")));
}

/// A primary down (not failed over yet): the connect fails, and since the
/// client does not say which node refused, the error says that every
/// primary is reached, not only the URL's nodes, and that waiting may
/// cure it.
#[tokio::test]
async fn a_cluster_connect_with_a_primary_down_says_every_primary_is_reached() {
    let cluster = RedisCluster::start_with(Duration::from_secs(60));
    cluster.kill9(2);
    let err = RedisQueue::builder(&cluster.url())
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect_err("a primary is down");
    let fault = err.connection_fault();
    assert!(
        fault.is_some_and(redq::ConnectionFault::is_transient),
        "{fault:?}: {err}"
    );
    let said = err.to_string();
    assert!(said.contains("every primary the cluster names"), "{said}");
}
