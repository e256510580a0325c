//! What a producer says about a job when it enqueues it.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::{Backoff, QueueError};

/// A job to enqueue: its payload and options. Every option has a default
/// that matches [`crate::Queue::enqueue`]: priority 0, due now, no dedup or
/// ordering key, unlimited attempts, none recorded yet, no retry window, no
/// name, no reclaim backoff.
///
/// ```
/// # use std::time::Duration;
/// let job = redq::NewJob::new(serde_json::json!({"to": "ada@example.com"}))
///     .priority(5)
///     .delay(Duration::from_secs(30))
///     .dedup_key("welcome-mail:ada")
///     .max_attempts(5);
/// ```
#[derive(Debug, Clone)]
pub struct NewJob {
    pub(crate) payload: Value,
    pub(crate) priority: u8,
    pub(crate) delay: Duration,
    pub(crate) not_before: Option<SystemTime>,
    pub(crate) dedup: Option<(String, Option<Duration>)>,
    pub(crate) ordering_key: Option<String>,
    pub(crate) max_attempts: u32,
    pub(crate) attempts: u32,
    pub(crate) retry_window: Option<Duration>,
    pub(crate) name: Option<String>,
    pub(crate) reclaim_backoff: Backoff,
    pub(crate) limit_key: Option<String>,
    pub(crate) trace_parent: Option<String>,
    /// The existing jobs it waits for (`crate::workflow`), and how.
    pub(crate) dependencies: Option<crate::gate::Dependencies>,
}

impl NewJob {
    /// A job carrying `payload`, with every option at its default.
    pub fn new(payload: Value) -> Self {
        NewJob {
            payload,
            priority: 0,
            delay: Duration::ZERO,
            not_before: None,
            dedup: None,
            ordering_key: None,
            max_attempts: 0,
            attempts: 0,
            retry_window: None,
            name: None,
            reclaim_backoff: Backoff::NONE,
            limit_key: None,
            trace_parent: None,
            dependencies: None,
        }
    }

    /// Higher priorities are claimed first (default 0, at most 255). Within a
    /// priority, jobs come out oldest first.
    #[must_use]
    pub fn priority(mut self, priority: u8) -> Self {
        self.priority = priority;
        self
    }

    /// Not claimable until this long after it reaches Redis (Redis clock).
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Not claimable before this wall-clock time. With [`NewJob::delay`] too,
    /// the later of the two applies.
    #[must_use]
    pub fn not_before(mut self, at: SystemTime) -> Self {
        self.not_before = Some(at);
        self
    }

    /// While a job with this key is waiting, scheduled, leased or awaiting a
    /// retry, enqueueing another with the same key creates nothing and
    /// returns the existing job's id. The key is free again once that job
    /// completes or is dead-lettered.
    #[must_use]
    pub fn dedup_key(mut self, key: impl Into<String>) -> Self {
        self.dedup = Some((key.into(), None));
        self
    }

    /// TTL mode: the key suppresses duplicates for `ttl` from this enqueue,
    /// whatever happens to the job (debouncing, "at most once per hour").
    #[must_use]
    pub fn dedup_key_for(mut self, key: impl Into<String>, ttl: Duration) -> Self {
        self.dedup = Some((key.into(), Some(ttl)));
        self
    }

    /// Jobs sharing an ordering key run one at a time, in enqueue order,
    /// across every queue of the namespace.
    #[must_use]
    pub fn ordering_key(mut self, key: impl Into<String>) -> Self {
        self.ordering_key = Some(key.into());
        self
    }

    /// Jobs sharing a limit key are held to that key's limits (how many of
    /// them run at once, how many start per interval: `crate::flow`), within
    /// their queue. Unlike an ordering key it does not order them, and it is
    /// scoped to the queue: key "acme" of two queues is two limiters.
    #[must_use]
    pub fn limit_key(mut self, key: impl Into<String>) -> Self {
        self.limit_key = Some(key.into());
        self
    }

    /// The producer's W3C trace context, a `traceparent` such as
    /// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`: stored
    /// with the job, shown as [`crate::JobRecord::trace_parent`] and handed
    /// to the worker ([`crate::Job::trace_parent`]), whose `redq.process`
    /// span continues it with the `opentelemetry` feature (`crate::trace`).
    /// Checked when the job is enqueued: anything but
    /// `version-traceid-parentid-flags` in lowercase hex is refused with
    /// nothing written. Without it, the `opentelemetry` feature stores the
    /// enqueue's own span context.
    #[must_use]
    pub fn trace_parent(mut self, traceparent: &str) -> Self {
        self.trace_parent = Some(traceparent.to_owned());
        self
    }

