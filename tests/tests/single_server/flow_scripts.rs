//! Flow control at the script level (lib/flow.lua): the scripts called raw,
//! as the driver will call them, checking the invariants the limits promise:
//! never more leased than a limit per key and per queue, a freed slot lets
//! exactly the next held job out, a stale holder frees nothing, a rate window
//! starts exactly its max, a push-back holds its limiter until its time, and
//! a claim's cost does not grow with the held jobs of a key without room.

use std::collections::HashMap;
use std::time::Duration;

use fred::clients::Client;
use fred::types::Value;
use redq_tests::history::meta::Meta;
use redq_tests::lua::{self, EnqueueJob};
use redq_tests::{unique_namespace, wait_until, RedisServer};

const LONG_LEASE: &str = "600000";

/// One queue of one namespace, its scripts loaded, called raw.
struct Raw {
    client: Client,
    ns: String,
    queue: &'static str,
    shas: HashMap<&'static str, String>,
    seq: usize,
}

/// What a test enqueues of a job.
#[derive(Default, Clone, Copy)]
struct Job<'a> {
    limit_key: &'a str,
    ordering_key: &'a str,
    priority: u8,
    delay_ms: u64,
}

/// A leased job as a claim reply shows it.
#[derive(Debug, Clone)]
struct Leased {
    id: String,
    lease: u64,
    key: String,
}

fn int(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("expected an integer, got {v:?}"))
}

fn text(v: &Value) -> String {
    v.as_string()
        .unwrap_or_else(|| panic!("expected text, got {v:?}"))
}

fn items(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => panic!("expected an array, got {other:?}"),
    }
}

impl Raw {
    async fn new(server: &RedisServer, test: &str) -> Raw {
        let client = server.client().await;
        let mut shas = HashMap::new();
        for name in [
            "enqueue",
            "claim",
            "ack",
            "nack",
            "release",
            "limits_set",
            "limits_get",
            "counts",
            "inspect",
            "list_jobs",
            "cancel",
            "delete_job",
            "promote_job",
            "edit_job",
            "next_due",
            "limits_wake",
            "requeue_dead",
        ] {
            shas.insert(
                name,
                lua::load(&client, &lua::compose(lua::source(name))).await,
            );
        }
        Raw {
            client,
            ns: unique_namespace(test),
            queue: "q",
            shas,
            seq: 0,
        }
    }

    async fn run(&self, name: &str, args: Vec<Value>) -> Value {
        lua::evalsha(&self.client, &self.shas[name], &self.ns, self.queue, &args)
            .await
            .unwrap_or_else(|e| panic!("{name} {args:?}: {e}"))
    }

    /// Enqueues one job per limit key given ("" = none); returns the ids.
    async fn enqueue(&mut self, keys: &[&str]) -> Vec<String> {
        let jobs: Vec<Job> = keys
            .iter()
            .map(|key| Job {
                limit_key: key,
                ..Job::default()
            })
            .collect();
        self.enqueue_jobs(&jobs).await
    }

