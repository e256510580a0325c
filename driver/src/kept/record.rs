//! The kept record of a finished job and its tombstone, decoded: the Rust
//! side of `lua/lib/kept_record.lua`, the one place either is read.

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::job::ms_to_time;
use crate::QueueError;

/// Positions (from 0) of the kept record's fields, as `KR` in
/// `lua/lib/kept_record.lua` numbers them from 1 (a unit test compares).
mod field {
    pub const OUTCOME: usize = 0;
    pub const QUEUE: usize = 1;
    pub const NAME: usize = 2;
    pub const ATTEMPT: usize = 3;
    pub const HOLDER_NODE: usize = 4;
    pub const HOLDER_INSTANCE: usize = 5;
    pub const ENQUEUED_AT: usize = 6;
    pub const FINISHED_AT: usize = 7;
    pub const RUN_MS: usize = 8;
    pub const CANCELLED_BY: usize = 9;
    pub const CANCELLED_IN: usize = 10;
    pub const RESULT: usize = 11;
    pub const LEN: usize = 12;
}

/// How a job finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Its handler succeeded and it was acknowledged.
    Completed,
    /// An operator cancelled it.
    Cancelled,
}

impl Outcome {
    /// The outcome's name as the scripts spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Cancelled => "cancelled",
        }
    }

    /// The outcome a kept state lists (completed, cancelled), else `None`.
    pub fn of_state(state: crate::JobState) -> Option<Outcome> {
        match state {
            crate::JobState::Completed => Some(Outcome::Completed),
            crate::JobState::Cancelled => Some(Outcome::Cancelled),
            _ => None,
        }
    }

    fn parse(text: &str) -> Option<Outcome> {
        match text {
            "completed" => Some(Outcome::Completed),
            "cancelled" => Some(Outcome::Cancelled),
            _ => None,
        }
    }
}

/// A finished job its queue keeps (see [`crate::kept`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptJob {
    /// The job id.
    pub id: String,
    /// Completed or cancelled.
    pub outcome: Outcome,
    /// Its queue.
    pub queue: String,
    /// The job type name, if any.
    pub name: Option<String>,
    /// Completed: the attempt that succeeded (1 = the first run).
    /// Cancelled: the failed attempts before the cancel.
    pub attempt: u32,
    /// The worker that held it last (node id, instance), if any.
    pub holder: Option<(u64, u32)>,
    /// When it was enqueued.
    pub enqueued_at: SystemTime,
    /// When it completed or was cancelled (Redis clock).
    pub finished_at: SystemTime,
    /// How long its last run took, as its worker measured, in whole
    /// milliseconds rounded up (completed jobs acknowledged by a
    /// [`Worker`](crate::worker::Worker) or with a run time).
    pub run_time: Option<Duration>,
    /// Who cancelled it, as the operator said (cancelled jobs).
    pub cancelled_by: Option<String>,
    /// The state it was cancelled in (cancelled jobs).
    pub cancelled_in: Option<String>,
    /// The result its handler set (completed jobs), as JSON.
    pub result: Option<Value>,
    /// The namespace holding it (which shard, with several).
    pub namespace: String,
}

impl KeptJob {
    /// Decode a kept record as `lua/lib/kept_record.lua` writes it.
    pub(crate) fn decode(namespace: &str, id: String, raw: &[u8]) -> Result<KeptJob, QueueError> {
        let bad = |why: &str| QueueError::Protocol(format!("kept record of job {id}: {why}"));
        let mut rest = raw;
        let fields = match rmpv::decode::read_value(&mut rest).map_err(|e| bad(&e.to_string()))? {
            rmpv::Value::Array(fields) if fields.len() >= field::LEN => fields,
            _ => return Err(bad(&format!("not a {}-field array", field::LEN))),
        };
        let num = |i: usize| match &fields[i] {
            rmpv::Value::Integer(n) => n.as_u64().unwrap_or(0),
            rmpv::Value::F64(f) => *f as u64,
            rmpv::Value::F32(f) => *f as u64,
            _ => 0,
        };
        let text = |i: usize| match &fields[i] {
            rmpv::Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
            rmpv::Value::Binary(b) => String::from_utf8_lossy(b).into_owned(),
            rmpv::Value::Integer(n) => n.to_string(),
            _ => String::new(),
        };
        let some = |s: String| (!s.is_empty()).then_some(s);
        let outcome_text = text(field::OUTCOME);
        let outcome = Outcome::parse(&outcome_text)
            .ok_or_else(|| bad(&format!("unknown outcome {outcome_text:?}")))?;
        let node: u64 = text(field::HOLDER_NODE).parse().unwrap_or(0);
        let run_ms = num(field::RUN_MS);
        let result = some(text(field::RESULT))
            .map(|json| serde_json::from_str(&json).unwrap_or(Value::String(json)));
        Ok(KeptJob {
            outcome,
            queue: text(field::QUEUE),
            name: some(text(field::NAME)),
            attempt: num(field::ATTEMPT).min(u32::MAX as u64) as u32,
            holder: (node != 0).then(|| {
                (
                    node,
                    num(field::HOLDER_INSTANCE).min(u32::MAX as u64) as u32,
                )
            }),
            enqueued_at: ms_to_time(num(field::ENQUEUED_AT)),
            finished_at: ms_to_time(num(field::FINISHED_AT)),
            run_time: (run_ms > 0).then(|| Duration::from_millis(run_ms)),
            cancelled_by: some(text(field::CANCELLED_BY)),
            cancelled_in: some(text(field::CANCELLED_IN)),
            result,
            namespace: namespace.to_owned(),
            id,
        })
    }
}

