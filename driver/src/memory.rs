//! `MemoryQueue`: the seed [`Queue`] trait kept in process memory, with the
//! semantics of the Redis backend.
//!
//! What it is for: tests of code written against [`Queue`] (no
//! `redis-server`, and a clock tests can pause), the inline mode, and small
//! apps without Redis. What it does not do: persist anything, or share jobs
//! between processes. This module is private, so the full account (the
//! model, what matches Redis, what is left out) is on [`MemoryQueue`], where
//! users of the crate read it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::time::Instant;

use crate::limits::{self, check_queue_name};
use crate::{Acked, Job, Lease, Nacked, Queue, QueueCounts, QueueError, DEFAULT_PAYLOAD_LIMIT};

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
///   Redis. Dead letters are kept until the queue is dropped.
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

/// Every queue of one `MemoryQueue`. The indexes mirror the Redis keys of
/// `lua/lib/keys.lua`, so each transition can follow its script step by step.
#[derive(Default)]
struct State {
    /// Every job that is not completed, dead ones included (as in
    /// `{ns}:jobs`), so that completing a dead job is `LeaseLost`.
    jobs: HashMap<String, Entry>,
    queues: HashMap<String, QueueIndex>,
    /// Ordering key -> the job holding it and the jobs queued behind it
    /// (`{ns}:ord:active` and `{ns}:ord:blocked`).
    keys: HashMap<String, KeyHold>,
    /// Job sequence, one for all queues (`{ns}:seq`).
    seq: u64,
    /// Lease ids, the fencing tokens (`{ns}:lease:seq`).
    lease_seq: u64,
}

struct Entry {
    queue: String,
    payload: Value,
    seq: u64,
    enqueued_at: SystemTime,
    ordering_key: Option<String>,
    /// The typed job's name ([`crate::worker::TypedJob::NAME`]), when pushed
    /// as one; jobs of the seed trait have none.
    name: Option<String>,
    /// Attempts allowed (0 = unlimited); only typed pushes set it.
    max_attempts: u32,
    attempts: u32,
    /// The lease this handle took and has not resolved yet (0 when none):
    /// what `RedisQueue` reports in [`QueueError::LeaseLost`].
    held: u64,
    place: Place,
}

#[derive(Clone, Copy)]
enum Place {
    /// In `waiting`: due now.
    Waiting,
    /// In `scheduled`, due at this time.
    Scheduled(Instant),
    /// In `leased` under this lease.
    Leased { expires: Instant },
    /// Behind another job with its ordering key.
    Blocked,
    /// In the dead-letter list.
    Dead,
}

/// One queue's jobs by state; the `seq` in each key keeps FIFO order.
#[derive(Default)]
struct QueueIndex {
    waiting: BTreeMap<u64, String>,
    scheduled: BTreeMap<(Instant, u64), String>,
    leased: BTreeMap<(Instant, u64), String>,
    blocked: usize,
    /// (id, error), oldest death first.
    dead: Vec<(String, String)>,
}

