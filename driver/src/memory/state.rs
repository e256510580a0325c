//! The state behind one `MemoryQueue`: its jobs and indexes, and each
//! transition on them, step by step as the matching Lua script does it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::time::Instant;

use super::lease_lost;
use crate::{Job, Lease, QueueError};

/// Every queue of one `MemoryQueue`. The indexes mirror the Redis keys of
/// `lua/lib/keys.lua`, so each transition can follow its script step by step.
#[derive(Default)]
pub(super) struct State {
    /// Every job that is not completed, dead ones included (as in
    /// `{ns}:jobs`), so that completing a dead job is `LeaseLost`.
    pub(super) jobs: HashMap<String, Entry>,
    pub(super) queues: HashMap<String, QueueIndex>,
    /// Ordering key -> the job holding it and the jobs queued behind it
    /// (`{ns}:ord:active` and `{ns}:ord:blocked`).
    pub(super) keys: HashMap<String, KeyHold>,
    /// Job sequence, one for all queues (`{ns}:seq`).
    pub(super) seq: u64,
    /// Lease ids, the fencing tokens (`{ns}:lease:seq`).
    pub(super) lease_seq: u64,
}

pub(super) struct Entry {
    pub(super) queue: String,
    pub(super) payload: Value,
    pub(super) seq: u64,
    pub(super) enqueued_at: SystemTime,
    pub(super) ordering_key: Option<String>,
    /// The typed job's name ([`crate::worker::TypedJob::NAME`]), when pushed
    /// as one; jobs of the seed trait have none.
    pub(super) name: Option<String>,
    /// Attempts allowed (0 = unlimited); only typed pushes set it.
    pub(super) max_attempts: u32,
    pub(super) attempts: u32,
    /// The lease this handle took and has not resolved yet (0 when none):
    /// what `RedisQueue` reports in [`QueueError::LeaseLost`].
    pub(super) held: u64,
    pub(super) place: Place,
}

#[derive(Clone, Copy)]
pub(super) enum Place {
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
pub(super) struct QueueIndex {
    pub(super) waiting: BTreeMap<u64, String>,
    pub(super) scheduled: BTreeMap<(Instant, u64), String>,
    pub(super) leased: BTreeMap<(Instant, u64), String>,
    pub(super) blocked: usize,
    /// (id, error), oldest death first.
    pub(super) dead: Vec<(String, String)>,
}

pub(super) struct KeyHold {
    pub(super) holder: String,
    pub(super) queued: VecDeque<String>,
}

impl State {
    pub(super) fn index(&mut self, queue: &str) -> &mut QueueIndex {
        self.queues.entry(queue.to_owned()).or_default()
    }

    /// `enqueue.lua` for one job of the seed trait (no name, no attempt
    /// limit).
    pub(super) fn enqueue(&mut self, queue: &str, payload: Value, key: Option<String>) {
        self.enqueue_job(queue, payload, key, None, 0);
    }

    /// `enqueue.lua` for one job, due now: it takes its ordering key, or
    /// queues behind the job holding it (`admit` in `lua/lib/ordering.lua`).
    /// Returns its id.
    pub(super) fn enqueue_job(
        &mut self,
        queue: &str,
        payload: Value,
        key: Option<String>,
        name: Option<String>,
        max_attempts: u32,
    ) -> String {
        self.seq += 1;
        let seq = self.seq;
        let id = crate::job_id::next().to_string();
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
    pub(super) fn check_held(&self, lease: &Lease) -> Result<(), QueueError> {
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
    pub(super) fn claim(
        &mut self,
        queue: &str,
        limit: usize,
        lease: Duration,
        now: Instant,
    ) -> Vec<Job> {
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
                noted: false,
                trace_parent: None,
                awaits: None,
            });
        }
        claimed
    }

    /// `ack.lua`: a claimed job is done; any other job that still exists
    /// is not held, so nothing changes.
    pub(super) fn complete(&mut self, id: &str) -> Result<(), QueueError> {
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
    pub(super) fn fail_attempt(
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
    pub(super) fn release_key(&mut self, id: &str, key: Option<&str>) {
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
    pub(super) fn next_due(&self, queue: &str, now: Instant) -> Option<Duration> {
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
