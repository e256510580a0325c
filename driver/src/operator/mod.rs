//! The operator API, [`Operator`]: documented on the type, which is
//! public while this module is not.

mod flow;
mod functions;
mod kept;
pub(crate) mod merge;
mod notes;
mod reads;
mod record_format;
mod schedules;
mod search;
mod surgery;
mod workers;
mod workflow;
mod writes;

use crate::{RedisQueue, ShardedQueue};

/// The operator API: what the `redq` subcommands, the console and any
/// dashboard call to look at queues and change them (counts, listings,
/// dead letters, pause), over one namespace or over the `n` shards of a
/// [`ShardedQueue`] alike.
///
/// # Why one type, not a trait
///
/// An [`Operator`] holds the namespaces it covers: one for a [`RedisQueue`],
/// `n` for a [`ShardedQueue`]. Every call is written once, over that list:
/// reads merge what the shards hold (sums, a union, listings merged in the
/// order one namespace lists them), writes go to the shard(s) a change
/// concerns, and bulk work reports its progress over all of them. With one
/// namespace each call is exactly that namespace's call, so its results are
/// what [`RedisQueue`]'s own operator methods give. A trait implemented
/// twice would write every call twice (the duplication this replaces), and
/// its async methods taking progress callbacks could not be used through
/// `dyn`, which a console choosing `--shards` at run time needs.
///
/// [`RedisQueue`]'s per-namespace methods (`admin.rs`) stay the building
/// blocks; [`ShardedQueue`]'s operator methods are this type's.
///
/// ```no_run
/// # async fn demo() -> Result<(), redq::QueueError> {
/// use redq::{Operator, RedisQueue, ShardedQueue};
/// let url = "redis://127.0.0.1:6379";
/// let one = Operator::from(RedisQueue::connect(url).await?);
/// let many = Operator::from(ShardedQueue::connect(RedisQueue::builder(url), "orders", 3).await?);
/// for operator in [one, many] {
///     let counts = operator.counts("emails").await?;
///     let requeued = operator
///         .requeue_all_dead("emails", |done, left| println!("{done} requeued, {left} left"))
///         .await?;
///     println!("{} waiting; {requeued} requeued", counts.waiting);
/// }
/// # Ok(()) }
/// ```
///
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct Operator {
    /// One handle per namespace, in shard order.
    shards: Vec<RedisQueue>,
    /// With shards: the driver's router, so an enqueue lands where
    /// producers would put it (ordering and dedup keys pick their shard).
    router: Option<ShardedQueue>,
}

impl From<RedisQueue> for Operator {
    fn from(queue: RedisQueue) -> Operator {
        Operator {
            shards: vec![queue],
            router: None,
        }
    }
}

impl From<ShardedQueue> for Operator {
    fn from(sharded: ShardedQueue) -> Operator {
        Operator {
            shards: sharded.shards().to_vec(),
            router: Some(sharded),
        }
    }
}

impl RedisQueue {
    /// The operator calls over this namespace.
    pub fn operator(&self) -> Operator {
        Operator::from(self.clone())
    }
}

impl ShardedQueue {
    /// The operator calls over every shard.
    pub fn operator(&self) -> Operator {
        Operator::from(self.clone())
    }
}

impl Operator {
    /// Every handle, in shard order (one without sharding).
    pub fn shards(&self) -> &[RedisQueue] {
        &self.shards
    }

    /// Whether this covers the shards of a [`ShardedQueue`].
    pub fn is_sharded(&self) -> bool {
        self.router.is_some()
    }

    /// The shard namespaces, in order; empty without sharding (nothing to
    /// tell apart).
    pub fn shard_namespaces(&self) -> Vec<String> {
        if !self.is_sharded() {
            return Vec::new();
        }
        self.shards
            .iter()
            .map(|s| s.namespace().to_owned())
            .collect()
    }

    /// The namespace, or the base name of the shards.
    pub fn namespace(&self) -> &str {
        match &self.router {
            Some(router) => router.base(),
            None => self.shards[0].namespace(),
        }
    }

    /// The URL connected to, with any password removed.
    pub fn redacted_url(&self) -> &str {
        self.shards[0].redacted_url()
    }
}
