//! Every rule the checker enforces, by name: each violation it reports
//! carries one of these kinds, so a test can say exactly which rule fired.
//!
//! The kinds are declared once, in the list below, which also makes
//! [`ViolationKind::ALL`]: `tests/tests/reliability/reliability_checker.rs` iterates over
//! it and fails unless a broken variant (a patched script or a hand-made
//! history) is shown to fire every kind. A kind added here without such a
//! variant fails that test.

use std::fmt;

/// Declares [`ViolationKind`] and its exhaustive list from one list, so the
/// two cannot drift apart.
macro_rules! kinds {
    ($($(#[doc = $doc:literal])+ $name:ident,)+) => {
        /// The rule a violation broke.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ViolationKind {
            $($(#[doc = $doc])+ $name,)+
        }

        impl ViolationKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ViolationKind] = &[$(ViolationKind::$name,)+];
        }
    };
}

kinds! {
    // --- From the clients' calls and replies.
    /// Claim replies handed the same lease id to two jobs.
    LeaseHandedOutTwice,
    /// More than one ack reply said `Completed` for one job.
    CompletedTwice,
    /// An ack reply said `Completed`, but the job is still live or dead.
    CompletedButLive,
    /// An acknowledged enqueue that never completed, is not dead and is gone.
    Lost,
    /// The run was to drain, but an acknowledged job is still live.
    NeverFinished,
    /// A claim handed out a job whose tag no enqueue carried.
    ClaimedNeverEnqueued,
    /// An ack was accepted under a lease, yet a later lease of the job was
    /// granted (a stale ack accepted, or the job ran again after completing).
    AckedThenLeasedAgain,
    /// A job dead-lettered by a nack was leased again, with no requeue.
    LeasedAfterDead,
    /// A nack under a lease applied after the job's next lease was granted.
    StaleNackAccepted,
    /// A lease was granted while the previous one was live and unresolved.
    TwoLiveLeases,
    /// An extend under a lease applied after the job's next lease was granted.
    StaleExtendAccepted,
    /// From one lease of a job to the next, attempts did not grow by exactly
    /// one per failure (none per release).
    AttemptsMiscounted,
    /// A nack reply's attempts were not the claim's attempts + 1.
    NackReportedWrongAttempts,
    /// A job of an ordering key was leased before the previous job of that
    /// key had its last lease.
    KeyLeasedOutOfOrder,
    // --- From the server's own record (MONITOR).
    /// The server applied more than one ack to one job.
    ServerAckedTwice,
    /// A grant replaced a lease that was still set on the record.
    ServerGrantOverLiveLease,
    /// A lease id no greater than one granted before it (fencing tokens must
    /// grow in server order).
    ServerLeaseIdsNotGrowing,
    /// A lease was granted on a job that is in the dead-letter set.
    ServerGrantedWhileDead,
    /// A claim leased a job after the moment it was told to start by (its
    /// `ARGV[7]`, `lua/claim.lua`): its caller had given up on its reply, so
    /// the job would wait out its lease with no one to run it.
    ServerGrantedPastStartBy,
    /// A grant changed the job's record beyond its lease (queue, keys,
    /// attempts, max attempts, due time, ...): leasing, a compact record's
    /// first lease included, must keep every other field as it was.
    ServerGrantChangedJob,
    /// Two jobs of one ordering key leased at the same instant.
    ServerKeyHeldTwice,
    /// Jobs of one ordering key finished out of enqueue order.
    ServerKeyFinishedOutOfOrder,
    /// An extend presented a lease other than the current one, and applied.
    ServerStaleExtend,
    /// A nack presented a lease other than the current one, and applied.
    ServerStaleNack,
    /// A release presented a lease other than the current one, and applied.
    ServerStaleRelease,
    /// An ack presented a lease other than the current one, and applied.
    ServerStaleAck,
    /// A lease was reclaimed before its expiry on the Redis clock.
    ServerEarlyReclaim,
    /// A job was both cancelled and completed: its cancel answered
    /// "cancelled" and an ack answered "completed".
    CancelledAndCompleted,
    /// A job was handed out by a claim made after its cancel answered
    /// "cancelled".
    LeasedAfterCancel,
    /// A job whose cancel answered "cancelled" is still live at the end.
    CancelledButLive,
    /// A job's notes (progress, log lines) were written by someone who did
    /// not hold its current lease.
    ServerStaleNote,
    /// An operator's delete removed a job running under a lease without
    /// being told to void leases (force).
    ServerDeletedWhileLeased,
    /// An operator's edit rewrote a job running under a lease.
    ServerEditedWhileLeased,
    /// An operator's edit changed the job's meta, not only its payload.
    ServerEditBeyondPayload,
    /// A record rewrite (`rewrite_records.lua`, the way back to the
    /// standard layout) rewrote a job running under a lease, whose worker
    /// may still read its detached payload apart.
    ServerRewroteLeased,
    /// A record rewrite changed the job, not only its stored layout: its
    /// meta or its payload.
    ServerRewriteChangedJob,
    /// An operator's promote rewrote a job that was leased or dead (only a
    /// scheduled job is promoted).
    ServerPromotedOutOfState,
    /// An operator's dead-letter (`dead_letter_job.lua`) took a job that was
    /// running under a lease or already dead, or left it without a death
    /// time.
    ServerDeadLetteredOutOfState,
    /// A reclaimed job was leased again before its reclaim backoff's least
    /// delay had passed (a crash loop cycling at lease speed).
    ServerReclaimedWithoutBackoff,
    /// A nack or reclaim did not add exactly one attempt.
    ServerFailureNotOneAttempt,
    /// Attempts changed in a transition that is not a failure (grant,
    /// extend, release, any other rewrite).
    ServerAttemptsChangedWithoutFailure,
    /// Dead-lettered with attempts left, no retry window and no force.
    ServerDeadTooEarly,
    /// A failure spent the last attempt but the job was not dead-lettered.
    ServerSpentNotDead,
    // --- From the server's own record: flow control (lib/flow.lua).
    /// A grant took a queue's leased jobs over its queue-wide concurrency.
    ServerQueueConcurrencyExceeded,
    /// A grant took a limit key's leased jobs over its concurrency (the
    /// key's override, else the queue's each-key limit).
    ServerKeyConcurrencyExceeded,
    /// More starts of a queue in one window of its rate's interval than
    /// its rate allows, on the Redis clock.
    ServerQueueRateExceeded,
    /// More starts of a limit key in one window of its rate's interval
    /// than its rate allows, on the Redis clock.
    ServerKeyRateExceeded,
    /// A limiter started a job while a push-back (a release asking its
    /// limiter to wait, `JobError::rate_limited`) was in force: a key's
    /// job while the key was pushed back, any job of a queue pushed back.
    ServerStartedWhilePushedBack,
    /// A job was leased while it was in its queue's held set.
    ServerLeasedWhileHeld,
    /// A job that was held back by its limit key is gone without being
    /// completed, cancelled or deleted.
    ServerHeldJobLost,
    // --- From the server's own record: workflows (batches, dependencies,
    // trees; lib/gate.lua), in `super::workflows`.
    /// A waiter was released (it entered its queue, or was leased) while a
    /// member of its gate had not finished.
    ServerWaiterReleasedEarly,
    /// A waiter was released more than once, or its decision was changed
    /// once made (only a held waiter is decided again, by an operator).
    ServerWaiterDecidedTwice,
    /// A member was counted more than once for one gate: its outcome
    /// written twice, or the gate's counts beyond its members (pending
    /// below 0, succeeded + failed above total).
    ServerMemberCountedTwice,
    /// A waiter released under the condition `success` although a member
    /// of its gate had failed (dead, cancelled or deleted), without an
    /// operator's release.
    ServerReleasedDespiteFailure,
    /// At the end of a drained run, a waiter of a gate whose members are
    /// all done (done, or sealed with none pending) was never decided.
    WaiterNeverDecided,
    // --- From the final snapshot of the keys (the structural check).
    /// A job record whose meta does not decode.
    UndecodableRecord,
    /// A job record with nothing after its meta, and no detached payload.
    RecordWithoutPayload,
    /// A payload in `{ns}:detached` whose job is gone or whose record is
    /// not detached: left behind by whatever removed or rewrote the record.
    DetachedPayloadOrphaned,
    /// A job in no state, or in more than one.
    NotInOneState,
    /// A job indexed under a queue other than its own.
    InAnotherQueue,
    /// In the leased index without a lease on the record, or the reverse.
    LeaseIndexMismatch,
    /// The leased index's expiry differs from the record's.
    LeaseExpiryMismatch,
    /// In the dead-letter set without a death time, or the reverse.
    DeadIndexMismatch,
    /// A waiting job's score is not its priority and sequence.
    WaitingScoreWrong,
    /// An index holds an id that has no job record.
    IndexWithoutRecord,
    /// A job in the fifo list with a priority other than 0.
    FifoPriority,
    /// A job in the fifo list with an ordering key.
    FifoOrderingKey,
    /// The fifo list out of sequence order.
    FifoOutOfOrder,
    /// An ordering key held by something other than a live job of that key.
    KeyHolderNotLive,
    /// An ordering key with live jobs but no holder.
    KeyWithoutHolder,
    /// A job of an ordering key that is both holder and blocked, or neither.
    KeyHolderOrBlockedWrong,
    /// A member of the blocked set that is not `key\nseq\nid`.
    BlockedMemberMalformed,
    /// A blocked member whose key or sequence disagrees with its record.
    BlockedMemberMismatch,
    /// A queue's blocked counter differs from what is blocked.
    BlockedCounterWrong,
    /// A dedup key pointing to no live job with that key.
    DedupNotLive,
    /// A dedup TTL without its dedup entry.
    DedupTtlOrphan,
    /// A held member whose limit key or score disagrees with its job's
    /// record, or that is not `key\nscore\nid`.
    HeldMemberMismatch,
    /// A limit key's leased or held count differs from its jobs.
    LimitCountWrong,
    /// A ready limit key with no held job, or scored other than its best
    /// held job.
    ReadyKeyWrong,
}

/// One broken guarantee: which rule, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub kind: ViolationKind,
    pub text: String,
}

impl Violation {
    pub fn new(kind: ViolationKind, text: impl Into<String>) -> Violation {
        Violation {
            kind,
            text: text.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
