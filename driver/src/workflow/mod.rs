//! Workflows: jobs that wait for other jobs. A **batch** (jobs enqueued
//! together, with callbacks run once they finish), **dependencies** (a job
//! that waits for a set of existing jobs) and a **tree** (a parent job that
//! waits for its children, which may be trees themselves).
//!
//! # The model
//!
//! All three are one structure in Redis, a **gate**: a set of *members*
//! (the jobs counted) and up to [`MAX_WAITERS`] *waiters* (the jobs
//! released when the members are done). A batch's gate has a new id (a
//! [`BatchId`]); a dependent's and a tree parent's gate has the waiting
//! job's own id.
//!
//! A gate is **open** while members join (a batch's chunks are being
//! enqueued), **sealed** once its waiters exist, **done** once sealed with
//! no member pending, or **cancelled**. Waiters are created in the same
//! script call that seals, so an open gate never has waiters: a producer
//! that dies half-way through a batch leaves its jobs running and no job
//! stuck; the open gate expires 24 hours after its last member joined.
//!
//! A member counts once, the first time it leaves for good: completed
//! (succeeded, with its result), or dead-lettered, cancelled or deleted
//! (failed). A dead letter requeued afterwards runs again but does not
//! count again: to run a waiter anyway, an operator releases it
//! ([`RedisQueue::decide_held`]).
//!
//! When the last member counts, each waiter is decided in its own queue's
//! next claim, exactly once, by its [`Condition`] and [`OnFailure`]:
//!
//! - [`Condition::AllFinished`], or no member failed: **released** (it
//!   enters its queue, where an ordering or limit key applies from then);
//! - otherwise [`OnFailure::DeadLetter`] (the default for dependencies and
//!   trees): dead-lettered with the error `dependency <id> <outcome>:
//!   <detail>` naming the first failure; [`OnFailure::Cancel`] (a batch's
//!   `on_success`): cancelled; [`OnFailure::Hold`]: kept in state
//!   [`JobState::Awaiting`](crate::JobState::Awaiting) until an operator
//!   releases or fails it ([`RedisQueue::decide_held`]).
//!
//! A job's fate is decided when its **last** dependency finishes, not at
//! the first failure. A waiting job is in state `awaiting`; its handler
//! reads its dependencies' outcomes and results with
//! [`JobCx::dependencies`](crate::worker::JobCx::dependencies).
//!
//! # The API
//!
//! ```no_run
//! # async fn demo(queue: redq::RedisQueue) -> Result<(), redq::QueueError> {
//! use redq::workflow::{Batch, Tree};
//! use redq::NewJob;
//! use serde_json::json;
//!
//! // 3 pages, then the PDF once all three succeeded.
//! let batch = Batch::new()
//!     .label("render report 7")
//!     .jobs("pages", (1..=3).map(|n| NewJob::new(json!({"page": n}))).collect())
//!     .on_success("pdf", NewJob::new(json!({"report": 7})));
//! let handle = queue.enqueue_batch(batch).await?;
//! let status = queue.gate(handle.id.as_str()).await?;
//!
//! // Charge, then mail the receipt once the charge completed.
//! let charge = queue.add("payments", NewJob::new(json!({"order": 9}))).await?;
//! queue.add("mail", NewJob::new(json!({"receipt": 9})).after([charge.id()])).await?;
//!
//! // A parent waiting for its children, one of them a tree itself.
//! let tree = Tree::new("archive", NewJob::new(json!({"zip": "all"})))
//!     .child("thumbs", NewJob::new(json!({"img": 1})))
//!     .subtree(Tree::new("archive", NewJob::new(json!({"zip": "part"})))
//!         .child("thumbs", NewJob::new(json!({"img": 2}))));
//! let root = queue.add_tree(tree).await?;
//! # let _ = (status, root); Ok(()) }
//! ```
//!
//! # Bounds
//!
//! | what | bound |
//! |---|---|
//! | members of a batch | any number, enqueued in chunks of [`ENQUEUE_CHUNK`](crate::limits::ENQUEUE_CHUNK) per queue, each atomic |
//! | dependencies of one job ([`NewJob::after`](crate::NewJob::after)) | 1 to [`MAX_DEPENDENCIES`] (one atomic call); for more, a batch |
//! | waiters (callbacks) of one gate | [`MAX_WAITERS`] |
//! | gates one job counts toward | 100 (refused beyond) |
//! | a member finishing | O(its gates), each O(1) plus a bounded trim |
//! | status ([`RedisQueue::gate`]) | O(1) |
//! | members read | pages of at most [`MAX_MEMBERS_PAGE`] |
//!
//! A batch enqueued in several chunks is not atomic as a whole: if a chunk
//! fails, [`RedisQueue::enqueue_batch`] returns
//! [`QueueError::WorkflowIncomplete`]
//! naming the batch and how many of its jobs were enqueued; those run, no
//! callback is created, and the open batch expires.
//!
//! A done or cancelled gate (its record, members and outcomes) is deleted
//! 24 hours after it finished, once its waiters are decided. A batch
//! without callbacks is sealed all the same: its status reaches `done`
//! after its last job.
//!
//! # Sharded queues
//!
//! A batch or a tree lives on one shard, chosen by its gate id; a member
//! whose ordering or limit key routes to another shard is refused. A job's
//! dependencies must all live on one shard (the dependent goes there).
//!
//! [`MemoryQueue`](crate::MemoryQueue) has no workflows: it refuses them.

