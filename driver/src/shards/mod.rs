//! One logical queue spread over several namespaces ("shards"), so that on
//! Redis Cluster it is served by several primaries instead of one.
//!
//! A namespace is one hash tag, hence one cluster slot on one primary: every
//! script of a namespace stays atomic, but a namespace can never use more
//! than one primary. A [`ShardedQueue`] over `n` shards runs `n` namespaces
//! derived from one base name and routes each job to one of them:
//!
//! - a job **with an ordering key** goes to the key's shard (a stable hash of
//!   the key, the same in every process), so all jobs of a key, in every
//!   queue, meet in one namespace and per-key order holds exactly as on one
//!   namespace;
//! - a job **with a limit key** (and no ordering key) goes to the limit
//!   key's shard, so a key's limits are exact (see [`crate::flow`]);
//! - a job **with a dedup key** (and neither of those) goes to the dedup
//!   key's shard, so deduplication holds across shards;
//! - **other jobs** are spread round-robin, one enqueue call (a batch) to one
//!   shard, so a batch stays atomic per chunk and in FIFO order.
//!
//! Claims visit the shards in turn, starting at a different shard on every
//! call, so every shard is drained fairly. Counts, dead letters, requeue,
//! pause and the list of queues are aggregated over the shards.
//!
//! # What is global and what is per shard
//!
//! | property | scope |
//! |---|---|
//! | each job claimed by one holder at a time, fencing (`LeaseLost`) | global (a job lives in one shard) |
//! | per-key order (ordering keys, across queues) | global |
//! | deduplication | global, unless the job also has an ordering or limit key (then per shard) |
//! | per-key limits ([`crate::flow`]) | global, unless the job also has an ordering key (then per shard) |
//! | queue-wide limits | **split**: each shard enforces its share, the shares sum to the limit |
//! | priority order, FIFO within a priority | **per shard**: a claim may return a lower-priority or newer job of one shard while another shard holds older or higher ones |
//! | lease ids (fencing tokens) | per shard: grow within a shard, not comparable across shards |
//! | pause, counts, dead letters, requeue, queue list | global (applied to / summed over every shard) |
//! | schedules, worker registry | per namespace: use [`ShardedQueue::shards`]`[0]` for schedules |
//! | batches, trees, dependencies ([`crate::workflow`]) | **one shard each**: a batch by its id, a tree by its root's key, a dependent on its dependencies' shard; a member keyed to another shard is refused |
//!
//! # Placement
//!
//! Shard `i` of `n` for base `b` is the namespace `b.s<i>.<k>` with the
//! smallest `k` whose slot lies in the middle half of the `i`-th of `n`
//! equal slot ranges. The names depend only on `b` and `n`, never on the
//! cluster's current layout, so every process computes the same shards. On a
//! cluster whose slots are split evenly between its primaries (what
//! `redis-cli --cluster create` and `--cluster rebalance` produce), `n` equal
//! to the number of primaries puts one shard on each primary. Check with
//! [`ShardedQueue::placement`] and `CLUSTER KEYSLOT`/`CLUSTER SHARDS`.
//! Changing `n` moves work to other namespaces: drain the queue first.
//!
//! # Workers
//!
//! The seed [`Queue`](crate::Queue) trait is implemented (claims rotate over
//! the shards), and so is the worker runtime: typed
//! [`ShardedQueue::push`] and `Worker::new(sharded, …)`, whose claims rotate
//! over the shards and which is woken by any shard (see the
//! [worker module docs](crate::worker#backends)). One worker per shard
//! (`Worker::new(sharded.shards()[i].clone(), …)`) still works, and keeps
//! hand-off parking, at the price of a process per shard or idle slots on
//! quiet shards.

mod admin;
mod durable;
mod marker;
mod patience;
mod seed;

pub(crate) use patience::{ShardClaim, SHARD_PATIENCE};

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::keys::Keys;
use crate::limits::check_namespace;
use crate::{NewJob, QueueError, RedisQueue, RedisQueueBuilder};

/// Redis Cluster's number of hash slots.
const SLOTS: usize = 16384;
/// The most shards one queue may have.
pub const MAX_SHARDS: usize = 64;

