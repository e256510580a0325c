//! Cancelling jobs, and kept results: what a queue keeps of its finished
//! jobs.
//!
//! # Kept results
//!
//! By default a completed job vanishes. A queue with a [`Retention`] policy
//! (set live with [`RedisQueue::set_retention`], `redq retention set`)
//! keeps its completed and cancelled jobs as [`KeptJob`]s: outcome, name,
//! attempt, holder, enqueue and finish times, run time, the handler's
//! result ([`JobCx::set_result`](crate::worker::JobCx::set_result), or
//! [`Completion::result`] with [`RedisQueue::ack_with`]), and for a cancel
//! who cancelled it and in which state. The policy bounds them by count
//! (per outcome), age and bytes; each ack or cancel of the queue trims a
//! bounded amount (at most twice what it added plus 16, 1000 at most), so no
//! call walks the whole set, and a flood is followed back down within a few
//! calls. A trimmed record leaves a [`Tombstone`] (about 15 bytes of value
//! plus its two entries), which answers "did it complete, when" until its
//! own age ([`Retention::tombstone_age`]) passes.
//!
//! The age bounds hold at every read, on Redis's clock, whether or not a
//! trim ran since: a kept job older than its queue's age bound reads as its
//! tombstone (from [`RedisQueue::result`], and so `wait_for`) and is not
//! listed or counted ([`RedisQueue::list_kept`], [`RedisQueue::retention`]),
//! and a tombstone past its age reads as nothing. Reads write nothing (they
//! serve read-only users too), so the memory is freed by the queue's next
//! ack or cancel (a bounded amount each, as above), or by
//! [`RedisQueue::clear_retention`]; until then [`RetentionState::expired`]
//! counts those jobs and `kept_bytes` still includes them. Expired
//! tombstones are freed by any cancel in the namespace, and any ack of a
//! queue with a policy.
//!
//! Without a policy an ack costs what it always did plus one `HGET` of the
//! policy per ack call (a batch of up to 1000 jobs), nothing per job. With
//! one, each acknowledged job costs one more record decode and its share of
//! one `HSET`, `ZADD`, `HINCRBY` and `PUBLISH` per call, and the trim.
//!
//! [`RedisQueue::result`] reads what became of a job ([`JobResult`]);
//! [`RedisQueue::wait_for`] waits for it to finish: it subscribes to the
//! namespace's finished channel (`{ns}:wake:finished`, where acks and
//! cancels of queues that keep jobs publish the ids they finished), then
//! reads, and reads again only when a message names the job: no polling.
//!
//! # Cancel
//!
//! [`RedisQueue::cancel`] cancels one job in any state (one script,
//! `lua/cancel.lua`): a waiting, scheduled, blocked or dead job leaves for
//! good, its dedup key freed and its ordering key passed on. A leased job
//! leaves too, and its holder is told at once on its holder channel
//! (`{ns}:wake:holder:<node>:<instance>`, from the lease's holder identity,
//! which every [`Worker`](crate::worker::Worker) listens on): the job's
//! [`JobCx::cancelled`](crate::worker::JobCx::cancelled) fires. The holder's
//! later ack, nack or extend fails with [`QueueError::JobCancelled`] and
//! changes nothing; the worker stops the job at its next heartbeat if it has
//! not returned by then (also how a cancel reaches a worker whose listener
//! had not subscribed yet, in the moment after it starts, or a caller of
//! `claim` that listens to nothing: at its next call). A lapsed lease cannot
//! bring it back: it is in no index any more. [`RedisQueue::cancel_all`]
//! cancels a queue's jobs in one state in batches of 1000, with progress.
//!
//! These are [`RedisQueue`] and [`Operator`](crate::Operator) calls;
//! [`MemoryQueue`](crate::MemoryQueue) keeps no results and cannot cancel.
//!
//! # Dead-letter bounds
//!
//! A queue's dead letters are kept until deleted, unless the queue has a
//! [`DeadBound`] (opt-in, [`RedisQueue::set_dead_bound`], `redq dead bound
//! set`): at most a count and/or none older than an age. Dead letters past
//! it are deleted when a job of the queue dies (in the same script, at most
//! 100 each time), when the bound is set (at once, all of them), and by
//! [`RedisQueue::trim_dead`] (`redq dead bound trim`, for a cron job: the
//! age bound of a queue where no job dies); never otherwise. See
//! [`dead_bound`] for the model and its cost.

mod cancel;
pub mod dead_bound;
mod record;
mod retention;
mod wait;

use std::time::Duration;

use serde::Serialize;

pub use crate::outcome::cancel::CancelOutcome;
pub(crate) use cancel::check_by;
pub use cancel::{CANCEL_BATCH, MAX_CANCELLED_BY};
pub use dead_bound::{DeadBound, DeadBoundSet, DeadBoundState, DEAD_TRIM_BATCH, MIN_DEAD_AGE};
pub use record::{KeptJob, Outcome, Tombstone};
pub use retention::{Retention, RetentionState, MIN_RETENTION_BYTES};
pub use wait::JobResult;

