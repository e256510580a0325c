//! The schedule record the scripts store as msgpack in `{ns}:schedules`, and
//! the view of it the API hands out.
//!
//! The record is defined once, by the table `S` in
//! `lua/lib/schedule_record.lua` (its fields, their order and meaning); `driver/build.rs` generates the positions used here from it.
//! A fixed-length array, like the job record, so the scripts can update a
//! field (paused, last run) without re-encoding the payload, which stays
//! byte-for-byte the JSON text the caller sent.

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::job::{ms_to_time, parse_payload};
use crate::schedule::Misfire;
use crate::QueueError;

/// Positions (from 0) of the schedule record's fields, generated from
/// the table `S` in `lua/lib/schedule_record.lua`.
mod field {
    include!(concat!(env!("OUT_DIR"), "/schedule_fields.rs"));
}

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
    /// The last tick the misfire policy [`Misfire::Skip`] skipped (no job
    /// was enqueued for it; a `schedule_skipped` event says how late it
    /// was). `None` when none was ever skipped.
    pub last_skipped: Option<SystemTime>,
    /// The id of the last job it enqueued.
    pub last_job_id: Option<String>,
    /// Goes up by one at every upsert.
    pub revision: u64,
    /// When it was first created.
    pub created_at: SystemTime,
    /// When it was last upserted, paused or resumed.
    pub updated_at: SystemTime,
}

impl ScheduleInfo {
    /// Whether the schedule has ended at `now`: it has an end
    /// ([`ScheduleInfo::ends_at`]) and either the end has passed, or it
    /// runs with no next run left (its last tick before the end fired). An
    /// ended schedule stays listed and fires nothing more; a paused one whose
    /// end is still ahead has not ended.
    ///
    /// ```
    /// # fn demo(info: redq::schedule::ScheduleInfo) {
    /// let state = if info.ended(std::time::SystemTime::now()) {
    ///     "ended"
    /// } else if info.paused {
    ///     "paused"
    /// } else {
    ///     "active"
    /// };
    /// # }
    /// ```
    pub fn ended(&self, now: SystemTime) -> bool {
        self.ends_at
            .is_some_and(|end| end < now || (!self.paused && self.next_run.is_none()))
    }
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
        // A record stored before last_skipped existed ends just before it;
        // the fields it lacks read as their defaults.
        let fields = match value {
            rmpv::Value::Array(fields) if fields.len() >= field::LAST_SKIPPED => fields,
            _ => return Err(bad(&format!("not a {}-field array", field::LEN))),
        };
        let num = |i: usize| -> u64 {
            match fields.get(i).unwrap_or(&rmpv::Value::Nil) {
                rmpv::Value::Integer(n) => n.as_u64().unwrap_or(0),
                rmpv::Value::F64(f) if *f >= 0.0 => *f as u64,
                rmpv::Value::F32(f) if *f >= 0.0 => *f as u64,
                _ => 0,
            }
        };
        let bytes = |i: usize| -> &[u8] {
            match fields.get(i).unwrap_or(&rmpv::Value::Nil) {
                rmpv::Value::String(s) => s.as_bytes(),
                rmpv::Value::Binary(b) => b,
                _ => &[],
            }
        };
        let text = |i: usize| String::from_utf8_lossy(bytes(i)).into_owned();
        let opt_text = |i: usize| Some(text(i)).filter(|s| !s.is_empty());
        let opt_time = |i: usize| Some(num(i)).filter(|ms| *ms > 0).map(ms_to_time);
        let starts_at_ms = num(field::STARTS_AT);
        let ends_at_ms = num(field::ENDS_AT);
        let info = ScheduleInfo {
            name: text(field::NAME),
            queue: text(field::QUEUE),
            expression: text(field::CRON),
            timezone: text(field::TZ),
            payload: parse_payload(bytes(field::PAYLOAD)),
            priority: num(field::PRIORITY).min(255) as u8,
            max_attempts: num(field::MAX_ATTEMPTS).min(u64::from(u32::MAX)) as u32,
            job_name: opt_text(field::JOB_NAME),
            retry_window: Some(num(field::RETRY_WINDOW))
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis),
            paused: num(field::PAUSED) == 1,
            starts_at: opt_time(field::STARTS_AT),
            ends_at: opt_time(field::ENDS_AT),
            misfire: Misfire::from_code(num(field::MISFIRE)),
            next_run: u64::try_from(next_ms).ok().map(ms_to_time),
            last_run: opt_time(field::LAST_RUN),
            last_tick: opt_time(field::LAST_TICK),
            last_skipped: opt_time(field::LAST_SKIPPED),
            last_job_id: opt_text(field::LAST_JOB_ID),
            revision: num(field::REV),
            created_at: ms_to_time(num(field::CREATED_AT)),
            updated_at: ms_to_time(num(field::UPDATED_AT)),
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
        // Stored before last_skipped existed: 19 fields, none skipped.
        assert_eq!(info.last_skipped, None);
        assert!(Record::decode(b"\x91\x01", 0).is_err());
    }

    #[test]
    fn ended_means_past_its_end_or_running_out_of_ticks() {
        let mut raw = Vec::new();
        let fields: Vec<rmpv::Value> = (0..field::LEN).map(|_| rmpv::Value::from(0)).collect();
        rmpv::encode::write_value(&mut raw, &rmpv::Value::Array(fields)).unwrap();
        let mut info = Record::decode(&raw, 5_000).unwrap().info;
        let now = ms_to_time(10_000);
        assert!(!info.ended(now), "no end");
        info.ends_at = Some(ms_to_time(20_000));
        assert!(!info.ended(now), "end ahead, next run ahead");
        info.next_run = None;
        assert!(info.ended(now), "end ahead, no tick left before it");
        info.paused = true;
        assert!(!info.ended(now), "paused, end ahead");
        info.ends_at = Some(ms_to_time(9_999));
        assert!(info.ended(now), "end passed");
    }
}
