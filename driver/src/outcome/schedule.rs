//! Outcomes of schedule calls that are not errors.

use std::time::SystemTime;

use serde::Serialize;

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Upserted {
    /// A new schedule was stored.
    Created {
        /// Its first tick (`None` when paused: an upsert whose end leaves
        /// no tick is refused).
        next_run: Option<SystemTime>,
    },
    /// An existing schedule was replaced; its last run and last job are
    /// kept, and so is its next run when the expression, time zone, start
    /// and end are unchanged.
    Updated {
        /// Its next tick now.
        next_run: Option<SystemTime>,
    },
}

impl Upserted {
    /// The next tick in effect after the upsert.
    pub fn next_run(&self) -> Option<SystemTime> {
        match self {
            Upserted::Created { next_run } | Upserted::Updated { next_run } => *next_run,
        }
    }
}

/// What a pause, resume or delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleChange {
    /// The schedule was paused, resumed or deleted.
    Done,
    /// It already was in that state (paused, or running); nothing changed.
    Unchanged,
    /// No schedule has that name.
    NotFound,
}

/// What a trigger-now did.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "outcome", content = "id", rename_all = "snake_case")]
pub enum Triggered {
    /// A job with this id was enqueued.
    Enqueued(String),
    /// No schedule has that name.
    NotFound,
}

/// What one fire call did (`lua/schedule_fire.lua`'s codes, decoded in
/// `codes.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FireOutcome {
    Enqueued { created: bool },
    Skipped,
    NotFound,
    Lost,
    Changed,
    NotDue,
    AlreadyFired,
}