    /// Enqueues the jobs described; returns their ids.
    async fn enqueue_jobs(&mut self, jobs: &[Job<'_>]) -> Vec<String> {
        let mut ids = Vec::new();
        for chunk in jobs.chunks(1000) {
            let mut args: Vec<Value> = vec![
                "1000000".into(),
                chunk.len().to_string().into(),
                "".into(), // no gate
                "".into(),
                "".into(), // standard records
            ];
            for spec in chunk {
                self.seq += 1;
                let id = format!("job-{:06}", self.seq);
                let job = EnqueueJob {
                    id: &id,
                    payload: "1",
                    priority: spec.priority,
                    delay_ms: spec.delay_ms,
                    dedup_key: "",
                    ordering_key: spec.ordering_key,
                    max_attempts: 0,
                    backoff_base_ms: 0,
                    backoff_cap_ms: 0,
                    limit_key: spec.limit_key,
                };
                args.extend(job.argv());
                ids.push(id);
            }
            self.run("enqueue", args).await;
        }
        ids
    }

    async fn claim_for(&self, limit: usize, lease_ms: &str) -> Vec<Leased> {
        let reply = items(
            self.run(
                "claim",
                vec![
                    limit.to_string().into(),
                    lease_ms.into(),
                    "1".into(),
                    "1".into(),
                ],
            )
            .await,
        );
        reply[1..]
            .chunks(2)
            .map(|pair| {
                let raw = pair[1].as_bytes().expect("a record").to_vec();
                let meta = Meta::decode(&raw).expect("a job record");
                Leased {
                    id: text(&pair[0]),
                    lease: meta.lease_id,
                    key: meta.limit_key,
                }
            })
            .collect()
    }

    async fn claim(&self, limit: usize) -> Vec<Leased> {
        self.claim_for(limit, LONG_LEASE).await
    }

    async fn ack(&self, job: &Leased) -> i64 {
        let reply = items(
            self.run(
                "ack",
                vec![
                    "1".into(),
                    job.id.clone().into(),
                    job.lease.to_string().into(),
                ],
            )
            .await,
        );
        int(&reply[0])
    }

    async fn nack(&self, job: &Leased, delay_ms: u64, dead: bool) -> i64 {
        let args: Vec<Value> = vec![
            job.id.clone().into(),
            job.lease.to_string().into(),
            delay_ms.to_string().into(),
            "failed".into(),
            (dead as u8).to_string().into(),
        ];
        int(&items(self.run("nack", args).await)[0])
    }

    async fn release(&self, job: &Leased, pushback_ms: Option<u64>) -> i64 {
        let mut args: Vec<Value> = vec![job.id.clone().into(), job.lease.to_string().into()];
        if let Some(ms) = pushback_ms {
            args.push(ms.to_string().into());
        }
        int(&self.run("release", args).await)
    }

    async fn set_limit(&self, scope: &str, key: &str, concurrency: u32, max: u32, per: u64) -> i64 {
        let reply = items(
            self.run(
                "limits_set",
                vec![
                    scope.into(),
                    key.into(),
                    concurrency.to_string().into(),
                    max.to_string().into(),
                    per.to_string().into(),
                ],
            )
            .await,
        );
        int(&reply[0])
    }

    /// counts.lua's `held`, its 12th entry.
    async fn held(&self) -> i64 {
        int(&items(self.run("counts", vec![]).await)[11])
    }

    async fn leased_now(&self) -> i64 {
        int(&items(self.run("counts", vec![]).await)[2])
    }

    async fn state_of(&self, id: &str) -> String {
        let reply = items(self.run("inspect", vec![id.into()]).await);
        reply.first().map(text).unwrap_or_default()
    }

    fn key(&self, name: &str) -> String {
        format!("{{{}}}:q:{}:{name}", self.ns, self.queue)
    }

    async fn zscore(&self, server: &RedisServer, name: &str, member: &str) -> Option<f64> {
        let v = server.cmd(&["ZSCORE", &self.key(name), member]).await;
        v.as_f64()
    }

    async fn redis_now(&self, server: &RedisServer) -> u64 {
        let t: Vec<String> = server.cmd(&["TIME"]).await.convert().unwrap();
        t[0].parse::<u64>().unwrap() * 1000 + t[1].parse::<u64>().unwrap() / 1000
    }
}

/// Calls of Redis commands since the last reset (CONFIG RESETSTAT), by
/// command, other than the script call itself and what the harness's own
/// connections send (PING, QUIT, CLIENT, INFO, CONFIG): what the scripts
/// called.
async fn commands_since_reset(server: &RedisServer) -> (u64, String) {
    let harness = [
        "evalsha:", "info:", "config", "ping:", "quit:", "client", "hello:", "select:",
    ];
    let stats: String = server
        .cmd(&["INFO", "commandstats"])
        .await
        .convert()
        .unwrap();
    let mut total = 0;
    let mut each = Vec::new();
    for line in stats
        .lines()
        .filter_map(|line| line.strip_prefix("cmdstat_"))
    {
        if harness.iter().any(|h| line.starts_with(h)) {
            continue;
        }
        let (name, rest) = line.split_once(':').unwrap();
        let calls: u64 = rest
            .split("calls=")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        total += calls;
        each.push(format!("{name} {calls}"));
    }
    each.sort();
    (total, each.join(", "))
}

#[tokio::test]
async fn many_claims_never_lease_more_than_a_key_or_the_queue_allows() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-bounds").await;
    assert_eq!(raw.set_limit("each_key", "", 2, 0, 0).await, 1);
    assert_eq!(raw.set_limit("key", "c", 1, 0, 0).await, 1);
    assert_eq!(raw.set_limit("queue", "", 5, 0, 0).await, 1);
    // Interleaved, then in runs of one key (so a claim meets several jobs
    // of one key in a row).
    let mut keys = Vec::new();
    for i in 0..40 {
        keys.push(["a", "b", "c", ""][i % 4]);
    }
    for i in 0..40 {
        keys.push(["a", "b", "c", ""][i / 10]);
    }
    raw.enqueue(&keys).await;
    let mut running: Vec<Leased> = Vec::new();
    let mut done = 0;
    let mut step = 0usize;
    while done < keys.len() {
        step += 1;
        assert!(step < 1000, "no progress after {done} jobs");
        running.extend(raw.claim(1 + step % 4).await);
        let mut per_key: HashMap<&str, usize> = HashMap::new();
        for job in &running {
            *per_key.entry(job.key.as_str()).or_default() += 1;
        }
        assert!(
            running.len() <= 5,
            "{} leased at once, queue limit 5",
            running.len()
        );
        for (key, n) in &per_key {
            let bound = match *key {
                "" => 5,
                "c" => 1,
                _ => 2,
            };
            assert!(*n <= bound, "key {key:?} has {n} leased, limit {bound}");
        }
        assert_eq!(raw.leased_now().await, running.len() as i64);
        // Finish some, oldest first, in varying numbers.
        for _ in 0..(step % 3).min(running.len()) {
            let job = running.remove(0);
            assert_eq!(raw.ack(&job).await, 1);
            done += 1;
        }
        if running.len() == 5 || (step.is_multiple_of(3) && !running.is_empty()) {
            let job = running.remove(0);
            assert_eq!(raw.ack(&job).await, 1);
            done += 1;
        }
    }
    assert_eq!(raw.held().await, 0);
    // Nothing is left of the accounting once every job is done.
    let lim: Vec<String> = server
        .cmd(&["HKEYS", &raw.key("lim")])
        .await
        .convert()
        .unwrap();
    assert!(lim.is_empty(), "{lim:?}");
    let ready: i64 = server
        .cmd(&["ZCARD", &raw.key("lim_ready")])
        .await
        .convert()
        .unwrap();
    assert_eq!(ready, 0);
}

