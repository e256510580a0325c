//! `MemoryQueue`: the seed [`Queue`] trait kept in process memory, with the
//! semantics of the Redis backend.
//!
//! What it is for: tests of code written against [`Queue`] (no
//! `redis-server`, and a clock tests can pause), the inline mode, and small
//! apps without Redis. What it does not do: persist anything, or share jobs
//! between processes. This module is private, so the full account (the
//! model, what matches Redis, what is left out) is on [`MemoryQueue`], where
//! users of the crate read it.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::time::Instant;

use crate::limits::{self, check_queue_name};
use crate::{
    Acked, Job, Lease, Nacked, NewJob, Queue, QueueCounts, QueueError, DEFAULT_PAYLOAD_LIMIT,
};

/// An in-memory [`Queue`] with the semantics of the Redis backend.
///
/// Cheap to clone: clones share the same queues.
///
/// # What it is for
///
/// - **Tests** of code written against [`Queue`]: no `redis-server` to start,
///   and lease expiry and retry delays follow tokio's clock
///   ([`tokio::time::Instant`]), so a test may pause tokio's clock (tokio's
///   `test-util` feature) and advance it instead of sleeping.
/// - **Inline mode**, where jobs run in the process that pushed them.
/// - **Small apps without Redis** that still want leases, retries, ordering
///   keys and dead letters with the same meaning as in production.
///
/// # Same semantics as Redis
///
/// It mirrors the Lua scripts (`lua/claim.lua`, `lua/ack.lua`,
/// `lua/nack.lua`, `lua/next_due.lua`, and the helpers in `lua/lib/`), and
/// the trait-level tests (`tests/tests/single_server/queue_trait.rs`) run the same test
/// bodies against both backends:
///
/// - Jobs are claimed oldest first (one sequence across every queue, so a
///   job keeps its place when it comes back from a retry or a lapsed lease).
/// - A claim first reclaims the queue's lapsed leases, each counting one
///   failed attempt; the job goes back to its old place, ahead of newer jobs.
///   (Redis reclaims at most 100 per claim and the rest on the next one;
///   this backend reclaims them all.)
///   A lease that lapsed but was not reclaimed yet still belongs to its
///   holder: `complete`, `retry` and `fail` succeed.
/// - `attempts` counts failed tries (`retry`, `fail`, reclaims): the first
///   claim sees 0.
/// - Ordering keys span every queue of one `MemoryQueue`: a job waits while
///   an earlier job with its key is waiting, claimed or due to be retried;
///   completing or failing that job releases the next one.
/// - `complete` of a job that no longer exists is `Ok` (a repeated
///   complete); `complete`, `retry` or `fail` of a job that exists but is not
///   claimed (waiting, backing off, blocked or dead) is
///   [`QueueError::LeaseLost`]; `retry` or `fail` of an unknown id is
///   [`QueueError::JobNotFound`].
/// - Inputs are checked by the same rules (queue names, a claim limit of 0
///   answered with no jobs and one above 1000 served as 1000, leases of at least 1 ms, payloads up to
///   [`crate::DEFAULT_PAYLOAD_LIMIT`] of JSON nested at most
///   [`crate::limits::MAX_PAYLOAD_DEPTH`] deep); delays and leases are cut to
///   whole milliseconds as they are for Redis.
///
/// All clones share one store and act as one handle, like the clones of one
/// [`crate::RedisQueue`]: `complete`, `retry` and `fail` act on the job's current
/// lease, whichever clone claimed it.
///
/// # What it does not do
///
/// - **No persistence**: the jobs live as long as the last clone; a restart
///   loses them all.
/// - **No sharing across processes**: two processes (or two
///   `MemoryQueue::new()` calls) see different queues.
/// - **No wake-up channel** for code using the trait: an idle caller learns
///   of new work by calling [`Queue::next_due`] again. As with Redis, a job
///   blocked behind an ordering key is not "due", so `next_due` does not
///   count it. (A [`crate::worker::Worker`] over a `MemoryQueue` is woken in
///   process by every enqueue, retry and release.)
/// - Little beyond the trait: no priorities, delays, dedup keys, retry
///   windows or pausing. Jobs of the seed trait have no name and no attempt
///   limit (claimed jobs report priority 0, `max_attempts` 0 and no name);
///   typed jobs pushed with [`MemoryQueue::push`] keep their name and
///   `MAX_ATTEMPTS`, which retries and lapsed leases count against as in
///   Redis ([`MemoryQueue::push_with`] refuses a delay rather than ignore
///   it). Dead letters are kept until the queue is dropped.
/// - None of what lives in Redis alone: no job surgery, kept results, notes,
///   limits ([`crate::flow`]; a Worker still honours
///   `JobError::rate_limited`), recorded metrics, events or stored trace
///   contexts (the Worker's `redq.process` span is there, without a parent),
///   and no quiet or stop for its workers.
/// - No workflows ([`crate::workflow`]): no batches, trees or
///   dependencies (they are calls of a `RedisQueue`, a `ShardedQueue` and an
///   `Operator` only), so a job never awaits and its
///   `JobCx::dependencies` is empty.
/// - The `SystemTime` fields of a claimed [`Job`] (`enqueued_at`,
///   `lease_expires_at`) are wall-clock times for display; they do not follow
///   a paused tokio clock.
///
/// ```no_run
/// use std::time::Duration;
/// use redq::{MemoryQueue, Queue};
///
/// # async fn demo() -> Result<(), redq::QueueError> {
/// let queue = MemoryQueue::new();
/// queue.enqueue("emails", vec![serde_json::json!({"to": "ada"})]).await?;
/// for job in queue.claim("emails", 10, Duration::from_secs(30)).await? {
///     queue.complete(&job.id).await?;
/// }
/// assert_eq!(queue.len("emails"), 0);
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct MemoryQueue {
    state: Arc<Mutex<State>>,
    /// Bumped by every change that may make a job claimable: a
    /// [`crate::worker::Worker`] over this queue waits on it instead of
    /// polling (the in-process form of Redis's wake channel).
    changed: Arc<tokio::sync::watch::Sender<()>>,
}

