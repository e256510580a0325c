//! The checker is not vacuous: histories made by deliberately broken
//! variants of the scripts (ack without fencing, reclaim on the client's
//! clock, a claim that does not remove what it hands out, a nack that loses
//! the job or forgets the attempt, an enqueue that ignores ordering keys)
//! are caught, while the same steps with the shipped scripts pass. The
//! variants are built here from `lua/` with patches and run through
//! `EVALSHA`; none of them ships. The structural check is shown to catch
//! hand-made corruptions of the keys the same way.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fred::interfaces::{HashesInterface, ListInterface, SortedSetsInterface};
use fred::types::Value;
use redq_tests::history::meta::Meta;
use redq_tests::history::raw::RawQueue;
use redq_tests::history::{self, Dump, Expect, JobSpec, Recorder, Report, ServerLog};
use redq_tests::lua::patched;
use redq_tests::{unique_namespace, RedisServer};

const QUEUE: &str = "q";

/// A server, a namespace, a MONITOR on it, and two raw clients: `a` with
/// the shipped scripts and `b` with `overrides` (or the shipped ones).
struct Bench {
    server: RedisServer,
    ns: String,
    log: ServerLog,
    a: RawQueue,
    b: RawQueue,
}

impl Bench {
    async fn new(overrides: &[(&str, String)]) -> Bench {
        let server = RedisServer::start();
        let ns = unique_namespace("checker");
        let log = ServerLog::start(server.port(), None).await;
        let a = RawQueue::new(server.client().await, &ns, QUEUE, Recorder::new(1), &[]).await;
        let b = RawQueue::new(
            server.client().await,
            &ns,
            QUEUE,
            Recorder::new(2),
            overrides,
        )
        .await;
        Bench {
            server,
            ns,
            log,
            a,
            b,
        }
    }

    async fn finish(self, expect: Expect) -> Report {
        let mut entries = self.a.recorder.entries();
        entries.extend(self.b.recorder.entries());
        let client = self.server.client().await;
        let report = history::finish(
            &client,
            &self.ns,
            self.server.port(),
            None,
            Some(self.log),
            &entries,
            expect,
        )
        .await;
        println!("{report}");
        report
    }
}

fn drained() -> Expect {
    Expect {
        drained: true,
        no_requeue: true,
    }
}

fn job(tag: &str) -> JobSpec {
    JobSpec::new(tag)
}

