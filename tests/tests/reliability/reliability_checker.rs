//! The checker is not vacuous: every kind of violation it knows
//! ([`ViolationKind::ALL`]) is shown to fire by a broken variant, and the
//! same run with the shipped scripts (or the sound history) passes.
//!
//! A variant is one of:
//! - a patched script (`scripts`): a copy of a shipped script from `lua/`
//!   with one deliberate bug (`redq_tests::lua::patched` panics when its
//!   pattern no longer matches,
//!   so a script change cannot make a variant silently vacuous), run with
//!   `EVALSHA` against a real redis-server whose `MONITOR` record and final
//!   keys are then checked;
//! - a hand-made history (`histories`), where no script can easily
//!   produce the defect;
//! - a hand-made corruption of a sound namespace's keys (`keys`), for the
//!   structural check.
//!
//! `bench` holds what they share: a server with a `MONITOR`, two raw
//! clients (one with the shipped scripts, one with the variant), and the
//! extend and release calls the raw clients lack.
//!
//! Each variant asserts the exact set of kinds it fires (a defect often
//! breaks more than one rule; the set says which). The table at the bottom
//! is the one list of variants: each row is a test, and
//! `every_violation_kind_is_shown_to_fire_by_a_broken_variant` fails when a
//! kind has no row.

use std::collections::BTreeSet;
use std::future::Future;

use redq_tests::history::{Expect, Report, ViolationKind};

#[path = "reliability_checker/bench.rs"]
mod bench;
#[path = "reliability_checker/histories.rs"]
mod histories;
#[path = "reliability_checker/keys.rs"]
mod keys;
#[path = "reliability_checker/limit_histories.rs"]
mod limit_histories;
#[path = "reliability_checker/limit_scripts.rs"]
mod limit_scripts;
#[path = "reliability_checker/scripts.rs"]
mod scripts;
#[path = "reliability_checker/workflow_scripts.rs"]
mod workflow_scripts;