struct KeyHold {
    holder: String,
    queued: VecDeque<String>,
}

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
            paused: false,
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

    /// A typed push: one job with its name, attempt limit and ordering key;
    /// its id. Checked by the same rules as [`Queue::enqueue`].
    pub(crate) fn push_named(
        &self,
        queue: &str,
        payload: Value,
        name: &str,
        max_attempts: u32,
        ordering_key: Option<String>,
    ) -> Result<String, QueueError> {
        Self::check_enqueue(queue, [(ordering_key.as_deref(), &payload)])?;
        let id = self.lock().enqueue_job(
            queue,
            payload,
            ordering_key,
            Some(name.to_owned()),
            max_attempts,
        );
        self.notify();
        Ok(id)
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
        let mut state = self.lock();
        state.check_held(lease)?;
        let job = state.jobs.get_mut(&lease.id).expect("checked above");
        let Place::Leased { expires } = job.place else {
            unreachable!("check_held accepts leased jobs only")
        };
        job.place = Place::Waiting;
        job.held = 0;
        let (queue, seq) = (job.queue.clone(), job.seq);
        let index = state.index(&queue);
        index.leased.remove(&(expires, seq));
        index.waiting.insert(seq, lease.id.clone());
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

impl State {
    fn index(&mut self, queue: &str) -> &mut QueueIndex {
        self.queues.entry(queue.to_owned()).or_default()
    }

    /// `enqueue.lua` for one job of the seed trait (no name, no attempt
    /// limit).
    fn enqueue(&mut self, queue: &str, payload: Value, key: Option<String>) {
        self.enqueue_job(queue, payload, key, None, 0);
    }

    /// `enqueue.lua` for one job, due now: it takes its ordering key, or
    /// queues behind the job holding it (`admit` in `lua/lib/ordering.lua`).
    /// Returns its id.
    fn enqueue_job(
        &mut self,
        queue: &str,
        payload: Value,
        key: Option<String>,
        name: Option<String>,
        max_attempts: u32,
    ) -> String {
        self.seq += 1;
        let seq = self.seq;
        let id = ulid::Ulid::new().to_string();
        let mut place = Place::Waiting;
        if let Some(key) = &key {
            match self.keys.get_mut(key) {
                Some(hold) => {
                    hold.queued.push_back(id.clone());
                    place = Place::Blocked;
                }
                None => {
                    self.keys.insert(
                        key.clone(),
                        KeyHold {
                            holder: id.clone(),
                            queued: VecDeque::new(),
                        },
                    );
                }
            }
        }
        let index = self.index(queue);
        match place {
            Place::Blocked => index.blocked += 1,
            _ => {
                index.waiting.insert(seq, id.clone());
            }
        }
        self.jobs.insert(
            id.clone(),
            Entry {
                queue: queue.to_owned(),
                payload,
                seq,
                enqueued_at: SystemTime::now(),
                ordering_key: key,
                name,
                max_attempts,
                attempts: 0,
                held: 0,
                place,
            },
        );
        id
    }

    /// The fence of every `*_held` call: the job is leased, under `lease`.
    fn check_held(&self, lease: &Lease) -> Result<(), QueueError> {
        match self.jobs.get(&lease.id) {
            Some(job)
                if matches!(job.place, Place::Leased { .. }) && job.held == lease.lease_id =>
            {
                Ok(())
            }
            Some(job) => Err(lease_lost(&lease.id, job.held)),
            None => Err(lease_lost(&lease.id, 0)),
        }
    }

    /// `claim.lua`: reclaim lapsed leases, promote due retries, then lease
    /// the oldest waiting jobs.
    fn claim(&mut self, queue: &str, limit: usize, lease: Duration, now: Instant) -> Vec<Job> {
        let Some(index) = self.queues.get_mut(queue) else {
            return Vec::new();
        };
        // Lapsed leases go back to their old place in line, one attempt up;
        // a typed job whose attempts are spent is dead instead.
        let mut spent = Vec::new();
        while let Some(entry) = index.leased.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((_, seq), id) = entry.remove_entry();
            let job = self.jobs.get_mut(&id).expect("a leased job exists");
            job.attempts += 1;
            if job.max_attempts > 0 && job.attempts >= job.max_attempts {
                job.place = Place::Dead;
                index.dead.push((id.clone(), "lease expired".to_owned()));
                spent.push((id, job.ordering_key.clone()));
            } else {
                job.place = Place::Waiting;
                index.waiting.insert(seq, id);
            }
        }
        for (id, key) in spent {
            self.release_key(&id, key.as_deref());
        }
        let index = self.queues.get_mut(queue).expect("looked up above");
        while let Some(entry) = index.scheduled.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((_, seq), id) = entry.remove_entry();
            self.jobs
                .get_mut(&id)
                .expect("a scheduled job exists")
                .place = Place::Waiting;
            index.waiting.insert(seq, id);
        }

        let expires = now + lease;
        let expires_at = SystemTime::now() + lease;
        let mut claimed = Vec::new();
        while claimed.len() < limit {
            let Some((seq, id)) = index.waiting.pop_first() else {
                break;
            };
            self.lease_seq += 1;
            let job = self.jobs.get_mut(&id).expect("a waiting job exists");
            job.place = Place::Leased { expires };
            job.held = self.lease_seq;
            index.leased.insert((expires, seq), id.clone());
            claimed.push(Job {
                id,
                queue: queue.to_owned(),
                payload: job.payload.clone(),
                attempts: job.attempts,
                lease_id: self.lease_seq,
                lease_expires_at: expires_at,
                priority: 0,
                enqueued_at: job.enqueued_at,
                ordering_key: job.ordering_key.clone(),
                name: job.name.clone(),
                max_attempts: job.max_attempts,
            });
        }
        claimed
    }

    /// `ack.lua`: a claimed job is done; any other job that still exists
    /// is not held, so nothing changes.
    fn complete(&mut self, id: &str) -> Result<(), QueueError> {
        let Some(job) = self.jobs.get(id) else {
            return Ok(());
        };
        let Place::Leased { expires } = job.place else {
            return Err(lease_lost(id, job.held));
        };
        let job = self.jobs.remove(id).expect("checked above");
        self.index(&job.queue).leased.remove(&(expires, job.seq));
        self.release_key(id, job.ordering_key.as_deref());
        Ok(())
    }

    /// `nack.lua` (`fail_attempt` in `lua/lib/retry.lua`): one more failed
    /// attempt; back in line after `delay`, or dead when `delay` is `None`.
    fn fail_attempt(
        &mut self,
        id: &str,
        delay: Option<Duration>,
        error: &str,
        now: Instant,
    ) -> Result<(), QueueError> {
        let job = self.jobs.get_mut(id).expect("checked by the caller");
        let Place::Leased { expires } = job.place else {
            return Err(lease_lost(id, job.held));
        };
        job.attempts += 1;
        job.held = 0;
        let (queue, seq, key) = (job.queue.clone(), job.seq, job.ordering_key.clone());
        let place = match delay {
            None => Place::Dead,
            Some(delay) if delay.is_zero() => Place::Waiting,
            Some(delay) => Place::Scheduled(now + delay),
        };
        job.place = place;
        let index = self.index(&queue);
        index.leased.remove(&(expires, seq));
        match place {
            Place::Waiting => {
                index.waiting.insert(seq, id.to_owned());
            }
            Place::Scheduled(due) => {
                index.scheduled.insert((due, seq), id.to_owned());
            }
            _ => {
                index.dead.push((id.to_owned(), error.to_owned()));
                self.release_key(id, key.as_deref());
            }
        }
        Ok(())
    }

    /// `release_keys` in `lua/lib/ordering.lua`: a job left for good; the next job
    /// queued behind its ordering key, in whatever queue, takes the key and
    /// joins its queue in its old place.
    fn release_key(&mut self, id: &str, key: Option<&str>) {
        let Some(key) = key else { return };
        let Some(hold) = self.keys.get_mut(key) else {
            return;
        };
        if hold.holder != id {
            return;
        }
        let Some(next) = hold.queued.pop_front() else {
            self.keys.remove(key);
            return;
        };
        hold.holder = next.clone();
        let job = self.jobs.get_mut(&next).expect("a blocked job exists");
        job.place = Place::Waiting;
        let (queue, seq) = (job.queue.clone(), job.seq);
        let index = self.index(&queue);
        index.blocked -= 1;
        index.waiting.insert(seq, next);
    }

    /// `next_due.lua`: zero when a job waits; otherwise the time to the
    /// earliest retry or lease expiry; `None` when neither exists.
    fn next_due(&self, queue: &str, now: Instant) -> Option<Duration> {
        let index = self.queues.get(queue)?;
        if !index.waiting.is_empty() {
            return Some(Duration::ZERO);
        }
        [
            index.scheduled.first_key_value(),
            index.leased.first_key_value(),
        ]
        .into_iter()
        .flatten()
        .map(|((at, _), _)| at.saturating_duration_since(now))
        .min()
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

#[cfg(test)]
mod tests {
    //! The state machine driven directly with a synthetic clock; the
    //! behaviour through the trait, against both backends, is tested in
    //! `tests/tests/single_server/queue_trait.rs`.

    use std::collections::HashSet;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    const QUEUES: [&str; 2] = ["a", "b"];
    const KEYS: [&str; 2] = ["k", "j"];

    /// Every job is in exactly the index its place names, the counts agree,
    /// and each ordering key lets at most one job out of line.
    fn check_invariants(state: &State) {
        let mut indexed = 0;
        for (name, index) in &state.queues {
            indexed += index.waiting.len()
                + index.scheduled.len()
                + index.leased.len()
                + index.blocked
                + index.dead.len();
            for (seq, id) in &index.waiting {
                let job = &state.jobs[id];
                assert!(matches!(job.place, Place::Waiting) && job.seq == *seq);
            }
            for ((due, seq), id) in &index.scheduled {
                let job = &state.jobs[id];
                assert!(matches!(job.place, Place::Scheduled(at) if at == *due) && job.seq == *seq);
            }
            for ((expiry, seq), id) in &index.leased {
                let job = &state.jobs[id];
                assert!(
                    matches!(job.place, Place::Leased { expires } if expires == *expiry)
                        && job.seq == *seq
                );
            }
            for (id, _) in &index.dead {
                assert!(matches!(state.jobs[id].place, Place::Dead));
            }
            let blocked = state
                .jobs
                .values()
                .filter(|job| &job.queue == name && matches!(job.place, Place::Blocked))
                .count();
            assert_eq!(index.blocked, blocked, "blocked count of {name}");
        }
        assert_eq!(indexed, state.jobs.len(), "every job indexed once");

        for (key, hold) in &state.keys {
            let holder = &state.jobs[&hold.holder];
            assert!(!matches!(holder.place, Place::Blocked | Place::Dead));
            let seqs: Vec<u64> = hold.queued.iter().map(|id| state.jobs[id].seq).collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{key} queue in order");
            assert!(
                seqs.iter().all(|seq| *seq > holder.seq),
                "{key} holder first"
            );
        }
        for (id, job) in &state.jobs {
            let Some(key) = &job.ordering_key else {
                continue;
            };
            match job.place {
                Place::Dead => {}
                Place::Blocked => assert!(state.keys[key].queued.contains(id)),
                _ => assert_eq!(
                    &state.keys[key].holder, id,
                    "only the holder of {key} is out"
                ),
            }
        }
    }

    #[test]
    fn random_operations_keep_the_state_consistent() {
        for seed in 0..20 {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut state = State::default();
            let mut now = Instant::now();
            let mut claimed: Vec<String> = Vec::new();
            let mut ever: HashSet<String> = HashSet::new();
            for _ in 0..400 {
                let queue = QUEUES[rng.random_range(0..QUEUES.len())];
                match rng.random_range(0..10) {
                    0..=2 => {
                        let key = rng
                            .random_bool(0.6)
                            .then(|| KEYS[rng.random_range(0..KEYS.len())].to_owned());
                        // Some with an attempt limit, as typed pushes have:
                        // lapsed leases then dead-letter them too.
                        let max_attempts = rng.random_range(0..3);
                        state.enqueue_job(queue, Value::Null, key, None, max_attempts);
                    }
                    3..=4 => {
                        let lease = Duration::from_millis(rng.random_range(1..20));
                        let limit = rng.random_range(1..4);
                        for job in state.claim(queue, limit, lease, now) {
                            assert_eq!(job.queue, queue);
                            ever.insert(job.id.clone());
                            claimed.push(job.id);
                        }
                    }
                    5..=8 if !claimed.is_empty() => {
                        let id = claimed.swap_remove(rng.random_range(0..claimed.len()));
                        let outcome = match rng.random_range(0..4) {
                            0 => state.complete(&id),
                            // The caller answers JobNotFound for these.
                            _ if !state.jobs.contains_key(&id) => Ok(()),
                            1 => state.fail_attempt(&id, None, "dead", now),
                            _ => {
                                let delay = Duration::from_millis(rng.random_range(0..10));
                                state.fail_attempt(&id, Some(delay), "again", now)
                            }
                        };
                        // Lapsed and reclaimed meanwhile, or resolved twice.
                        if let Err(e) = outcome {
                            assert!(matches!(e, QueueError::LeaseLost { .. }), "{e}");
                        }
                    }
                    _ => now += Duration::from_millis(rng.random_range(0..8)),
                }
                check_invariants(&state);
            }
            assert!(!ever.is_empty());
        }
    }

    #[test]
    fn next_due_counts_waiting_then_retries_then_leases() {
        let mut state = State::default();
        let now = Instant::now();
        assert_eq!(state.next_due("q", now), None);
        state.enqueue("q", Value::Null, None);
        assert_eq!(state.next_due("q", now), Some(Duration::ZERO));

        let id = state.claim("q", 1, Duration::from_secs(10), now)[0]
            .id
            .clone();
        assert_eq!(state.next_due("q", now), Some(Duration::from_secs(10)));
        let later = now + Duration::from_secs(4);
        assert_eq!(state.next_due("q", later), Some(Duration::from_secs(6)));
        assert_eq!(
            state.next_due("q", now + Duration::from_secs(11)),
            Some(Duration::ZERO),
            "a lapsed lease is due for reclaim"
        );

        state
            .fail_attempt(&id, Some(Duration::from_secs(3)), "later", later)
            .unwrap();
        assert_eq!(state.next_due("q", later), Some(Duration::from_secs(3)));
        let claimed = state.claim(
            "q",
            1,
            Duration::from_secs(1),
            later + Duration::from_secs(3),
        );
        assert_eq!(claimed[0].attempts, 1);
    }

    #[test]
    fn a_typed_job_whose_leases_keep_lapsing_is_dead_once_its_attempts_are_spent() {
        let mut state = State::default();
        let mut now = Instant::now();
        let lease = Duration::from_millis(5);
        let key = Some("k".to_owned());
        let id = state.enqueue_job("q", Value::Null, key.clone(), Some("t".into()), 2);
        state.enqueue("q", Value::Null, key);
        let first = state.claim("q", 1, lease, now).remove(0);
        assert_eq!((first.name.as_deref(), first.max_attempts), (Some("t"), 2));
        now += Duration::from_millis(10);
        let again = state.claim("q", 1, lease, now).remove(0);
        assert_eq!((again.id.as_str(), again.attempts), (id.as_str(), 1));
        now += Duration::from_millis(10);
        // The second lapse spends its attempts: dead, and its key moves on.
        let next = state.claim("q", 1, lease, now);
        assert_eq!(
            state.queues["q"].dead,
            [(id.clone(), "lease expired".into())]
        );
        assert_eq!(next.len(), 1, "the job behind its key is claimed");
        assert_ne!(next[0].id, id);
        check_invariants(&state);
    }

    #[test]
    fn a_workers_lease_calls_are_fenced_once_its_lease_was_reclaimed() {
        let queue = MemoryQueue::new();
        let now = Instant::now();
        queue
            .lock()
            .enqueue_job("q", Value::Null, None, Some("t".into()), 0);
        let old = queue.lock().claim("q", 1, Duration::from_millis(5), now)[0].lease();
        let later = now + Duration::from_millis(10);
        let new = queue.lock().claim("q", 1, Duration::from_secs(60), later)[0].lease();
        assert_eq!(old.id, new.id);
        let fenced = |e: QueueError| matches!(e, QueueError::LeaseLost { .. });
        assert!(fenced(queue.ack_held(&old).unwrap_err()));
        assert!(fenced(queue.fail_held(&old, None, "x").unwrap_err()));
        assert!(fenced(
            queue.extend_held(&old, Duration::from_secs(1)).unwrap_err()
        ));
        assert!(fenced(queue.release_held(&old).unwrap_err()));
        // The new holder's lease still works, and only once.
        queue.release_held(&new).unwrap();
        assert!(fenced(queue.ack_held(&new).unwrap_err()));
        let last = queue.lock().claim("q", 1, Duration::from_secs(60), later)[0].lease();
        assert_eq!(queue.ack_held(&last).unwrap(), Acked::Completed);
        assert_eq!(queue.ack_held(&last).unwrap(), Acked::AlreadyGone);
    }

    #[test]
    fn a_lapsed_lease_belongs_to_its_holder_until_a_claim_reclaims_it() {
        let mut state = State::default();
        let now = Instant::now();
        state.enqueue("q", Value::Null, None);
        let first = state.claim("q", 1, Duration::from_millis(5), now).remove(0);
        let lapsed = now + Duration::from_millis(10);
        assert_eq!(state.next_due("q", lapsed), Some(Duration::ZERO));

        let again = state
            .claim("q", 1, Duration::from_millis(5), lapsed)
            .remove(0);
        assert_eq!((again.id.as_str(), again.attempts), (first.id.as_str(), 1));
        assert!(again.lease_id > first.lease_id);
        state.complete(&again.id).unwrap();
        assert!(state.jobs.is_empty());
        assert_eq!(state.next_due("q", lapsed), None);
    }
}