mod decode;
pub(crate) mod plan;
mod read;
mod seal;
mod sharded;
mod write;

use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

use serde::Serialize;

pub use crate::gate::{
    Condition, GateKind, Member, MemberPage, MemberState, OnFailure, MAX_MEMBERS_PAGE,
};
pub use plan::{Batch, Tree};
pub use read::MAX_GATES_PAGE;
pub use write::GateCancelled;

use crate::{Enqueued, QueueError};

/// The most waiters (callbacks) one gate has.
pub const MAX_WAITERS: usize = 8;
/// The most existing jobs one [`NewJob::after`](crate::NewJob::after) lists.
pub const MAX_DEPENDENCIES: usize = 1000;
/// The longest batch label.
pub const MAX_LABEL: usize = 256;
/// The most gates one job counts toward (its batch or tree, and the jobs
/// that list it in [`NewJob::after`](crate::NewJob::after)).
pub const MAX_GATES_PER_JOB: usize = 100;

#[cfg(test)]
mod pinned {
    /// The bounds the scripts enforce, read from their one definition
    /// (lua/lib/gate_record.lua), so the driver's checks cannot drift.
    #[test]
    fn the_driver_bounds_are_the_gate_records() {
        let lua = include_str!("../../lua/lib/gate_record.lua");
        let value = |name: &str| -> usize {
            lua.lines()
                .find_map(|line| line.strip_prefix(&format!("GATE.{name} = ")))
                .unwrap_or_else(|| panic!("gate_record.lua defines GATE.{name}"))
                .trim()
                .parse()
                .unwrap()
        };
        assert_eq!(super::MAX_WAITERS, value("MAX_WAITERS"));
        assert_eq!(super::MAX_GATES_PER_JOB, value("MAX_GATES_PER_JOB"));
        assert_eq!(super::MAX_LABEL, value("MAX_LABEL_BYTES"));
    }
}

#[cfg(doc)]
use crate::RedisQueue;

/// A batch's id: a ULID made by the driver, like a job id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct BatchId(String);

impl BatchId {
    /// A fresh id.
    pub(crate) fn new() -> BatchId {
        BatchId(crate::job_id::next().to_string())
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for BatchId {
    type Err = QueueError;
    fn from_str(s: &str) -> Result<BatchId, QueueError> {
        crate::limits::check_text("batch id", s, crate::limits::MAX_ID_LEN)?;
        Ok(BatchId(s.to_owned()))
    }
}

/// An operator's decision for a held waiter ([`RedisQueue::decide_held`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Release it into its queue anyway.
    Release,
    /// Dead-letter it.
    DeadLetter,
}

/// Where a gate is in its life (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateState {
    /// Members may still join; no waiter exists yet.
    Open,
    /// Its waiters exist; members are still running.
    Sealed,
    /// Every member finished; its waiters are decided.
    Done,
    /// Cancelled as a whole ([`RedisQueue::cancel_gate`]).
    Cancelled,
}