/// A holds a lease that lapses; B claims the job; A's late ack arrives.
async fn stale_ack(broken: bool) -> Report {
    let ack = patched(
        "ack",
        &[(
            "if m[M.queue] ~= QUEUE or not lease_matches(m, leases[i]) then",
            "if m[M.queue] ~= QUEUE then",
        )],
    );
    let bench = Bench::new(&[("ack", ack)]).await;
    let (a, b) = if broken {
        (&bench.b, &bench.a)
    } else {
        (&bench.a, &bench.b)
    };
    a.enqueue(&[job("t1")]).await;
    let stale = a.claim(1, 100, &[]).await.remove(0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let current = b.claim(1, 10_000, &[]).await.remove(0);
    assert_eq!(current.id, stale.id);
    a.ack(&stale.id, stale.lease).await;
    b.ack(&current.id, current.lease).await;
    bench.finish(drained()).await
}

#[tokio::test]
async fn an_ack_without_fencing_is_caught() {
    stale_ack(false).await.assert_ok();
    let report = stale_ack(true).await;
    assert!(report.found("was accepted but lease"), "{report}");
    assert!(report.found("(stale ack accepted)"), "{report}");
}

fn client_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// B's claim runs on B's clock, 30 s fast, instead of Redis's.
async fn client_clock(broken: bool) -> Report {
    let claim = patched(
        "claim",
        &[("local now = now_ms()", "local now = tonumber(ARGV[7])")],
    );
    let overrides = [("claim", claim)];
    let bench = Bench::new(if broken { &overrides[..] } else { &[] }).await;
    bench.a.enqueue(&[job("t1")]).await;
    let held = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let skewed = Value::from((client_now_ms() + 30_000).to_string());
    let taken = bench.b.claim(1, 5_000, &[skewed]).await;
    assert_eq!(taken.len(), broken as usize);
    bench.a.ack(&held.id, held.lease).await;
    if let Some(t) = taken.first() {
        bench.b.ack(&t.id, t.lease).await;
    }
    bench.finish(drained()).await
}

#[tokio::test]
async fn a_reclaim_on_the_client_clock_is_caught() {
    client_clock(false).await.assert_ok();
    let report = client_clock(true).await;
    assert!(report.found("early reclaim"), "{report}");
}

/// A claim that reads the head of the queue without removing it.
async fn double_claim(broken: bool) -> Report {
    // Plain jobs wait in the fifo list, so the pop to break is the list's.
    let claim = patched(
        "claim",
        &[(
            "redis.call('LPOP', K.fifo, limit)",
            "redis.call('LRANGE', K.fifo, 0, limit - 1)",
        )],
    );
    let overrides = [("claim", claim)];
    let bench = Bench::new(if broken { &overrides[..] } else { &[] }).await;
    bench.a.enqueue(&[job("t1"), job("t2")]).await;
    let mut held = bench.b.claim(1, 5_000, &[]).await;
    held.extend(bench.b.claim(1, 5_000, &[]).await);
    for h in &held {
        bench.b.ack(&h.id, h.lease).await;
    }
    // Whatever is left is finished with the shipped scripts.
    for h in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&h.id, h.lease).await;
    }
    bench.finish(drained()).await
}

#[tokio::test]
async fn a_claim_that_hands_a_job_out_twice_is_caught() {
    double_claim(false).await.assert_ok();
    let report = double_claim(true).await;
    assert!(report.found("two live leases"), "{report}");
    assert!(report.found("granted over live lease"), "{report}");
}

