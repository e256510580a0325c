//! The job record's meta, decoded from the msgpack array the scripts store.
//! The record is defined once, in `lua/lib/job_record.lua`; `driver/build.rs`
//! generates the field positions used here from it.

use crate::QueueError;

/// Positions (from 0) of the job record's fields, generated from
/// the table `M` in `lua/lib/job_record.lua`.
mod field {
    include!(concat!(env!("OUT_DIR"), "/job_fields.rs"));
}

/// A decoded meta record: everything about a job but its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The queue the job is in.
    pub queue: String,
    /// 0..255, higher is claimed first.
    pub priority: u8,
    /// Enqueue order (FIFO within a priority).
    pub seq: u64,
    /// When it was enqueued (unix ms, Redis clock).
    pub enqueued_at_ms: u64,
    /// Due no earlier than this (unix ms).
    pub not_before_ms: u64,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Attempt ceiling, 0 = unlimited.
    pub max_attempts: u32,
    /// Retry window, 0 = none.
    pub retry_window_ms: u64,
    /// "" = none.
    pub dedup_key: String,
    /// 0 = the dedup key is held while the job lives.
    pub dedup_ttl_ms: u64,
    /// "" = none.
    pub ordering_key: String,
    /// Job type name, "" = none.
    pub name: String,
    /// The current lease, 0 = not leased.
    pub lease_id: u64,
    /// The current lease's expiry (unix ms), 0 = not leased.
    pub lease_expiry_ms: u64,
    /// The holder's node id, 0 = not leased.
    pub worker_node: u64,
    /// The holder's instance.
    pub worker_instance: u32,
    /// The last failure's text.
    pub error: String,
    /// When it was dead-lettered (unix ms), 0 = alive.
    pub died_at_ms: u64,
    /// The lease whose outcome was last recorded: the lease id after a nack,
    /// minus it after a release, 0 after a reclaim or requeue.
    pub resolved_lease: i64,
}

impl Meta {
    /// Decode the fixed-length msgpack array written by the scripts (any
    /// bytes after it, such as a record's payload, are not read).
    pub fn decode(raw: &[u8]) -> Result<Meta, QueueError> {
        Ok(Meta::decode_record(raw)?.0)
    }

    /// Decode a job record as stored and as claims return it: the packed
    /// meta, then the payload bytes, returned as they are.
    pub fn decode_record(raw: &[u8]) -> Result<(Meta, &[u8]), QueueError> {
        let bad = |why: &str| QueueError::Protocol(format!("job record: {why}"));
        let mut rest = raw;
        let value = rmpv::decode::read_value(&mut rest).map_err(|e| bad(&e.to_string()))?;
        let fields = match value {
            rmpv::Value::Array(fields) if fields.len() >= field::LEN => fields,
            _ => return Err(bad(&format!("not a {}-field array", field::LEN))),
        };
        let int = |i: usize| -> i64 {
            match &fields[i] {
                rmpv::Value::Integer(n) => n.as_i64().unwrap_or(0),
                rmpv::Value::F64(f) => *f as i64,
                rmpv::Value::F32(f) => *f as i64,
                _ => 0,
            }
        };
        let num = |i: usize| -> u64 {
            match &fields[i] {
                rmpv::Value::Integer(n) => n.as_u64().unwrap_or(0),
                rmpv::Value::F64(f) => *f as u64,
                rmpv::Value::F32(f) => *f as u64,
                _ => 0,
            }
        };
        let text = |i: usize| -> String {
            match &fields[i] {
                rmpv::Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                rmpv::Value::Binary(b) => String::from_utf8_lossy(b).into_owned(),
                rmpv::Value::Integer(n) => n.to_string(),
                _ => String::new(),
            }
        };
        let meta = Meta {
            lease_id: num(field::LEASE_ID),
            lease_expiry_ms: num(field::LEASE_EXPIRY),
            worker_node: text(field::WORKER_NODE).parse().unwrap_or(0),
            worker_instance: num(field::WORKER_INSTANCE).min(u32::MAX as u64) as u32,
            queue: text(field::QUEUE),
            dedup_key: text(field::DEDUP_KEY),
            dedup_ttl_ms: num(field::DEDUP_TTL),
            ordering_key: text(field::ORDERING_KEY),
            priority: num(field::PRIORITY).min(255) as u8,
            seq: num(field::SEQ),
            enqueued_at_ms: num(field::ENQUEUED_AT),
            not_before_ms: num(field::NOT_BEFORE),
            attempts: num(field::ATTEMPTS).min(u32::MAX as u64) as u32,
            max_attempts: num(field::MAX_ATTEMPTS).min(u32::MAX as u64) as u32,
            retry_window_ms: num(field::RETRY_WINDOW),
            name: text(field::NAME),
            error: text(field::ERROR),
            died_at_ms: num(field::DIED_AT),
            resolved_lease: int(field::RESOLVED_LEASE),
        };
        Ok((meta, rest))
    }
}
