//! Broken variants of the workflow scripts (gates: `lua/lib/gate.lua`,
//! `lua/lib/gate_decide.lua`, `lua/gate_decide.lua`), each a patched copy
//! of a shipped script run against a real redis-server: every workflow
//! rule of the checker (`redq_tests::history::workflows`) fires on one.
//!
//! Every call goes through the bench's client `b`, which runs the patched
//! scripts when broken and the shipped ones otherwise.

use redq_tests::history::raw::{RawQueue, WaiterSpec};
use redq_tests::history::Report;

use super::bench::*;
use super::scripts::patch_if;

/// A waiter of this test's gates.
fn waiter<'a>(tag: &str, condition: &'a str, on_failure: &'a str) -> WaiterSpec<'a> {
    WaiterSpec {
        job: job(tag),
        condition,
        on_failure,
    }
}

/// A new gate id (a batch's: made like a job id).
fn gate_id() -> String {
    ulid::Ulid::new().to_string()
}

/// Claims until `ids` are all leased; returns their leases in `ids` order.
async fn lease_all(q: &RawQueue, ids: &[String]) -> Vec<u64> {
    let claimed = q.claim(ids.len() + 8, 60_000, &[]).await;
    ids.iter()
        .map(|id| {
            claimed
                .iter()
                .find(|c| c.id == *id)
                .unwrap_or_else(|| panic!("job {id} was not claimed: {claimed:?}"))
                .lease
        })
        .collect()
}

/// Claims and acks whatever is due, until a claim hands out nothing.
async fn work_off(q: &RawQueue) {
    loop {
        let claimed = q.claim(10, 60_000, &[]).await;
        if claimed.is_empty() {
            return;
        }
        for c in claimed {
            q.ack(&c.id, c.lease).await;
        }
    }
}

/// A batch of two members with an `on_complete` callback; the first
/// member's ack fires the gate when broken (it fires with one pending), so
/// the next claim releases the callback while the second still runs.
pub async fn fired_with_a_member_pending(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "ack",
        "if g[G.state] == 'sealed' and g[G.pending] <= 0 then",
        "if g[G.state] == 'sealed' and g[G.pending] <= 1 then",
    );
    let bench = Bench::new(&overrides).await;
    let q = &bench.b;
    let g = gate_id();
    let members = q.enqueue_into(&[job("m1"), job("m2")], &g, "batch").await;
    q.seal(&g, "batch", &[], &[waiter("done", "all", "dead")])
        .await;
    let leases = lease_all(q, &members).await;
    q.ack(&members[0], leases[0]).await;
    // Broken, this claim releases and leases the callback.
    let early = q.claim(10, 60_000, &[]).await;
    q.ack(&members[1], leases[1]).await;
    for c in early {
        q.ack(&c.id, c.lease).await;
    }
    work_off(q).await;
    bench.finish(drained()).await
}

/// A batch of two members with an `on_success` callback (failure: dead);
/// one member completes, the other is dead-lettered. Broken, the claim's
/// decision ignores the condition and releases the callback.
pub async fn success_condition_ignored(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "claim",
        "elseif condition == 'all' or g[G.failed] == 0 then",
        "elseif true then",
    );
    let bench = Bench::new(&overrides).await;
    let q = &bench.b;
    let g = gate_id();
    let members = q.enqueue_into(&[job("m1"), job("m2")], &g, "batch").await;
    q.seal(&g, "batch", &[], &[waiter("ok", "success", "dead")])
        .await;
    let leases = lease_all(q, &members).await;
    q.ack(&members[0], leases[0]).await;
    q.nack(&members[1], leases[1], 0, true).await;
    work_off(q).await;
    bench.finish(drained()).await
}

/// A batch of two members whose `on_complete` callback was released and
/// is running; an operator then "releases" it as if it were held. Broken,
/// gate_decide skips its check that the waiter is held, and decides it again.
pub async fn decided_again_by_an_operator(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "gate_decide",
        "if decision ~= 'held' or not wf.is_awaiting(id, m) then return { -1, decision } end",
        "",
    );
    let bench = Bench::new(&overrides).await;
    let q = &bench.b;
    let g = gate_id();
    let members = q.enqueue_into(&[job("m1"), job("m2")], &g, "batch").await;
    let callback = q
        .seal(&g, "batch", &[], &[waiter("done", "all", "dead")])
        .await;
    let leases = lease_all(q, &members).await;
    for (id, lease) in members.iter().zip(leases) {
        q.ack(id, lease).await;
    }
    let lease = lease_all(q, &callback).await[0];
    let code = q.decide_held(&callback[0], "release").await;
    assert_eq!(code == 1, broken, "gate_decide answered {code}");
    q.ack(&callback[0], lease).await;
    work_off(q).await;
    bench.finish(drained()).await
}

/// A batch of three members, still open: one is dead-lettered, then
/// deleted, then the others complete, then the batch is sealed. Broken,
/// the dead letter keeps its gate field (the count does not clear it), so
/// the delete counts it a second time.
pub async fn counted_again_when_deleted(broken: bool) -> Report {
    let overrides = patch_if(broken, "nack", "  m[M.gate], m[M.more_gates] = '', 0\n", "");
    let bench = Bench::new(&overrides).await;
    let q = &bench.b;
    let g = gate_id();
    let members = q
        .enqueue_into(&[job("m1"), job("m2"), job("m3")], &g, "batch")
        .await;
    let leases = lease_all(q, &members).await;
    q.nack(&members[0], leases[0], 0, true).await;
    assert_eq!(
        q.delete(&members[0], false).await,
        1,
        "the dead letter deleted"
    );
    for i in 1..3 {
        q.ack(&members[i], leases[i]).await;
    }
    q.seal(&g, "batch", &[], &[waiter("done", "all", "dead")])
        .await;
    work_off(q).await;
    bench.finish(drained()).await
}

/// A batch of two members with an `on_complete` callback; both complete.
/// Broken, the gate is done but its waiters are never woken, so no claim
/// decides the callback.
pub async fn waiters_never_woken(broken: bool) -> Report {
    let overrides = patch_if(
        broken,
        "ack",
        "  wf.wake_waiters(gid, g)\n  emit(K.events, 'gate_done'",
        "  emit(K.events, 'gate_done'",
    );
    let bench = Bench::new(&overrides).await;
    let q = &bench.b;
    let g = gate_id();
    let members = q.enqueue_into(&[job("m1"), job("m2")], &g, "batch").await;
    q.seal(&g, "batch", &[], &[waiter("done", "all", "dead")])
        .await;
    let leases = lease_all(q, &members).await;
    for (id, lease) in members.iter().zip(leases) {
        q.ack(id, lease).await;
    }
    work_off(q).await;
    bench.finish(drained()).await
}
