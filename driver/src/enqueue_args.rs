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

/// An option of a job on the wire of enqueue.lua: its code (the header's
/// `option N name` lines, which a test pins to these). A job sends its id,
/// its payload, how many options it sends, then each option that differs
/// from its default as a (code, value) pair, codes ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobOption {
    Priority = 1,
    DelayMs = 2,
    NotBeforeMs = 3,
    DedupKey = 4,
    DedupTtlMs = 5,
    OrderingKey = 6,
    MaxAttempts = 7,
    RetryWindowMs = 8,
    Name = 9,
    Attempts = 10,
    BackoffBaseMs = 11,
    BackoffCapMs = 12,
    LimitKey = 13,
    Trace = 14,
}

/// Every option, in code order (the order they are sent in): what the tests
/// hold the script's header and `Encoded::options` to.
#[cfg(test)]
const JOB_OPTIONS: [JobOption; 14] = [
    JobOption::Priority,
    JobOption::DelayMs,
    JobOption::NotBeforeMs,
    JobOption::DedupKey,
    JobOption::DedupTtlMs,
    JobOption::OrderingKey,
    JobOption::MaxAttempts,
    JobOption::RetryWindowMs,
    JobOption::Name,
    JobOption::Attempts,
    JobOption::BackoffBaseMs,
    JobOption::BackoffCapMs,
    JobOption::LimitKey,
    JobOption::Trace,
];

impl JobOption {
    /// Its name in enqueue.lua's header.
    #[cfg(test)]
    fn header_name(self) -> &'static str {
        match self {
            JobOption::Priority => "priority",
            JobOption::DelayMs => "delay_ms",
            JobOption::NotBeforeMs => "not_before_ms",
            JobOption::DedupKey => "dedup_key",
            JobOption::DedupTtlMs => "dedup_ttl_ms",
            JobOption::OrderingKey => "ordering_key",
            JobOption::MaxAttempts => "max_attempts",
            JobOption::RetryWindowMs => "retry_window_ms",
            JobOption::Name => "name",
            JobOption::Attempts => "attempts",
            JobOption::BackoffBaseMs => "backoff_base_ms",
            JobOption::BackoffCapMs => "backoff_cap_ms",
            JobOption::LimitKey => "limit_key",
            JobOption::Trace => "trace",
        }
    }
}

/// An option's value: a number (default 0) or text in the buffer (default
/// empty).
enum OptionValue {
    Uint(u64),
    Text(Range<usize>),
}

impl OptionValue {
    fn is_default(&self) -> bool {
        match self {
            OptionValue::Uint(n) => *n == 0,
            OptionValue::Text(range) => range.is_empty(),
        }
    }
}