/// What is left of a finished job once its kept record is gone: how it
/// finished and when. Written when a kept record is trimmed, and for a
/// cancelled job of a queue that keeps nothing; expires on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tombstone {
    /// Completed or cancelled.
    pub outcome: Outcome,
    /// When (Redis clock).
    pub finished_at: SystemTime,
}

impl Tombstone {
    /// Read a tombstone, `"<c|x> <ms>"` (`lua/lib/kept_record.lua`).
    pub(crate) fn parse(raw: &str) -> Result<Tombstone, QueueError> {
        let bad = || QueueError::Protocol(format!("unreadable tombstone {raw:?}"));
        let (kind, at) = raw.split_once(' ').ok_or_else(bad)?;
        let outcome = match kind {
            "c" => Outcome::Completed,
            "x" => Outcome::Cancelled,
            _ => return Err(bad()),
        };
        let at: u64 = at.parse().map_err(|_| bad())?;
        Ok(Tombstone {
            outcome,
            finished_at: ms_to_time(at),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `name = position,` lines of `KR` in `lua/lib/kept_record.lua`.
    fn lua_positions() -> Vec<(String, usize)> {
        let lua = include_str!("../../lua/lib/kept_record.lua");
        let table = lua
            .split_once("local KR = {")
            .and_then(|(_, rest)| rest.split_once('}'))
            .expect("lua/lib/kept_record.lua defines KR")
            .0;
        table
            .lines()
            .filter_map(|line| {
                let (name, rest) = line.trim().split_once(" = ")?;
                let position = rest.split(',').next()?.trim().parse().ok()?;
                Some((name.to_owned(), position))
            })
            .collect()
    }

    #[test]
    fn the_rust_positions_are_the_lua_schema() {
        let rust = [
            ("outcome", field::OUTCOME),
            ("queue", field::QUEUE),
            ("name", field::NAME),
            ("attempt", field::ATTEMPT),
            ("holder_node", field::HOLDER_NODE),
            ("holder_instance", field::HOLDER_INSTANCE),
            ("enqueued_at", field::ENQUEUED_AT),
            ("finished_at", field::FINISHED_AT),
            ("run_ms", field::RUN_MS),
            ("cancelled_by", field::CANCELLED_BY),
            ("cancelled_in", field::CANCELLED_IN),
            ("result", field::RESULT),
        ];
        let lua = lua_positions();
        let rust: Vec<(String, usize)> = rust
            .iter()
            .map(|(name, at)| (name.to_string(), at + 1))
            .collect();
        assert_eq!(lua, rust);
        let len = include_str!("../../lua/lib/kept_record.lua")
            .lines()
            .find_map(|l| l.strip_prefix("local KEPT_LEN = "))
            .and_then(|n| n.trim().parse::<usize>().ok());
        assert_eq!(len, Some(field::LEN));
    }

    #[test]
    fn a_tombstone_reads_back_its_outcome_and_time() {
        let t = Tombstone::parse("x 1700000000123").unwrap();
        assert_eq!(t.outcome, Outcome::Cancelled);
        assert_eq!(t.finished_at, ms_to_time(1_700_000_000_123));
        assert!(Tombstone::parse("q 12").is_err());
    }
}
