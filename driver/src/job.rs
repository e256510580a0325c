//! Jobs as the API hands them out: claimed under a lease, or inspected.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

use crate::meta::Meta;
use crate::Backoff;

/// A job claimed under a lease: the seed trait's `Job`.
///
/// Acknowledge it ([`crate::RedisQueue::ack`]), fail it
/// ([`crate::RedisQueue::nack`]) or release it before
/// [`Job::lease_expires_at`]; otherwise the lease lapses and the job is
/// reclaimed, counting a failed attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[must_use = "a claimed job must be acknowledged, failed or released, or it is retried after its lease lapses"]
pub struct Job {
    /// The job id (a ULID).
    pub id: String,
    /// The queue it was claimed from.
    pub queue: String,
    /// The payload as enqueued.
    pub payload: Value,
    /// Failed attempts recorded so far: 0 on the first claim.
    pub attempts: u32,
    /// The fencing token of this lease: acks and nacks must present it.
    pub lease_id: u64,
    /// When the lease lapses (Redis clock).
    pub lease_expires_at: SystemTime,
    /// Priority (higher is claimed first).
    pub priority: u8,
    /// When the job was enqueued (Redis clock).
    pub enqueued_at: SystemTime,
    /// The ordering key, if any.
    pub ordering_key: Option<String>,
    /// The job type name, if one was given.
    pub name: Option<String>,
    /// The attempt ceiling (0 = unlimited).
    pub max_attempts: u32,
    /// It has notes (progress, log lines) from an earlier attempt, so its
    /// ack must forget them: see [`crate::notes`].
    pub noted: bool,
    /// The producer's W3C traceparent, if it sent one
    /// ([`crate::NewJob::trace_parent`]): what the worker's `redq.process`
    /// span continues.
    pub trace_parent: Option<String>,
    /// The gate it waited on (its batch, dependencies or tree,
    /// `crate::workflow`): its handler reads their outcomes with
    /// [`JobCx::dependencies`](crate::worker::JobCx::dependencies).
    pub awaits: Option<String>,
}

/// Which job a fenced call is about, and under which lease.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Lease {
    /// The queue the job belongs to.
    pub queue: String,
    /// The job id.
    pub id: String,
    /// The lease token from the claim (0 means "whatever lease is current",
    /// which only the seed trait's unfenced calls use).
    pub lease_id: u64,
}

impl Job {
    /// The lease handle to pass to ack, nack, extend and release.
    pub fn lease(&self) -> Lease {
        Lease {
            queue: self.queue.clone(),
            id: self.id.clone(),
            lease_id: self.lease_id,
        }
    }