/// What became of a waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaiterDecision {
    /// Not decided yet: members are pending, or its queue has not claimed
    /// since they finished.
    Pending,
    /// Released into its queue.
    Released,
    /// Dead-lettered because a member failed.
    DeadLettered,
    /// Cancelled (a member failed under [`OnFailure::Cancel`], or the gate
    /// was cancelled).
    Cancelled,
    /// Held for an operator ([`OnFailure::Hold`]).
    Held,
    /// Released by an operator after it was held.
    OperatorReleased,
    /// Dead-lettered by an operator after it was held.
    OperatorFailed,
    /// Deleted before it was decided (`lua/gate_get.lua` reports a waiter
    /// undecided or held whose job no longer waits as deleted).
    Deleted,
}

/// A job waiting on a gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waiter {
    /// The waiting job's id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// When it is released.
    pub condition: Condition,
    /// What becomes of it when a member failed.
    pub on_failure: OnFailure,
    /// What became of it.
    pub decision: WaiterDecision,
}

/// A gate's status, read in O(1) ([`RedisQueue::gate`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateStatus {
    /// The gate id: a batch id, or the waiting job's id.
    pub id: String,
    /// Batch, dependencies or tree.
    pub kind: GateKind,
    /// Open, sealed, done or cancelled.
    pub state: GateState,
    /// When its first member joined, or it was sealed (Redis clock).
    pub created_at: SystemTime,
    /// When its waiters were created.
    pub sealed_at: Option<SystemTime>,
    /// When it became done or was cancelled.
    pub done_at: Option<SystemTime>,
    /// Members counted so far (joined).
    pub total: u64,
    /// Members not finished yet.
    pub pending: u64,
    /// Members that completed.
    pub succeeded: u64,
    /// Members dead-lettered, cancelled or deleted.
    pub failed: u64,
    /// The first failure, `<id> <outcome>: <detail>`.
    pub first_failure: Option<String>,
    /// A batch's label ([`Batch::label`]).
    pub label: Option<String>,
    /// Its waiters (callbacks, the dependent, the parent); empty in a
    /// listing ([`RedisQueue::gates`]), which gives [`GateStatus::waiter_count`].
    pub waiters: Vec<Waiter>,
    /// How many waiters it has.
    pub waiter_count: usize,
}

/// What [`RedisQueue::enqueue_batch`] created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchHandle {
    /// The batch id (its gate).
    pub id: BatchId,
    /// Each member's outcome, in the order the batch listed them.
    pub jobs: Vec<Enqueued>,
    /// Each callback's outcome, in the order they were added. A duplicate
    /// (its dedup key held by a pending job) is not a waiter of the batch.
    pub callbacks: Vec<Enqueued>,
}

/// What [`RedisQueue::add_tree`] created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeHandle {
    /// The root parent job (its id is also its gate's id).
    pub root: Enqueued,
    /// Every job created, parents and children, in the order they were
    /// sent: each subtree's children, then its parent, the root last.
    pub jobs: Vec<Enqueued>,
}

impl GateState {
    /// Its name: open, sealed, done, cancelled.
    pub fn as_str(self) -> &'static str {
        match self {
            GateState::Open => "open",
            GateState::Sealed => "sealed",
            GateState::Done => "done",
            GateState::Cancelled => "cancelled",
        }
    }
}

impl WaiterDecision {
    /// Its words: pending, released, dead, cancelled, held, released by an
    /// operator, failed by an operator, deleted.
    pub fn as_str(self) -> &'static str {
        match self {
            WaiterDecision::Pending => "pending",
            WaiterDecision::Released => "released",
            WaiterDecision::DeadLettered => "dead",
            WaiterDecision::Cancelled => "cancelled",
            WaiterDecision::Held => "held",
            WaiterDecision::OperatorReleased => "released by an operator",
            WaiterDecision::OperatorFailed => "failed by an operator",
            WaiterDecision::Deleted => "deleted",
        }
    }
}

impl fmt::Display for GateState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for WaiterDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
