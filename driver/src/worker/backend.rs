//! The backend seam: what a [`Worker`](super::Worker) needs from where jobs
//! wait, for each of the three backends.
//!
//! # Why a closed enum and not a trait
//!
//! The seed [`Queue`](crate::Queue) trait names a job by id alone, and a
//! worker needs more than it offers: fenced acks in batches, lease
//! extension, release at shutdown, and the Redis-only runtime (hand-off
//! parking, pub/sub wake-ups, heartbeats, the scheduler). An open trait
//! would have to make every one of those part of the public API, with
//! types that today are private. The backends are three, all in this
//! crate, so [`WorkerBackend`] is an enum: one `match` per operation
//! (nothing next to a round trip), no generic parameter on `Worker`, and
//! `Worker::new(redis_queue, …)` reads as before.
//!
//! | | [`RedisQueue`] | [`ShardedQueue`] | [`MemoryQueue`] |
//! |---|---|---|---|
//! | claims | one namespace | every shard in turn, starting one further along each round; a shard that has not answered within 1 s is left to answer in the background (`super::shard_claims`) | in process |
//! | fencing, leases, acks | per lease | per lease, each on the shard the job came from | per lease |
//! | batched acks | one script call per batch | one acker a shard, each batching its own shard's acks (`super::acker`) | in process |
//! | waking an idle worker | pub/sub wake channel | the wake channel of **every** shard | every enqueue, retry and release, in process |
//! | idle sleep bound | `next_due`, `max_idle` | the soonest `next_due` of all shards, `max_idle` | `next_due`, `max_idle` |
//! | hand-off parking | yes (one queue) | no (see below) | no (a claim costs no round trip) |
//! | heartbeats (worker registry) | yes | on every shard, one identity | none |
//! | schedules (`WorkOptions::schedules`) | yes | a scheduler per shard | none |
//!
//! A sharded worker does not park: a park offers the worker's free slots to
//! one namespace's enqueues, and parking on every shard at once would offer
//! them N times over (more jobs leased to it than it can run, each waiting
//! for its lease to lapse), while parking on one would make it wait on that
//! shard while another has work. It listens to every shard's wake channel
//! instead, so an enqueue on any shard wakes it, and it claims in rotation.

use std::time::{Duration, SystemTime};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::shard_claims::ShardClaims;
use crate::kept::Completion;
use crate::lost_claim::LostClaim;
use crate::notes::NoteBatch;
use crate::queue::ShutdownRelease;
use crate::{Acked, Job, Lease, MemoryQueue, Nacked, QueueError, RedisQueue, ShardedQueue};

/// Where a [`Worker`](super::Worker) claims its jobs: a [`RedisQueue`], a
/// [`ShardedQueue`] or a [`MemoryQueue`]. Built by `From` from any of them, so
/// `Worker::new` takes each directly. See the table in the
/// [worker module docs](super#backends) for what each backend provides.
#[derive(Debug, Clone)]
pub struct WorkerBackend(pub(crate) Backend);

#[derive(Debug, Clone)]
pub(crate) enum Backend {
    Redis(RedisQueue),
    Sharded(ShardedQueue),
    Memory(MemoryQueue),
}

impl From<RedisQueue> for WorkerBackend {
    fn from(queue: RedisQueue) -> Self {
        WorkerBackend(Backend::Redis(queue))
    }
}

impl From<ShardedQueue> for WorkerBackend {
    fn from(queue: ShardedQueue) -> Self {
        WorkerBackend(Backend::Sharded(queue))
    }
}

impl From<MemoryQueue> for WorkerBackend {
    fn from(queue: MemoryQueue) -> Self {
        WorkerBackend(Backend::Memory(queue))
    }
}

/// A job claimed by a worker, with the shard it lives in (always 0 but for
/// a [`ShardedQueue`]).
pub(crate) struct Claimed {
    pub job: Job,
    pub shard: usize,
}

/// A lease held by a worker, on its shard.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub lease: Lease,
    pub shard: usize,
}

impl Backend {
    /// The one-namespace queue hand-offs park on, if this backend has one.
    pub fn handoff(&self) -> Option<&RedisQueue> {
        match self {
            Backend::Redis(queue) => Some(queue),
            Backend::Sharded(_) | Backend::Memory(_) => None,
        }
    }

    /// The Redis namespaces this backend spans (none in memory).
    pub fn namespaces(&self) -> &[RedisQueue] {
        match self {
            Backend::Redis(queue) => std::slice::from_ref(queue),
            Backend::Sharded(sharded) => sharded.shards(),
            Backend::Memory(_) => &[],
        }
    }