    /// Dead-letter after this many failed attempts (0, the default, means
    /// unlimited).
    #[must_use]
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// Attempts already made (default 0): for a job moved from another
    /// system, so its history counts toward [`max_attempts`] (the seed's
    /// Enqueue `attempts`). Must be below `max_attempts` unless that is 0
    /// (unlimited): a job with every attempt spent is refused, not enqueued
    /// dead. Workers see it as the attempt count of the first claim.
    ///
    /// [`max_attempts`]: Self::max_attempts
    #[must_use]
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// Once enqueue time + `window` has passed, a failure dead-letters the job
    /// instead of retrying it.
    #[must_use]
    pub fn retry_window(mut self, window: Duration) -> Self {
        self.retry_window = Some(window);
        self
    }

    /// How long a reclaim waits before the job is due again when its lease
    /// lapses (its worker died or hung): `backoff`'s delay for the attempts
    /// so far (default [`Backoff::NONE`]: due at once). Typed pushes set the
    /// job type's [`crate::worker::TypedJob::BACKOFF`].
    #[must_use]
    pub fn reclaim_backoff(mut self, backoff: Backoff) -> Self {
        self.reclaim_backoff = backoff;
        self
    }

    /// Wait until every job in `ids` (existing jobs of this namespace, in
    /// any queue, 1 to [`crate::workflow::MAX_DEPENDENCIES`]) has finished:
    /// the job is created in state `awaiting` and released into its queue
    /// exactly once, when the last of them finishes, if all completed (see
    /// [`NewJob::release_when`]); otherwise it is dead-lettered, naming the
    /// first that failed (see [`NewJob::on_dependency_failure`]). Its
    /// handler reads their outcomes and results with
    /// [`JobCx::dependencies`](crate::worker::JobCx::dependencies).
    ///
    /// Each id must be alive (any state) or finished with a trace (a dead
    /// letter, a kept record or a tombstone, [`crate::kept`]): a finished
    /// one counts at once. An id with no trace is refused, nothing written.
    /// Enqueue such a job with [`crate::RedisQueue::add`] (one atomic
    /// call), not in a batch of jobs; see [`crate::workflow`].
    #[must_use]
    pub fn after<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let deps = self.dependencies.get_or_insert_with(Default::default);
        deps.ids = Some(ids.into_iter().map(|id| id.as_ref().to_owned()).collect());
        self
    }

    /// What happens when a dependency ([`NewJob::after`]) dies, is
    /// cancelled or deleted (default [`OnFailure::DeadLetter`]).
    ///
    /// [`OnFailure::DeadLetter`]: crate::gate::OnFailure::DeadLetter
    #[must_use]
    pub fn on_dependency_failure(mut self, policy: crate::gate::OnFailure) -> Self {
        self.dependencies
            .get_or_insert_with(Default::default)
            .on_failure = policy;
        self
    }

    /// When a job with dependencies is released (default
    /// [`Condition::AllSucceeded`]; [`Condition::AllFinished`] releases it
    /// whatever their outcomes).
    ///
    /// [`Condition::AllSucceeded`]: crate::gate::Condition::AllSucceeded
    /// [`Condition::AllFinished`]: crate::gate::Condition::AllFinished
    #[must_use]
    pub fn release_when(mut self, condition: crate::gate::Condition) -> Self {
        self.dependencies
            .get_or_insert_with(Default::default)
            .condition = condition;
        self
    }

    /// The job's type name, shown by the console and used by typed workers.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

impl NewJob {
    /// Whether it lists existing jobs to wait for ([`NewJob::after`]).
    pub(crate) fn waits_for_jobs(&self) -> bool {
        self.dependencies.as_ref().is_some_and(|d| d.ids.is_some())
    }
}

/// Refuse jobs with dependencies in a plain batch enqueue: each is one
/// gate_seal call of its own (`crate::workflow`).
pub(crate) fn refuse_dependents_in_batch(jobs: &[NewJob]) -> Result<(), QueueError> {
    if jobs.iter().any(NewJob::waits_for_jobs) {
        return Err(QueueError::invalid(
            "batch of jobs",
            "a job with after(ids)",
            "enqueue a job with dependencies alone with add (one atomic call), \
             or make it a workflow::Batch's callback",
        ));
    }
    Ok(())
}

/// The seed trait's `enqueue`: plain payloads, every option at its default.
pub(crate) fn plain_jobs(payloads: Vec<Value>) -> Vec<NewJob> {
    payloads.into_iter().map(NewJob::new).collect()
}

/// The seed trait's `enqueue_ordered`: each payload with its ordering key.
pub(crate) fn ordered_jobs(jobs: Vec<(String, Value)>) -> Vec<NewJob> {
    jobs.into_iter()
        .map(|(key, payload)| NewJob::new(payload).ordering_key(key))
        .collect()
}
