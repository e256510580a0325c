//! The job record's meta, decoded from the msgpack array the scripts store.
//! The record is defined once, in `lua/lib/job_record.lua`; `driver/build.rs`
//! generates the field positions used here from it.

use crate::msgpack_fields::{read_array, Field};
use crate::QueueError;

/// Positions (from 0) of the job record's fields, generated from
/// the table `M` in `lua/lib/job_record.lua`.
pub(crate) mod field {
    include!(concat!(env!("OUT_DIR"), "/job_fields.rs"));
}

/// How many fields a job record of the current layout has (`JOB_LEN` of
/// `lua/lib/job_record.lua`).
pub const JOB_RECORD_LEN: usize = field::LEN;

/// The fewest fields a stored job record has (`OLDEST_JOB_LEN`): a record
/// of an older layout, or a lean one without its trailing defaults.
pub const OLDEST_JOB_RECORD_LEN: usize = field::OLDEST_LEN;

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
    /// A reclaim's delay after the first lost lease (ms), doubling per
    /// attempt up to [`Meta::backoff_cap_ms`]; 0 = back at once.
    pub backoff_base_ms: u64,
    /// The longest delay a reclaim waits (ms).
    pub backoff_cap_ms: u64,
    /// The job has progress or log lines.
    pub noted: bool,
    /// The job's limit key within its queue, "" = none.
    pub limit_key: String,
    /// The producer's W3C traceparent (`crate::trace`), "" = none.
    pub trace: String,
    /// The gate the job was created into as a member (a batch or a tree,
    /// `lua/lib/gate.lua`), "" = none.
    pub gate: String,
    /// How many gates the job joined after its creation (as a dependency).
    pub more_gates: u32,
    /// The gate the job waits on, "" = none; kept after its decision.
    pub awaits: String,
}

impl Meta {
    /// Decode the msgpack array written by the scripts, of
    /// `OLDEST_JOB_LEN` to `JOB_LEN` fields (a lean record leaves out its
    /// trailing defaults; any bytes after it, such as a record's payload,
    /// are not read).
    pub fn decode(raw: &[u8]) -> Result<Meta, QueueError> {
        Ok(Meta::decode_record(raw)?.0)
    }

    /// Decode a job record as stored and as claims return it: the packed
    /// meta, then the payload bytes, returned as they are.
    pub fn decode_record(raw: &[u8]) -> Result<(Meta, &[u8]), QueueError> {
        let bad = |why: &str| QueueError::Protocol(format!("job record: {why}"));
        let (stored, rest) = read_array(raw).map_err(|why| bad(&why))?;
        let fields = match stored.len() {
            n if n >= field::OLDEST_LEN => stored,
            n if (field::COMPACT_MIN..=field::COMPACT.len()).contains(&n) => from_compact(&stored),
            _ => {
                return Err(bad(&format!(
                    "not an array of {} to {} fields (or {} to {}, compact)",
                    field::OLDEST_LEN,
                    field::LEN,
                    field::COMPACT_MIN,
                    field::COMPACT.len()
                )))
            }
        };
        // A field an older, shorter record lacks reads as its default.
        let at = |i: usize| fields.get(i).copied().unwrap_or(Field::Other);
        let int = |i: usize| at(i).signed();
        let num = |i: usize| at(i).number();
        let text = |i: usize| at(i).text();
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
            not_before_ms: match num(field::NOT_BEFORE) {
                // Stored lean (lua/lib/job_record.lua): due when enqueued.
                field::DUE_AT_ENQUEUE => num(field::ENQUEUED_AT),
                due => due,
            },
            attempts: num(field::ATTEMPTS).min(u32::MAX as u64) as u32,
            max_attempts: num(field::MAX_ATTEMPTS).min(u32::MAX as u64) as u32,
            retry_window_ms: num(field::RETRY_WINDOW),
            name: text(field::NAME),
            error: text(field::ERROR),
            died_at_ms: num(field::DIED_AT),
            resolved_lease: int(field::RESOLVED_LEASE),
            backoff_base_ms: num(field::BACKOFF_BASE),
            backoff_cap_ms: num(field::BACKOFF_CAP),
            noted: num(field::NOTED) != 0,
            limit_key: text(field::LIMIT_KEY),
            trace: text(field::TRACE),
            gate: text(field::GATE),
            more_gates: num(field::MORE_GATES).min(u32::MAX as u64) as u32,
            awaits: text(field::AWAITS),
        };
        Ok((meta, rest))
    }
}