    fn shard(&self, shard: usize) -> &RedisQueue {
        &self.namespaces()[shard]
    }

    /// Claim up to `n` jobs of `queue`. Over shards: from every shard in
    /// turn until `n` are found, starting one further along each call,
    /// waiting on no one shard for long (`super::shard_claims`, the
    /// worker's `claims`); a shard that fails is skipped while another
    /// answers.
    ///
    /// A claim that failed after it may have leased jobs is noted in
    /// `lost`, with its shard (`crate::lost_claim`); over shards, also one
    /// left to answer in the background that has failed so since.
    pub async fn claim(
        &self,
        queue: &str,
        n: usize,
        lease: Duration,
        claims: &mut ShardClaims,
        lost: &mut Vec<(usize, LostClaim)>,
    ) -> Result<Vec<Claimed>, QueueError> {
        let on = |job| Claimed { job, shard: 0 };
        match self {
            Backend::Redis(redis) => {
                let mut noted = None;
                let claimed = redis.claim_noting(queue, n, lease, &mut noted).await;
                lost.extend(noted.map(|noted| (0, noted)));
                Ok(claimed?.into_iter().map(on).collect())
            }
            Backend::Memory(memory) => Ok(crate::Queue::claim(memory, queue, n, lease)
                .await?
                .into_iter()
                .map(on)
                .collect()),
            Backend::Sharded(sharded) => {
                let claimed = claims.claim(sharded, queue, n, lease).await;
                lost.extend(claims.take_lost());
                claimed
            }
        }
    }

    /// Acknowledge `leases`, all of `shard` (each shard's acker sends its
    /// own: `super::acker`), each outcome in input order. A batch that could
    /// not be sent gives each of its leases its error, of the same kind (a
    /// timeout stays a timeout: the acker sends again on a connection's
    /// trouble, and only the acker: fred does not, so that the acker knows
    /// which sends went before). Each lease's [`Completion`] (result, run time) goes in the
    /// same call; a memory queue keeps no results.
    pub async fn ack_batch(
        &self,
        shard: usize,
        leases: &[Lease],
        completions: &[Completion],
    ) -> Vec<Result<Acked, QueueError>> {
        let n = leases.len();
        let queue = match self {
            Backend::Memory(memory) => return leases.iter().map(|l| memory.ack_held(l)).collect(),
            Backend::Redis(redis) => redis,
            Backend::Sharded(sharded) => &sharded.shards()[shard],
        };
        batch_outcomes(
            queue.ack_batch_resent_by_caller(leases, completions).await,
            n,
        )
    }

    /// Record a failed attempt: back after `delay`, or dead when `dead`
    /// (or when the job's attempts or retry window are spent), with the
    /// job's unsent `notes` (a memory queue keeps none).
    pub async fn fail(
        &self,
        held: &Held,
        delay: Duration,
        error: &str,
        dead: bool,
        notes: &NoteBatch,
    ) -> Result<Nacked, QueueError> {
        match self {
            Backend::Memory(memory) => {
                memory.fail_held(&held.lease, (!dead).then_some(delay), error)
            }
            _ => {
                let delay = if dead { Duration::ZERO } else { delay };
                // Sent again by the worker only (`super::resend`).
                let queue = self.shard(held.shard);
                let caller = queue.caller().resent_by_caller();
                queue
                    .fail_attempt(caller, &held.lease, delay, error, dead, notes)
                    .await
            }
        }
    }

    /// Keep the lease for `length` from now, sending the job's unsent
    /// `notes` along (a memory queue keeps none); its new expiry.
    pub async fn extend(
        &self,
        held: &Held,
        length: Duration,
        notes: &NoteBatch,
    ) -> Result<SystemTime, QueueError> {
        match self {
            Backend::Memory(memory) => memory.extend_held(&held.lease, length),
            _ => {
                self.shard(held.shard)
                    .extend_noting(&held.lease, length, notes)
                    .await
            }
        }
    }

    /// Give the job back, due at once, no attempt counted.
    pub async fn release(&self, held: &Held) -> Result<(), QueueError> {
        match self {
            Backend::Memory(memory) => memory.release_held(&held.lease),
            _ => self.shard(held.shard).release(&held.lease).await,
        }
    }

    /// Give back a job this worker was running as it stops: due at once,
    /// no attempt counted, and on Redis a `given_back` event says `why`.
    pub async fn release_for_shutdown(
        &self,
        held: &Held,
        why: ShutdownRelease,
    ) -> Result<(), QueueError> {
        match self {
            Backend::Memory(memory) => memory.release_held(&held.lease),
            _ => {
                self.shard(held.shard)
                    .release_for_shutdown(&held.lease, why)
                    .await
            }
        }
    }

