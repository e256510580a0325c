//! Job surgery: an operator changing one job, or all of a queue's jobs in a
//! state, outside the worker lifecycle: promote a scheduled job (due now),
//! retry now a job backing off, delete a job in any state, edit a payload,
//! dead-letter a job that waits its turn.
//!
//! Each change is one script (`lua/promote_job.lua`, `lua/delete_job.lua`,
//! `lua/edit_job.lua`, `lua/dead_letter_job.lua`) that checks the job's state and changes it in one
//! atomic step, so a change racing a claim is either before it or refused,
//! and a refusal writes nothing. Every change releases what the job held as
//! a completion would: its ordering key passes to the next job queued
//! behind it, its dedup key is freed (a delete frees a TTL-mode key too).
//!
//! | change | accepts | refuses |
//! |---|---|---|
//! | promote | scheduled (delayed or backing off): due now, in its place by priority and seq; behind its ordering key's holder if another job holds it; waiting in a paused queue like any due job | waiting, held (due already: it runs once its limit key has room), awaiting (it runs once its gate decides), leased, dead, blocked |
//! | retry now | scheduled after a failure (attempts > 0): as promote; dead: the dead-letter requeue, attempts reset to 0 | delayed jobs that never failed (promote them), waiting, held, awaiting, leased, blocked |
//! | delete | waiting, scheduled, held, blocked, awaiting (it leaves its gate's waiters, and counts as deleted toward the gates it is a member of), dead; leased only with [`IfLeased::VoidLease`], which voids the lease and tells the holder at once on its holder channel (the handler's cancellation fires; the holder's ack answers already gone, its nack, extend and release lease lost, and nothing brings the job back); by id, a finished job's kept record or tombstone | leased, by default |
//! | dead-letter | waiting, scheduled (delayed or backing off), held, blocked: to the dead-letter set unrun, as a failed job dies (attempts kept, the operator's words as its error, ordering key passed on, dedup key freed, gates counting it failed, the dead-letter bound applied) | leased (cancel or delete it), awaiting (its gate decides it), dead |
//! | edit | any job not running: waiting, scheduled, held, blocked, awaiting, dead: the payload replaced, validated as on enqueue (a held or awaiting job runs with the new payload once its limit or gate lets it) | leased |
//!
//! Per job, a call reads the job's record for its queue (`HGET`), then runs
//! the script, which checks it again: two round trips. Bulk forms work in
//! batches of at most [`SURGERY_BATCH`] jobs per script call and report
//! progress after each. [`MemoryQueue`](crate::MemoryQueue) does not offer
//! these calls.
//!
//! The hot path pays nothing for this: enqueue, claim, ack and nack are not
//! changed.

mod bulk;
pub(crate) use bulk::Bulk;
mod by_id;

use crate::QueueError;

/// Most jobs one surgery script call changes (or, for the bulk forms that
/// filter, examines): a bulk form over a large queue is this many per
/// atomic step, so no call holds Redis for long.
pub const SURGERY_BATCH: usize = 500;

/// What a delete does with a job that is running under a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfLeased {
    /// Refuse: the job is left running ([`QueueError::WrongState`]).
    Refuse,
    /// Delete it anyway and void the lease: the holder's later ack answers
    /// [`Acked::AlreadyGone`](crate::Acked::AlreadyGone), its nack, extend
    /// and release [`QueueError::LeaseLost`]; the job never comes back.
    VoidLease,
}

/// What "retry now" did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetriedNow {
    /// The job was backing off after a failure: it is due now, its
    /// attempts kept.
    Promoted,
    /// The job was dead: it was requeued, its attempts reset to 0 (the
    /// dead-letter requeue).
    Requeued,
}

/// What an operator's dead-letter did ([`RedisQueue::dead_letter_job`](crate::RedisQueue::dead_letter_job)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadLettered {
    /// The state the job left: waiting, scheduled, held or blocked.
    pub from: crate::JobState,
    /// How many older dead letters of its queue the queue's dead-letter
    /// bound deleted in the same step ([`crate::kept::dead_bound`]; 0
    /// without a bound). In a bounded queue a batch of dead-letters can
    /// evict the jobs it set aside itself: a caller says so.
    pub bound_deleted: u64,
}

/// The changes, named as the errors and the CLI name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Promote,
    RetryNow,
    Delete,
    Edit,
    DeadLetter,
}

impl Change {
    fn verb(self) -> &'static str {
        match self {
            Change::Promote => "promote",
            Change::RetryNow => "retry now",
            Change::Delete => "delete",
            Change::Edit => "edit",
            Change::DeadLetter => "dead-letter",
        }
    }

    fn accepted(self) -> &'static str {
        match self {
            Change::Promote => "only a scheduled job can be promoted",
            Change::RetryNow => {
                "retry now accepts a job backing off after a failure, or a dead job"
            }
            Change::Delete => "a leased job is deleted only when forced, which voids its lease",
            Change::Edit => {
                "only a job that is not running can be edited: waiting, scheduled, held, \
                 blocked, awaiting or dead"
            }
            Change::DeadLetter => {
                "only a job waiting its turn can be dead-lettered: waiting, scheduled, held \
                 or blocked (cancel or delete a running job; an awaiting one is its gate's to \
                 decide)"
            }
        }
    }

    /// The refusal of this change for job `id`, which is `state`.
    pub(crate) fn refused(self, id: &str, state: &'static str) -> QueueError {
        QueueError::WrongState {
            id: id.to_owned(),
            change: self.verb(),
            state,
            accepted: self.accepted(),
        }
    }
}