#[tokio::test]
async fn a_freed_slot_lets_the_next_held_job_out_once() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-freed").await;
    raw.set_limit("each_key", "", 1, 0, 0).await;
    let ids = raw.enqueue(&["k", "k", "k"]).await;
    let first = raw.claim(10).await;
    assert_eq!(
        first.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        vec![ids[0].clone()]
    );
    assert!(raw.claim(10).await.is_empty());
    assert_eq!(raw.state_of(&ids[1]).await, "held");
    assert_eq!(raw.held().await, 2);
    assert_eq!(raw.ack(&first[0]).await, 1);
    let second = raw.claim(10).await;
    assert_eq!(
        second.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        vec![ids[1].clone()]
    );
    assert!(
        raw.claim(10).await.is_empty(),
        "one freed slot lets one job out"
    );
    // A repeated ack of the finished job frees nothing more.
    assert_eq!(raw.ack(&first[0]).await, 0);
    assert!(raw.claim(10).await.is_empty());
}

#[tokio::test]
async fn a_stale_holder_frees_nothing() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-stale").await;
    raw.set_limit("each_key", "", 1, 0, 0).await;
    let ids = raw.enqueue(&["k", "k"]).await;
    // Released, then claimed again under a new lease: the old lease is stale.
    let old = raw.claim(1).await.remove(0);
    assert_eq!(raw.release(&old, None).await, 1);
    let current = raw.claim(1).await.remove(0);
    assert_eq!(current.id, old.id);
    assert_eq!(raw.ack(&old).await, -1, "the stale ack is refused");
    assert_eq!(
        raw.release(&old, None).await,
        2,
        "a resent release is recognised"
    );
    assert!(
        raw.claim(10).await.is_empty(),
        "the stale calls freed no slot"
    );
    // A lease that lapses is reclaimed by the next claim, which frees its
    // slot once: the reclaimed job (due at once) takes it again.
    assert_eq!(raw.ack(&current).await, 1);
    let lapsing = raw.claim_for(1, "1").await.remove(0);
    assert_eq!(lapsing.id, ids[1]);
    let mut again = Vec::new();
    wait_until(
        Duration::from_secs(5),
        "the lapsed lease is reclaimed",
        async || {
            again = raw.claim(10).await;
            !again.is_empty()
        },
    )
    .await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, ids[1]);
    assert_eq!(
        raw.ack(&lapsing).await,
        -1,
        "the lapsed holder's ack is refused"
    );
    assert_eq!(raw.leased_now().await, 1);
    assert_eq!(raw.ack(&again[0]).await, 1);
    let lim: Vec<String> = server
        .cmd(&["HKEYS", &raw.key("lim")])
        .await
        .convert()
        .unwrap();
    assert!(lim.is_empty(), "{lim:?}");
}