/// One validated job: its numbers, and where its text fields lie in the
/// buffer they were written to.
#[derive(Clone)]
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

    /// Every option with its value, in code order.
    fn options(&self) -> [(JobOption, OptionValue); 14] {
        use OptionValue::{Text, Uint};
        [
            (JobOption::Priority, Uint(self.priority)),
            (JobOption::DelayMs, Uint(self.delay)),
            (JobOption::NotBeforeMs, Uint(self.not_before)),
            (JobOption::DedupKey, Text(self.dedup_key.clone())),
            (JobOption::DedupTtlMs, Uint(self.dedup_ttl)),
            (JobOption::OrderingKey, Text(self.ordering_key.clone())),
            (JobOption::MaxAttempts, Uint(self.max_attempts)),
            (JobOption::RetryWindowMs, Uint(self.retry_window)),
            (JobOption::Name, Text(self.name.clone())),
            (JobOption::Attempts, Uint(self.attempts)),
            (JobOption::BackoffBaseMs, Uint(self.backoff_base)),
            (JobOption::BackoffCapMs, Uint(self.backoff_cap)),
            (JobOption::LimitKey, Text(self.limit_key.clone())),
            (JobOption::Trace, Text(self.trace.clone())),
        ]
    }

    /// How many options differ from their defaults (the ones sent).
    fn sent_options(&self) -> usize {
        self.options()
            .iter()
            .filter(|(_, value)| !value.is_default())
            .count()
    }

    /// Whether the job has no dedup, ordering or limit key: what enqueue's
    /// variant `plain` takes (`lua/enqueue.lua` header).
    fn is_plain(&self) -> bool {
        self.dedup_key.is_empty() && self.ordering_key.is_empty() && self.limit_key.is_empty()
    }

    /// How many ARGV entries the job takes: id, payload, option count, and
    /// two per option sent.
    pub(crate) fn arg_count(&self) -> usize {
        3 + 2 * self.sent_options()
    }

    /// Whether the job sends options, each the same as those of `before`
    /// (the job before it in the call; `buf` and `before_buf` hold their
    /// text): it then sends [`SAME_OPTIONS`] in their place.
    fn repeats(&self, buf: &[u8], before: &Encoded, before_buf: &[u8]) -> bool {
        use OptionValue::{Text, Uint};
        self.sent_options() > 0
            && self
                .options()
                .iter()
                .zip(before.options().iter())
                .all(|((_, mine), (_, theirs))| match (mine, theirs) {
                    (Uint(a), Uint(b)) => a == b,
                    (Text(a), Text(b)) => buf[a.clone()] == before_buf[b.clone()],
                    _ => false,
                })
    }

    /// How many ARGV entries the job takes after `before` (the job before
    /// it in the call, with the buffer of its text): 3 when it repeats its
    /// options, else [`Encoded::arg_count`].
    fn arg_count_after(&self, buf: &[u8], before: Option<(&Encoded, &[u8])>) -> usize {
        match before {
            Some((before, before_buf)) if self.repeats(buf, before, before_buf) => 3,
            _ => self.arg_count(),
        }
    }

    /// The job's ARGV entries after `before` (as in `arg_count_after`):
    /// its id, its payload and [`SAME_OPTIONS`] when it repeats that job's
    /// options, else [`Encoded::write`]'s.
    fn write_after<'a>(
        &self,
        buf: &'a Bytes,
        before: Option<(&Encoded, &[u8])>,
        out: &mut Vec<Arg<'a>>,
    ) {
        match before {
            Some((before, before_buf)) if self.repeats(buf, before, before_buf) => {
                out.push(Arg::Slice(buf, self.id.clone()));
                out.push(Arg::Slice(buf, self.payload.clone()));
                out.push(Arg::Static(SAME_OPTIONS));
            }
            _ => self.write(buf, out),
        }
    }

    /// The job's ARGV entries of enqueue.lua, text sliced out of `buf`.
    pub(crate) fn write<'a>(&self, buf: &'a Bytes, out: &mut Vec<Arg<'a>>) {
        let slice = |range: Range<usize>| Arg::Slice(buf, range);
        out.push(slice(self.id.clone()));
        out.push(slice(self.payload.clone()));
        out.push(Arg::Uint(self.sent_options() as u64));
        for (option, value) in self.options() {
            if value.is_default() {
                continue;
            }
            out.push(Arg::Uint(option as u64));
            out.push(match value {
                OptionValue::Uint(n) => Arg::Uint(n),
                OptionValue::Text(range) => slice(range),
            });
        }
    }
}

/// The option count that stands for "the options of the job before this
/// one in the call" (enqueue.lua's header): a batch of jobs with the same
/// options sends them once, two entries fewer a job after the first, and
/// the script parses them once (`lib/job_new.lua` parse_job).
pub(crate) const SAME_OPTIONS: &str = "=";

/// One job validated on its own (a single `add`), with its own buffer.
#[derive(Clone)]
pub(crate) struct SingleJob {
    layout: Encoded,
    buf: Bytes,
}

/// The jobs of one enqueue script call.
pub(crate) enum Jobs<'a> {
    /// Validated by `add_batch`, text fields in the shared buffer.
    Encoded(&'a [Encoded], &'a Bytes),
    /// Validated one by one (coalesced single enqueues).
    Single(&'a [SingleJob]),
}

impl Jobs<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Jobs::Encoded(jobs, _) => jobs.len(),
            Jobs::Single(jobs) => jobs.len(),
        }
    }

    /// Whether every job is plain ([`Encoded::is_plain`]).
    pub(crate) fn all_plain(&self) -> bool {
        match self {
            Jobs::Encoded(jobs, _) => jobs.iter().all(Encoded::is_plain),
            Jobs::Single(jobs) => jobs.iter().all(|job| job.layout.is_plain()),
        }
    }

    /// Whether some job's payload is `min_bytes` long or longer: stored
    /// detached (`crate::record_format`), it needs the key the enqueue's
    /// plain variant lacks.
    pub(crate) fn any_payload_from(&self, min_bytes: u32) -> bool {
        let min = min_bytes as usize;
        match self {
            Jobs::Encoded(jobs, _) => jobs.iter().any(|job| job.payload.len() >= min),
            Jobs::Single(jobs) => jobs.iter().any(|job| job.layout.payload.len() >= min),
        }
    }

    /// How many ARGV entries the jobs take (`write`'s).
    fn arg_count(&self) -> usize {
        let mut count = 0;
        self.each_after(|job, buf, before| count += job.arg_count_after(buf, before));
        count
    }

    /// The jobs' ARGV entries: each job's after the one before it
    /// ([`Encoded::write_after`]).
    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>) {
        self.each_after(|job, buf, before| job.write_after(buf, before, out));
    }

    /// `visit` each job with the buffer of its text and the job before it
    /// (with that job's buffer), in order.
    fn each_after<'b>(
        &'b self,
        mut visit: impl FnMut(&'b Encoded, &'b Bytes, Option<(&'b Encoded, &'b [u8])>),
    ) {
        let mut before: Option<(&Encoded, &[u8])> = None;
        let mut each = |job: &'b Encoded, buf: &'b Bytes| {
            visit(job, buf, before);
            before = Some((job, &buf[..]));
        };
        match self {
            Jobs::Encoded(jobs, buf) => jobs.iter().for_each(|job| each(job, buf)),
            Jobs::Single(jobs) => jobs.iter().for_each(|job| each(&job.layout, &job.buf)),
        }
    }
}