/// A nack that deletes the job instead of requeueing it.
async fn lost_on_nack(broken: bool) -> Report {
    let nack = patched(
        "nack",
        &[(
            "  if place(id, m, due, now) then redis.call('PUBLISH', CHANNEL, QUEUE) end",
            // The payload lives in the record, so this drops the whole job.
            "  redis.call('HDEL', K.jobs, id)",
        )],
    );
    let bench = Bench::new(&[("nack", nack)]).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1"), job("t2")]).await;
    for j in worker.claim(2, 5_000, &[]).await {
        worker.nack(&j.id, j.lease, 0, false).await;
    }
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

#[tokio::test]
async fn a_nack_that_loses_the_job_is_caught() {
    lost_on_nack(false).await.assert_ok();
    let report = lost_on_nack(true).await;
    assert!(report.found("was lost"), "{report}");
    assert_eq!(report.get("lost"), 2);
}

/// A nack that does not count the failed attempt.
async fn uncounted_attempt(broken: bool) -> Report {
    let nack = patched(
        "nack",
        &[(
            "m[M.attempts] = m[M.attempts] + 1",
            "m[M.attempts] = m[M.attempts] + 0",
        )],
    );
    let bench = Bench::new(&[("nack", nack)]).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let first = worker.claim(1, 5_000, &[]).await.remove(0);
    worker.nack(&first.id, first.lease, 0, false).await;
    let second = bench.a.claim(1, 5_000, &[]).await.remove(0);
    bench.a.ack(&second.id, second.lease).await;
    bench.finish(drained()).await
}

#[tokio::test]
async fn a_nack_that_forgets_the_attempt_is_caught() {
    uncounted_attempt(false).await.assert_ok();
    let report = uncounted_attempt(true).await;
    assert!(report.found("(expected +1)"), "{report}");
    assert!(report.found("its nack reported 0"), "{report}");
}

/// An enqueue that lets every job of an ordering key through at once.
async fn ordering_ignored(broken: bool) -> Report {
    let enqueue = patched(
        "enqueue",
        &[(
            "if holder and holder ~= id and redis.call('HEXISTS', K.jobs, holder) == 1 then",
            "if false then",
        )],
    );
    let bench = Bench::new(&[("enqueue", enqueue)]).await;
    let producer = if broken { &bench.b } else { &bench.a };
    let keyed = |tag: &str| JobSpec {
        ordering_key: "k".into(),
        ..JobSpec::new(tag)
    };
    producer.enqueue(&[keyed("first"), keyed("second")]).await;
    let mut held = bench.a.claim(2, 5_000, &[]).await;
    // Finish the later job first when it was handed out too.
    held.reverse();
    for j in held {
        bench.a.ack(&j.id, j.lease).await;
    }
    for j in bench.a.claim(2, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

#[tokio::test]
async fn an_enqueue_that_ignores_ordering_keys_is_caught() {
    ordering_ignored(false).await.assert_ok();
    let report = ordering_ignored(true).await;
    assert!(report.found("leased while job"), "{report}");
    assert!(report.found("finished after job"), "{report}");
}

/// The client-side checks alone (no server record) catch a job completed
/// twice and a job that vanished.
#[test]
fn client_histories_alone_catch_double_completion_and_loss() {
    use redq_tests::history::record::{Call, Claimed, Entry, Reply};
    let entry = |seq, call, reply| Entry {
        process: 1,
        seq,
        invoked_us: seq,
        completed_us: Some(seq),
        call,
        reply: Some(reply),
    };
    let entries = vec![
        entry(
            0,
            Call::Enqueue {
                queue: QUEUE.into(),
                tags: vec!["a".into(), "b".into()],
                keys: vec![String::new(), String::new()],
            },
            Reply::Enqueued {
                ids: vec![("A".into(), true), ("B".into(), true)],
            },
        ),
        entry(
            1,
            Call::Claim {
                queue: QUEUE.into(),
                limit: 1,
                lease_ms: 1000,
            },
            Reply::Claimed {
                jobs: vec![Claimed {
                    id: "A".into(),
                    tag: "a".into(),
                    lease: 1,
                    attempts: 0,
                    expiry_ms: 2000,
                    ordering_key: String::new(),
                }],
            },
        ),
        entry(
            2,
            Call::Ack {
                id: "A".into(),
                lease: 1,
            },
            Reply::Acked { completed: true },
        ),
        entry(
            3,
            Call::Ack {
                id: "A".into(),
                lease: 1,
            },
            Reply::Acked { completed: true },
        ),
    ];
    let report = history::check(&entries, None, &Dump::default(), drained());
    assert!(report.found("completed 2 times"), "{report}");
    assert!(report.found("job B (b) was lost"), "{report}");
}

/// Hand-made corruptions of a sound namespace are each reported.
#[tokio::test]
async fn the_structural_check_catches_corrupted_keys() {
    let bench = Bench::new(&[]).await;
    let keyed = |tag: &str| JobSpec {
        ordering_key: "k".into(),
        ..JobSpec::new(tag)
    };
    let ids = bench
        .a
        .enqueue(&[job("w"), job("l"), keyed("k1"), keyed("k2"), job("w2")])
        .await;
    bench.a.claim(1, 60_000, &[]).await;
    let client = bench.server.client().await;
    let ns = bench.ns.clone();
    assert_eq!(
        history::check_namespace(&client, &ns).await,
        Vec::<String>::new()
    );

    let key = |s: &str| format!("{{{ns}}}:{s}");
    let (waiting, scheduled) = (key("q:q:waiting"), key("q:q:scheduled"));
    let fifo = key("q:q:fifo");
    // The plain jobs wait in the fifo list, the claimed one ("w") popped
    // from its head; the keyed one waits in the zset.
    let listed: Vec<String> = client.lrange(&fifo, 0, -1).await.unwrap();
    assert_eq!(listed, [ids[1].clone(), ids[4].clone()]);
    let expect_caught = |what: &'static str, needle: &'static str| {
        let client = client.clone();
        let ns = ns.clone();
        async move {
            let found = history::check_namespace(&client, &ns).await;
            assert!(
                found.iter().any(|v| v.contains(needle)),
                "{what}: expected a violation containing {needle:?}, got {found:?}"
            );
        }
    };
    // A job in two states at once.
    let _: i64 = client
        .zadd(&scheduled, None, None, false, false, (1.0, ids[2].as_str()))
        .await
        .unwrap();
    expect_caught("two states", "expected exactly one").await;
    let _: i64 = client.zrem(&scheduled, ids[2].as_str()).await.unwrap();
    // A payload gone: the record cut back to its msgpack meta.
    let record: Vec<u8> = client.hget(key("jobs"), ids[2].as_str()).await.unwrap();
    let (_, payload) = Meta::split(&record).expect("a decodable record");
    assert!(!payload.is_empty(), "the record carries its payload");
    let meta_only = record[..record.len() - payload.len()].to_vec();
    let _: i64 = client
        .hset(key("jobs"), (ids[2].as_str(), meta_only))
        .await
        .unwrap();
    expect_caught("missing payload", "record without payload").await;
    let _: i64 = client
        .hset(key("jobs"), (ids[2].as_str(), record))
        .await
        .unwrap();
    // A fifo job also in the waiting zset.
    let _: i64 = client
        .zadd(&waiting, None, None, false, false, (1.0, ids[1].as_str()))
        .await
        .unwrap();
    expect_caught("fifo and zset", "expected exactly one").await;
    let _: i64 = client.zrem(&waiting, ids[1].as_str()).await.unwrap();
    // The fifo out of sequence order.
    let _: i64 = client.lrem(&fifo, 1, ids[1].as_str()).await.unwrap();
    let _: i64 = client.rpush(&fifo, ids[1].as_str()).await.unwrap();
    expect_caught("fifo order", "out of order").await;
    let _: i64 = client.lrem(&fifo, 1, ids[1].as_str()).await.unwrap();
    let _: i64 = client.lpush(&fifo, ids[1].as_str()).await.unwrap();
    // A keyed job in the fifo (moved there from the zset): claim would
    // bypass its ordering key.
    let score: f64 = client.zscore(&waiting, ids[2].as_str()).await.unwrap();
    let _: i64 = client.zrem(&waiting, ids[2].as_str()).await.unwrap();
    let _: i64 = client.rpush(&fifo, ids[2].as_str()).await.unwrap();
    expect_caught("keyed job in the fifo", "has ordering key").await;
    let _: Option<String> = client.rpop(&fifo, None).await.unwrap();
    let _: i64 = client
        .zadd(&waiting, None, None, false, false, (score, ids[2].as_str()))
        .await
        .unwrap();
    // A fifo entry without a job.
    let _: i64 = client.rpush(&fifo, "ghost").await.unwrap();
    expect_caught("fifo orphan", "which has no record").await;
    let _: i64 = client.lrem(&fifo, 1, "ghost").await.unwrap();
    // An index entry without a job.
    let _: i64 = client
        .zadd(&waiting, None, None, false, false, (1.0, "ghost"))
        .await
        .unwrap();
    expect_caught("orphan", "which has no record").await;
    let _: i64 = client.zrem(&waiting, "ghost").await.unwrap();
    // A wrong blocked counter.
    let _: i64 = client
        .hincrby(key("ord:blocked:n"), QUEUE, 1)
        .await
        .unwrap();
    expect_caught("blocked counter", "blocked counter").await;
    let _: i64 = client
        .hincrby(key("ord:blocked:n"), QUEUE, -1)
        .await
        .unwrap();
    assert_eq!(
        history::check_namespace(&client, &ns).await,
        Vec::<String>::new()
    );
}