impl std::fmt::Debug for MemoryQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Payloads stay out of debug output, as they do for Redis.
        let state = self.lock();
        f.debug_struct("MemoryQueue")
            .field("queues", &state.queues.len())
            .field("jobs", &state.jobs.len())
            .finish_non_exhaustive()
    }
}

mod state;
#[cfg(test)]
mod tests;

use state::{Place, QueueIndex, State};

impl MemoryQueue {
    /// An empty store.
    pub fn new() -> MemoryQueue {
        MemoryQueue::default()
    }

    /// Jobs of `queue` still to be done: waiting, scheduled, claimed or
    /// blocked behind an ordering key (dead letters are not counted).
    pub fn len(&self, queue: &str) -> usize {
        let state = self.lock();
        state.queues.get(queue).map_or(0, |q| {
            q.waiting.len() + q.scheduled.len() + q.leased.len() + q.blocked
        })
    }

    /// Whether `queue` has no job still to be done.
    pub fn is_empty(&self, queue: &str) -> bool {
        self.len(queue) == 0
    }

    /// The dead letters of `queue` as (job id, error), oldest first.
    pub fn dead_letters(&self, queue: &str) -> Vec<(String, String)> {
        let state = self.lock();
        state
            .queues
            .get(queue)
            .map(|q| q.dead.clone())
            .unwrap_or_default()
    }

