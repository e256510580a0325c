//! The arguments of an enqueue script call, built once: every job validated
//! into one shared buffer, then written straight into the command (see
//! `scripts::Args`), so a batch of 1000 jobs is not 14 000 `String`s copied
//! several times over on its way to Redis.

use std::ops::Range;

use fred::bytes::Bytes;
use fred::types::Value;

use crate::job::time_to_ms;
use crate::limits;
use crate::scripts::{self, Arg};
use crate::{NewJob, QueueError};

/// How many ARGV entries each job takes in enqueue.lua (its `FIELDS`).
pub(crate) const ENQUEUE_FIELDS: usize = 16;

/// One validated job: its numbers, and where its text fields lie in the
/// buffer they were written to.
pub(crate) struct Encoded {
    id: Range<usize>,
    payload: Range<usize>,
    priority: u64,
    delay: u64,
    not_before: u64,
    dedup_key: Range<usize>,
    dedup_ttl: u64,
    ordering_key: Range<usize>,
    max_attempts: u64,
    retry_window: u64,
    name: Range<usize>,
    attempts: u64,
    backoff_base: u64,
    backoff_cap: u64,
    limit_key: Range<usize>,
    trace: Range<usize>,
}

impl Encoded {
    /// The id the job is created under.
    pub(crate) fn id_text(&self, buf: &[u8]) -> String {
        String::from_utf8_lossy(&buf[self.id.clone()]).into_owned()
    }

    /// The ARGV fields of enqueue.lua, text fields sliced out of `buf`.
    pub(crate) fn fields<'a>(&self, buf: &'a Bytes) -> [Arg<'a>; ENQUEUE_FIELDS] {
        let slice = |range: &Range<usize>| Arg::Slice(buf, range.clone());
        [
            slice(&self.id),
            slice(&self.payload),
            Arg::Uint(self.priority),
            Arg::Uint(self.delay),
            Arg::Uint(self.not_before),
            slice(&self.dedup_key),
            Arg::Uint(self.dedup_ttl),
            slice(&self.ordering_key),
            Arg::Uint(self.max_attempts),
            Arg::Uint(self.retry_window),
            slice(&self.name),
            Arg::Uint(self.attempts),
            Arg::Uint(self.backoff_base),
            Arg::Uint(self.backoff_cap),
            slice(&self.limit_key),
            slice(&self.trace),
        ]
    }
}

/// The jobs of one enqueue script call.
pub(crate) enum Jobs<'a> {
    /// Validated by `add_batch`, text fields in the shared buffer.
    Encoded(&'a [Encoded], &'a Bytes),
    /// Already laid out as ARGV fields (coalesced single enqueues).
    Fields(&'a [[Value; ENQUEUE_FIELDS]]),
}

impl Jobs<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Jobs::Encoded(jobs, _) => jobs.len(),
            Jobs::Fields(jobs) => jobs.len(),
        }
    }
}

/// How many ARGV entries come before the jobs' in enqueue.lua (its `HEAD`):
/// queue, wake channel, payload limit, job count, gate id, gate kind.
pub(crate) const ENQUEUE_HEAD: usize = 6;

/// The gate fields of an enqueue that joins no gate: an empty gate id and kind.
pub(crate) fn no_gate() -> [Value; 2] {
    [Value::from(""), Value::from("")]
}

/// The gate fields of an enqueue whose jobs join gate `id` of `kind`
/// (`crate::workflow`).
pub(crate) fn into_gate(id: &str, kind: crate::gate::GateKind) -> [Value; 2] {
    [Value::from(id), Value::from(kind.wire())]
}

/// The ARGV of enqueue.lua: the queue and the wake channel (as for every
/// queue-scoped script), the payload limit, the job count, the gate the jobs
/// join (id and kind, both empty for none), then [`ENQUEUE_FIELDS`] per job.
pub(crate) struct EnqueueArgs<'a> {
    pub(crate) head: [Value; 2],
    pub(crate) payload_limit: u64,
    pub(crate) gate: [Value; 2],
    pub(crate) jobs: Jobs<'a>,
}