/// One queue over several namespaces; see the [module docs](self). Cheap to
/// clone: clones share the connections and the shard rotation.
#[derive(Clone)]
pub struct ShardedQueue {
    inner: Arc<Shards>,
}

struct Shards {
    base: String,
    shards: Vec<RedisQueue>,
    next_enqueue: AtomicUsize,
    next_claim: AtomicUsize,
    /// Job id → shard, for jobs claimed through the seed trait.
    held: crate::remembered::Remembered<usize>,
    /// By shard: a seed-trait claim that outlasted the patience has not
    /// answered yet, so that shard is not asked again meanwhile (`seed.rs`).
    late_claims: Vec<AtomicBool>,
    /// How many `Worker`s were made on this queue: the first keeps its
    /// identity, each later one takes its own (`RedisQueue::identity`).
    workers_made: AtomicU32,
}

impl std::fmt::Debug for ShardedQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedQueue")
            .field("base", &self.inner.base)
            .field("shards", &self.inner.shards.len())
            .finish_non_exhaustive()
    }
}

impl ShardedQueue {
    /// Connect `shards` namespaces (1 to [`MAX_SHARDS`]) derived from
    /// `base`, each with `builder`'s settings (its own namespace is not
    /// used) and one worker identity for all: the builder's, or a fresh one.
    /// Safe to race against a deadline, as
    /// [`RedisQueueBuilder::connect`] is: what it connects after its caller
    /// stopped waiting, it closes.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redq::QueueError> {
    /// use redq::{RedisQueue, ShardedQueue};
    /// let url = "redis-cluster://10.0.0.1:6379?node=10.0.0.2:6379&node=10.0.0.3:6379";
    /// let orders = ShardedQueue::connect(RedisQueue::builder(url), "orders", 3).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(
        builder: RedisQueueBuilder,
        base: &str,
        shards: usize,
    ) -> Result<ShardedQueue, QueueError> {
        Self::connect_with_marks(builder, base, shards, Marks::Write).await
    }

    /// The shards connected, then their marks written or checked, in a task
    /// of its own (`unwaited.rs`) so a caller may stop waiting.
    async fn connect_with_marks(
        builder: RedisQueueBuilder,
        base: &str,
        shards: usize,
        marks: Marks,
    ) -> Result<ShardedQueue, QueueError> {
        let base = base.to_owned();
        crate::unwaited::connect_in_task(async move {
            let queue = Self::connect_unmarked(builder, &base, shards).await?;
            match marks {
                Marks::Write => marker::mark(queue.shards(), &base, shards).await,
                Marks::Check => {
                    if let Err(refused) = marker::check(queue.shards(), &base, shards).await {
                        close_all(queue.shards()).await;
                        return Err(refused);
                    }
                }
            }
            Ok(queue)
        })
        .await
    }

    /// The shards connected, nothing written.
    async fn connect_unmarked(
        builder: RedisQueueBuilder,
        base: &str,
        shards: usize,
    ) -> Result<ShardedQueue, QueueError> {
        if shards == 0 || shards > MAX_SHARDS {
            return Err(QueueError::invalid(
                "shard count",
                shards.to_string(),
                format!("1 to {MAX_SHARDS}"),
            ));
        }
        check_namespace(base)?;
        let names = shard_namespaces(base, shards)?;
        // Each shard has its own small pool: a handle shares nothing with
        // another but the settings, so a shard whose primary fails over
        // does not hold up the others' connections.
        let first = builder.clone().namespace(&names[0]).connect().await?;
        let identity = first.identity();
        let mut handles = vec![first];
        for name in &names[1..] {
            let shard = builder
                .clone()
                .namespace(name)
                .identity(identity.node, identity.instance)
                .connect()
                .await;
            match shard {
                Ok(shard) => handles.push(shard),
                Err(e) => {
                    close_all(&handles).await;
                    return Err(e);
                }
            }
        }
        for handle in &handles {
            handle.identity_taken_by_shards();
        }
        Ok(ShardedQueue::over(base, handles))
    }

    /// [`connect`](Self::connect) for an operator's tool (a console, a
    /// dashboard): it writes nothing, and refuses a shard count that the
    /// queue's own producers and workers did not connect with (each
    /// [`connect`](Self::connect) marks its shards with its count), since
    /// the namespaces of another count may overlap with the right ones and
    /// show a plausible part of the queue. Shards no handle of this version
    /// marked yet are not checked.
    pub async fn attach(
        builder: RedisQueueBuilder,
        base: &str,
        shards: usize,
    ) -> Result<ShardedQueue, QueueError> {
        Self::connect_with_marks(builder, base, shards, Marks::Check).await
    }

    /// A queue over `handles`, the shards of `base`, with nothing held yet.
    fn over(base: &str, handles: Vec<RedisQueue>) -> ShardedQueue {
        ShardedQueue {
            inner: Arc::new(Shards {
                base: base.to_owned(),
                late_claims: handles.iter().map(|_| AtomicBool::new(false)).collect(),
                shards: handles,
                next_enqueue: AtomicUsize::new(rand::random::<u32>() as usize),
                next_claim: AtomicUsize::new(rand::random::<u32>() as usize),
                held: crate::remembered::Remembered::new(),
                workers_made: AtomicU32::new(0),
            }),
        }
    }

    /// This queue for one more `Worker`: itself for the first, else every
    /// shard under one fresh identity (as [`RedisQueue::identity`] says).
    pub(crate) fn for_a_worker(&self) -> ShardedQueue {
        if self.inner.workers_made.fetch_add(1, Ordering::Relaxed) == 0 {
            return self.clone();
        }
        let node = self.inner.shards[0].identity().node;
        let identity = crate::WorkerIdentity {
            node,
            instance: crate::WorkerIdentity::unique().instance,
        };
        let handles = self
            .inner
            .shards
            .iter()
            .map(|shard| shard.with_identity(identity))
            .collect();
        ShardedQueue::over(&self.inner.base, handles)
    }

    /// The base name the shard namespaces derive from.
    pub fn base(&self) -> &str {
        &self.inner.base
    }

    /// The shards, one handle per namespace: run a worker on each, or use
    /// one for calls that are per namespace (schedules).
    pub fn shards(&self) -> &[RedisQueue] {
        &self.inner.shards
    }

    /// Each shard's namespace and its cluster hash slot.
    pub fn placement(&self) -> Vec<(String, u16)> {
        self.inner
            .shards
            .iter()
            .map(|shard| (shard.namespace().to_owned(), slot_of(shard.namespace())))
            .collect()
    }

    /// The shard of an ordering (or limit, or dedup) key: FNV-1a of its bytes modulo
    /// the shard count, identical in every process and version.
    pub fn shard_of_key(&self, key: &str) -> usize {
        (fnv1a(key.as_bytes()) % self.inner.shards.len() as u64) as usize
    }

    /// Enqueue a batch: keyed jobs to their key's shard, the rest to the
    /// next shard in turn. Every job is validated before anything is sent;
    /// a batch that spans shards is sent one shard at a time (each part
    /// atomic per chunk), and the parts after a failed one are not sent.
    /// Outcomes come back in input order.
    pub async fn add_batch(
        &self,
        queue: &str,
        jobs: Vec<NewJob>,
    ) -> Result<Vec<crate::Enqueued>, QueueError> {
        let unkeyed = self.next_unkeyed();
        let mut groups: Vec<Vec<(usize, NewJob)>> = vec![Vec::new(); self.len()];
        for (position, job) in jobs.into_iter().enumerate() {
            groups[self.route(&job, unkeyed)].push((position, job));
        }
        let used = groups.iter().filter(|g| !g.is_empty()).count();
        if used > 1 {
            // Validate the whole batch before any part of it is written.
            for (_, job) in groups.iter().flatten() {
                self.inner.shards[0].encode(job)?;
            }
        }
        let total = groups.iter().map(Vec::len).sum();
        let mut outcomes: Vec<Option<crate::Enqueued>> = vec![None; total];
        for (shard, group) in groups.into_iter().enumerate() {
            if group.is_empty() {
                continue;
            }
            let (positions, jobs): (Vec<usize>, Vec<NewJob>) = group.into_iter().unzip();
            let done = self.inner.shards[shard].add_batch(queue, jobs).await?;
            for (position, outcome) in positions.into_iter().zip(done) {
                outcomes[position] = Some(outcome);
            }
        }
        if used == 0 {
            // Still refuse a bad queue name, as a one-namespace queue does.
            crate::limits::check_queue_name(queue)?;
        }
        outcomes
            .into_iter()
            .map(|o| o.ok_or_else(|| QueueError::Protocol("enqueue returned no outcome".into())))
            .collect()
    }

    /// Enqueue one job; see [`ShardedQueue::add_batch`].
    pub async fn add(&self, queue: &str, job: NewJob) -> Result<crate::Enqueued, QueueError> {
        if job.waits_for_jobs() {
            return self.add_dependent(queue, job).await;
        }
        let mut outcomes = self.add_batch(queue, vec![job]).await?;
        outcomes
            .pop()
            .ok_or_else(|| QueueError::Protocol("enqueue returned no outcome".into()))
    }

    /// The shard of one job: its ordering key's, else its limit key's
    /// (so a limit key's jobs meet on one shard and its limit is exact),
    /// else its dedup key's, else `unkeyed` (the call's turn in the
    /// rotation).
    fn route(&self, job: &NewJob, unkeyed: usize) -> usize {
        let key = job
            .ordering_key
            .as_deref()
            .or(job.limit_key.as_deref())
            .or(job.dedup.as_ref().map(|(key, _)| key.as_str()));
        match key {
            Some(key) => self.shard_of_key(key),
            None => unkeyed,
        }
    }

    /// The next shard in turn for a call's unkeyed jobs.
    fn next_unkeyed(&self) -> usize {
        self.inner.next_enqueue.fetch_add(1, Ordering::Relaxed) % self.len()
    }

    fn len(&self) -> usize {
        self.inner.shards.len()
    }

    /// The shard indices in claim order for one call: each call starts one
    /// further along, so every shard gets claimed from first in turn.
    pub(crate) fn claim_order(&self) -> impl Iterator<Item = usize> {
        let n = self.len();
        let start = self.inner.next_claim.fetch_add(1, Ordering::Relaxed) % n;
        (0..n).map(move |i| (start + i) % n)
    }
}

