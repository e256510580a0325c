//! The job meta record the scripts store as msgpack (`lua/lib.lua`, `M`).

use crate::QueueError;

/// A decoded meta record: everything about a job but its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub queue: String,
    pub priority: u8,
    pub seq: u64,
    pub enqueued_at_ms: u64,
    pub not_before_ms: u64,
    pub attempts: u32,
    pub max_attempts: u32,
    pub retry_window_ms: u64,
    pub dedup_key: String,
    pub dedup_ttl_ms: u64,
    pub ordering_key: String,
    pub name: String,
    pub lease_id: u64,
    pub lease_expiry_ms: u64,
    pub worker_node: u64,
    pub worker_instance: u32,
    pub error: String,
    pub died_at_ms: u64,
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
            rmpv::Value::Array(fields) if fields.len() >= 19 => fields,
            _ => return Err(bad("not a 19-field array")),
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
        // Positions as in lua/lib.lua's M, from 0.
        let meta = Meta {
            lease_id: num(0),
            lease_expiry_ms: num(1),
            worker_node: text(2).parse().unwrap_or(0),
            worker_instance: num(3).min(u32::MAX as u64) as u32,
            queue: text(4),
            dedup_key: text(5),
            dedup_ttl_ms: num(6),
            ordering_key: text(7),
            priority: num(8).min(255) as u8,
            seq: num(9),
            enqueued_at_ms: num(10),
            not_before_ms: num(11),
            attempts: num(12).min(u32::MAX as u64) as u32,
            max_attempts: num(13).min(u32::MAX as u64) as u32,
            retry_window_ms: num(14),
            name: text(15),
            error: text(16),
            died_at_ms: num(17),
        };
        Ok((meta, rest))
    }
}
