//! What a cancel did (`crate::kept`).

use std::time::SystemTime;

use serde::Serialize;

use crate::JobState;

/// What a cancel did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CancelOutcome {
    /// The job was cancelled now, from state `from`.
    Cancelled {
        /// The state it was in.
        from: JobState,
        /// When (Redis clock).
        at: SystemTime,
    },
    /// It had been cancelled before.
    AlreadyCancelled {
        /// When.
        at: SystemTime,
    },
    /// It had completed before.
    AlreadyCompleted {
        /// When.
        at: SystemTime,
    },
    /// No such job, and no trace of one (a completed job of a queue that
    /// keeps nothing leaves none).
    NotFound,
}
