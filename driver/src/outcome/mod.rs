//! Outcomes of queue calls that are not errors. They live apart from the
//! modules that make the calls so that `crate::codes`, the one place a
//! script's reply code becomes an outcome, depends on them and on nothing
//! that depends on it.

pub(crate) mod cancel;
pub(crate) mod schedule;

use std::time::SystemTime;

use serde::Serialize;

/// What an enqueue did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "id", rename_all = "lowercase")]
pub enum Enqueued {
    /// A new job was created with this id.
    Created(String),
    /// A live job with the same dedup key exists; nothing was created.
    Duplicate(String),
}

impl Enqueued {
    /// The id of the new job, or of the existing one for a duplicate.
    pub fn id(&self) -> &str {
        match self {
            Enqueued::Created(id) | Enqueued::Duplicate(id) => id,
        }
    }
}

/// What an acknowledgement did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Acked {
    /// The job was completed and removed.
    Completed,
    /// The job no longer exists, so this ack recorded nothing: an earlier
    /// ack of this lease completed it (a repeated ack, or one the client
    /// sent again after a lost reply), another worker completed it after
    /// this lease lapsed, or an operator deleted it while it ran
    /// ([`IfLeased::VoidLease`](crate::IfLeased::VoidLease), which tells
    /// its worker at once). Not a completion by this call: a
    /// [`Worker`](crate::worker::Worker) counts it as processed only when
    /// an earlier send of the same ack went unanswered (that send most
    /// likely completed it), never after an operator's delete.
    AlreadyGone,
}

/// What a failure report did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Nacked {
    /// The job will be claimable again at `due_at`.
    Retrying {
        /// Failed attempts including this one.
        attempts: u32,
        /// When it is due again.
        due_at: SystemTime,
    },
    /// The job is in the dead-letter set.
    DeadLettered {
        /// Failed attempts including this one.
        attempts: u32,
    },
}

/// What a bounded reclaim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Reclaimed {
    /// Lapsed jobs returned to their queue.
    pub requeued: u64,
    /// Lapsed jobs whose attempts or retry window were spent.
    pub dead_lettered: u64,
    /// Lapsed leases left for the next call.
    pub still_lapsed: u64,
}

/// What a dead-letter requeue or delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DeadLetterReport {
    /// Jobs requeued (or deleted).
    pub done: u64,
    /// Ids that were not dead letters of that queue.
    pub not_found: u64,
    /// Dead letters left in the queue afterwards.
    pub dead_left: u64,
}