    /// The size of `queue` by state, counted as [`crate::RedisQueue::counts`]
    /// counts (a retry whose delay passed stays `scheduled` until the next
    /// claim; `lapsed` leases are also `leased`). Never `paused`.
    pub fn counts(&self, queue: &str) -> QueueCounts {
        let now = Instant::now();
        let state = self.lock();
        let index = state.queues.get(queue);
        let count = |f: fn(&QueueIndex) -> usize| index.map_or(0, f) as u64;
        QueueCounts {
            queue: queue.to_owned(),
            waiting: count(|q| q.waiting.len()),
            scheduled: count(|q| q.scheduled.len()),
            leased: count(|q| q.leased.len()),
            dead: count(|q| q.dead.len()),
            blocked: count(|q| q.blocked),
            lapsed: index.map_or(0, |q| q.leased.range(..=(now, u64::MAX)).count()) as u64,
            // A MemoryQueue keeps no finished jobs (see `crate::kept`).
            completed: 0,
            cancelled: 0,
            // Nor any limits (`crate::flow`): nothing is ever held.
            held: 0,
            // Nor workflows (`crate::workflow`): nothing awaits.
            awaiting: 0,
            due: index.map_or(0, |q| q.scheduled.range(..=(now, u64::MAX)).count()) as u64,
            due_since: index
                .and_then(|q| q.scheduled.first_key_value())
                .map(|((at, _), _)| *at)
                .filter(|at| *at <= now)
                .map(|at| SystemTime::now() - now.duration_since(at)),
            paused: false,
            paused_shards: 0,
            shards: 1,
            head_enqueued_at: index
                .and_then(|q| q.waiting.first_key_value())
                .and_then(|(_, id)| state.jobs.get(id))
                .map(|job| job.enqueued_at),
            now: SystemTime::now(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("memory queue state poisoned")
    }

    /// Wake whoever waits in [`MemoryQueue::changes`].
    fn notify(&self) {
        self.changed.send_modify(|_| {});
    }

    /// A receiver that sees every later change that may make a job
    /// claimable (enqueue, retry, release, a key handed on).
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<()> {
        self.changed.subscribe()
    }

    /// Typed pushes: each job with its name, attempt limit and ordering key
    /// (what this queue keeps of a [`NewJob`]); their ids, in order. Every
    /// job is checked, by the same rules as [`Queue::enqueue`], before any
    /// is queued. A job that must wait (a delay, a start time, jobs to wait
    /// for) is refused rather than run at once, which would be wrong without
    /// a word.
    pub(crate) fn push_typed(
        &self,
        queue: &str,
        jobs: Vec<NewJob>,
    ) -> Result<Vec<String>, QueueError> {
        if let Some(job) = jobs
            .iter()
            .find(|job| !job.delay.is_zero() || job.not_before.is_some() || job.waits_for_jobs())
        {
            return Err(QueueError::invalid(
                "job",
                job.name.as_deref().unwrap_or_default(),
                "a job due now: a MemoryQueue keeps no delay, start time or \
                 dependencies, so it would run this job at once",
            ));
        }
        Self::check_enqueue(
            queue,
            jobs.iter()
                .map(|job| (job.ordering_key.as_deref(), &job.payload)),
        )?;
        let mut state = self.lock();
        let ids = jobs
            .into_iter()
            .map(|job| {
                state.enqueue_job(
                    queue,
                    job.payload,
                    job.ordering_key,
                    job.name,
                    job.max_attempts,
                )
            })
            .collect();
        drop(state);
        self.notify();
        Ok(ids)
    }

    /// `ack.lua`, fenced by `lease`: only its holder completes the job.
    pub(crate) fn ack_held(&self, lease: &Lease) -> Result<Acked, QueueError> {
        let mut state = self.lock();
        if !state.jobs.contains_key(&lease.id) {
            return Ok(Acked::AlreadyGone);
        }
        state.check_held(lease)?;
        state.complete(&lease.id)?;
        drop(state);
        self.notify();
        Ok(Acked::Completed)
    }

    /// `nack.lua`, fenced by `lease`: back after `delay`, or dead when
    /// `delay` is `None` or the job's attempts are spent.
    pub(crate) fn fail_held(
        &self,
        lease: &Lease,
        delay: Option<Duration>,
        error: &str,
    ) -> Result<Nacked, QueueError> {
        let delay = delay
            .map(|d| limits::check_duration("retry delay", d).map(Duration::from_millis))
            .transpose()?;
        let now = Instant::now();
        let mut state = self.lock();
        if !state.jobs.contains_key(&lease.id) {
            return Err(QueueError::JobNotFound {
                id: lease.id.clone(),
            });
        }
        state.check_held(lease)?;
        let job = &state.jobs[&lease.id];
        let attempts = job.attempts + 1;
        let spent = job.max_attempts > 0 && attempts >= job.max_attempts;
        let delay = if spent { None } else { delay };
        state.fail_attempt(&lease.id, delay, limits::cut_error(error), now)?;
        drop(state);
        self.notify();
        Ok(match delay {
            None => Nacked::DeadLettered { attempts },
            Some(delay) => Nacked::Retrying {
                attempts,
                due_at: SystemTime::now() + delay,
            },
        })
    }

    /// `extend.lua`: the holder keeps its lease for `length` from now.
    pub(crate) fn extend_held(
        &self,
        lease: &Lease,
        length: Duration,
    ) -> Result<SystemTime, QueueError> {
        let length = Duration::from_millis(limits::check_lease(length)?);
        let mut state = self.lock();
        state.check_held(lease)?;
        let job = state.jobs.get_mut(&lease.id).expect("checked above");
        let Place::Leased { expires } = job.place else {
            unreachable!("check_held accepts leased jobs only")
        };
        let renewed = Instant::now() + length;
        job.place = Place::Leased { expires: renewed };
        let (queue, seq) = (job.queue.clone(), job.seq);
        let index = state.index(&queue);
        index.leased.remove(&(expires, seq));
        index.leased.insert((renewed, seq), lease.id.clone());
        Ok(SystemTime::now() + length)
    }

    /// `release.lua`: the holder gives the job back, due at once, with no
    /// attempt counted.
    pub(crate) fn release_held(&self, lease: &Lease) -> Result<(), QueueError> {
        self.give_back(lease, None)
    }

    /// A rate-limited run's release (`JobError::rate_limited`): no attempt
    /// counted, due again after `retry_after`. A memory queue has no
    /// limiters to push back, so only this job waits.
    pub(crate) fn release_held_after(
        &self,
        lease: &Lease,
        retry_after: Duration,
    ) -> Result<(), QueueError> {
        self.give_back(lease, Some(retry_after))
    }

    /// A held job back unrun: waiting at once, or scheduled after `delay`.
    fn give_back(&self, lease: &Lease, delay: Option<Duration>) -> Result<(), QueueError> {
        let mut state = self.lock();
        state.check_held(lease)?;
        let job = state.jobs.get_mut(&lease.id).expect("checked above");
        let Place::Leased { expires } = job.place else {
            unreachable!("check_held accepts leased jobs only")
        };
        let due = delay.map(|delay| Instant::now() + delay);
        job.place = match due {
            Some(due) => Place::Scheduled(due),
            None => Place::Waiting,
        };
        job.held = 0;
        let (queue, seq) = (job.queue.clone(), job.seq);
        let index = state.index(&queue);
        index.leased.remove(&(expires, seq));
        match due {
            Some(due) => index.scheduled.insert((due, seq), lease.id.clone()),
            None => index.waiting.insert(seq, lease.id.clone()),
        };
        drop(state);
        self.notify();
        Ok(())
    }

    /// Checks shared by `enqueue` and `enqueue_ordered`, all before any write.
    fn check_enqueue<'a>(
        queue: &str,
        jobs: impl IntoIterator<Item = (Option<&'a str>, &'a Value)>,
    ) -> Result<(), QueueError> {
        check_queue_name(queue)?;
        // Per job in the order `RedisQueue` checks: payload, then key.
        for (key, payload) in jobs {
            limits::check_payload_depth(payload)?;
            let size = serde_json::to_vec(payload)
                .map_err(|e| QueueError::invalid("payload", e.to_string(), "serializable JSON"))?
                .len();
            if size > DEFAULT_PAYLOAD_LIMIT {
                return Err(QueueError::PayloadTooLarge {
                    size,
                    limit: DEFAULT_PAYLOAD_LIMIT,
                });
            }
            if let Some(key) = key {
                limits::check_text("ordering key", key, limits::MAX_KEY_LEN)?;
            }
        }
        Ok(())
    }

    /// `retry` and `fail`: the failed attempt of a claimed job.
    fn fail_attempt(
        &self,
        id: &str,
        delay: Option<Duration>,
        error: &str,
    ) -> Result<(), QueueError> {
        limits::check_id(id)?;
        let now = Instant::now();
        let mut state = self.lock();
        if !state.jobs.contains_key(id) {
            return Err(QueueError::JobNotFound { id: id.to_owned() });
        }
        // Checked after the lookup, in the order RedisQueue checks.
        let delay = delay
            .map(|d| limits::check_duration("retry delay", d).map(Duration::from_millis))
            .transpose()?;
        state.fail_attempt(id, delay, limits::cut_error(error), now)
    }
}

fn lease_lost(id: &str, lease_id: u64) -> QueueError {
    QueueError::LeaseLost {
        id: id.to_owned(),
        lease_id,
    }
}

impl Queue for MemoryQueue {
    async fn enqueue(&self, queue: &str, payloads: Vec<Value>) -> Result<(), QueueError> {
        Self::check_enqueue(queue, payloads.iter().map(|p| (None, p)))?;
        let mut state = self.lock();
        for payload in payloads {
            state.enqueue(queue, payload, None);
        }
        drop(state);
        self.notify();
        Ok(())
    }