#[tokio::test]
async fn a_rate_window_starts_exactly_its_max() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-rate").await;
    raw.set_limit("each_key", "", 0, 3, 10_000).await;
    raw.set_limit("queue", "", 0, 5, 10_000).await;
    raw.enqueue(&["k"; 10]).await;
    raw.enqueue(&["j"; 10]).await;
    let before = raw.redis_now(&server).await;
    let mut started: HashMap<String, usize> = HashMap::new();
    for _ in 0..6 {
        for job in raw.claim(2).await {
            *started.entry(job.key.clone()).or_default() += 1;
            assert_eq!(raw.ack(&job).await, 1);
        }
    }
    assert_eq!(
        started.values().sum::<usize>(),
        5,
        "queue-wide: 5 in 10 s; {started:?}"
    );
    assert_eq!(started["k"], 3, "each key: 3 in 10 s; {started:?}");
    assert_eq!(started["j"], 2);
    // One start member per lease: the queue's own 5 (key ""), k's 3, j's 2.
    let starts: Vec<String> = server
        .cmd(&["ZRANGE", &raw.key("lim_starts"), "0", "-1"])
        .await
        .convert()
        .unwrap();
    let of = |prefix: &str| starts.iter().filter(|m| m.starts_with(prefix)).count();
    assert_eq!(
        (of("\n"), of("k\n"), of("j\n"), starts.len()),
        (5, 3, 2, 10),
        "{starts:?}"
    );
    // Key k waits for its window: due again when its oldest start leaves it.
    let wake = raw
        .zscore(&server, "lim_wake", "k")
        .await
        .expect("k waits for its window");
    assert!(
        wake >= (before + 10_000) as f64 && wake <= (before + 11_000) as f64,
        "{wake}"
    );
    // The queue's own window makes the queue due no sooner than it reopens.
    let due = int(&raw.run("next_due", vec![]).await);
    assert!((8_000..=10_000).contains(&due), "next_due {due}");
}

#[tokio::test]
async fn a_push_back_holds_its_key_until_its_time_and_others_run() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-pushback").await;
    let ids = raw.enqueue(&["k", "k", "other"]).await;
    let first = raw.claim(1).await.remove(0);
    assert_eq!(first.id, ids[0]);
    let at = raw.redis_now(&server).await;
    assert_eq!(raw.release(&first, Some(10_000)).await, 1);
    let rest = raw.claim(10).await;
    assert_eq!(
        rest.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        vec![ids[2].clone()]
    );
    assert!(raw.claim(10).await.is_empty(), "k is pushed back");
    assert_eq!(raw.state_of(&ids[0]).await, "held");
    let wake = raw
        .zscore(&server, "lim_wake", "k")
        .await
        .expect("k waits for its push-back");
    assert!(
        wake >= (at + 10_000) as f64 && wake <= (at + 11_000) as f64,
        "{wake}"
    );
    // An earlier push-back does not shorten a later one.
    assert_eq!(raw.ack(&rest[0]).await, 1);
    // The queue's own push-back (a job without a key) stops the whole queue.
    let unkeyed = raw.enqueue(&["", ""]).await;
    let job = raw.claim(1).await.remove(0);
    assert_eq!(job.id, unkeyed[0]);
    assert_eq!(raw.release(&job, Some(5_000)).await, 1);
    assert!(raw.claim(10).await.is_empty(), "the queue is pushed back");
    let due = int(&raw.run("next_due", vec![]).await);
    assert!((3_000..=5_000).contains(&due), "next_due {due}");
}

#[tokio::test]
async fn held_jobs_are_seen_cancelled_deleted_edited_and_not_promoted() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-held-surgery").await;
    raw.set_limit("key", "k", 1, 0, 0).await;
    let ids = raw.enqueue(&["k", "k", "k", "k"]).await;
    let running = raw.claim(10).await;
    assert_eq!(running.len(), 1);
    assert_eq!(raw.held().await, 3);
    let page = items(
        raw.run("list_jobs", vec!["held".into(), "0".into(), "10".into()])
            .await,
    );
    assert_eq!(int(&page[0]), 3);
    assert_eq!(text(&page[2]), ids[1]);
    let edited = items(
        raw.run(
            "edit_job",
            vec!["1000".into(), ids[1].clone().into(), "2".into()],
        )
        .await,
    );
    assert_eq!((int(&edited[0]), text(&edited[1])), (1, "held".to_owned()));
    let promoted = items(
        raw.run(
            "promote_job",
            vec![
                "promote".into(),
                "10".into(),
                "0".into(),
                ids[1].clone().into(),
            ],
        )
        .await,
    );
    assert_eq!(int(&promoted[3]), 7, "a held job is held, not waiting");
    let cancelled = items(
        raw.run(
            "cancel",
            vec!["op".into(), "id".into(), ids[1].clone().into()],
        )
        .await,
    );
    assert_eq!(
        (int(&cancelled[0]), text(&cancelled[1])),
        (1, "held".to_owned())
    );
    let deleted = items(
        raw.run(
            "delete_job",
            vec![
                "10".into(),
                "0".into(),
                "".into(),
                "".into(),
                ids[2].clone().into(),
            ],
        )
        .await,
    );
    assert_eq!(int(&deleted[3]), 1);
    assert_eq!(raw.held().await, 1);
    // The next held job is the one left; the key's ready entry followed.
    assert_eq!(raw.ack(&running[0]).await, 1);
    let next = raw.claim(10).await;
    assert_eq!(
        next.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        vec![ids[3].clone()]
    );
    // Forced delete of the running job frees its slot; bulk cancel of held.
    raw.enqueue(&["k", "k"]).await;
    let forced = items(
        raw.run(
            "delete_job",
            vec![
                "10".into(),
                "1".into(),
                "".into(),
                "".into(),
                next[0].id.clone().into(),
            ],
        )
        .await,
    );
    assert_eq!(int(&forced[3]), 1);
    assert_eq!(
        raw.claim(10).await.len(),
        1,
        "the forced delete freed the slot"
    );
    let bulk = items(
        raw.run("cancel", vec!["op".into(), "held".into(), "10".into()])
            .await,
    );
    assert_eq!((int(&bulk[0]), int(&bulk[1])), (1, 0));
    assert_eq!(raw.held().await, 0);
}