/// The namespaces of `n` shards of `base`; see "Placement" in the module docs.
pub fn shard_namespaces(base: &str, n: usize) -> Result<Vec<String>, QueueError> {
    (0..n)
        .map(|i| {
            // Middle half of range i: quarters 4i+1 and 4i+2 of 4n.
            let wanted = |slot: u16| {
                let quarter = slot as usize * 4 * n / SLOTS;
                quarter == 4 * i + 1 || quarter == 4 * i + 2
            };
            let name = (0u32..)
                .map(|k| format!("{base}.s{i}.{k}"))
                .find(|name| wanted(slot_of(name)))
                .expect("half of every slot range is acceptable: a suffix is found quickly");
            check_namespace(&name)?;
            Ok(name)
        })
        .collect()
}

/// What a sharded connect does with the shard-count marks
/// (`marker.rs`): a queue's own producers and workers write them, an
/// operator's tool only checks them.
#[derive(Clone, Copy)]
enum Marks {
    Write,
    Check,
}

/// Close handles connected for a queue that is not handed out (a later
/// shard failed to connect, or the count was refused): dropped, their
/// connections would stay open and reconnecting with nothing to use them.
async fn close_all(handles: &[RedisQueue]) {
    for handle in handles {
        handle.close().await;
    }
}

impl crate::unwaited::Closable for ShardedQueue {
    async fn close_unused(self) {
        close_all(self.shards()).await;
    }
}

/// The cluster slot of a namespace's keys (`{ns}:…`).
pub fn slot_of(namespace: &str) -> u16 {
    fred::util::redis_keyslot(Keys::new(namespace).jobs().as_bytes())
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_namespaces_fall_in_the_middle_of_their_slot_range() {
        for n in 1..=8 {
            let names = shard_namespaces("orders", n).unwrap();
            assert_eq!(names.len(), n);
            for (i, name) in names.iter().enumerate() {
                let slot = slot_of(name) as usize;
                assert_eq!(slot * n / SLOTS, i, "{name} (slot {slot}) of {n}");
            }
        }
        assert_eq!(
            shard_namespaces("orders", 3).unwrap(),
            shard_namespaces("orders", 3).unwrap(),
            "the same in every process"
        );
    }

    #[test]
    fn too_long_a_base_is_refused() {
        assert!(shard_namespaces(&"x".repeat(128), 2).is_err());
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
