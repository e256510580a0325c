//! A gate: the one structure in Redis behind batches, dependencies and
//! trees ([`crate::workflow`]), and the words about it that the modules
//! below the workflow module share (a job's options, enqueue's arguments,
//! a running job's context), so that none of them depends on it.

use std::fmt;

use serde::Serialize;

use crate::JobState;

/// The most members one [`RedisQueue::gate_members`](crate::RedisQueue::gate_members)(crate::RedisQueue::gate_members) call returns.
pub const MAX_MEMBERS_PAGE: usize = 1000;

/// When a waiter is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Once every member finished, whatever the outcome (a batch's
    /// `on_complete`).
    AllFinished,
    /// Once every member finished, if all of them succeeded; otherwise its
    /// [`OnFailure`] applies (the default for dependencies and trees).
    #[default]
    AllSucceeded,
}

/// What becomes of a waiter whose members did not all succeed (under
/// [`Condition::AllSucceeded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// Dead-lettered, its error naming the first failed member (the default).
    #[default]
    DeadLetter,
    /// Cancelled (a batch's `on_success`).
    Cancel,
    /// Kept waiting until an operator releases or fails it
    /// ([`RedisQueue::decide_held`](crate::RedisQueue::decide_held)).
    Hold,
}

/// What kind of workflow a gate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    /// A [`Batch`](crate::workflow::Batch).
    Batch,
    /// A job's [`NewJob::after`](crate::NewJob::after) dependencies.
    Dependencies,
    /// A [`Tree`](crate::workflow::Tree)'s parent and its children.
    Tree,
}

/// One member of a gate ([`RedisQueue::gate_members`](crate::RedisQueue::gate_members)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Member {
    /// The member job's id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// Its state, or its outcome once it finished.
    pub state: MemberState,
}

/// A member's state, or its outcome once it counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum MemberState {
    /// Not finished: its live state (waiting, leased, awaiting, …).
    Pending(JobState),
    /// Completed, with its result when it set one.
    Completed(Option<serde_json::Value>),
    /// Dead-lettered, with its error.
    Dead(String),
    /// Cancelled.
    Cancelled,
    /// Deleted by an operator.
    Deleted,
}

impl MemberState {
    /// Whether it counted as a success.
    pub fn succeeded(&self) -> bool {
        matches!(self, MemberState::Completed(_))
    }
}

/// A page of a gate's members, in id order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberPage {
    /// The members of this page.
    pub members: Vec<Member>,
    /// Where the next page starts (pass it as the cursor); `None` at the end.
    pub next: Option<String>,
}

/// What a job waits for ([`NewJob::after`](crate::NewJob::after)) and how it is decided.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dependencies {
    /// The existing jobs listed by `after` (`None`: only a policy was set,
    /// which a tree parent uses).
    pub ids: Option<Vec<String>>,
    pub condition: Condition,
    pub on_failure: OnFailure,
}

impl Condition {
    pub(crate) fn wire(self) -> &'static str {
        match self {
            Condition::AllFinished => "all",
            Condition::AllSucceeded => "success",
        }
    }
}

impl OnFailure {
    pub(crate) fn wire(self) -> &'static str {
        match self {
            OnFailure::DeadLetter => "dead",
            OnFailure::Cancel => "cancel",
            OnFailure::Hold => "hold",
        }
    }
}

impl GateKind {
    pub(crate) fn wire(self) -> &'static str {
        match self {
            GateKind::Batch => "batch",
            GateKind::Dependencies => "deps",
            GateKind::Tree => "tree",
        }
    }

    /// The word people read: "batch", "dependencies", "tree".
    pub fn as_str(self) -> &'static str {
        match self {
            GateKind::Batch => "batch",
            GateKind::Dependencies => "dependencies",
            GateKind::Tree => "tree",
        }
    }
}

impl fmt::Display for GateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