/// Claims on a queue with a key at its concurrency cost the same number of
/// Redis calls whether that key holds 10 jobs or 10 000. Also prints the
/// calls per claim and per ack without limits, with a queue-wide limit and
/// with a key limit (the figures the flow-control notes quote).
#[tokio::test]
async fn claim_cost_does_not_grow_with_held_jobs() {
    let server = RedisServer::start();
    let mut costs = Vec::new();
    for held in [10usize, 10_000] {
        let mut raw = Raw::new(&server, &format!("flow-cost-{held}")).await;
        raw.set_limit("key", "full", 1, 0, 0).await;
        raw.enqueue(&vec!["full"; held + 1]).await;
        assert_eq!(raw.claim(1).await.len(), 1);
        raw.enqueue(&["free", "free", ""]).await;
        server.reset_stats().await;
        let got = raw.claim(10).await;
        assert_eq!(got.len(), 3, "the free key's jobs and the unkeyed one");
        costs.push(commands_since_reset(&server).await.0);
        server.reset_stats().await;
        assert!(raw.claim(10).await.is_empty());
        costs.push(commands_since_reset(&server).await.0);
    }
    assert_eq!(costs[0], costs[2], "claim taking 3 jobs: {costs:?}");
    assert_eq!(costs[1], costs[3], "claim taking none: {costs:?}");

    for (case, scope, key, concurrency, rate) in [
        ("none", "", "", 0, 0),
        ("queue concurrency", "queue", "", 100, 0),
        ("queue rate", "queue", "", 0, 1000),
        ("key concurrency", "key", "k", 100, 0),
        ("key rate", "key", "k", 0, 1000),
    ] {
        let mut raw = Raw::new(&server, &format!("flow-cost-{}", case.replace(' ', "-"))).await;
        if !scope.is_empty() {
            let per = if rate > 0 { 10_000 } else { 0 };
            raw.set_limit(scope, key, concurrency, rate, per).await;
        }
        raw.enqueue(&[key; 10]).await;
        server.reset_stats().await;
        let got = raw.claim(10).await;
        let claim = commands_since_reset(&server).await;
        assert_eq!(got.len(), 10);
        server.reset_stats().await;
        assert_eq!(raw.ack(&got[0]).await, 1);
        let ack = commands_since_reset(&server).await;
        eprintln!("redis calls, limit {case}: claim of 10 jobs {claim:?}; ack of 1 job {ack:?}");
    }
}

fn ids_of(jobs: &[Leased]) -> Vec<String> {
    jobs.iter().map(|j| j.id.clone()).collect()
}

#[tokio::test]
async fn keyed_and_unkeyed_jobs_are_claimed_in_priority_then_enqueue_order() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-order").await;
    let job = |limit_key, priority| Job {
        limit_key,
        priority,
        ..Job::default()
    };
    let ids = raw
        .enqueue_jobs(&[
            job("a", 0),
            job("", 5),
            job("b", 9),
            job("a", 9),
            job("", 0),
            job("b", 0),
        ])
        .await;
    let got = raw.claim(4).await;
    assert_eq!(
        ids_of(&got),
        vec![
            ids[2].clone(),
            ids[3].clone(),
            ids[1].clone(),
            ids[0].clone()
        ]
    );
    let rest = raw.claim(10).await;
    assert_eq!(ids_of(&rest), vec![ids[4].clone(), ids[5].clone()]);
}