use bench::drained;
use histories::*;
use keys::corrupted;
use limit_histories::*;
use limit_scripts::*;
use scripts::*;
use workflow_scripts::*;

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
    a_park_that_hands_a_job_off_and_leaves_it_waiting_is_caught: park_hands_off_a_job_it_leaves_waiting => [TwoLiveLeases, AttemptsMiscounted, ServerGrantOverLiveLease];
    an_enqueue_that_hands_a_job_off_and_leaves_it_waiting_is_caught: enqueue_hands_off_a_job_it_leaves_waiting => [TwoLiveLeases, AttemptsMiscounted, ServerGrantOverLiveLease];
    a_resent_lone_enqueue_that_writes_its_job_again_is_caught: resent_lone_enqueue_writes_again => [TwoLiveLeases, AttemptsMiscounted, ServerEarlyReclaim, ServerFailureNotOneAttempt];
    a_compact_records_lease_that_drops_its_max_attempts_is_caught: compact_lease_drops_max_attempts => [ServerGrantChangedJob];
    lease_ids_that_do_not_grow_are_caught: repeated_lease_ids => [LeaseHandedOutTwice, ServerLeaseIdsNotGrowing];
    a_nack_that_loses_the_job_is_caught: lost_on_nack => [Lost];
    a_dead_bound_that_trims_a_waiting_job_is_caught: dead_bound_trims_a_waiting_job => [Lost];
    a_nack_that_forgets_the_attempt_is_caught: uncounted_nack => [AttemptsMiscounted, NackReportedWrongAttempts, ServerFailureNotOneAttempt];
    a_reclaim_that_forgets_the_attempt_is_caught: uncounted_reclaim => [AttemptsMiscounted, ServerFailureNotOneAttempt];
    a_claim_that_never_reclaims_is_caught: no_reclaim => [NeverFinished];
    a_reclaim_that_ignores_the_backoff_is_caught: reclaim_without_backoff => [ServerReclaimedWithoutBackoff];
    an_ack_that_completes_a_cancelled_job_is_caught: ack_ignoring_a_cancel => [CancelledAndCompleted];
    a_cancel_that_leaves_the_job_queued_is_caught: cancel_that_keeps_the_job => [CancelledAndCompleted, LeasedAfterCancel];
    a_cancelled_job_left_in_the_queue_is_caught: cancel_left_behind => [CancelledButLive];
    a_note_from_a_stale_holder_is_caught: stale_note => [ServerStaleNote];
    a_delete_that_ignores_the_lease_is_caught: delete_ignoring_the_lease => [ServerDeletedWhileLeased];
    an_edit_of_a_running_job_is_caught: edit_while_leased => [ServerEditedWhileLeased];
    an_edit_that_changes_more_than_the_payload_is_caught: edit_beyond_the_payload => [ServerEditBeyondPayload];
    a_rewrite_of_a_running_jobs_record_is_caught: rewrite_while_leased => [ServerRewroteLeased];
    a_rewrite_that_changes_more_than_the_layout_is_caught: rewrite_beyond_the_layout => [ServerRewriteChangedJob];
    a_rewrite_that_joins_another_payload_is_caught: rewrite_with_another_payload => [ServerRewriteChangedJob, ClaimedNeverEnqueued];
    a_promote_of_a_running_job_is_caught: promote_while_leased => [ServerPromotedOutOfState, IndexWithoutRecord];
    a_dead_letter_of_a_running_job_is_caught: dead_letter_while_leased => [ServerDeadLetteredOutOfState, CompletedButLive, IndexWithoutRecord];
    a_claim_that_counts_an_attempt_is_caught: counted_grant => [ServerAttemptsChangedWithoutFailure, ServerGrantChangedJob];
    a_claim_past_its_start_by_that_leases_is_caught: start_by_ignored => [ServerGrantedPastStartBy];
    an_extend_that_counts_an_attempt_is_caught: counted_extend => [ServerAttemptsChangedWithoutFailure];
    a_release_that_counts_an_attempt_is_caught: counted_release => [ServerAttemptsChangedWithoutFailure, AttemptsMiscounted];
    a_dead_letter_one_attempt_early_is_caught: dead_too_early => [ServerDeadTooEarly];
    a_dead_letter_one_attempt_late_is_caught: spent_not_dead => [ServerSpentNotDead];
    a_job_leased_again_after_dying_is_caught: |b| dead_but_queued(b, drained())
        => [LeasedAfterDead, ServerGrantedWhileDead];
    a_job_leased_again_after_dying_is_caught_in_a_run_with_requeues:
        |b| dead_but_queued(b, Expect { drained: true, no_requeue: false })
        => [ServerGrantedWhileDead];
    a_claim_that_ignores_a_keys_concurrency_is_caught: key_concurrency_ignored => [ServerKeyConcurrencyExceeded];
    a_claim_that_ignores_the_queues_concurrency_is_caught: queue_concurrency_ignored => [ServerQueueConcurrencyExceeded];
    a_claim_that_records_no_start_of_a_key_is_caught: key_start_not_recorded => [ServerKeyRateExceeded];
    a_claim_that_records_no_start_of_the_queue_is_caught: queue_start_not_recorded => [ServerQueueRateExceeded];
    a_release_that_ignores_its_push_back_is_caught: push_back_ignored => [ServerStartedWhilePushedBack];
    a_claim_that_leaves_leased_jobs_held_is_caught: held_left_behind => [ServerLeasedWhileHeld, IndexWithoutRecord, LimitCountWrong];
    a_repeated_ack_that_completes_again_is_caught: completed_again => [CompletedTwice];
    an_ack_that_keeps_the_job_is_caught: ack_keeps_the_job => [CompletedButLive, NeverFinished];
    an_ack_that_leaves_a_detached_payload_is_caught: ack_leaves_a_detached_payload => [DetachedPayloadOrphaned];
    an_enqueue_that_ignores_ordering_keys_is_caught: ordering_ignored => [KeyLeasedOutOfOrder, ServerKeyHeldTwice, ServerKeyFinishedOutOfOrder];
    // Patched workflow scripts (gates).
    a_gate_that_fires_with_a_member_pending_is_caught: fired_with_a_member_pending => [ServerWaiterReleasedEarly];
    a_claim_that_ignores_the_success_condition_is_caught: success_condition_ignored => [ServerReleasedDespiteFailure];
    an_operator_decision_on_a_waiter_not_held_is_caught: decided_again_by_an_operator => [ServerWaiterDecidedTwice];
    a_dead_letter_that_keeps_its_gate_is_counted_twice_and_caught: counted_again_when_deleted => [ServerMemberCountedTwice];
    a_gate_that_never_wakes_its_waiters_is_caught: waiters_never_woken => [NeverFinished, WaiterNeverDecided];
    // Hand-made histories.
    client_histories_alone_catch_double_completion_and_loss: client_history_alone => [CompletedTwice, Lost];
    a_job_claimed_but_never_enqueued_is_caught: claimed_never_enqueued => [ClaimedNeverEnqueued];
    an_ack_the_server_applied_twice_is_caught: server_acked_twice => [ServerAckedTwice];
    // Hand-made server records of flow control.
    a_key_over_its_concurrency_is_caught: key_over_its_concurrency => [ServerKeyConcurrencyExceeded];
    a_key_over_its_override_is_caught: key_over_its_override => [ServerKeyConcurrencyExceeded];
    a_queue_over_its_concurrency_is_caught: queue_over_its_concurrency => [ServerQueueConcurrencyExceeded];
    a_queue_over_its_rate_by_one_ms_is_caught: queue_over_its_rate => [ServerQueueRateExceeded];
    a_key_over_its_rate_by_one_ms_is_caught: key_over_its_rate => [ServerKeyRateExceeded];
    a_job_leased_while_held_is_caught: leased_while_held => [ServerLeasedWhileHeld];
    a_key_started_while_pushed_back_is_caught: key_started_while_pushed_back => [ServerStartedWhilePushedBack];
    a_queue_started_while_pushed_back_is_caught: queue_started_while_pushed_back => [ServerStartedWhilePushedBack];
    a_held_job_dropped_is_caught: held_job_dropped => [ServerHeldJobLost];
    // Hand-made corruptions of the keys.
    an_undecodable_record_is_caught: |b| corrupted(b, "
        redis.call('HSET', k('jobs'), plain, 'not msgpack')
        redis.call('LREM', k(Q .. 'fifo'), 0, plain)") => [UndecodableRecord];
    a_record_without_payload_is_caught: |b| corrupted(b, "
        local r, p = redis.call('HGET', k('jobs'), plain), '{\"tag\":\"plain\"}'
        assert(string.sub(r, -#p) == p, 'the record ends with its payload')
        redis.call('HSET', k('jobs'), plain, string.sub(r, 1, #r - #p))") => [RecordWithoutPayload];
    a_detached_record_without_its_payload_is_caught: |b| corrupted(b, "
        local r, p = redis.call('HGET', k('jobs'), plain), '{\"tag\":\"plain\"}'
        assert(string.sub(r, 1, 2) == '\\220\\0', 'a standard record')
        redis.call('HSET', k('jobs'), plain, '\\221\\0\\0' .. string.sub(r, 2, #r - #p))") => [RecordWithoutPayload];
    a_detached_payload_left_behind_is_caught: |b| corrupted(b, "
        redis.call('HSET', k('detached'), 'gone', '{\"tag\":\"gone\"}')") => [DetachedPayloadOrphaned];
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
    a_held_member_naming_another_key_is_caught: |b| corrupted(b, "
        redis.call('LREM', k(Q .. 'fifo'), 0, plain)
        redis.call('ZADD', k(Q .. 'lim_held'), 0, 'other\\n' .. string.rep('0', 16) .. '\\n' .. plain)
        redis.call('HSET', k(Q .. 'lim'), 'h\\nother', 1)") => [HeldMemberMismatch];
    a_limit_keys_leased_count_that_disagrees_is_caught: |b| corrupted(b, "
        redis.call('HSET', k(Q .. 'lim'), 'u\\nghost', 1)") => [LimitCountWrong];
    a_ready_key_without_held_jobs_is_caught: |b| corrupted(b, "
        redis.call('ZADD', k(Q .. 'lim_ready'), 5, 'ghost')") => [ReadyKeyWrong];
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

/// With a job already waiting (it came while the queue was paused), an
/// enqueue to a parked worker with room for one hands the worker that job,
/// the head of the queue, not its own, which waits for a claim: the path
/// the fresh hand-off (`lib/handoff.lua` `hand_off_fresh`) falls back to.
#[tokio::test]
async fn an_enqueue_behind_a_waiting_job_hands_the_parked_worker_the_head() {
    use bench::{job, Bench, QUEUE};
    let bench = Bench::new(&[]).await;
    let (parker, producer) = (&bench.a, &bench.b);
    let operator = redq_tests::fixtures::handle(&bench.server, &bench.ns).await;
    assert!(
        parker.park(1, 10_000, &[]).await.is_empty(),
        "nothing waits when the worker parks"
    );
    operator.pause(QUEUE).await.expect("pause");
    let first = producer.enqueue(&[job("t1")]).await;
    operator.resume(QUEUE).await.expect("resume");
    let second = producer.enqueue(&[job("t2")]).await;
    let ids = [first.clone(), second.clone()].concat();
    let handed = parker.handed(1, 10_000, &ids).await;
    let handed_ids: Vec<String> = handed.iter().map(|j| j.id.clone()).collect();
    assert_eq!(
        handed_ids, first,
        "the waiting head goes to the parked worker"
    );
    let claimed = producer.claim(1, 10_000, &[]).await;
    let claimed_ids: Vec<String> = claimed.iter().map(|j| j.id.clone()).collect();
    assert_eq!(claimed_ids, second, "the new job waits for a claim");
    parker.ack(&handed[0].id, handed[0].lease).await;
    producer.ack(&claimed[0].id, claimed[0].lease).await;
    let report = bench.finish(drained()).await;
    assert!(report.violations.is_empty(), "{report}");
}
