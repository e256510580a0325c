//! The schedule record the scripts store as msgpack in `{ns}:schedules`, and
//! the view of it the API hands out.
//!
//! A fixed-length array, like the job record (`lua/lib.lua`, `M`), so the
//! scripts can update a field (paused, last run) without re-encoding the
//! payload, which stays byte-for-byte the JSON text the caller sent. Fields
//! (1-based, as the scripts' `S` table names them; keep both in sync):
//!
//! | # | field | |
//! |---|---|---|
//! | 1 | name | |
//! | 2 | queue | |
//! | 3 | cron | expression as given |
//! | 4 | tz | IANA time zone |
//! | 5 | payload | JSON text |
//! | 6 | priority | 0..255 |
//! | 7 | max_attempts | 0 = unlimited |
//! | 8 | job_name | "" = none |
//! | 9 | retry_window | ms, 0 = none |
//! | 10 | paused | 0 / 1 |
//! | 11 | starts_at | unix ms, 0 = none |
//! | 12 | ends_at | unix ms, 0 = none |
//! | 13 | misfire | 0 fire once, 1 skip |
//! | 14 | rev | revision, +1 per upsert |
//! | 15 | last_run | unix ms (Redis clock) of the last enqueue, 0 = never |
//! | 16 | last_tick | the last tick fired or skipped, unix ms |
//! | 17 | last_job_id | "" = none |
//! | 18 | created_at | unix ms |
//! | 19 | updated_at | unix ms |

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::job::{ms_to_time, parse_payload};
use crate::schedule::Misfire;
use crate::QueueError;

/// Number of fields in the record (the scripts' `S_LEN`).
pub(crate) const RECORD_LEN: usize = 19;

/// The Lua `S` table every schedule script that reads records carries; a test
/// checks they all match this text.
#[cfg(test)]
pub(crate) const LUA_LAYOUT: &str = "local S = {
  name = 1, queue = 2, cron = 3, tz = 4, payload = 5, priority = 6,
  max_attempts = 7, job_name = 8, retry_window = 9, paused = 10,
  starts_at = 11, ends_at = 12, misfire = 13, rev = 14, last_run = 15,
  last_tick = 16, last_job_id = 17, created_at = 18, updated_at = 19,
}
local S_LEN = 19";

/// A stored schedule, as [`crate::RedisQueue::list_schedules`] and
/// [`crate::RedisQueue::schedule`] report it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScheduleInfo {
    /// The schedule's name.
    pub name: String,
    /// The queue its jobs go to.
    pub queue: String,
    /// The cron expression.
    pub expression: String,
    /// The IANA time zone of the expression.
    pub timezone: String,
    /// The payload of its jobs.
    pub payload: Value,
    /// Its jobs' priority.
    pub priority: u8,
    /// Its jobs' attempt ceiling (0 = unlimited).
    pub max_attempts: u32,
    /// Its jobs' type name, if any.
    pub job_name: Option<String>,
    /// Its jobs' retry window, if any.
    pub retry_window: Option<Duration>,
    /// Paused: no ticks fire (and [`ScheduleInfo::next_run`] is `None`).
    pub paused: bool,
    /// No tick before this time.
    pub starts_at: Option<SystemTime>,
    /// No tick after this time.
    pub ends_at: Option<SystemTime>,
    /// What it does about missed ticks.
    pub misfire: Misfire,
    /// The next tick, or `None` while paused or once ended.
    pub next_run: Option<SystemTime>,
    /// When it last enqueued a job (a tick or a trigger; Redis clock).
    pub last_run: Option<SystemTime>,
    /// The last tick it fired or skipped.
    pub last_tick: Option<SystemTime>,
    /// The id of the last job it enqueued.
    pub last_job_id: Option<String>,
    /// Goes up by one at every upsert.
    pub revision: u64,
    /// When it was first created.
    pub created_at: SystemTime,
    /// When it was last upserted, paused or resumed.
    pub updated_at: SystemTime,
}

/// The raw fields a scheduler needs, decoded once.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub info: ScheduleInfo,
    pub starts_at_ms: u64,
    pub ends_at_ms: u64,
}