impl scripts::Args for EnqueueArgs<'_> {
    fn count(&self) -> usize {
        ENQUEUE_HEAD + ENQUEUE_FIELDS * self.jobs.len()
    }

    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>) {
        out.extend(self.head.iter().map(Arg::Value));
        out.push(Arg::Uint(self.payload_limit));
        out.push(Arg::Uint(self.jobs.len() as u64));
        out.extend(self.gate.iter().map(Arg::Value));
        match self.jobs {
            Jobs::Encoded(jobs, buf) => {
                for job in jobs {
                    out.extend(job.fields(buf));
                }
            }
            Jobs::Fields(jobs) => {
                for fields in jobs {
                    out.extend(fields.iter().map(Arg::Value));
                }
            }
        }
    }
}

/// Validate a payload as every enqueue does (nesting, JSON, the handle's
/// payload limit) and append its JSON text to `buf`; the range it fills.
/// Also the check of an edited payload (`surgery`), so both accept the same.
pub(crate) fn encode_payload(
    payload: &serde_json::Value,
    payload_limit: usize,
    buf: &mut Vec<u8>,
) -> Result<Range<usize>, QueueError> {
    limits::check_payload_depth(payload)?;
    let start = buf.len();
    serde_json::to_writer(&mut *buf, payload)
        .map_err(|e| QueueError::invalid("payload", e.to_string(), "serializable JSON"))?;
    let range = start..buf.len();
    if range.len() > payload_limit {
        return Err(QueueError::PayloadTooLarge {
            size: range.len(),
            limit: payload_limit,
        });
    }
    Ok(range)
}