    pub(crate) fn from_meta(id: String, payload: Value, meta: Meta) -> Job {
        Job {
            id,
            queue: meta.queue,
            payload,
            attempts: meta.attempts,
            lease_id: meta.lease_id,
            lease_expires_at: ms_to_time(meta.lease_expiry_ms),
            priority: meta.priority,
            enqueued_at: ms_to_time(meta.enqueued_at_ms),
            ordering_key: non_empty(meta.ordering_key),
            name: non_empty(meta.name),
            max_attempts: meta.max_attempts,
            noted: meta.noted,
            trace_parent: non_empty(meta.trace),
            awaits: non_empty(meta.awaits),
        }
    }
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum JobState {
    /// Due, waiting to be claimed.
    Waiting,
    /// Delayed, or waiting for a retry's backoff to pass.
    Scheduled,
    /// Claimed by a worker under a lease.
    Leased,
    /// In the dead-letter set.
    Dead,
    /// Waiting behind an earlier job with the same ordering key.
    Blocked,
    /// Completed, and kept by its queue's retention policy (see [`crate::kept`]).
    Completed,
    /// Cancelled by an operator, and kept by its queue's retention policy.
    Cancelled,
    /// Due, but held back by its limit key's limits (see [`crate::flow`]):
    /// claimed once its key has room.
    Held,
    /// Waiting for the jobs of its batch, dependencies or tree to finish
    /// (see [`crate::workflow`]), or held there for an operator.
    Awaiting,
}

impl JobState {
    /// The state's name as the scripts and the console spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Waiting => "waiting",
            JobState::Scheduled => "scheduled",
            JobState::Leased => "leased",
            JobState::Dead => "dead",
            JobState::Blocked => "blocked",
            JobState::Completed => "completed",
            JobState::Cancelled => "cancelled",
            JobState::Held => "held",
            JobState::Awaiting => "awaiting",
        }
    }

    /// Parse a state name.
    pub fn parse(name: &str) -> Option<JobState> {
        Some(match name {
            "waiting" => JobState::Waiting,
            "scheduled" => JobState::Scheduled,
            "leased" => JobState::Leased,
            "dead" => JobState::Dead,
            "blocked" => JobState::Blocked,
            "completed" => JobState::Completed,
            "cancelled" => JobState::Cancelled,
            "held" => JobState::Held,
            "awaiting" => JobState::Awaiting,
            _ => return None,
        })
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything known about one job, for operators.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRecord {
    /// The job id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// Its state now.
    pub state: JobState,
    /// The payload (a JSON string holding the raw text if it is not JSON).
    pub payload: Value,
    /// The job type name, if any.
    pub name: Option<String>,
    /// Priority.
    pub priority: u8,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Attempt ceiling (0 = unlimited).
    pub max_attempts: u32,
    /// Enqueue time.
    pub enqueued_at: SystemTime,
    /// When a scheduled job is due.
    pub due_at: Option<SystemTime>,
    /// The current lease, when leased.
    pub lease_id: Option<u64>,
    /// When the current lease lapses.
    pub lease_expires_at: Option<SystemTime>,
    /// The holder of the lease: worker node id and instance.
    pub holder: Option<(u64, u32)>,
    /// The last recorded error.
    pub last_error: Option<String>,
    /// When it was dead-lettered.
    pub died_at: Option<SystemTime>,
    /// Its dedup key.
    pub dedup_key: Option<String>,
    /// Its ordering key.
    pub ordering_key: Option<String>,
    /// Its limit key within its queue (`crate::flow`).
    pub limit_key: Option<String>,
    /// The producer's W3C traceparent ([`crate::NewJob::trace_parent`]).
    pub trace_parent: Option<String>,
    /// The retry window, if one was set.
    pub retry_window: Option<Duration>,
    /// How long a reclaim waits when its lease lapses ([`Backoff::NONE`]:
    /// due at once).
    pub reclaim_backoff: Backoff,
    /// When it completed or was cancelled: set on the rows of a queue's
    /// kept jobs (states completed and cancelled), `None` for a live job.
    pub finished_at: Option<SystemTime>,
    /// The namespace holding it: with several shards (`ShardedQueue`),
    /// this says which shard a merged listing's job lives on.
    pub namespace: String,
    /// The batch or tree it was created into as a member
    /// (`crate::workflow`), until it counted there.
    pub gate: Option<String>,
    /// The gate it waits on (state awaiting) or waited on.
    pub awaits: Option<String>,
}

impl JobRecord {
    pub(crate) fn from_parts(
        namespace: &str,
        id: String,
        state: JobState,
        payload: &[u8],
        meta: Meta,
        score: Option<f64>,
    ) -> JobRecord {
        let leased = meta.lease_id != 0;
        JobRecord {
            id,
            queue: meta.queue,
            state,
            payload: parse_payload(payload),
            name: non_empty(meta.name),
            priority: meta.priority,
            attempts: meta.attempts,
            max_attempts: meta.max_attempts,
            enqueued_at: ms_to_time(meta.enqueued_at_ms),
            due_at: (state == JobState::Scheduled)
                .then(|| ms_to_time(score.unwrap_or(meta.not_before_ms as f64) as u64)),
            lease_id: leased.then_some(meta.lease_id),
            lease_expires_at: leased.then(|| ms_to_time(meta.lease_expiry_ms)),
            holder: leased.then_some((meta.worker_node, meta.worker_instance)),
            last_error: non_empty(meta.error),
            died_at: (meta.died_at_ms > 0).then(|| ms_to_time(meta.died_at_ms)),
            dedup_key: non_empty(meta.dedup_key),
            ordering_key: non_empty(meta.ordering_key),
            limit_key: non_empty(meta.limit_key),
            trace_parent: non_empty(meta.trace),
            retry_window: (meta.retry_window_ms > 0)
                .then(|| Duration::from_millis(meta.retry_window_ms)),
            reclaim_backoff: Backoff::exponential(
                Duration::from_millis(meta.backoff_base_ms),
                Duration::from_millis(meta.backoff_cap_ms),
            ),
            finished_at: None,
            namespace: namespace.to_owned(),
            gate: non_empty(meta.gate),
            awaits: non_empty(meta.awaits),
        }
    }
}

/// Payloads are stored as JSON text; a foreign writer's non-JSON bytes are
/// shown as a string rather than lost.
pub(crate) fn parse_payload(raw: &[u8]) -> Value {
    serde_json::from_slice(raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(raw).into_owned()))
}

pub(crate) fn ms_to_time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

pub(crate) fn time_to_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}