use crate::{QueueError, RedisQueue};

/// The largest result kept with a job: 64 KiB of JSON.
pub const MAX_RESULT_BYTES: usize = 65_536;

/// How a job completed, sent with its acknowledgement: the handler's result
/// and how long the run took (kept only when the queue keeps finished
/// jobs), and whether it has notes for the ack to forget.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Completion {
    result: Option<String>,
    run_time: Duration,
    noted: bool,
}

impl Completion {
    /// No result, run time unknown.
    pub fn new() -> Completion {
        Completion::default()
    }

    /// The handler's result, stored as JSON. Refused (never cut) when its
    /// JSON is over [`MAX_RESULT_BYTES`].
    pub fn result<T: Serialize + ?Sized>(mut self, value: &T) -> Result<Completion, QueueError> {
        self.result = Some(result_json(value)?);
        Ok(self)
    }

    /// How long the run took. Kept in whole milliseconds, rounded up: a
    /// run of 0.3 ms is kept as 1 ms, since 0 stands for "not measured".
    #[must_use]
    pub fn run_time(mut self, run_time: Duration) -> Completion {
        self.run_time = run_time;
        self
    }

    /// The job has notes ([`crate::notes`]: it was claimed with
    /// [`Job::noted`](crate::Job::noted), or [`RedisQueue::note`] wrote
    /// some), so the ack deletes them; without it the ack issues no note
    /// command and leaves any notes behind.
    #[must_use]
    pub fn noted(mut self) -> Completion {
        self.noted = true;
        self
    }

    pub(crate) fn with_json(result: Option<String>, run_time: Duration) -> Completion {
        Completion {
            result,
            run_time,
            noted: false,
        }
    }

    pub(crate) fn is_noted(&self) -> bool {
        self.noted
    }

    /// The run time in whole milliseconds, rounded up: a measured run
    /// under a millisecond is not sent as 0, which the kept record and the
    /// metrics read as "not measured".
    pub(crate) fn run_ms(&self) -> u64 {
        let ms = self.run_time.as_micros().div_ceil(1000);
        ms.min(crate::limits::MAX_DURATION.as_millis()) as u64
    }

    pub(crate) fn result_json(&self) -> String {
        self.result.clone().unwrap_or_default()
    }
}

/// Warn, once per namespace and queue in this process, that a job's result
/// was dropped: its queue keeps no finished jobs (an ack says so, for free:
/// `lua/ack.lua` code 3), so `result` and `wait_for` cannot return it.
pub(crate) fn warn_result_dropped(namespace: &str, queue: &str, id: &str) {
    type Warned = std::collections::HashSet<(String, String)>;
    static WARNED: std::sync::Mutex<Option<Warned>> = std::sync::Mutex::new(None);
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    let first = warned
        .get_or_insert_with(Warned::new)
        .insert((namespace.to_owned(), queue.to_owned()));
    if first {
        tracing::warn!(
            namespace,
            queue,
            job = id,
            "queue {queue} keeps no finished jobs, so the result of job {id} was dropped \
             (result() and wait_for cannot return it; said once per queue); to keep results, \
             set a retention policy: redq retention set {queue} --max-count N (or --max-age, --max-bytes)"
        );
    }
}

/// `value` as JSON, refused when over [`MAX_RESULT_BYTES`].
pub(crate) fn result_json<T: Serialize + ?Sized>(value: &T) -> Result<String, QueueError> {
    let json = serde_json::to_string(value).map_err(|e| QueueError::Invalid {
        what: "job result",
        value: String::new(),
        rule: format!("a value that serializes to JSON ({e})"),
    })?;
    if json.len() > MAX_RESULT_BYTES {
        return Err(QueueError::Invalid {
            what: "job result",
            value: format!("{} bytes of JSON", json.len()),
            rule: format!("at most {MAX_RESULT_BYTES} bytes of JSON; keep large outputs elsewhere and return a reference"),
        });
    }
    Ok(json)
}

impl RedisQueue {
    /// [`RedisQueue::ack`](crate::RedisQueue::ack) with the job's
    /// [`Completion`]: its result and run time are kept when its queue keeps
    /// finished jobs. Fails with [`QueueError::JobCancelled`] when an
    /// operator cancelled the job meanwhile.
    pub async fn ack_with(
        &self,
        lease: &crate::Lease,
        completion: Completion,
    ) -> Result<crate::Acked, QueueError> {
        let mut outcomes = self
            .ack_batch_with(
                std::slice::from_ref(lease),
                std::slice::from_ref(&completion),
            )
            .await?;
        outcomes
            .pop()
            .unwrap_or_else(|| Err(QueueError::Protocol("ack returned no outcome".into())))
    }
}
