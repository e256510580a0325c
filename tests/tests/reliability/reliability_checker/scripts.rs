//! Broken variants that are patched scripts: a copy of a shipped script
//! with one deliberate bug, run against a real redis-server.

use std::time::{SystemTime, UNIX_EPOCH};

use fred::interfaces::HashesInterface;
use fred::types::Value;
use redq_tests::history::record::Reply;
use redq_tests::history::{Expect, JobSpec, Report};
use redq_tests::lua::patched;

use super::bench::*;

/// Script `name` with one patch, as the overrides of a [`Bench`].
pub fn patch(name: &'static str, from: &str, to: &str) -> Vec<(&'static str, String)> {
    vec![(name, patched(name, &[(from, to)]))]
}

/// [`patch`] for the broken run of a variant; the shipped scripts otherwise.
pub fn patch_if(
    broken: bool,
    name: &'static str,
    from: &str,
    to: &str,
) -> Vec<(&'static str, String)> {
    if broken {
        patch(name, from, to)
    } else {
        Vec::new()
    }
}

/// A holds a lease that lapses; B claims the job; A's late ack arrives.
pub async fn stale_ack(broken: bool) -> Report {
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
pub enum Late {
    Nack,
    Extend,
    Release,
}

/// A's lease lapses and B is granted the job; then A, still running, makes
/// the `late` call under its stale lease, once the Redis clock has moved
/// past B's grant (so a call that applies, applies visibly later). B acks;
/// whatever is left is finished with the shipped scripts. Broken, A's
/// `script` has its fence (`from`) patched to `to`.
pub async fn stale_call(
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

pub async fn stale_extend(broken: bool) -> Report {
    stale_call(
        Late::Extend,
        "extend",
        "if not m or m[M.queue] ~= QUEUE or not lease_matches(m, lease) then return { -1, 0 } end",
        "if not m or m[M.queue] ~= QUEUE then return { -1, 0 } end",
        broken,
    )
    .await
}

pub async fn stale_nack(broken: bool) -> Report {
    stale_call(
        Late::Nack,
        "nack",
        "if not lease_matches(m, lease) then return { -1, m[M.attempts], 0, 0 } end",
        "",
        broken,
    )
    .await
}

pub async fn stale_release(broken: bool) -> Report {
    stale_call(
        Late::Release,
        "release",
        "if not lease_matches(m, lease) then return -1 end",
        "",
        broken,
    )
    .await
}

pub fn client_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// B's claim runs on B's clock, 30 s fast, instead of Redis's.
pub async fn client_clock(broken: bool) -> Report {
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
pub async fn double_claim(broken: bool) -> Report {
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
pub async fn repeated_lease_ids(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "local next_lease = redis.call('INCRBY', K.lease_seq, count == 1 and '1' or count) - count + 1",
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
pub async fn lost_on_nack(broken: bool) -> Report {
    let nack = patch(
        "nack",
        "  if place(id, m, due, now) or wake then wake_workers(QUEUE) end",
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
pub async fn fail_once(nack: Vec<(&'static str, String)>, broken: bool) -> Report {
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
pub async fn uncounted_nack(broken: bool) -> Report {
    let nack = patch(
        "nack",
        "m[M.attempts] = m[M.attempts] + 1",
        "m[M.attempts] = m[M.attempts] + 0",
    );
    fail_once(nack, broken).await
}

/// A's lease lapses; the worker's claim reclaims it and is granted the job,
/// and acks it. Broken, the worker's claim is `claim`.
pub async fn lapse_once(claim: Vec<(&'static str, String)>, broken: bool) -> Report {
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
pub async fn uncounted_reclaim(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "m[M.attempts] = m[M.attempts] + 1",
        "m[M.attempts] = m[M.attempts] + 0",
    );
    lapse_once(claim, broken).await
}

/// A reclaim that ignores the job's backoff: the job of a worker that died
/// is leased again at once (a crash loop cycles at lease speed). The job's
/// backoff is 400 ms, so the shipped claim finds nothing until 200-400 ms
/// after the reclaim, and the run claims again until it gets the job.
pub async fn reclaim_without_backoff(broken: bool) -> Report {
    let claim = patch("claim", "local delay = reclaim_delay(m)", "local delay = 0");
    let bench = Bench::new(if broken { &claim[..] } else { &[] }).await;
    let worker = if broken { &bench.b } else { &bench.a };
    let mut spec = job("t1");
    spec.reclaim_backoff_ms = (400, 400);
    bench.a.enqueue(&[spec]).await;
    let lapsed = bench.a.claim(1, 100, &[]).await.remove(0);
    bench.until_redis_past(lapsed.expiry_ms).await;
    let mut again = worker.claim(1, 5_000, &[]).await;
    assert_eq!(
        again.is_empty(),
        !broken,
        "the reclaimed job is back at once only when broken"
    );
    let mut waited = 0;
    while again.is_empty() && waited < 5_000 {
        waited += 100;
        bench.until_redis_past(lapsed.expiry_ms + waited).await;
        again = worker.claim(1, 5_000, &[]).await;
    }
    for j in again {
        worker.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// An ack that completes a job an operator cancelled while it ran: the
/// cancel's "never runs to completion" broken by the holder's late ack.
pub async fn ack_ignoring_a_cancel(broken: bool) -> Report {
    let ack = patch(
        "ack",
        "if not raw and finished_as(id) == 'cancelled' then codes[i] = -2 end",
        "if not raw and finished_as(id) == 'cancelled' then codes[i] = 1 end",
    );
    let bench = Bench::new(if broken { &ack[..] } else { &[] }).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let held = worker.claim(1, 5_000, &[]).await.remove(0);
    let cancel = bench.a.cancel(&held.id).await;
    assert!(
        matches!(
            cancel,
            Reply::Cancel {
                cancelled: true,
                ..
            }
        ),
        "{cancel:?}"
    );
    worker.ack(&held.id, held.lease).await;
    bench.finish(drained()).await
}

/// cancel.lua broken: it answers "cancelled" but leaves the job in its queue.
fn cancel_keeping_the_job() -> Vec<(&'static str, String)> {
    patch(
        "cancel",
        "  cancel_job(one_id, m, state, where, member)\n  settle(1, { one_id })",
        "  settle(1, { one_id })",
    )
}

/// A cancel that answers "cancelled" but leaves the job in its queue: it is
/// claimed and completed afterwards.
pub async fn cancel_that_keeps_the_job(broken: bool) -> Report {
    let cancel = cancel_keeping_the_job();
    let bench = Bench::new(if broken { &cancel[..] } else { &[] }).await;
    let ids = bench.a.enqueue(&[job("t1")]).await;
    let reply = bench.b.cancel(&ids[0]).await;
    assert!(
        matches!(
            reply,
            Reply::Cancel {
                cancelled: true,
                ..
            }
        ),
        "{reply:?}"
    );
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// The same broken cancel, with nobody claiming afterwards: the cancelled
/// job is still queued when the run ends.
pub async fn cancel_left_behind(broken: bool) -> Report {
    let cancel = cancel_keeping_the_job();
    let bench = Bench::new(if broken { &cancel[..] } else { &[] }).await;
    let ids = bench.a.enqueue(&[job("t1")]).await;
    let reply = bench.b.cancel(&ids[0]).await;
    assert!(
        matches!(
            reply,
            Reply::Cancel {
                cancelled: true,
                ..
            }
        ),
        "{reply:?}"
    );
    bench
        .finish(Expect {
            drained: false,
            no_requeue: true,
        })
        .await
}

/// A note script without the lease fence: a holder whose lease lapsed (and
/// whose job another worker now holds) still writes the job's progress.
pub async fn stale_note(broken: bool) -> Report {
    let note = patch(
        "note",
        "if not m or m[M.queue] ~= QUEUE or not lease_matches(m, lease) then return { -1 } end",
        "if not m or m[M.queue] ~= QUEUE then return { -1 } end",
    );
    let bench = Bench::new(if broken { &note[..] } else { &[] }).await;
    bench.a.enqueue(&[job("t1")]).await;
    let lapsed = bench.a.claim(1, 100, &[]).await.remove(0);
    bench.until_redis_past(lapsed.expiry_ms).await;
    let current = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let code = bench
        .b
        .note(&lapsed.id, lapsed.lease, r#"{"pct":50}"#)
        .await;
    assert_eq!(code, if broken { 1 } else { -1 }, "note code");
    bench.a.ack(&current.id, current.lease).await;
    bench.finish(drained()).await
}

/// A delete that ignores the lease check: a running job is deleted without
/// force (its holder's work is thrown away unasked). The holder then acks.
pub async fn delete_ignoring_the_lease(broken: bool) -> Report {
    let delete = patch(
        "delete_job",
        "if state == 'leased' and not force then",
        "if false then",
    );
    let bench = Bench::new(if broken { &delete[..] } else { &[] }).await;
    bench.a.enqueue(&[job("t1")]).await;
    let held = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let code = bench.b.delete(&held.id, false).await;
    assert_eq!(code, if broken { 1 } else { -1 }, "delete code");
    bench.a.ack(&held.id, held.lease).await;
    bench.finish(drained()).await
}

/// An edit that skips the state check: a running job's payload is replaced
/// under its holder.
pub async fn edit_while_leased(broken: bool) -> Report {
    let edit = patch(
        "edit_job",
        "if state == 'leased' then return { -1, state } end",
        "",
    );
    let bench = Bench::new(if broken { &edit[..] } else { &[] }).await;
    bench.a.enqueue(&[job("t1")]).await;
    let held = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let code = bench
        .b
        .edit(&held.id, r#"{"tag":"t1","edited":true}"#)
        .await;
    assert_eq!(code, if broken { 1 } else { -1 }, "edit code");
    bench.a.ack(&held.id, held.lease).await;
    bench.finish(drained()).await
}

/// An edit that also raises the job's attempt limit: more than the payload.
pub async fn edit_beyond_the_payload(broken: bool) -> Report {
    let edit = patch(
        "edit_job",
        "if state == 'leased' then return { -1, state } end",
        "if state == 'leased' then return { -1, state } end\nm[M.max_attempts] = 99",
    );
    let bench = Bench::new(if broken { &edit[..] } else { &[] }).await;
    let id = bench.a.enqueue(&[job("t2")]).await.remove(0);
    assert_eq!(bench.b.edit(&id, r#"{"tag":"t2","v":2}"#).await, 1);
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A promote that skips the state check for a running job: it is placed in
/// the queue while its lease is live (and left there, naming no record, once
/// the holder acks).
pub async fn promote_while_leased(broken: bool) -> Report {
    let promote = patch(
        "promote_job",
        "if state == 'scheduled' then",
        "if state == 'scheduled' or state == 'leased' then",
    );
    let bench = Bench::new(if broken { &promote[..] } else { &[] }).await;
    bench.a.enqueue(&[job("t1")]).await;
    let held = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let code = bench.b.promote(&held.id).await;
    assert_eq!(code, if broken { 1 } else { 3 }, "promote code");
    bench.a.ack(&held.id, held.lease).await;
    bench.finish(drained()).await
}

/// An operator's dead-letter that skips the state check for a running job:
/// the job dies under its holder, whose ack then completes it and leaves
/// its dead-set entry behind. Both runs dead-letter a waiting job too,
/// which the checker takes as a sound end.
pub async fn dead_letter_while_leased(broken: bool) -> Report {
    let dead_letter = patch(
        "dead_letter_job",
        "local REFUSED = { leased = 3, dead = 4, awaiting = 8 }",
        "local REFUSED = { dead = 4, awaiting = 8 }",
    );
    let bench = Bench::new(if broken { &dead_letter[..] } else { &[] }).await;
    let ids = bench.a.enqueue(&[job("t1"), job("t2")]).await;
    let held = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let waiting = ids.iter().find(|id| **id != held.id).expect("two jobs");
    assert_eq!(bench.b.dead_letter_job(waiting).await, 1, "waiting job");
    let code = bench.b.dead_letter_job(&held.id).await;
    assert_eq!(code, if broken { 1 } else { 3 }, "dead-letter code");
    bench.a.ack(&held.id, held.lease).await;
    bench.finish(drained()).await
}

/// A claim that never reclaims lapsed leases: a dead worker's job stays
/// leased for ever (the run cannot drain).
pub async fn no_reclaim(broken: bool) -> Report {
    let claim = patch("claim", "reclaim_lapsed(now, RECLAIM_PER_CALL)\n", "\n");
    lapse_once(claim, broken).await
}

/// A claim told to start by a moment long past (its caller gave up on
/// it) must lease nothing; the job is then claimed in time and acked.
/// Broken, the claim ignores the moment and leases the job anyway.
pub async fn start_by_ignored(broken: bool) -> Report {
    let claim = patch(
        "claim",
        "if start_by and now > start_by then return { now } end",
        "",
    );
    let bench = Bench::new(&claim).await;
    let worker = if broken { &bench.b } else { &bench.a };
    bench.a.enqueue(&[job("t1")]).await;
    let mut jobs = worker.claim(1, 5_000, &[Value::from("1")]).await;
    if jobs.is_empty() {
        jobs = worker.claim(1, 5_000, &[]).await;
    }
    for j in jobs {
        worker.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A claim that counts an attempt when it grants a lease (not only when
/// the attempt fails). The fast path splices the lease into the bytes, so
/// it is turned off to reach the field-by-field one.
pub async fn counted_grant(broken: bool) -> Report {
    let claim = vec![(
        "claim",
        patched(
            "claim",
            &[
                (
                    "      if unleased then",
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
pub async fn counted_extend(broken: bool) -> Report {
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
pub async fn counted_release(broken: bool) -> Report {
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
pub async fn fail_until_dead(
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

pub const SPENT: &str =
    "local spent = m[M.max_attempts] > 0 and m[M.attempts] >= m[M.max_attempts]";

/// Attempts counted as spent one failure early.
pub async fn dead_too_early(broken: bool) -> Report {
    let nack = patch(
        "nack",
        SPENT,
        "local spent = m[M.max_attempts] > 0 and m[M.attempts] + 1 >= m[M.max_attempts]",
    );
    fail_until_dead(nack, 2, broken).await
}

/// Attempts counted as spent one failure late.
pub async fn spent_not_dead(broken: bool) -> Report {
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
pub async fn dead_but_queued(broken: bool, expect: Expect) -> Report {
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
pub async fn completed_again(broken: bool) -> Report {
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
pub async fn ack_keeps_the_job(broken: bool) -> Report {
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

/// An ack that, broken, deletes a detached record (`lib/job_record.lua`)
/// but leaves its payload in `{ns}:detached`. b (whose scripts the variant
/// patches) writes every payload detached, claims both jobs, whose payloads
/// come back apart from their records, and acks them.
pub async fn ack_leaves_a_detached_payload(broken: bool) -> Report {
    let ack = patch_if(
        broken,
        "ack",
        "if detached_done then redis.call('HDEL', K.detached, unpack(detached_done)) end",
        "",
    );
    let mut bench = Bench::new(&ack).await;
    bench.b.write_detached();
    bench.b.enqueue(&[job("t1"), job("t2")]).await;
    let claimed = bench.b.claim(2, 5_000, &[]).await;
    let tags: Vec<&str> = claimed.iter().map(|j| j.tag.as_str()).collect();
    assert_eq!(tags, ["t1", "t2"], "the payloads come back with the claim");
    for j in &claimed {
        bench.b.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// An enqueue that lets every job of an ordering key through at once. Both
/// are claimed; the first fails once and is leased again after the second
/// was; the second is acked before the first.
pub async fn ordering_ignored(broken: bool) -> Report {
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

/// A worker parks while a job waits: the park hands the job over, leased to
/// it, and another worker's claim finds nothing. Broken, the park's
/// hand-off leases the job but leaves it waiting, so the claim leases it
/// again over the live lease.
pub async fn park_hands_off_a_job_it_leaves_waiting(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "park",
        "local ids = pop_waiting(p.capacity - p.handed)",
        "local ids = redis.call('LRANGE', K.fifo, 0, p.capacity - p.handed - 1)",
    );
    let bench = Bench::new(&overrides).await;
    let (parker, other) = if broken {
        (&bench.b, &bench.a)
    } else {
        (&bench.a, &bench.b)
    };
    let ids = parker.enqueue(&[job("t1")]).await;
    let handed = parker.park(5, 10_000, &ids).await;
    assert_eq!(handed.len(), 1, "the park hands the waiting job over");
    for j in other.claim(1, 10_000, &[]).await {
        other.ack(&j.id, j.lease).await;
    }
    parker.ack(&handed[0].id, handed[0].lease).await;
    bench.finish(drained()).await
}

/// An enqueue onto an empty queue hands its job straight to the parked
/// worker (`lib/handoff.lua` `hand_off_fresh`) and, broken, pushes it onto
/// the fifo list as well: another worker's claim leases it a second time.
pub async fn enqueue_hands_off_a_job_it_leaves_waiting(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "enqueue",
        "for from = written + 1, #fifo, 2 * CHUNK do",
        "for from = 1, #fifo, 2 * CHUNK do",
    );
    let bench = Bench::new(&overrides).await;
    // The enqueue runs on b, whose scripts the variant patches.
    let (parker, other) = (&bench.a, &bench.b);
    assert!(
        parker.park(5, 10_000, &[]).await.is_empty(),
        "nothing waits when the worker parks"
    );
    let ids = other.enqueue(&[job("t1")]).await;
    let handed = parker.handed(5, 10_000, &ids).await;
    assert_eq!(
        handed.len(),
        1,
        "the enqueue hands its job to the parked worker"
    );
    for j in other.claim(1, 10_000, &[]).await {
        other.ack(&j.id, j.lease).await;
    }
    parker.ack(&handed[0].id, handed[0].lease).await;
    bench.finish(drained()).await
}

/// A lone enqueue resent (fred resends a call in flight when its connection
/// drops) after its job was claimed: the shipped script finds the job with
/// its HSETNX and creates nothing; the broken one writes the job afresh over
/// its live lease and pushes it again, so a second claim leases it too.
pub async fn resent_lone_enqueue_writes_again(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "enqueue",
        "if redis.call('HSETNX', K.jobs, ids[1], record_pairs[2]) == 0 then return { 2, ids[1] } end",
        "redis.call('HSET', K.jobs, ids[1], record_pairs[2])",
    );
    let bench = Bench::new(&overrides).await;
    // The enqueue and its resend run on b, whose scripts the variant patches.
    let (holder, producer) = (&bench.a, &bench.b);
    let specs = [job("t1")];
    let ids = producer.enqueue(&specs).await;
    let held = holder.claim(1, 10_000, &[]).await;
    assert_eq!(held.len(), 1, "the job is claimed before the resend");
    assert_eq!(
        producer.resend_enqueue(&specs, &ids).await,
        ids,
        "the resend names the job it sent"
    );
    for j in producer.claim(1, 10_000, &[]).await {
        producer.ack(&j.id, j.lease).await;
    }
    holder.ack(&held[0].id, held[0].lease).await;
    bench.finish(drained()).await
}

/// A compact record's first lease (`lib/job_record.lua`
/// `compact_after_lease`) that, broken, stores max_attempts at its default
/// (unlimited): the grant drops the job's attempt ceiling. b enqueues the
/// job compact and claims it with the claim the variant patches; it fails
/// once, then is claimed again and acked.
pub async fn compact_lease_drops_max_attempts(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "claim",
        "max_bytes .. gaps[3] .. name_bytes .. gaps[4]",
        "gaps[5] .. gaps[3] .. name_bytes .. gaps[4]",
    );
    let mut bench = Bench::new(&overrides).await;
    bench.b.write_compact();
    let spec = JobSpec {
        max_attempts: 3,
        ..job("t1")
    };
    let ids = bench.b.enqueue(&[spec]).await;
    let jobs = redq::keys::Keys::new(&bench.ns).jobs();
    let raw: Vec<u8> = bench
        .server
        .client()
        .await
        .hget(jobs, &ids[0])
        .await
        .expect("HGET");
    assert_eq!(
        raw[0], 0x95,
        "stored compact, max_attempts among its 5 fields"
    );
    let first = bench.b.claim(1, 10_000, &[]).await.remove(0);
    bench.b.nack(&first.id, first.lease, 0, false).await;
    let again = bench.b.claim(1, 10_000, &[]).await.remove(0);
    bench.b.ack(&again.id, again.lease).await;
    bench.finish(drained()).await
}

/// A record rewrite that takes a running job's detached record too (both
/// guards gone: the walk names it, the call by id rewrites it). Its worker
/// may still read the payload apart, which the rewrite has moved.
pub async fn rewrite_while_leased(broken: bool) -> Report {
    let rewrite = if broken {
        let guards = [
            ("    if len and not cleared then", "    if false then"),
            ("    if len and cleared then", "    if len then"),
        ];
        vec![("rewrite_records", patched("rewrite_records", &guards))]
    } else {
        Vec::new()
    };
    let mut bench = Bench::new(&rewrite).await;
    bench.b.write_detached();
    bench.b.enqueue(&[job("t1"), job("t2")]).await;
    let held = bench.a.claim(1, 5_000, &[]).await.remove(0);
    let rewritten = bench.b.rewrite_records().await;
    assert_eq!(rewritten, if broken { 2 } else { 1 }, "records rewritten");
    bench.a.ack(&held.id, held.lease).await;
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A record rewrite that raises a compact job's attempt limit as it
/// rewrites it: more than its layout.
pub async fn rewrite_beyond_the_layout(broken: bool) -> Report {
    let rewrite = patch_if(
        broken,
        "rewrite_records",
        "local m, payload = split_record(raw)\n",
        "local m, payload = split_record(raw)\nm[M.max_attempts] = 99\n",
    );
    let mut bench = Bench::new(&rewrite).await;
    bench.b.write_compact();
    bench.b.enqueue(&[job("t1")]).await;
    assert_eq!(bench.b.rewrite_records().await, 1, "records rewritten");
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A record rewrite that joins another payload to a detached record than
/// the one it kept apart.
pub async fn rewrite_with_another_payload(broken: bool) -> Report {
    let rewrite = patch_if(
        broken,
        "rewrite_records",
        "encode_record(m, payload))\n        redis.call('HDEL'",
        "encode_record(m, '{\"tag\":\"other\"}'))\n        redis.call('HDEL'",
    );
    let mut bench = Bench::new(&rewrite).await;
    bench.b.write_detached();
    bench.b.enqueue(&[job("t1")]).await;
    assert_eq!(bench.b.rewrite_records().await, 1, "records rewritten");
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    bench.finish(drained()).await
}

/// A queue's dead-letter bound whose trim takes the oldest waiting job
/// instead of the oldest dead letter (lib/dead_bound.lua): a job that never
/// died is deleted, so it is lost. Shipped, the trim deletes the older dead
/// letter, which the checker takes as deleted.
pub async fn dead_bound_trims_a_waiting_job(broken: bool) -> Report {
    let nack = patch_if(
        broken,
        "nack",
        "dead_bound_delete(redis.call('ZRANGE', K.dead, 0, math.min(over, limit - #gone) - 1), gone)",
        "dead_bound_delete(redis.call('LRANGE', K.fifo, 0, math.min(over, limit - #gone) - 1), gone)",
    );
    let bench = Bench::new(&nack).await;
    // At most one dead letter in q (the field redq's set_dead_bound writes).
    let client = bench.server.client().await;
    let retention = format!("{{{}}}:retention", bench.ns);
    let _: i64 = client
        .hset(&retention, ("dead\nq", "1 0"))
        .await
        .expect("HSET of the bound");
    bench.a.enqueue(&[job("t1"), job("t2"), job("t3")]).await;
    for j in bench.b.claim(2, 5_000, &[]).await {
        bench.b.nack(&j.id, j.lease, 0, true).await;
    }
    for j in bench.a.claim(10, 5_000, &[]).await {
        bench.a.ack(&j.id, j.lease).await;
    }
    let report = bench.finish(drained()).await;
    if !broken {
        // The dead letter the bound trimmed ends deleted, not lost.
        assert_eq!(report.figures.get("ended_deleted"), Some(&1), "{report}");
        assert_eq!(report.figures.get("ended_dead"), Some(&1), "{report}");
    }
    report
}