/// The whole record's fields of a compact record's (`crate::record_format`):
/// each stored one at its place, the rest absent (their defaults), and due
/// when enqueued.
fn from_compact<'a>(stored: &[Field<'a>]) -> Vec<Field<'a>> {
    let mut fields = vec![Field::Other; field::LEN];
    for (value, at) in stored.iter().zip(field::COMPACT) {
        fields[at] = *value;
    }
    fields[field::NOT_BEFORE] = Field::Uint(field::DUE_AT_ENQUEUE);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `len` fields, each its position's number (text fields get
    /// the number as text), then a payload.
    fn record(len: usize) -> Vec<u8> {
        let texts = [
            field::WORKER_NODE,
            field::QUEUE,
            field::DEDUP_KEY,
            field::ORDERING_KEY,
            field::NAME,
            field::ERROR,
            field::LIMIT_KEY,
            field::TRACE,
            field::GATE,
            field::AWAITS,
        ];
        let fields = (0..len)
            .map(|i| {
                if texts.contains(&i) {
                    rmpv::Value::from(i.to_string())
                } else {
                    rmpv::Value::from(i as u64)
                }
            })
            .collect();
        let mut raw = Vec::new();
        rmpv::encode::write_value(&mut raw, &rmpv::Value::Array(fields)).unwrap();
        raw.extend_from_slice(b"{\"x\":1}");
        raw
    }

    #[test]
    fn a_record_of_the_oldest_layout_reads_with_the_later_fields_at_their_defaults() {
        let raw = record(field::OLDEST_LEN);
        let (old, payload) = Meta::decode_record(&raw).unwrap();
        assert_eq!(payload, b"{\"x\":1}");
        assert_eq!(old.queue, field::QUEUE.to_string());
        assert_eq!(old.resolved_lease, field::RESOLVED_LEASE as i64);
        assert_eq!(
            (old.backoff_base_ms, old.backoff_cap_ms, old.noted),
            (0, 0, false)
        );
        assert_eq!((old.limit_key.as_str(), old.trace.as_str()), ("", ""));
        assert_eq!(
            (old.gate.as_str(), old.more_gates, old.awaits.as_str()),
            ("", 0, "")
        );

        let raw = record(field::LEN);
        let (new, payload) = Meta::decode_record(&raw).unwrap();
        assert_eq!(payload, b"{\"x\":1}");
        assert_eq!(new.backoff_base_ms, field::BACKOFF_BASE as u64);
        assert_eq!(new.backoff_cap_ms, field::BACKOFF_CAP as u64);
        assert!(new.noted);
        assert_eq!(new.limit_key, field::LIMIT_KEY.to_string());
        assert_eq!(new.trace, field::TRACE.to_string());
        assert_eq!(new.gate, field::GATE.to_string());
        assert_eq!(new.more_gates, field::MORE_GATES as u32);
        assert_eq!(new.awaits, field::AWAITS.to_string());
    }

    #[test]
    fn a_lean_record_reads_due_when_enqueued_and_its_missing_fields_at_their_defaults() {
        let mut fields: Vec<rmpv::Value> = (0..field::OLDEST_LEN + 2)
            .map(|i| rmpv::Value::from(i as u64))
            .collect();
        fields[field::ENQUEUED_AT] = rmpv::Value::from(1_764_680_000_123u64);
        fields[field::NOT_BEFORE] = rmpv::Value::from(field::DUE_AT_ENQUEUE);
        let mut raw = Vec::new();
        rmpv::encode::write_value(&mut raw, &rmpv::Value::Array(fields)).unwrap();
        raw.extend_from_slice(b"{}");
        let (meta, payload) = Meta::decode_record(&raw).unwrap();
        assert_eq!(payload, b"{}");
        assert_eq!(
            (meta.enqueued_at_ms, meta.not_before_ms),
            (1_764_680_000_123, 1_764_680_000_123)
        );
        assert_eq!(meta.backoff_base_ms, field::BACKOFF_BASE as u64);
        assert_eq!(meta.backoff_cap_ms, field::BACKOFF_CAP as u64);
        assert_eq!((meta.noted, meta.limit_key.as_str()), (false, ""));

        // A due time of its own reads as stored.
        let raw = record(field::LEN);
        let meta = Meta::decode(&raw).unwrap();
        assert_eq!(meta.not_before_ms, field::NOT_BEFORE as u64);
    }

    #[test]
    fn a_compact_record_reads_its_fields_the_rest_at_their_defaults_due_when_enqueued() {
        let stored = [
            rmpv::Value::from("emails"),
            rmpv::Value::from(7u64),
            rmpv::Value::from(1_764_680_000_123u64),
            rmpv::Value::from("send"),
            rmpv::Value::from(5u64),
        ];
        for len in field::COMPACT_MIN..=field::COMPACT.len() {
            let mut raw = Vec::new();
            let fields = rmpv::Value::Array(stored[..len].to_vec());
            rmpv::encode::write_value(&mut raw, &fields).unwrap();
            raw.extend_from_slice(b"{}");
            let (meta, payload) = Meta::decode_record(&raw).unwrap();
            assert_eq!(payload, b"{}");
            assert_eq!((meta.queue.as_str(), meta.seq), ("emails", 7));
            assert_eq!(
                (meta.enqueued_at_ms, meta.not_before_ms),
                (1_764_680_000_123, 1_764_680_000_123)
            );
            let name = if len > 3 { "send" } else { "" };
            let max_attempts = if len > 4 { 5 } else { 0 };
            assert_eq!(
                (meta.name.as_str(), meta.max_attempts),
                (name, max_attempts)
            );
            assert_eq!((meta.lease_id, meta.attempts, meta.priority), (0, 0, 0));
            assert_eq!(
                (meta.dedup_key.as_str(), meta.ordering_key.as_str()),
                ("", "")
            );
        }
    }

    #[test]
    fn a_record_shorter_than_the_oldest_layout_is_refused() {
        let err = Meta::decode_record(&record(field::OLDEST_LEN - 1)).unwrap_err();
        assert!(err.to_string().contains("fields"), "{err}");
    }
}