/// How many ARGV entries come before the jobs' in enqueue.lua (its `HEAD`):
/// queue, wake channel, payload limit, job count, gate id, gate kind,
/// record format.
pub(crate) const ENQUEUE_HEAD: usize = 7;

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
/// join (id and kind, both empty for none), the record format
/// (`crate::record_format`), then each job's entries ([`Encoded::write`]).
pub(crate) struct EnqueueArgs<'a> {
    pub(crate) head: [Value; 2],
    pub(crate) payload_limit: u64,
    pub(crate) gate: [Value; 2],
    /// The record format's `ARGV[7]` (`RecordFormat::wire`).
    pub(crate) format: Value,
    pub(crate) jobs: Jobs<'a>,
}

impl scripts::Args for EnqueueArgs<'_> {
    fn count(&self) -> usize {
        ENQUEUE_HEAD + self.jobs.arg_count()
    }

    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>) {
        out.extend(self.head.iter().map(Arg::Value));
        out.push(Arg::Uint(self.payload_limit));
        out.push(Arg::Uint(self.jobs.len() as u64));
        out.extend(self.gate.iter().map(Arg::Value));
        out.push(Arg::Value(&self.format));
        self.jobs.write(out);
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

/// Validate one job on its own, into its own buffer.
pub(crate) fn encode_single(job: &NewJob, payload_limit: usize) -> Result<SingleJob, QueueError> {
    let mut buf = Vec::with_capacity(128);
    let layout = encode_into(job, payload_limit, &mut buf)?;
    Ok(SingleJob {
        layout,
        buf: Bytes::from(buf),
    })
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
            format!("must be below max_attempts ({})", job.max_attempts),
        ));
    }
    let (backoff_base, backoff_cap) = job.reclaim_backoff.to_ms()?;
    let mut id = [0u8; ulid::ULID_LEN];
    crate::job_id::next().array_to_str(&mut id);
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

    /// The bytes an entry goes out as: fred sends an integer as the bulk
    /// string of its decimal digits.
    fn wire(arg: Arg<'_>) -> String {
        match Value::from(arg) {
            Value::Integer(n) => n.to_string(),
            Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
            Value::String(s) => s.to_string(),
            other => panic!("unexpected entry {other:?}"),
        }
    }

    fn entries_of(layout: &Encoded, buf: &Bytes) -> Vec<String> {
        let mut out = Vec::new();
        layout.write(buf, &mut out);
        assert_eq!(out.len(), layout.arg_count());
        out.into_iter().map(wire).collect()
    }

    fn entries(job: &NewJob) -> Vec<String> {
        let single = encode_single(job, 1 << 20).unwrap();
        entries_of(&single.layout, &single.buf)
    }

    #[test]
    fn a_job_sends_its_id_payload_and_each_option_that_differs_from_its_default() {
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
        let f = entries(&job);
        assert_eq!(f[0].len(), ulid::ULID_LEN);
        assert!(ulid::Ulid::from_string(&f[0]).is_ok());
        assert_eq!(
            f[1..],
            [
                r#"{"to":["ada",2.5]}"#,
                "14",
                "1",
                "7",
                "2",
                "1500",
                "3",
                "1700000000123",
                "4",
                "mail:ada",
                "5",
                "60000",
                "6",
                "acct-1",
                "7",
                "5",
                "8",
                "3600000",
                "9",
                "mail.send",
                "10",
                "2",
                "11",
                "250",
                "12",
                "60000",
                "13",
                "tenant-ada",
                "14",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ]
        );
        // Every option at its default: no option entries at all.
        assert_eq!(
            entries(&NewJob::new(serde_json::json!(null)))[1..],
            ["null", "0"]
        );
        // Only what differs, codes ascending.
        let some = NewJob::new(serde_json::json!(1)).name("n").priority(2);
        assert_eq!(entries(&some)[1..], ["1", "2", "1", "2", "9", "n"]);
    }

    #[test]
    fn jobs_of_a_batch_share_one_buffer_without_mixing_their_fields() {
        let mut buf = Vec::new();
        let a = encode_into(&NewJob::new(serde_json::json!("a")).name("x"), 64, &mut buf).unwrap();
        let b = encode_into(&NewJob::new(serde_json::json!("bb")), 64, &mut buf).unwrap();
        let buf = Bytes::from(buf);
        let a = entries_of(&a, &buf);
        let b = entries_of(&b, &buf);
        assert_eq!(a[1..], ["\"a\"", "1", "9", "x"]);
        assert_eq!(b[1..], ["\"bb\"", "0"]);
        assert_ne!(a[0], b[0]);
    }

    /// The entries of a call's jobs, each job's id left out (fresh).
    fn call_entries(jobs: &Jobs<'_>) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        jobs.write(&mut out);
        assert_eq!(out.len(), jobs.arg_count());
        let mut entries: Vec<Vec<String>> = Vec::new();
        let wire: Vec<String> = out.into_iter().map(wire).collect();
        for entry in wire {
            // An id starts each job's entries (26 characters, none of the others here).
            if entry.len() == ulid::ULID_LEN {
                entries.push(Vec::new());
            } else {
                entries.last_mut().expect("an id first").push(entry);
            }
        }
        entries
    }

    #[test]
    fn a_job_with_the_options_of_the_job_before_it_sends_equals_in_their_place() {
        let job = |i: i32, name: Option<&str>| {
            let job = NewJob::new(serde_json::json!(i));
            match name {
                Some(name) => job.name(name),
                None => job,
            }
        };
        let jobs = [
            job(1, Some("x")),
            job(2, Some("x")),
            job(3, None),
            job(4, None),
            job(5, Some("x")),
            job(6, Some("y")),
            job(7, Some("y")),
        ];
        let expected: Vec<Vec<&str>> = vec![
            vec!["1", "1", "9", "x"],
            vec!["2", "="],
            vec!["3", "0"],
            // No options: "0", as short, and the script's first test.
            vec!["4", "0"],
            vec!["5", "1", "9", "x"],
            vec!["6", "1", "9", "y"],
            vec!["7", "="],
        ];
        // A batch in one buffer, and coalesced single jobs each in its own.
        let mut buf = Vec::new();
        let encoded: Vec<Encoded> = jobs
            .iter()
            .map(|job| encode_into(job, 64, &mut buf).unwrap())
            .collect();
        let buf = Bytes::from(buf);
        assert_eq!(call_entries(&Jobs::Encoded(&encoded, &buf)), expected);
        let singles: Vec<SingleJob> = jobs
            .iter()
            .map(|job| encode_single(job, 64).unwrap())
            .collect();
        assert_eq!(call_entries(&Jobs::Single(&singles)), expected);
    }

    /// The option lines of a script's header: `-- option N name`.
    fn header_options(script: &str) -> Vec<(u64, String)> {
        script
            .lines()
            .take_while(|line| line.starts_with("--") || line.starts_with("#!"))
            .filter_map(|line| {
                let mut words = line.trim_start_matches('-').split_whitespace();
                (words.next() == Some("option")).then(|| {
                    let code = words.next().unwrap().parse().expect("an option code");
                    (code, words.next().expect("an option name").to_owned())
                })
            })
            .collect()
    }

    fn source(name: &str) -> &'static str {
        let scripts = crate::scripts::catalogue::SCRIPTS;
        let modules = crate::scripts::catalogue::MODULES;
        scripts
            .iter()
            .chain(modules)
            .find(|(n, _)| *n == name)
            .map(|(_, text)| *text)
            .unwrap()
    }

    #[test]
    fn the_option_codes_are_enqueue_luas() {
        let ours: Vec<(u64, String)> = JOB_OPTIONS
            .iter()
            .map(|option| (*option as u64, option.header_name().to_owned()))
            .collect();
        assert_eq!(ours, header_options(source("enqueue")));
        // The parser's table in job_new.lua: one row per code, in code
        // order, each a line starting with the code as sent, and its count.
        let parser = source("job_new");
        let rows: Vec<&str> = parser
            .lines()
            .map(str::trim_start)
            .filter(|line| line.starts_with('\'') && line.ends_with(','))
            .collect();
        let codes: Vec<String> = JOB_OPTIONS
            .iter()
            .map(|option| format!("'{}', ", *option as u64))
            .collect();
        assert_eq!(
            rows.len(),
            codes.len(),
            "option rows in job_new.lua: {rows:?}"
        );
        for (row, code) in rows.iter().zip(&codes) {
            assert!(
                row.starts_with(code.as_str()),
                "{row} in job_new.lua should start {code}"
            );
        }
        let count = format!("local JOB_OPTION_COUNT = {}\n", JOB_OPTIONS.len());
        assert!(parser.contains(&count), "{count}");
        // Sent in code order.
        let sent: Vec<JobOption> = encode_single(&NewJob::new(serde_json::json!(0)), 64)
            .unwrap()
            .layout
            .options()
            .map(|(option, _)| option)
            .to_vec();
        assert_eq!(sent, JOB_OPTIONS);
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