#[tokio::test]
async fn a_raised_limit_lets_held_jobs_out_at_once_and_limits_get_shows_the_use() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-raise").await;
    raw.set_limit("each_key", "", 1, 0, 0).await;
    let mut keys = Vec::new();
    for key in ["a", "b", "c"] {
        keys.extend([key; 3]);
    }
    raw.enqueue(&keys).await;
    assert_eq!(raw.claim(10).await.len(), 3, "one per key");
    assert!(raw.claim(10).await.is_empty());
    assert_eq!(raw.set_limit("each_key", "", 1, 0, 0).await, 0, "unchanged");
    let reply = items(
        raw.run(
            "limits_set",
            vec![
                "each_key".into(),
                "".into(),
                "2".into(),
                "0".into(),
                "0".into(),
            ],
        )
        .await,
    );
    assert_eq!((int(&reply[0]), text(&reply[1])), (1, "0".to_owned()));
    assert_eq!(raw.claim(10).await.len(), 3, "one more per key at once");
    raw.set_limit("key", "a", 3, 0, 0).await;
    assert_eq!(
        raw.claim(10).await.len(),
        1,
        "a's override lets its last job out"
    );
    let page = items(raw.run("limits_get", vec!["0".into(), "100".into()]).await);
    assert_eq!(text(&page[1]), "0 0 0");
    assert_eq!(int(&page[2]), 7, "queue leased");
    assert_eq!(text(&page[5]), "2 0 0");
    assert_eq!(text(&page[6]), "0", "one page");
    assert_eq!(int(&page[8]), 0, "not paused");
    let mut keys: HashMap<String, (String, i64, i64, i64)> = HashMap::new();
    for entry in page[9..].chunks(7) {
        keys.insert(
            text(&entry[0]),
            (
                text(&entry[1]),
                int(&entry[2]),
                int(&entry[3]),
                int(&entry[6]),
            ),
        );
    }
    assert_eq!(keys["a"], ("3 0 0".to_owned(), 3, 0, 0));
    assert_eq!(keys["b"], (String::new(), 2, 1, 0));
    assert_eq!(keys.len(), 3, "{keys:?}");
    // Bad specs are refused and change nothing.
    for (args, says) in [
        (
            ["queue", "", "0", "5", "0"],
            "rate interval must be 1 ms to 24 h",
        ),
        (
            ["queue", "", "1000001", "0", "0"],
            "concurrency must be at most 1000000",
        ),
        (
            ["key", "", "1", "0", "0"],
            "a limit key must be 1 to 512 bytes",
        ),
        (
            ["tenant", "", "1", "0", "0"],
            "scope must be queue, each_key or key",
        ),
        (
            ["queue", "", "0", "1", "86400001"],
            "rate interval must be at most 86400000",
        ),
    ] {
        let args: Vec<Value> = args.iter().map(|a| Value::from(*a)).collect();
        let err = lua::evalsha(
            &raw.client,
            &raw.shas["limits_set"],
            &raw.ns,
            raw.queue,
            &args,
        )
        .await
        .expect_err("refused");
        assert!(err.details().contains(says), "{err}");
    }
}

#[tokio::test]
async fn nacks_delays_ordering_keys_and_requeues_go_through_the_held_set() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-compose").await;
    raw.set_limit("each_key", "", 1, 0, 0).await;
    let ids = raw
        .enqueue_jobs(&[
            Job {
                limit_key: "k",
                ordering_key: "o",
                ..Job::default()
            },
            Job {
                limit_key: "k",
                ordering_key: "o",
                ..Job::default()
            },
            Job {
                limit_key: "k",
                delay_ms: 600_000,
                ..Job::default()
            },
        ])
        .await;
    assert_eq!(
        raw.state_of(&ids[1]).await,
        "blocked",
        "behind its ordering key"
    );
    assert_eq!(raw.state_of(&ids[2]).await, "scheduled");
    let first = raw.claim(10).await;
    assert_eq!(ids_of(&first), vec![ids[0].clone()]);
    // A retry due now is held again and takes the freed slot.
    assert_eq!(raw.nack(&first[0], 0, false).await, 1);
    let again = raw.claim(10).await;
    assert_eq!(ids_of(&again), vec![ids[0].clone()]);
    // Dead: the slot frees and the ordering successor is held, then claimed.
    assert_eq!(raw.nack(&again[0], 0, true).await, 1);
    let next = raw.claim(10).await;
    assert_eq!(ids_of(&next), vec![ids[1].clone()]);
    // The delayed job, promoted, is held behind the key's one slot.
    let promoted = items(
        raw.run(
            "promote_job",
            vec![
                "promote".into(),
                "10".into(),
                "0".into(),
                ids[2].clone().into(),
            ],
        )
        .await,
    );
    assert_eq!(int(&promoted[3]), 1);
    assert_eq!(raw.state_of(&ids[2]).await, "held");
    assert!(raw.claim(10).await.is_empty());
    assert_eq!(raw.ack(&next[0]).await, 1);
    let last = raw.claim(10).await;
    assert_eq!(ids_of(&last), vec![ids[2].clone()]);
    assert_eq!(raw.ack(&last[0]).await, 1);
    // A requeued dead letter is held by its key like any due keyed job.
    let requeued = items(
        raw.run(
            "requeue_dead",
            vec!["10".into(), "0".into(), ids[0].clone().into()],
        )
        .await,
    );
    assert_eq!(int(&requeued[0]), 1);
    assert_eq!(raw.state_of(&ids[0]).await, "held");
    assert_eq!(ids_of(&raw.claim(10).await), vec![ids[0].clone()]);
}

