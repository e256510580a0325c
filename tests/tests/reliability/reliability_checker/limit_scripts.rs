//! Broken variants of flow control that are patched scripts: a claim whose
//! limiter forgets one thing, run against a real redis-server.

use redq_tests::history::{Expect, JobSpec, Report};

use super::bench::*;
use super::scripts::patch;

/// A job of limit key `key` ("" for none).
fn keyed(tag: &str, key: &str) -> JobSpec {
    JobSpec {
        limit_key: key.into(),
        ..JobSpec::new(tag)
    }
}

/// Three jobs of key `key` under the limit `spec` of `scope`; the worker
/// claims up to 3 at a time and acks what it got, while claims hand out
/// anything, at most `rounds` times. Broken, the worker's claim is `claim`.
async fn claim_three(
    claim: Vec<(&'static str, String)>,
    scope: &str,
    spec: [u64; 3],
    key: &str,
    rounds: usize,
    expect: Expect,
    broken: bool,
) -> Report {
    let bench = Bench::new(&claim).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.set_limit(scope, "", spec).await;
    bench
        .a
        .enqueue(&[keyed("t1", key), keyed("t2", key), keyed("t3", key)])
        .await;
    for _ in 0..rounds {
        let jobs = worker.claim(3, 60_000, &[]).await;
        if jobs.is_empty() {
            break;
        }
        for j in jobs {
            worker.ack(&j.id, j.lease).await;
        }
    }
    bench.finish(expect).await
}

/// A claim that ignores the key's concurrency (each key at most 1).
pub async fn key_concurrency_ignored(broken: bool) -> Report {
    let claim = patch("claim", "  if l.c > 0 then room = l.c - leased end\n", "");
    claim_three(claim, "each_key", [1, 0, 0], "k", 5, drained(), broken).await
}

/// A claim that ignores the queue's concurrency (at most 1 leased).
pub async fn queue_concurrency_ignored(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "if spec.qc > 0 then room = spec.qc - redis.call('ZCARD', K.leased) end",
        "",
    );
    claim_three(claim, "queue", [1, 0, 0], "", 5, drained(), broken).await
}

/// Under a rate of 2 a minute the third job stays held (the run does not
/// drain); a claim that records no start of the key lets it start too.
pub async fn key_start_not_recorded(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "redis.call('ZADD', K.lim_starts, unpack(members))",
        "",
    );
    let undrained = Expect {
        drained: false,
        no_requeue: true,
    };
    claim_three(claim, "each_key", [0, 2, 60_000], "k", 3, undrained, broken).await
}

/// The same for the queue's own rate, with jobs that have no key.
pub async fn queue_start_not_recorded(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "redis.call('ZADD', K.lim_starts, unpack(queue_starts))",
        "",
    );
    let undrained = Expect {
        drained: false,
        no_requeue: true,
    };
    claim_three(claim, "queue", [0, 2, 60_000], "", 3, undrained, broken).await
}

/// A claim that leases a key's held jobs but leaves them in the held set.
pub async fn held_left_behind(broken: bool) -> Report {
    let claim = patch("claim", "redis.call('ZREM', K.lim_held, unpack(taken))", "");
    claim_three(claim, "each_key", [3, 0, 0], "k", 1, drained(), broken).await
}

/// A worker pushes key k back a minute (a remote's 429) by releasing its
/// job; nothing of the key may start then. Broken, the release ignores the
/// push-back and the key's jobs start at once.
pub async fn push_back_ignored(broken: bool) -> Report {
    let release = patch(
        "release",
        "if pushback then push_back(m[M.limit_key], now + pushback) end",
        "",
    );
    let bench = Bench::new(&[]).await;
    let fenced = bench
        .fenced(&bench.a, if broken { &release[..] } else { &[] })
        .await;
    bench.a.enqueue(&[keyed("t1", "k"), keyed("t2", "k")]).await;
    let first = bench.a.claim(1, 60_000, &[]).await.remove(0);
    fenced
        .release_pushing_back(&first.id, first.lease, 60_000)
        .await;
    for j in bench.a.claim(3, 60_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    let undrained = Expect {
        drained: false,
        no_requeue: true,
    };
    bench.finish(undrained).await
}