    /// Give the job back unrun, no attempt counted, its limiter pushed back
    /// for `retry_after` (see [`RedisQueue::release_pushing_back`]). A
    /// memory queue has no limiters: the job is due again after
    /// `retry_after`.
    pub async fn release_pushing_back(
        &self,
        held: &Held,
        retry_after: Duration,
    ) -> Result<(), QueueError> {
        match self {
            Backend::Memory(memory) => memory.release_held_after(&held.lease, retry_after),
            _ => {
                self.shard(held.shard)
                    .release_pushing_back(&held.lease, retry_after)
                    .await
            }
        }
    }

    /// How long until a job of `queue` is due: over shards, the soonest.
    pub async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        match self {
            Backend::Redis(redis) => redis.next_due(queue).await,
            Backend::Memory(memory) => crate::Queue::next_due(memory, queue).await,
            // The soonest over the shards that answer, each asked for at
            // most the shard patience (`crate::shards::seed`).
            Backend::Sharded(sharded) => crate::Queue::next_due(sharded, queue).await,
        }
    }

    /// Start what keeps a worker of this backend informed and visible: the
    /// wake-up listeners, heartbeats and schedulers (see the module table).
    pub fn spawn_duties(&self, duties: &mut JoinSet<()>, duty: super::Duties) {
        if let Backend::Memory(memory) = self {
            duties.spawn(forward_changes(memory.changes(), duty.inbox, duty.stop));
            return;
        }
        // Only the first namespace's listener carries hand-offs: only a
        // one-namespace worker parks.
        let mut handed = Some(duty.handed);
        for shard in self.namespaces() {
            let handed = handed
                .take()
                .unwrap_or_else(|| tokio::sync::mpsc::unbounded_channel().0);
            // The worker is listed only once it hears its holder channel:
            // an operator who finds it in the registry can quiet or stop it,
            // or cancel its jobs, at once.
            let subscribed = CancellationToken::new();
            // This namespace's listener says what it hears; its record shows it.
            let wake_ups = std::sync::Arc::new(super::wake_ups::WakeUpsCell::default());
            duties.spawn(super::wake::listen_owned(
                shard.clone(),
                duty.queues.clone(),
                duty.inbox.clone(),
                handed,
                duty.stop.clone(),
                subscribed.clone(),
                wake_ups.clone(),
            ));
            duties.spawn(super::presence::keep_alive(
                shard.clone(),
                duty.queues.clone(),
                duty.concurrency,
                duty.totals.clone(),
                duty.stop.clone(),
                subscribed,
                wake_ups,
            ));
            if duty.schedules {
                let scheduler = crate::schedule::Scheduler::new(shard.clone());
                let stop = duty.stop.clone();
                duties.spawn(async move {
                    scheduler.run(stop).await;
                });
            }
        }
    }
}

/// One batch's outcomes, or its failure given to each of its `n` leases
/// as it is: relabelled (it was once wrapped as an unexpected reply), a
/// timeout read as a protocol error, and neither the acker nor a log could
/// tell a delayed ack from a broken one.
fn batch_outcomes(
    batch: Result<Vec<Result<Acked, QueueError>>, QueueError>,
    n: usize,
) -> Vec<Result<Acked, QueueError>> {
    match batch {
        Ok(outcomes) => outcomes,
        Err(e) => vec![Err(e); n],
    }
}

/// A worker over a [`MemoryQueue`] is woken by the queue's own changes, the
/// in-process stand-in for Redis's wake channel.
async fn forward_changes(
    mut changes: tokio::sync::watch::Receiver<()>,
    inbox: std::sync::Arc<super::wake::Inbox>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                inbox.due.store(true, std::sync::atomic::Ordering::Release);
                inbox.wake.notify_one();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConnectionFault;

    #[test]
    fn a_batch_that_timed_out_gives_each_lease_a_timeout() {
        let outcomes = batch_outcomes(Err(QueueError::Timeout(Duration::from_secs(10))), 2);
        assert_eq!(outcomes.len(), 2);
        for outcome in outcomes {
            let e = outcome.expect_err("the batch failed");
            assert!(matches!(e, QueueError::Timeout(_)), "{e}");
            assert_eq!(e.connection_fault(), Some(ConnectionFault::NoAnswer));
            assert_eq!(
                e.to_string(),
                "redis command timed out after 10 s; if it was a write, it may or may not have been applied"
            );
        }
    }
}
