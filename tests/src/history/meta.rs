//! The job meta record (`lua/lib.lua`, table `M`), decoded from the msgpack
//! the scripts store, for readers that bypass the driver: the structural
//! check and the server-side transition log.
//!
//! A job's value in `{ns}:jobs` is the msgpack meta array immediately
//! followed by the payload bytes (JSON text), so the decoder reads exactly
//! one msgpack value and hands back whatever follows it.

/// The fields of one meta record that the checks look at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    pub queue: String,
    pub priority: u64,
    pub seq: u64,
    pub enqueued_at: u64,
    pub not_before: u64,
    pub attempts: u64,
    pub max_attempts: u64,
    pub retry_window: u64,
    pub dedup_key: String,
    pub dedup_ttl: u64,
    pub ordering_key: String,
    pub lease_id: u64,
    pub lease_expiry: u64,
    pub worker_node: String,
    pub worker_instance: u64,
    pub died_at: u64,
    /// Signed: a release records minus the lease id.
    pub resolved_lease: i64,
}

impl Meta {
    /// Decodes the meta part of a record, ignoring the payload after it;
    /// `None` when it does not start with a 19-field msgpack array.
    pub fn decode(raw: &[u8]) -> Option<Meta> {
        Meta::split(raw).map(|(meta, _)| meta)
    }

    /// Decodes the meta part of a record and returns it with the bytes that
    /// follow it: the payload (empty when the record has none).
    pub fn split(raw: &[u8]) -> Option<(Meta, &[u8])> {
        let mut rest = raw;
        // Reading one value advances `rest` past it, onto the payload.
        let value = rmpv::decode::read_value(&mut rest).ok()?;
        let rmpv::Value::Array(f) = value else {
            return None;
        };
        if f.len() != 19 {
            return None;
        }
        let int = |i: usize| -> i64 {
            match &f[i] {
                rmpv::Value::Integer(n) => n.as_i64().unwrap_or(i64::MAX),
                rmpv::Value::F64(x) => *x as i64,
                rmpv::Value::F32(x) => *x as i64,
                _ => -1,
            }
        };
        let num = |i: usize| int(i).max(0) as u64;
        let text = |i: usize| -> String {
            match &f[i] {
                rmpv::Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                rmpv::Value::Binary(b) => String::from_utf8_lossy(b).into_owned(),
                rmpv::Value::Integer(n) => n.to_string(),
                _ => String::new(),
            }
        };
        // Positions as in lua/lib.lua's M, from 0.
        let meta = Meta {
            lease_id: num(0),
            lease_expiry: num(1),
            worker_node: text(2),
            worker_instance: num(3),
            queue: text(4),
            dedup_key: text(5),
            dedup_ttl: num(6),
            ordering_key: text(7),
            priority: num(8),
            seq: num(9),
            enqueued_at: num(10),
            not_before: num(11),
            attempts: num(12),
            max_attempts: num(13),
            retry_window: num(14),
            died_at: num(17),
            resolved_lease: int(18),
        };
        Some((meta, rest))
    }

    /// The score `lua/lib.lua` gives a waiting job.
    pub fn waiting_score(&self) -> f64 {
        (255 - self.priority.min(255)) as f64 * 17_592_186_044_416.0 + self.seq as f64
    }
}
