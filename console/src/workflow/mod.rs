//! Workflows as the console shows them (issue 18): batches, dependencies
//! and trees, which the driver keeps as one thing, a **gate** (members
//! counted as they finish, and up to 8 waiters decided when they are done;
//! see `redq::workflow`, whose types these are).
//!
//! What is the console's own: the words and sentences ([`why`]) that
//! `redq batches`, `redq deps` and the Workflows screen share, the reads
//! ([`read`]) and the changes ([`act`]) both make through the operator.

pub mod act;
pub mod read;
pub mod why;

use std::time::SystemTime;

pub use redq::workflow::{
    Condition, GateKind, GateState, GateStatus as Gate, Member, MemberPage, MemberState, OnFailure,
    Waiter, WaiterDecision,
};

/// How many members a page of the gate view and `redq batches show` shows.
pub const MEMBERS_PAGE: usize = 50;

/// Members that finished, whatever the outcome.
pub fn finished(gate: &Gate) -> u64 {
    gate.succeeded + gate.failed
}

/// `7/10`: finished of total.
pub fn done_text(gate: &Gate) -> String {
    format!("{}/{}", finished(gate), gate.total)
}

/// The waiters' decisions in a few words: `released`, `2 pending`, `held,
/// released`; `—` with none (an open gate, or a listing without them).
pub fn decisions_text(gate: &Gate) -> String {
    let mut seen: Vec<(WaiterDecision, usize)> = Vec::new();
    for w in &gate.waiters {
        match seen.iter_mut().find(|(d, _)| *d == w.decision) {
            Some((_, n)) => *n += 1,
            None => seen.push((w.decision, 1)),
        }
    }
    if seen.is_empty() {
        return "—".to_owned();
    }
    seen.iter()
        .map(|(d, n)| match n {
            1 => d.as_str().to_owned(),
            n => format!("{n} {}", d.as_str()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The time of its latest change: done, else sealed, else created.
pub fn last_change(gate: &Gate) -> SystemTime {
    gate.done_at.or(gate.sealed_at).unwrap_or(gate.created_at)
}

/// The first waiter an operator may decide, if any.
pub fn held_waiter(gate: &Gate) -> Option<&Waiter> {
    gate.waiters
        .iter()
        .find(|w| w.decision == WaiterDecision::Held)
}

/// The short word for a kind, as a table column shows it: `batch`,
/// `deps`, `tree`.
pub fn kind_word(kind: GateKind) -> &'static str {
    match kind {
        GateKind::Batch => "batch",
        GateKind::Dependencies => "deps",
        GateKind::Tree => "tree",
    }
}

/// What its members are called: "jobs", "dependencies", "children".
pub fn members_noun(kind: GateKind) -> &'static str {
    match kind {
        GateKind::Batch => "jobs",
        GateKind::Dependencies => "dependencies",
        GateKind::Tree => "children",
    }
}

/// What a waiter of a cancelled gate is told: "its batch was cancelled".
pub fn cancelled_sentence(kind: GateKind) -> &'static str {
    match kind {
        GateKind::Batch => "its batch was cancelled",
        GateKind::Dependencies => "its dependencies were cancelled",
        GateKind::Tree => "its children were cancelled",
    }
}

/// When a waiter is released, as a column says it.
pub fn condition_text(condition: Condition) -> &'static str {
    match condition {
        Condition::AllFinished => "all finished",
        Condition::AllSucceeded => "all succeeded",
    }
}

/// What a failed member does to a waiter, in a word; `-` for a waiter
/// released when all finished, whatever their outcomes.
pub fn on_failure_text(waiter: &Waiter) -> &'static str {
    match waiter.condition {
        Condition::AllFinished => "-",
        Condition::AllSucceeded => on_failure_word(waiter.on_failure),
    }
}

/// What a failed member does to a waiter, in a word.
pub fn on_failure_word(on_failure: OnFailure) -> &'static str {
    match on_failure {
        OnFailure::DeadLetter => "dead-letter",
        OnFailure::Cancel => "cancel",
        OnFailure::Hold => "hold",
    }
}

/// A member's state while pending, or how it finished, in a word.
pub fn member_word(state: &MemberState) -> &'static str {
    match state {
        MemberState::Pending(state) => state.as_str(),
        MemberState::Completed(_) => "completed",
        MemberState::Dead(_) => "dead",
        MemberState::Cancelled => "cancelled",
        MemberState::Deleted => "deleted",
    }
}

/// A member's result (compact JSON) or error, raw: callers make it inert.
pub fn member_detail(state: &MemberState) -> Option<String> {
    match state {
        MemberState::Completed(Some(result)) => Some(result.to_string()),
        MemberState::Dead(error) => Some(error.clone()),
        _ => None,
    }
}

/// Whether a member finished without succeeding.
pub fn member_failed(state: &MemberState) -> bool {
    matches!(
        state,
        MemberState::Dead(_) | MemberState::Cancelled | MemberState::Deleted
    )
}
