//! The checker is not vacuous: every kind of violation it knows
//! ([`ViolationKind::ALL`]) is shown to fire by a broken variant, and the
//! same run with the shipped scripts (or the sound history) passes.
//!
//! A variant is one of:
//! - a patched script: a copy of a shipped script from `lua/` with one
//!   deliberate bug ([`patched`] panics when its pattern no longer matches,
//!   so a script change cannot make a variant silently vacuous), run with
//!   `EVALSHA` against a real redis-server whose `MONITOR` record and final
//!   keys are then checked;
//! - a hand-made history, where no script can easily produce the defect;
//! - a hand-made corruption of a sound namespace's keys, for the structural
//!   check.
//!
//! Each variant asserts the exact set of kinds it fires (a defect often
//! breaks more than one rule; the set says which). The table at the bottom
//! is the one list of variants: each row is a test, and
//! `every_violation_kind_is_shown_to_fire_by_a_broken_variant` fails when a
//! kind has no row.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fred::clients::Client;
use fred::interfaces::LuaInterface;
use fred::types::Value;
use redq_tests::history::raw::RawQueue;
use redq_tests::history::record::{Call, Claimed, Entry, Reply};
use redq_tests::history::server::{Event, Kind, ServerRecord};
use redq_tests::history::{
    self, meta::Meta, Dump, Expect, JobSpec, Recorder, Report, ServerLog, ViolationKind,
};
use redq_tests::lua::{self, patched};
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

    /// Extend and release for `q`, with `overrides` in place of the shipped
    /// scripts.
    async fn fenced(&self, q: &RawQueue, overrides: &[(&str, String)]) -> Fenced {
        Fenced::new(
            self.server.client().await,
            &self.ns,
            q.recorder.clone(),
            overrides,
        )
        .await
    }

    /// Waits until the Redis clock has passed `at_ms`: a lease that expires
    /// at `at_ms` has then lapsed, a call now applies after `at_ms`.
    async fn until_redis_past(&self, at_ms: u64) {
        let client = self.server.client().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now_ms: u64 = client
                .eval(
                    "local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)",
                    Vec::<String>::new(),
                    Vec::<String>::new(),
                )
                .await
                .expect("the Redis clock");
            if now_ms > at_ms {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the Redis clock did not pass {at_ms} ms within 10 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
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

/// Extend and release (which [`RawQueue`] does not call), run with
/// `EVALSHA` and recorded in a raw client's recorder like its own calls.
struct Fenced {
    client: Client,
    ns: String,
    extend: String,
    release: String,
    recorder: Recorder,
}

fn s(v: impl ToString) -> Value {
    Value::from(v.to_string())
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Integer(n) => *n,
        other => other.as_string().and_then(|t| t.parse().ok()).unwrap_or(0),
    }
}

impl Fenced {
    async fn new(
        client: Client,
        ns: &str,
        recorder: Recorder,
        overrides: &[(&str, String)],
    ) -> Fenced {
        let mut shas = Vec::new();
        for name in ["extend", "release"] {
            let sha = match overrides.iter().find(|(n, _)| *n == name) {
                Some((_, body)) => lua::load_named(&client, name, body).await,
                None => lua::load(&client, &lua::compose(lua::source(name))).await,
            };
            shas.push(sha);
        }
        let release = shas.pop().unwrap();
        let extend = shas.pop().unwrap();
        Fenced {
            client,
            ns: ns.to_owned(),
            extend,
            release,
            recorder,
        }
    }

    async fn extend(&self, id: &str, lease: u64, lease_ms: u64) -> Reply {
        let seq = self.recorder.invoke(Call::Extend {
            id: id.to_owned(),
            lease,
            lease_ms,
        });
        let args = [s(id), s(lease), s(lease_ms)];
        let reply = match lua::evalsha(&self.client, &self.extend, &self.ns, QUEUE, &args).await {
            Ok(Value::Array(f)) if int(&f[0]) == 1 => Reply::Extended {
                expiry_ms: int(&f[1]) as u64,
            },
            Ok(_) => Reply::LeaseLost,
            Err(e) => Reply::Failed {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
    }

    async fn release(&self, id: &str, lease: u64) -> Reply {
        let seq = self.recorder.invoke(Call::Release {
            id: id.to_owned(),
            lease,
        });
        let args = [s(id), s(lease)];
        let reply = match lua::evalsha(&self.client, &self.release, &self.ns, QUEUE, &args).await {
            Ok(v) if int(&v) == 1 || int(&v) == 2 => Reply::Released,
            Ok(_) => Reply::LeaseLost,
            Err(e) => Reply::Failed {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
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

/// Runs `variant` with the shipped scripts (or the sound history), which
/// must pass, then broken, which must fire exactly `kinds`.
async fn shown<F: Future<Output = Report>>(variant: impl Fn(bool) -> F, kinds: &[ViolationKind]) {
    let shipped = variant(false).await;
    assert!(
        shipped.violations.is_empty(),
        "the shipped scripts (the sound history) must pass:\n{shipped}"
    );
    let broken = variant(true).await;
    let expected: BTreeSet<ViolationKind> = kinds.iter().copied().collect();
    assert_eq!(
        broken.kinds(),
        expected,
        "the broken variant must fire exactly the kinds listed for it:\n{broken}"
    );
}

// ---------------------------------------------------------------------------
// Patched scripts.

/// Script `name` with one patch, as the overrides of a [`Bench`].
fn patch(name: &'static str, from: &str, to: &str) -> Vec<(&'static str, String)> {
    vec![(name, patched(name, &[(from, to)]))]
}

/// A holds a lease that lapses; B claims the job; A's late ack arrives.
async fn stale_ack(broken: bool) -> Report {
    let ack = patch(
        "ack",
        "if m[M.queue] ~= QUEUE or not lease_matches(m, leases[i]) then",
        "if m[M.queue] ~= QUEUE then",
    );
    let bench = Bench::new(&ack).await;
    let (a, b) = if broken {
        (&bench.b, &bench.a)
    } else {
        (&bench.a, &bench.b)
    };
    a.enqueue(&[job("t1")]).await;
    let stale = a.claim(1, 100, &[]).await.remove(0);
    bench.until_redis_past(stale.expiry_ms).await;
    let current = b.claim(1, 10_000, &[]).await.remove(0);
    assert_eq!(current.id, stale.id);
    a.ack(&stale.id, stale.lease).await;
    b.ack(&current.id, current.lease).await;
    bench.finish(drained()).await
}

/// A call made under a lease that has since been replaced.
#[derive(Clone, Copy)]
enum Late {
    Nack,
    Extend,
    Release,
}

/// A's lease lapses and B is granted the job; then A, still running, makes
/// the `late` call under its stale lease, once the Redis clock has moved
/// past B's grant (so a call that applies, applies visibly later). B acks;
/// whatever is left is finished with the shipped scripts. Broken, A's
/// `script` has its fence (`from`) patched to `to`.
async fn stale_call(
    late: Late,
    script: &'static str,
    from: &str,
    to: &str,
    broken: bool,
) -> Report {
    let overrides = patch(script, from, to);
    let bench = Bench::new(&overrides).await;
    // B's calls are made under its current lease, which the unfenced
    // variant treats like the shipped script.
    let (a, b) = if broken {
        (&bench.b, &bench.a)
    } else {
        (&bench.a, &bench.b)
    };
    let fenced = bench
        .fenced(a, if broken { &overrides[..] } else { &[] })
        .await;
    a.enqueue(&[job("t1")]).await;
    let stale = a.claim(1, 100, &[]).await.remove(0);
    bench.until_redis_past(stale.expiry_ms).await;
    let lease_ms = 10_000;
    let current = b.claim(1, lease_ms, &[]).await.remove(0);
    assert_eq!(current.id, stale.id);
    bench
        .until_redis_past(current.expiry_ms - lease_ms + 2)
        .await;
    match late {
        Late::Nack => a.nack(&stale.id, stale.lease, 0, false).await,
        Late::Extend => fenced.extend(&stale.id, stale.lease, lease_ms).await,
        Late::Release => fenced.release(&stale.id, stale.lease).await,
    };
    b.ack(&current.id, current.lease).await;
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

async fn stale_extend(broken: bool) -> Report {
    stale_call(
        Late::Extend,
        "extend",
        "if not m or m[M.queue] ~= QUEUE or not lease_matches(m, lease) then return { -1, 0 } end",
        "if not m or m[M.queue] ~= QUEUE then return { -1, 0 } end",
        broken,
    )
    .await
}

async fn stale_nack(broken: bool) -> Report {
    stale_call(
        Late::Nack,
        "nack",
        "if not lease_matches(m, lease) then return { -1, m[M.attempts], 0, 0 } end",
        "",
        broken,
    )
    .await
}

async fn stale_release(broken: bool) -> Report {
    stale_call(
        Late::Release,
        "release",
        "if not lease_matches(m, lease) then return -1 end",
        "",
        broken,
    )
    .await
}

fn client_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// B's claim runs on B's clock, 30 s fast, instead of Redis's.
async fn client_clock(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "local now = now_ms()",
        "local now = tonumber(ARGV[7])",
    );
    let bench = Bench::new(if broken { &claim[..] } else { &[] }).await;
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

/// A claim that reads the head of the queue without removing it.
async fn double_claim(broken: bool) -> Report {
    // Plain jobs wait in the fifo list, so the pop to break is the list's.
    let claim = patch(
        "claim",
        "redis.call('LPOP', K.fifo, limit)",
        "redis.call('LRANGE', K.fifo, 0, limit - 1)",
    );
    let bench = Bench::new(if broken { &claim[..] } else { &[] }).await;
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

/// A claim that hands out lease ids without advancing the counter, so
/// every claim hands out the same one.
async fn repeated_lease_ids(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "local next_lease = redis.call('INCRBY', K.lease_seq, count) - count + 1",
        "local next_lease = tonumber(redis.call('GET', K.lease_seq) or '0') + 1",
    );
    let bench = Bench::new(&claim).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1"), job("t2")]).await;
    for _ in 0..2 {
        let j = worker.claim(1, 5_000, &[]).await.remove(0);
        worker.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A nack that deletes the job instead of requeueing it.
async fn lost_on_nack(broken: bool) -> Report {
    let nack = patch(
        "nack",
        "  if place(id, m, due, now) then redis.call('PUBLISH', CHANNEL, QUEUE) end",
        // The payload lives in the record, so this drops the whole job.
        "  redis.call('HDEL', K.jobs, id)",
    );
    let bench = Bench::new(&nack).await;
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

/// The worker claims the job and fails it once with nack; the retry is
/// claimed and acked with the shipped scripts. Broken, the worker's nack is
/// `nack`.
async fn fail_once(nack: Vec<(&'static str, String)>, broken: bool) -> Report {
    let bench = Bench::new(&nack).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let first = worker.claim(1, 5_000, &[]).await.remove(0);
    worker.nack(&first.id, first.lease, 0, false).await;
    let second = bench.a.claim(1, 5_000, &[]).await.remove(0);
    bench.a.ack(&second.id, second.lease).await;
    bench.finish(drained()).await
}

/// A nack that does not count the failed attempt.
async fn uncounted_nack(broken: bool) -> Report {
    let nack = patch(
        "nack",
        "m[M.attempts] = m[M.attempts] + 1",
        "m[M.attempts] = m[M.attempts] + 0",
    );
    fail_once(nack, broken).await
}

/// A's lease lapses; the worker's claim reclaims it and is granted the job,
/// and acks it. Broken, the worker's claim is `claim`.
async fn lapse_once(claim: Vec<(&'static str, String)>, broken: bool) -> Report {
    let bench = Bench::new(&claim).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let lapsed = bench.a.claim(1, 100, &[]).await.remove(0);
    bench.until_redis_past(lapsed.expiry_ms).await;
    for j in worker.claim(1, 5_000, &[]).await {
        worker.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A reclaim that does not count the lapsed attempt.
async fn uncounted_reclaim(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "m[M.attempts] = m[M.attempts] + 1",
        "m[M.attempts] = m[M.attempts] + 0",
    );
    lapse_once(claim, broken).await
}

/// A claim that never reclaims lapsed leases: a dead worker's job stays
/// leased for ever (the run cannot drain).
async fn no_reclaim(broken: bool) -> Report {
    let claim = patch("claim", "reclaim_lapsed(now, RECLAIM_PER_CALL)\n", "\n");
    lapse_once(claim, broken).await
}

/// A claim that counts an attempt when it grants a lease (not only when
/// the attempt fails). The fast path splices the lease into the bytes, so
/// it is turned off to reach the field-by-field one.
async fn counted_grant(broken: bool) -> Report {
    let claim = vec![(
        "claim",
        patched(
            "claim",
            &[
                (
                    "if string.sub(raw, 1, 7) == RECORD_HEADER .. CLEARED_LEASE then",
                    "if false then",
                ),
                (
                    "        m[M.lease_id] = next_lease\n",
                    "        m[M.lease_id] = next_lease\n        m[M.attempts] = m[M.attempts] + 1\n",
                ),
            ],
        ),
    )];
    let bench = Bench::new(&claim).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let j = worker.claim(1, 5_000, &[]).await.remove(0);
    worker.ack(&j.id, j.lease).await;
    bench.finish(drained()).await
}

/// The worker claims the job, extends its lease and acks it; broken, its
/// extend also counts an attempt.
async fn counted_extend(broken: bool) -> Report {
    let extend = patch(
        "extend",
        "m[M.lease_expiry] = expiry\nstore_meta(id, m)",
        "m[M.lease_expiry] = expiry\nm[M.attempts] = m[M.attempts] + 1\nstore_meta(id, m)",
    );
    let bench = Bench::new(&[]).await;
    let fenced = bench
        .fenced(&bench.a, if broken { &extend[..] } else { &[] })
        .await;
    bench.a.enqueue(&[job("t1")]).await;
    let j = bench.a.claim(1, 5_000, &[]).await.remove(0);
    fenced.extend(&j.id, j.lease, 5_000).await;
    bench.a.ack(&j.id, j.lease).await;
    bench.finish(drained()).await
}

/// The worker claims the job and releases it (shutting down); the job is
/// claimed again and acked. Broken, the release counts an attempt.
async fn counted_release(broken: bool) -> Report {
    let release = patch(
        "release",
        "m[M.resolved_lease] = -m[M.lease_id]",
        "m[M.resolved_lease] = -m[M.lease_id]\nm[M.attempts] = m[M.attempts] + 1",
    );
    let bench = Bench::new(&[]).await;
    let fenced = bench
        .fenced(&bench.a, if broken { &release[..] } else { &[] })
        .await;
    bench.a.enqueue(&[job("t1")]).await;
    let first = bench.a.claim(1, 5_000, &[]).await.remove(0);
    fenced.release(&first.id, first.lease).await;
    let second = bench.a.claim(1, 5_000, &[]).await.remove(0);
    bench.a.ack(&second.id, second.lease).await;
    bench.finish(drained()).await
}

/// A job with `max_attempts` attempts, claimed and nacked until a nack
/// reports it dead (at most `max_attempts + 1` times). Broken, the nacks
/// are `nack`.
async fn fail_until_dead(
    nack: Vec<(&'static str, String)>,
    max_attempts: u32,
    broken: bool,
) -> Report {
    let bench = Bench::new(&nack).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench
        .a
        .enqueue(&[JobSpec {
            max_attempts,
            ..job("t1")
        }])
        .await;
    for _ in 0..=max_attempts {
        let Some(j) = worker.claim(1, 5_000, &[]).await.pop() else {
            break;
        };
        if let Reply::Nacked { dead: true, .. } = worker.nack(&j.id, j.lease, 0, false).await {
            break;
        }
    }
    bench.finish(drained()).await
}

const SPENT: &str = "local spent = m[M.max_attempts] > 0 and m[M.attempts] >= m[M.max_attempts]";

/// Attempts counted as spent one failure early.
async fn dead_too_early(broken: bool) -> Report {
    let nack = patch(
        "nack",
        SPENT,
        "local spent = m[M.max_attempts] > 0 and m[M.attempts] + 1 >= m[M.max_attempts]",
    );
    fail_until_dead(nack, 2, broken).await
}

/// Attempts counted as spent one failure late.
async fn spent_not_dead(broken: bool) -> Report {
    let nack = patch(
        "nack",
        SPENT,
        "local spent = m[M.max_attempts] > 0 and m[M.attempts] > m[M.max_attempts]",
    );
    fail_until_dead(nack, 1, broken).await
}

/// A dead letter that is also put back in the queue: the job is leased
/// again after it died. `expect` says whether the run had requeues of dead
/// letters (then only the server's record can tell).
async fn dead_but_queued(broken: bool, expect: Expect) -> Report {
    let nack = patch(
        "nack",
        "    redis.call('ZADD', K.dead, now, id)\n",
        "    place(id, m, now, now)\n",
    );
    let bench = Bench::new(&nack).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let j = worker.claim(1, 5_000, &[]).await.remove(0);
    let reply = worker.nack(&j.id, j.lease, 0, true).await;
    assert!(
        matches!(reply, Reply::Nacked { dead: true, .. }),
        "{reply:?}"
    );
    for again in bench.a.claim(1, 5_000, &[]).await {
        bench.a.ack(&again.id, again.lease).await;
    }
    bench.finish(expect).await
}

/// The worker claims the job and acks it twice (a resend); broken, the
/// repeated ack of a job already gone answers "completed".
async fn completed_again(broken: bool) -> Report {
    let ack = patch("ack", "    codes[i] = 0\n", "    codes[i] = 1\n");
    let bench = Bench::new(&ack).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let j = worker.claim(1, 5_000, &[]).await.remove(0);
    worker.ack(&j.id, j.lease).await;
    worker.ack(&j.id, j.lease).await;
    bench.finish(drained()).await
}

/// An ack that answers "completed" but removes nothing.
async fn ack_keeps_the_job(broken: bool) -> Report {
    let ack = patch(
        "ack",
        "      release_keys(id, m)\n      done[#done + 1] = id\n",
        "",
    );
    let bench = Bench::new(&ack).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let j = worker.claim(1, 5_000, &[]).await.remove(0);
    worker.ack(&j.id, j.lease).await;
    bench.finish(drained()).await
}

/// An enqueue that lets every job of an ordering key through at once. Both
/// are claimed; the first fails once and is leased again after the second
/// was; the second is acked before the first.
async fn ordering_ignored(broken: bool) -> Report {
    let enqueue = patch(
        "enqueue",
        "if holder and holder ~= id and redis.call('HEXISTS', K.jobs, holder) == 1 then",
        "if false then",
    );
    let bench = Bench::new(&enqueue).await;
    let producer = if broken { &bench.b } else { &bench.a };
    let keyed = |tag: &str| JobSpec {
        ordering_key: "k".into(),
        ..JobSpec::new(tag)
    };
    producer.enqueue(&[keyed("first"), keyed("second")]).await;
    for j in bench.a.claim(2, 5_000, &[]).await {
        if j.tag == "first" {
            bench.a.nack(&j.id, j.lease, 0, false).await;
        } else {
            bench.a.ack(&j.id, j.lease).await;
        }
    }
    for _ in 0..2 {
        for j in bench.a.claim(2, 5_000, &[]).await {
            bench.a.ack(&j.id, j.lease).await;
        }
    }
    bench.finish(drained()).await
}

// ---------------------------------------------------------------------------
// Hand-made histories: defects no script can easily produce.

/// Call `seq` of process 1 with its reply.
fn entry(seq: u64, call: Call, reply: Reply) -> Entry {
    Entry {
        process: 1,
        seq,
        invoked_us: seq,
        completed_us: Some(seq),
        call,
        reply: Some(reply),
    }
}

/// An enqueue of `jobs` (id, tag), all created.
fn enqueued(seq: u64, jobs: &[(&str, &str)]) -> Entry {
    entry(
        seq,
        Call::Enqueue {
            queue: QUEUE.into(),
            tags: jobs.iter().map(|(_, tag)| (*tag).to_owned()).collect(),
            keys: vec![String::new(); jobs.len()],
        },
        Reply::Enqueued {
            ids: jobs
                .iter()
                .map(|(id, _)| ((*id).to_owned(), true))
                .collect(),
        },
    )
}

/// A claim handing out job `id` (tag `tag`) under `lease`, 1 s long,
/// granted at `lease` seconds.
fn claimed(seq: u64, id: &str, tag: &str, lease: u64) -> Entry {
    entry(
        seq,
        Call::Claim {
            queue: QUEUE.into(),
            limit: 1,
            lease_ms: 1000,
        },
        Reply::Claimed {
            jobs: vec![Claimed {
                id: id.into(),
                tag: tag.into(),
                lease,
                attempts: 0,
                expiry_ms: lease * 1000 + 1000,
                ordering_key: String::new(),
            }],
        },
    )
}

fn acked(seq: u64, id: &str, lease: u64) -> Entry {
    entry(
        seq,
        Call::Ack {
            id: id.into(),
            lease,
        },
        Reply::Acked { completed: true },
    )
}

/// The client-side checks alone (no server record): broken, job A is
/// acknowledged as completed twice and job B is never claimed, yet gone.
async fn client_history_alone(broken: bool) -> Report {
    let mut entries = vec![
        enqueued(0, &[("A", "a"), ("B", "b")]),
        claimed(1, "A", "a", 1),
        acked(2, "A", 1),
    ];
    if broken {
        entries.push(acked(3, "A", 1));
    } else {
        entries.extend([claimed(3, "B", "b", 2), acked(4, "B", 2)]);
    }
    history::check(&entries, None, &Dump::default(), drained())
}

/// Broken, a claim hands out job G, whose tag no enqueue carried.
async fn claimed_never_enqueued(broken: bool) -> Report {
    let mut entries = vec![
        enqueued(0, &[("A", "a")]),
        claimed(1, "A", "a", 1),
        acked(2, "A", 1),
    ];
    if broken {
        entries.extend([claimed(3, "G", "ghost", 2), acked(4, "G", 2)]);
    }
    history::check(&entries, None, &Dump::default(), drained())
}

/// Broken, the server's record shows job A's ack applied twice (as a
/// resent ack that was not idempotent would).
async fn server_acked_twice(broken: bool) -> Report {
    let entries = [
        enqueued(0, &[("A", "a")]),
        claimed(1, "A", "a", 1),
        acked(2, "A", 1),
    ];
    let waiting = Meta {
        queue: QUEUE.into(),
        seq: 1,
        ..Meta::default()
    };
    let leased = Meta {
        lease_id: 1,
        lease_expiry: 2000,
        ..waiting.clone()
    };
    let event =
        |at_ms: u64, kind: Kind, script: &str, before: Option<&Meta>, after: Option<&Meta>| Event {
            at_us: at_ms * 1000,
            job: "A".into(),
            kind,
            script: script.into(),
            presented: (script == "ack").then_some(1),
            forced: false,
            before: before.cloned(),
            after: after.cloned(),
        };
    let mut events = vec![
        event(0, Kind::Created, "enqueue", None, Some(&waiting)),
        event(1000, Kind::Granted, "claim", Some(&waiting), Some(&leased)),
        event(1500, Kind::Acked, "ack", Some(&leased), None),
    ];
    if broken {
        events.push(event(1600, Kind::Acked, "ack", Some(&leased), None));
    }
    let server = ServerRecord {
        events,
        ..ServerRecord::default()
    };
    history::check(&entries, Some(&server), &Dump::default(), drained())
}

// ---------------------------------------------------------------------------
// Hand-made corruptions of a sound namespace, for the structural check.

/// The jobs of the sound namespace by role, in the order a corruption
/// receives their ids (ARGV[2..]): `urgent` leased (priority 5), `doomed`
/// dead, `plain` and `deduped` (dedup key "d") in the fifo, `first` and
/// `second` of ordering key "k" (first waiting in the zset, second blocked
/// behind it), `later` scheduled, `high` waiting (priority 3).
const ROLES: [&str; 8] = [
    "urgent", "doomed", "plain", "deduped", "first", "second", "later", "high",
];

/// Gives a corruption the job ids by role, `k(name)` (the key `name` of
/// the namespace; ARGV[1] is its prefix) and `Q`, the prefix of queue
/// [`QUEUE`]'s keys. Writing undeclared keys is fine on a standalone
/// server, and this script never ships.
const CORRUPTION_PRELUDE: &str = "\
local P, urgent, doomed, plain, deduped, first, second, later, high = unpack(ARGV)
local function k(name) return P .. name end
local Q = 'q:q:'
";

/// The payload every job of the sound namespace carries: its role.
fn payload(role: &str) -> String {
    serde_json::json!({ "tag": role }).to_string()
}

/// Builds the sound namespace with the shipped scripts, then (broken)
/// runs `corruption` on its keys; reports what the structural check finds.
async fn corrupted(broken: bool, corruption: &str) -> Report {
    let server = RedisServer::start();
    let client = server.client().await;
    let ns = unique_namespace("structure");
    let mut shas = Vec::new();
    for name in ["enqueue", "claim", "nack"] {
        shas.push(lua::load(&client, &lua::compose(lua::source(name))).await);
    }
    let [enqueue, claim, nack] = <[String; 3]>::try_from(shas).unwrap();
    let run = |sha: &String, args: Vec<Value>| {
        let (client, ns, sha) = (client.clone(), ns.clone(), sha.clone());
        async move {
            lua::evalsha(&client, &sha, &ns, QUEUE, &args)
                .await
                .unwrap_or_else(|e| panic!("building the sound namespace: {e}"))
        }
    };
    // (role, priority, delay_ms, dedup key, ordering key)
    let add = |jobs: &[(&str, u8, u64, &str, &str)]| {
        let mut args = vec![s(1 << 20), s(jobs.len())];
        for (role, priority, delay, dedup, key) in jobs {
            args.extend([
                s(role),
                s(payload(role)),
                s(priority),
                s(delay),
                s(0),
                s(dedup),
                s(0),
                s(key),
                s(0),
                s(0),
                s(""),
            ]);
        }
        run(&enqueue, args)
    };
    add(&[("urgent", 5, 0, "", ""), ("doomed", 0, 0, "", "")]).await;
    let lease = [s(1), s(60_000), s(1), s(1)];
    run(&claim, lease.to_vec()).await;
    run(&claim, lease.to_vec()).await;
    // Lease 0: whatever lease is current.
    run(&nack, vec![s("doomed"), s(0), s(0), s("doomed"), s(1)]).await;
    add(&[
        ("plain", 0, 0, "", ""),
        ("deduped", 0, 0, "d", ""),
        ("first", 0, 0, "", "k"),
        ("second", 0, 0, "", "k"),
        ("later", 0, 60_000, "", ""),
        ("high", 3, 0, "", ""),
    ])
    .await;
    if broken {
        let mut args = vec![format!("{{{ns}}}:")];
        args.extend(ROLES.iter().map(|r| (*r).to_owned()));
        let script = format!("{CORRUPTION_PRELUDE}{corruption}");
        let _: Value = client
            .eval(script, Vec::<String>::new(), args)
            .await
            .unwrap_or_else(|e| panic!("corrupting the namespace: {e}"));
    }
    let dump = Dump::take(&client, &ns).await.expect("snapshot");
    let report = Report {
        violations: dump.findings(),
        ..Report::default()
    };
    println!("{report}");
    report
}

// ---------------------------------------------------------------------------
// The table: every broken variant, and the kinds it must fire.

/// Declares one test per variant (shipped passes, broken fires exactly the
/// kinds listed) and [`VARIANTS`], the same list as data.
macro_rules! variants {
    ($($test:ident: $run:expr => [$($kind:ident),+ $(,)?];)+) => {
        $(
            #[tokio::test]
            async fn $test() {
                shown($run, &[$(ViolationKind::$kind),+]).await;
            }
        )+

        /// Every variant (by its test's name) and the kinds it fires.
        const VARIANTS: &[(&str, &[ViolationKind])] =
            &[$((stringify!($test), &[$(ViolationKind::$kind),+])),+];
    };
}

variants! {
    // Patched scripts.
    a_stale_ack_accepted_is_caught: stale_ack => [AckedThenLeasedAgain, ServerStaleAck];
    a_stale_extend_accepted_is_caught: stale_extend => [StaleExtendAccepted, ServerStaleExtend];
    a_stale_nack_accepted_is_caught: stale_nack => [StaleNackAccepted, ServerStaleNack, NackReportedWrongAttempts, TwoLiveLeases];
    a_stale_release_accepted_is_caught: stale_release => [ServerStaleRelease, AttemptsMiscounted, TwoLiveLeases];
    a_reclaim_on_the_client_clock_is_caught: client_clock => [ServerEarlyReclaim];
    a_claim_that_hands_a_job_out_twice_is_caught: double_claim => [TwoLiveLeases, AttemptsMiscounted, ServerGrantOverLiveLease];
    lease_ids_that_do_not_grow_are_caught: repeated_lease_ids => [LeaseHandedOutTwice, ServerLeaseIdsNotGrowing];
    a_nack_that_loses_the_job_is_caught: lost_on_nack => [Lost];
    a_nack_that_forgets_the_attempt_is_caught: uncounted_nack => [AttemptsMiscounted, NackReportedWrongAttempts, ServerFailureNotOneAttempt];
    a_reclaim_that_forgets_the_attempt_is_caught: uncounted_reclaim => [AttemptsMiscounted, ServerFailureNotOneAttempt];
    a_claim_that_never_reclaims_is_caught: no_reclaim => [NeverFinished];
    a_claim_that_counts_an_attempt_is_caught: counted_grant => [ServerAttemptsChangedWithoutFailure];
    an_extend_that_counts_an_attempt_is_caught: counted_extend => [ServerAttemptsChangedWithoutFailure];
    a_release_that_counts_an_attempt_is_caught: counted_release => [ServerAttemptsChangedWithoutFailure, AttemptsMiscounted];
    a_dead_letter_one_attempt_early_is_caught: dead_too_early => [ServerDeadTooEarly];
    a_dead_letter_one_attempt_late_is_caught: spent_not_dead => [ServerSpentNotDead];
    a_job_leased_again_after_dying_is_caught: |b| dead_but_queued(b, drained())
        => [LeasedAfterDead, ServerGrantedWhileDead];
    a_job_leased_again_after_dying_is_caught_in_a_run_with_requeues:
        |b| dead_but_queued(b, Expect { drained: true, no_requeue: false })
        => [ServerGrantedWhileDead];
    a_repeated_ack_that_completes_again_is_caught: completed_again => [CompletedTwice];
    an_ack_that_keeps_the_job_is_caught: ack_keeps_the_job => [CompletedButLive, NeverFinished];
    an_enqueue_that_ignores_ordering_keys_is_caught: ordering_ignored => [KeyLeasedOutOfOrder, ServerKeyHeldTwice, ServerKeyFinishedOutOfOrder];
    // Hand-made histories.
    client_histories_alone_catch_double_completion_and_loss: client_history_alone => [CompletedTwice, Lost];
    a_job_claimed_but_never_enqueued_is_caught: claimed_never_enqueued => [ClaimedNeverEnqueued];
    an_ack_the_server_applied_twice_is_caught: server_acked_twice => [ServerAckedTwice];
    // Hand-made corruptions of the keys.
    an_undecodable_record_is_caught: |b| corrupted(b, "
        redis.call('HSET', k('jobs'), plain, 'not msgpack')
        redis.call('LREM', k(Q .. 'fifo'), 0, plain)") => [UndecodableRecord];
    a_record_without_payload_is_caught: |b| corrupted(b, "
        local r, p = redis.call('HGET', k('jobs'), plain), '{\"tag\":\"plain\"}'
        assert(string.sub(r, -#p) == p, 'the record ends with its payload')
        redis.call('HSET', k('jobs'), plain, string.sub(r, 1, #r - #p))") => [RecordWithoutPayload];
    a_job_in_two_states_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k(Q .. 'scheduled'), 1, plain)") => [NotInOneState];
    a_job_in_another_queue_is_caught: |b| corrupted(b, "
        redis.call('ZREM', k(Q .. 'scheduled'), later)
        redis.call('ZADD', k('q:other:scheduled'), 1, later)
        redis.call('SADD', k('queues'), 'other')") => [InAnotherQueue];
    a_leased_index_without_a_lease_is_caught: |b| corrupted(b, "
        redis.call('LREM', k(Q .. 'fifo'), 0, plain)
        redis.call('ZADD', k(Q .. 'leased'), 0, plain)") => [LeaseIndexMismatch];
    a_lease_expiry_that_disagrees_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k(Q .. 'leased'), 'XX', 1, urgent)") => [LeaseExpiryMismatch];
    a_dead_index_without_a_death_is_caught: |b| corrupted(b, "
        redis.call('LREM', k(Q .. 'fifo'), 0, plain)
        redis.call('ZADD', k(Q .. 'dead'), 1, plain)") => [DeadIndexMismatch];
    a_wrong_waiting_score_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k(Q .. 'waiting'), 'XX', 1, first)") => [WaitingScoreWrong];
    an_index_entry_without_a_record_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k(Q .. 'waiting'), 1, 'ghost')") => [IndexWithoutRecord];
    a_fifo_entry_without_a_record_is_caught: |b| corrupted(b, "
        redis.call('RPUSH', k(Q .. 'fifo'), 'ghost')") => [IndexWithoutRecord];
    a_fifo_job_also_in_the_zset_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k(Q .. 'waiting'), 1, plain)") => [NotInOneState, WaitingScoreWrong];
    a_prioritised_job_in_the_fifo_is_caught: |b| corrupted(b, "
        redis.call('ZREM', k(Q .. 'waiting'), high)
        redis.call('RPUSH', k(Q .. 'fifo'), high)") => [FifoPriority];
    a_keyed_job_in_the_fifo_is_caught: |b| corrupted(b, "
        redis.call('ZREM', k(Q .. 'waiting'), first)
        redis.call('RPUSH', k(Q .. 'fifo'), first)") => [FifoOrderingKey];
    a_fifo_out_of_order_is_caught: |b| corrupted(b, "
        redis.call('LREM', k(Q .. 'fifo'), 0, plain)
        redis.call('RPUSH', k(Q .. 'fifo'), plain)") => [FifoOutOfOrder];
    an_ordering_key_held_by_another_job_is_caught: |b| corrupted(b, "
        redis.call('HSET', k('ord:active'), 'other-key', first)") => [KeyHolderNotLive];
    an_ordering_key_without_a_holder_is_caught: |b| corrupted(b, "
        redis.call('HDEL', k('ord:active'), 'k')") => [KeyWithoutHolder, KeyHolderOrBlockedWrong];
    a_blocked_holder_is_caught: |b| corrupted(b, "
        redis.call('HSET', k('ord:active'), 'k', second)") => [KeyHolderOrBlockedWrong];
    a_malformed_blocked_member_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k('ord:blocked'), 0, 'malformed')") => [BlockedMemberMalformed, IndexWithoutRecord];
    a_blocked_member_that_disagrees_is_caught: |b| corrupted(b, "
        for _, m in ipairs(redis.call('ZRANGE', k('ord:blocked'), 0, -1)) do
          redis.call('ZREM', k('ord:blocked'), m)
          redis.call('ZADD', k('ord:blocked'), 0, 'j' .. string.sub(m, 2))
        end") => [BlockedMemberMismatch];
    a_wrong_blocked_counter_is_caught: |b| corrupted(b, "
        redis.call('HINCRBY', k('ord:blocked:n'), 'q', 1)") => [BlockedCounterWrong];
    a_dedup_key_pointing_elsewhere_is_caught: |b| corrupted(b, "
        for _, key in ipairs(redis.call('HKEYS', k('dedup'))) do
          redis.call('HSET', k('dedup'), key, plain)
        end") => [DedupNotLive];
    a_dedup_ttl_without_its_key_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k('dedup:ttl'), 1, 'no-such-key')") => [DedupTtlOrphan];
}

/// Fails when a kind of violation has no broken variant that fires it;
/// prints the table kind → variants.
#[test]
fn every_violation_kind_is_shown_to_fire_by_a_broken_variant() {
    let mut missing = Vec::new();
    for kind in ViolationKind::ALL {
        let shown_by: Vec<&str> = VARIANTS
            .iter()
            .filter(|(_, kinds)| kinds.contains(kind))
            .map(|(name, _)| *name)
            .collect();
        println!("{kind:?} → {}", shown_by.join(", "));
        if shown_by.is_empty() {
            missing.push(format!("{kind:?}"));
        }
    }
    assert!(
        missing.is_empty(),
        "no broken variant is shown to fire these kinds of violation: {}",
        missing.join(", ")
    );
}