    async fn enqueue_ordered(
        &self,
        queue: &str,
        jobs: Vec<(String, Value)>,
    ) -> Result<(), QueueError> {
        Self::check_enqueue(queue, jobs.iter().map(|(k, p)| (Some(k.as_str()), p)))?;
        let mut state = self.lock();
        for (key, payload) in jobs {
            state.enqueue(queue, payload, Some(key));
        }
        drop(state);
        self.notify();
        Ok(())
    }

    async fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<Job>, QueueError> {
        let lease = Duration::from_millis(limits::check_lease(lease)?);
        check_queue_name(queue)?;
        let limit = limits::claim_count(limit);
        let now = Instant::now();
        Ok(self.lock().claim(queue, limit, lease, now))
    }

    async fn complete(&self, id: &str) -> Result<(), QueueError> {
        limits::check_id(id)?;
        self.lock().complete(id)?;
        self.notify();
        Ok(())
    }

    async fn retry(&self, id: &str, delay: Duration, error: &str) -> Result<(), QueueError> {
        self.fail_attempt(id, Some(delay), error)?;
        self.notify();
        Ok(())
    }

    async fn fail(&self, id: &str, error: &str) -> Result<(), QueueError> {
        self.fail_attempt(id, None, error)?;
        self.notify();
        Ok(())
    }

    async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        check_queue_name(queue)?;
        let now = Instant::now();
        Ok(self.lock().next_due(queue, now))
    }
}