/// A raised limit reaches every key with held jobs: limits_set puts the
/// first page of them due for a re-check, limits_wake the rest, and claims
/// re-check them (at most 100 a call) until every held job could start.
#[tokio::test]
async fn a_raised_limit_reaches_every_held_key_through_limits_wake() {
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-wake-pages").await;
    raw.set_limit("each_key", "", 1, 0, 0).await;
    let names: Vec<String> = (0..1500).map(|i| format!("tenant-{i}")).collect();
    let mut keys: Vec<&str> = names.iter().map(String::as_str).collect();
    keys.extend(names.iter().map(String::as_str));
    raw.enqueue(&keys).await;
    let mut running = 0;
    while running < 1500 {
        let got = raw.claim(1000).await.len();
        assert!(got > 0, "every key starts one job ({running} so far)");
        running += got;
    }
    assert!(
        raw.claim(1000).await.is_empty(),
        "every key is at its concurrency"
    );
    let reply = items(
        raw.run(
            "limits_set",
            vec![
                "each_key".into(),
                "".into(),
                "2".into(),
                "0".into(),
                "0".into(),
            ],
        )
        .await,
    );
    assert_eq!(int(&reply[0]), 1);
    let mut cursor = text(&reply[1]);
    let mut pages = 1;
    while cursor != "0" {
        cursor = text(&raw.run("limits_wake", vec![cursor.clone().into()]).await);
        pages += 1;
        assert!(pages < 100, "limits_wake ends");
    }
    assert!(pages > 1, "1500 keys take more than one page");
    let due: i64 = server
        .cmd(&["ZCARD", &raw.key("lim_wake")])
        .await
        .convert()
        .unwrap();
    assert_eq!(due, 1500, "every held key is due for a re-check");
    let mut started = 0;
    for _ in 0..20 {
        let got = raw.claim(1000).await.len();
        assert!(got <= 100, "a claim re-checks at most 100 keys");
        started += got;
    }
    assert_eq!(started, 1500, "every key's second job started");
    assert_eq!(raw.held().await, 0);
}

/// What the flow structures say, checked against what they count: each
/// key's held count is its members in lim_held, its leased count is the
/// leased jobs carrying it, and (for a key not waiting for a re-check in
/// lim_wake) it is in lim_ready exactly when it has held jobs and room,
/// at its best held job's score.
async fn assert_accounting(server: &RedisServer, raw: &Raw, concurrency: &HashMap<String, i64>) {
    let lim: HashMap<String, String> = server
        .cmd(&["HGETALL", &raw.key("lim")])
        .await
        .convert()
        .unwrap();
    let field = |kind: &str, key: &str| -> i64 {
        lim.get(&format!("{kind}\n{key}"))
            .map_or(0, |v| v.parse().unwrap())
    };
    let held: Vec<String> = server
        .cmd(&["ZRANGE", &raw.key("lim_held"), "0", "-1"])
        .await
        .convert()
        .unwrap();
    let mut held_of: HashMap<String, Vec<String>> = HashMap::new();
    for member in held {
        let key = member.split('\n').next().unwrap().to_owned();
        held_of.entry(key).or_default().push(member);
    }
    let leased: Vec<String> = server
        .cmd(&["ZRANGE", &raw.key("leased"), "0", "-1"])
        .await
        .convert()
        .unwrap();
    let mut leased_of: HashMap<String, i64> = HashMap::new();
    let jobs = format!("{{{}}}:jobs", raw.ns);
    for id in leased {
        let record = server.cmd(&["HGET", &jobs, &id]).await;
        let meta = Meta::decode(record.as_bytes().unwrap()).unwrap();
        if !meta.limit_key.is_empty() {
            *leased_of.entry(meta.limit_key).or_default() += 1;
        }
    }
    let ready: HashMap<String, f64> = {
        let flat: Vec<String> = server
            .cmd(&["ZRANGE", &raw.key("lim_ready"), "0", "-1", "WITHSCORES"])
            .await
            .convert()
            .unwrap();
        flat.chunks(2)
            .map(|p| (p[0].clone(), p[1].parse().unwrap()))
            .collect()
    };
    let waking: Vec<String> = server
        .cmd(&["ZRANGE", &raw.key("lim_wake"), "0", "-1"])
        .await
        .convert()
        .unwrap();
    let mut keys: Vec<String> = held_of.keys().chain(leased_of.keys()).cloned().collect();
    keys.extend(ready.keys().cloned());
    keys.sort();
    keys.dedup();
    for key in keys {
        let members = held_of.get(&key).map_or(&[][..], Vec::as_slice);
        assert_eq!(
            field("h", &key),
            members.len() as i64,
            "held count of {key}"
        );
        let leased = leased_of.get(&key).copied().unwrap_or(0);
        assert_eq!(field("u", &key), leased, "leased count of {key}");
        let limit = concurrency.get(&key).copied().unwrap_or(i64::MAX);
        assert!(leased <= limit, "{key}: {leased} leased, limit {limit}");
        if waking.contains(&key) {
            continue;
        }
        let should = !members.is_empty() && leased < limit;
        assert_eq!(
            ready.contains_key(&key),
            should,
            "{key} ready ({leased} leased, {} held)",
            members.len()
        );
        if should {
            let best: f64 = members[0].split('\n').nth(1).unwrap().parse().unwrap();
            assert_eq!(
                ready[&key], best,
                "{key}'s ready score is its best held job's"
            );
        }
    }
}