impl Record {
    /// Decode a stored record; `next_ms` is its `{ns}:schedules:next` score
    /// (negative = none).
    pub fn decode(raw: &[u8], next_ms: i64) -> Result<Record, QueueError> {
        let bad = |why: &str| QueueError::Protocol(format!("schedule record: {why}"));
        let value = rmpv::decode::read_value(&mut &raw[..]).map_err(|e| bad(&e.to_string()))?;
        let fields = match value {
            rmpv::Value::Array(fields) if fields.len() >= RECORD_LEN => fields,
            _ => return Err(bad("not a 19-field array")),
        };
        let num = |i: usize| -> u64 {
            match &fields[i - 1] {
                rmpv::Value::Integer(n) => n.as_u64().unwrap_or(0),
                rmpv::Value::F64(f) if *f >= 0.0 => *f as u64,
                rmpv::Value::F32(f) if *f >= 0.0 => *f as u64,
                _ => 0,
            }
        };
        let bytes = |i: usize| -> &[u8] {
            match &fields[i - 1] {
                rmpv::Value::String(s) => s.as_bytes(),
                rmpv::Value::Binary(b) => b,
                _ => &[],
            }
        };
        let text = |i: usize| String::from_utf8_lossy(bytes(i)).into_owned();
        let opt_text = |i: usize| Some(text(i)).filter(|s| !s.is_empty());
        let opt_time = |i: usize| Some(num(i)).filter(|ms| *ms > 0).map(ms_to_time);
        let starts_at_ms = num(11);
        let ends_at_ms = num(12);
        let info = ScheduleInfo {
            name: text(1),
            queue: text(2),
            expression: text(3),
            timezone: text(4),
            payload: parse_payload(bytes(5)),
            priority: num(6).min(255) as u8,
            max_attempts: num(7).min(u64::from(u32::MAX)) as u32,
            job_name: opt_text(8),
            retry_window: Some(num(9)).filter(|ms| *ms > 0).map(Duration::from_millis),
            paused: num(10) == 1,
            starts_at: opt_time(11),
            ends_at: opt_time(12),
            misfire: Misfire::from_code(num(13)),
            next_run: u64::try_from(next_ms).ok().map(ms_to_time),
            last_run: opt_time(15),
            last_tick: opt_time(16),
            last_job_id: opt_text(17),
            revision: num(14),
            created_at: ms_to_time(num(18)),
            updated_at: ms_to_time(num(19)),
        };
        Ok(Record {
            info,
            starts_at_ms,
            ends_at_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schedule_script_carries_the_same_record_layout() {
        for (file, source) in [
            (
                "schedule_upsert.lua",
                include_str!("../../lua/schedule_upsert.lua"),
            ),
            (
                "schedule_fire.lua",
                include_str!("../../lua/schedule_fire.lua"),
            ),
            (
                "schedule_trigger.lua",
                include_str!("../../lua/schedule_trigger.lua"),
            ),
            (
                "schedule_pause.lua",
                include_str!("../../lua/schedule_pause.lua"),
            ),
        ] {
            assert!(source.contains(LUA_LAYOUT), "{file} has another layout");
        }
    }

    #[test]
    fn decodes_what_the_scripts_store() {
        use rmpv::Value as V;
        let record = V::Array(vec![
            V::from("nightly"),
            V::from("reports"),
            V::from("0 2 * * *"),
            V::from("Europe/Paris"),
            V::from(r#"{"a":[]}"#),
            V::from(3),
            V::from(5),
            V::from(""),
            V::from(0),
            V::from(1),
            V::from(0),
            V::from(1_800_000_000_000u64),
            V::from(1),
            V::from(4),
            V::from(1_700_000_000_000u64),
            V::from(1_700_000_000_000u64),
            V::from("s-00-1"),
            V::from(1_600_000_000_000u64),
            V::from(1_650_000_000_000u64),
        ]);
        let mut raw = Vec::new();
        rmpv::encode::write_value(&mut raw, &record).unwrap();
        let info = Record::decode(&raw, -1).unwrap().info;
        assert_eq!(info.payload, serde_json::json!({"a": []}));
        assert_eq!((info.priority, info.max_attempts, info.revision), (3, 5, 4));
        assert_eq!(info.job_name, None);
        assert!(info.paused);
        assert_eq!(info.misfire, Misfire::Skip);
        assert_eq!(info.next_run, None);
        assert_eq!(info.starts_at, None);
        assert_eq!(info.ends_at, Some(ms_to_time(1_800_000_000_000)));
        assert_eq!(info.last_job_id.as_deref(), Some("s-00-1"));
        assert!(Record::decode(b"\x91\x01", 0).is_err());
    }
}
