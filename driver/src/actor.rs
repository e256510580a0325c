//! Who did an operator action (the `by` of an event on `{ns}:events`,
//! `crate::events`): the handle's actor
//! ([`RedisQueueBuilder::actor`](crate::RedisQueueBuilder::actor)), sent
//! to the scripts of operator actions as one last argument (see
//! `lua/lib/events.lua`), and written as the `by` of their events.
//!
//! A handle-level setting rather than a `by` parameter on every call: the
//! console and the CLI open one handle per process and set it once, and no
//! signature of the operator API changes. `cancel(id, by)` keeps its own
//! `by`, which wins over the actor when given.

use fred::types::Value;

use crate::scripts::{text, Op};
use crate::{QueueError, RedisQueue};

/// What precedes the actor in its argument: control characters, which no
/// job id, name or key may hold, so the scripts can tell it apart.
const ACTOR_MARK: &str = "\0by\0";

/// The longest actor kept (the scripts keep this many bytes).
pub const MAX_ACTOR_BYTES: usize = 128;

/// `"<program> <user>@<host>"`, the actor the console (`console`) and the
/// CLI (`cli`) record: the user from `USER` (or `LOGNAME`, `USERNAME`),
/// else the name of the account the process runs as (containers and
/// `docker exec` often set none of those), the host name from the system;
/// `unknown` for either it cannot tell.
pub fn local_actor(program: &str) -> String {
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .or_else(|| whoami::username().ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    let host = hostname::get()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let actor: String = format!("{program} {user}@{host}")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    truncate(actor)
}

fn truncate(mut text: String) -> String {
    if text.len() > MAX_ACTOR_BYTES {
        let mut end = MAX_ACTOR_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// Whether `actor` may be a handle's actor
/// ([`RedisQueueBuilder::actor`](crate::RedisQueueBuilder::actor), which
/// refuses any other at connect): text without control characters, at
/// most [`MAX_ACTOR_BYTES`]. For a program that takes the name from its
/// user, to refuse a bad one before it does anything.
pub fn check_actor(actor: &str) -> Result<(), QueueError> {
    if actor.len() > MAX_ACTOR_BYTES || actor.chars().any(char::is_control) {
        return Err(QueueError::invalid(
            "actor",
            actor,
            format!("at most {MAX_ACTOR_BYTES} bytes without control characters"),
        ));
    }
    Ok(())
}

/// The scripts that record who called them: the operator actions, and a
/// reclaim (what an operator runs when a queue's workers died: an actor's
/// handle is a person's; a worker's handle has none and records no one).
fn attributed(op: Op) -> bool {
    matches!(
        op,
        Op::Pause
            | Op::Reclaim
            | Op::RequeueDead
            | Op::DeleteDead
            | Op::DeadBound
            | Op::DeleteJob
            | Op::LimitsSet
            | Op::ScheduleTrigger
            | Op::Cancel
            | Op::ScheduleUpsert
            | Op::SchedulePause
            | Op::ScheduleDelete
            | Op::PromoteJob
            | Op::EditJob
            | Op::DeadLetterJob
            | Op::WorkerControl
            | Op::Retention
            | Op::GateDecide
            | Op::MetricsSwitch
            | Op::RecordFormat
    )
}

impl RedisQueue {
    /// Append the actor argument to `argv` when `op` is an operator action
    /// and this handle has an actor; nothing otherwise (no argument on the
    /// per-job paths).
    pub(crate) fn attribute(&self, op: Op, argv: &mut Vec<Value>) {
        if let Some(actor) = &self.inner.actor {
            if attributed(op) {
                argv.push(text(format!("{ACTOR_MARK}{actor}")));
            }
        }
    }

    /// The actor of this handle, if it has one.
    pub fn actor(&self) -> Option<&str> {
        self.inner.actor.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_actor_names_program_user_and_host_within_the_bound() {
        let actor = local_actor("console");
        assert!(actor.starts_with("console "), "{actor}");
        assert!(actor.contains('@'), "{actor}");
        assert!(check_actor(&actor).is_ok());
        assert_eq!(truncate("é".repeat(100)).len(), 128);
    }

    #[test]
    fn an_actor_with_control_characters_or_too_long_is_refused() {
        assert!(check_actor("cli a\nb").is_err());
        assert!(check_actor(&"x".repeat(129)).is_err());
        assert!(check_actor("cli ops@box").is_ok());
    }
}