/// Random enqueues, claims, acks, nacks, releases, cancels and forced
/// deletes of keyed and unkeyed jobs: after every step the accounting is
/// exact and no key is over its concurrency.
#[tokio::test]
async fn the_accounting_stays_exact_under_random_operations() {
    use rand::{Rng, SeedableRng};
    let server = RedisServer::start();
    let mut raw = Raw::new(&server, "flow-random").await;
    let limits: HashMap<String, i64> = [("a", 1), ("b", 2), ("c", 3), ("d", 1)]
        .into_iter()
        .map(|(k, c)| (k.to_owned(), c))
        .collect();
    for (key, c) in &limits {
        raw.set_limit("key", key, *c as u32, 0, 0).await;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(15);
    let mut running: Vec<Leased> = Vec::new();
    let keys = ["a", "b", "c", "d", "e", ""];
    for step in 0..400 {
        match rng.random_range(0..10) {
            0 | 1 => {
                let jobs: Vec<Job> = (0..rng.random_range(1..6))
                    .map(|_| Job {
                        limit_key: keys[rng.random_range(0..keys.len())],
                        priority: rng.random_range(0..3),
                        ..Job::default()
                    })
                    .collect();
                raw.enqueue_jobs(&jobs).await;
            }
            2 | 3 => running.extend(raw.claim(rng.random_range(1..6)).await),
            4 | 5 if !running.is_empty() => {
                let job = running.swap_remove(rng.random_range(0..running.len()));
                assert_eq!(raw.ack(&job).await, 1, "step {step}");
            }
            6 if !running.is_empty() => {
                let job = running.swap_remove(rng.random_range(0..running.len()));
                assert_eq!(
                    raw.nack(&job, 0, rng.random_bool(0.3)).await,
                    1,
                    "step {step}"
                );
            }
            7 if !running.is_empty() => {
                let job = running.swap_remove(rng.random_range(0..running.len()));
                assert_eq!(raw.release(&job, None).await, 1, "step {step}");
            }
            8 => {
                // Cancel a held job (the oldest of the held set), or a running one.
                let held: Vec<String> = server
                    .cmd(&["ZRANGE", &raw.key("lim_held"), "0", "0"])
                    .await
                    .convert()
                    .unwrap();
                if let Some(member) = held.first() {
                    let id = member.rsplit('\n').next().unwrap().to_owned();
                    let reply = items(
                        raw.run("cancel", vec!["op".into(), "id".into(), id.into()])
                            .await,
                    );
                    assert_eq!(
                        (int(&reply[0]), text(&reply[1])),
                        (1, "held".to_owned()),
                        "step {step}"
                    );
                } else if !running.is_empty() {
                    let job = running.swap_remove(0);
                    let reply = items(
                        raw.run("cancel", vec!["op".into(), "id".into(), job.id.into()])
                            .await,
                    );
                    assert_eq!(int(&reply[0]), 1, "step {step}");
                }
            }
            9 if !running.is_empty() => {
                let job = running.swap_remove(rng.random_range(0..running.len()));
                let reply = items(
                    raw.run(
                        "delete_job",
                        vec!["10".into(), "1".into(), "".into(), "".into(), job.id.into()],
                    )
                    .await,
                );
                assert_eq!(int(&reply[3]), 1, "step {step}");
            }
            _ => {}
        }
        assert_accounting(&server, &raw, &limits).await;
    }
    // Drain: everything left runs, within its limits.
    for _ in 0..200 {
        running.extend(raw.claim(10).await);
        assert_accounting(&server, &raw, &limits).await;
        if running.is_empty() {
            break;
        }
        for job in std::mem::take(&mut running) {
            assert_eq!(raw.ack(&job).await, 1);
        }
    }
    assert_eq!(raw.held().await, 0);
}