/// Validate one job (every check of an enqueue, each with its error) and
/// append its text fields to `buf`; the returned layout says where they are.
pub(crate) fn encode_into(
    job: &NewJob,
    payload_limit: usize,
    buf: &mut Vec<u8>,
) -> Result<Encoded, QueueError> {
    let payload = encode_payload(&job.payload, payload_limit, buf)?;
    let delay = limits::check_duration("delay", job.delay)?;
    let not_before = job.not_before.map(time_to_ms).unwrap_or(0);
    if not_before > limits::MAX_TIME_MS {
        return Err(QueueError::invalid(
            "not_before",
            job.not_before
                .map(crate::human::time_text)
                .unwrap_or_default(),
            "a time before the year 6000",
        ));
    }
    let (dedup_key, dedup_ttl) = match &job.dedup {
        Some((key, ttl)) => {
            limits::check_text("dedup key", key, limits::MAX_KEY_LEN)?;
            let ttl = match ttl {
                Some(ttl) if ttl.is_zero() => {
                    return Err(QueueError::invalid("dedup TTL", "0s", "at least 1 ms"));
                }
                Some(ttl) => limits::check_duration("dedup TTL", *ttl)?,
                None => 0,
            };
            (key.as_str(), ttl)
        }
        None => ("", 0),
    };
    if let Some(key) = &job.ordering_key {
        limits::check_text("ordering key", key, limits::MAX_KEY_LEN)?;
    }
    if let Some(key) = &job.limit_key {
        limits::check_text("limit key", key, limits::MAX_KEY_LEN)?;
    }
    if let Some(name) = &job.name {
        limits::check_text("job name", name, limits::MAX_JOB_NAME)?;
    }
    if let Some(trace) = &job.trace_parent {
        crate::trace::check_trace_parent(trace)?;
    }
    let retry_window = limits::check_retry_window(job.retry_window)?;
    if job.max_attempts > 0 && job.attempts >= job.max_attempts {
        return Err(QueueError::invalid(
            "attempts",
            job.attempts.to_string(),
            format!("below max_attempts ({})", job.max_attempts),
        ));
    }
    let (backoff_base, backoff_cap) = job.reclaim_backoff.to_ms()?;
    let mut id = [0u8; ulid::ULID_LEN];
    ulid::Ulid::new().array_to_str(&mut id);
    let mut append = |text: &[u8]| {
        let start = buf.len();
        buf.extend_from_slice(text);
        start..buf.len()
    };
    Ok(Encoded {
        id: append(&id),
        payload,
        priority: job.priority as u64,
        delay,
        not_before,
        dedup_key: append(dedup_key.as_bytes()),
        dedup_ttl,
        ordering_key: append(job.ordering_key.as_deref().unwrap_or("").as_bytes()),
        max_attempts: job.max_attempts as u64,
        retry_window,
        name: append(job.name.as_deref().unwrap_or("").as_bytes()),
        attempts: job.attempts as u64,
        backoff_base,
        backoff_cap,
        limit_key: append(job.limit_key.as_deref().unwrap_or("").as_bytes()),
        trace: match &job.trace_parent {
            Some(trace) => append(trace.as_bytes()),
            None => append(
                crate::trace::current_trace_parent()
                    .unwrap_or_default()
                    .as_bytes(),
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    /// The bytes a field goes out as: fred sends an integer as the bulk
    /// string of its decimal digits.
    fn wire(value: &Value) -> String {
        match value {
            Value::Integer(n) => n.to_string(),
            Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
            Value::String(s) => s.to_string(),
            other => panic!("unexpected field {other:?}"),
        }
    }

    fn fields(job: &NewJob) -> Vec<String> {
        let mut buf = Vec::new();
        let layout = encode_into(job, 1 << 20, &mut buf).unwrap();
        let buf = Bytes::from(buf);
        layout
            .fields(&buf)
            .map(Value::from)
            .iter()
            .map(wire)
            .collect()
    }

    #[test]
    fn the_fields_are_the_enqueue_script_argv() {
        let job = NewJob::new(serde_json::json!({"to": ["ada", 2.5]}))
            .priority(7)
            .delay(Duration::from_millis(1500))
            .not_before(SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123))
            .dedup_key_for("mail:ada", Duration::from_secs(60))
            .ordering_key("acct-1")
            .max_attempts(5)
            .attempts(2)
            .retry_window(Duration::from_secs(3600))
            .name("mail.send")
            .limit_key("tenant-ada")
            .trace_parent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .reclaim_backoff(crate::Backoff::exponential(
                Duration::from_millis(250),
                Duration::from_secs(60),
            ));
        let f = fields(&job);
        assert_eq!(f[0].len(), ulid::ULID_LEN);
        assert!(ulid::Ulid::from_string(&f[0]).is_ok());
        assert_eq!(
            f[1..],
            [
                r#"{"to":["ada",2.5]}"#,
                "7",
                "1500",
                "1700000000123",
                "mail:ada",
                "60000",
                "acct-1",
                "5",
                "3600000",
                "mail.send",
                "2",
                "250",
                "60000",
                "tenant-ada",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ]
        );
        // Unset options: empty strings and zeros.
        let f = fields(&NewJob::new(serde_json::json!(null)));
        assert_eq!(
            f[1..],
            ["null", "0", "0", "0", "", "0", "", "0", "0", "", "0", "0", "0", "", ""]
        );
    }

    #[test]
    fn jobs_of_a_batch_share_one_buffer_without_mixing_their_fields() {
        let mut buf = Vec::new();
        let a = encode_into(&NewJob::new(serde_json::json!("a")).name("x"), 64, &mut buf).unwrap();
        let b = encode_into(&NewJob::new(serde_json::json!("bb")), 64, &mut buf).unwrap();
        let buf = Bytes::from(buf);
        let a: Vec<String> = a.fields(&buf).map(Value::from).iter().map(wire).collect();
        let b: Vec<String> = b.fields(&buf).map(Value::from).iter().map(wire).collect();
        assert_eq!((a[1].as_str(), a[10].as_str()), ("\"a\"", "x"));
        assert_eq!((b[1].as_str(), b[10].as_str()), ("\"bb\"", ""));
        assert_ne!(a[0], b[0]);
    }

    #[test]
    fn an_oversized_payload_is_refused_with_its_size() {
        let mut buf = Vec::new();
        let job = NewJob::new(serde_json::json!("0123456789"));
        match encode_into(&job, 11, &mut buf) {
            Err(QueueError::PayloadTooLarge {
                size: 12,
                limit: 11,
            }) => {}
            Err(other) => panic!("unexpected error {other:?}"),
            Ok(_) => panic!("a 12-byte payload passed an 11-byte limit"),
        }
        assert!(encode_into(&job, 12, &mut Vec::new()).is_ok());
    }
}
