//! Where the console reads and writes: one namespace (`--shards 1`, the
//! default), or the `n` shard namespaces a `redq::ShardedQueue` spreads one
//! queue over (`--shards n`).
//!
//! Every screen and subcommand goes through a [`Target`], so they all see
//! one aggregated queue: `reads` merges what the shards hold, `writes` sends
//! each change to the shard(s) it concerns. With one namespace every call is
//! the plain `RedisQueue` call, so the output is what it always was.

mod reads;
mod writes;

use redq::{QueueError, RedisQueue, ShardedQueue};

pub use reads::merge_order;

/// The console's handles on the queues.
#[derive(Clone, Debug)]
pub struct Target {
    /// One handle per namespace, in shard order.
    shards: Vec<RedisQueue>,
    /// With several shards: the driver's own router, so an enqueue from the
    /// console lands where producers would put it (ordering and dedup keys
    /// pick their shard).
    router: Option<ShardedQueue>,
}

impl Target {
    /// One namespace, as the console has always watched.
    pub fn single(queue: RedisQueue) -> Target {
        Target {
            shards: vec![queue],
            router: None,
        }
    }

    /// The shards of `base` on the builder's URL. `ShardedQueue::connect`
    /// names them with `redq::shard_namespaces`, so they are exactly the
    /// namespaces producers and workers use. `n` = 1 is [`Target::single`]
    /// on `base` itself: a one-shard `ShardedQueue` lives elsewhere
    /// (`base.s0.k`), and `--shards 1` must keep meaning "this namespace".
    pub async fn connect(
        builder: redq::RedisQueueBuilder,
        base: &str,
        n: usize,
    ) -> Result<Target, QueueError> {
        if n == 1 {
            return Ok(Target::single(builder.namespace(base).connect().await?));
        }
        let router = ShardedQueue::connect(builder, base, n).await?;
        Ok(Target {
            shards: router.shards().to_vec(),
            router: Some(router),
        })
    }

    /// Every handle, in shard order (one without sharding).
    pub fn shards(&self) -> &[RedisQueue] {
        &self.shards
    }

    /// Whether several shards are aggregated.
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

    /// The index of the shard with this namespace; `None` without sharding.
    pub fn shard_of(&self, namespace: &str) -> Option<usize> {
        shard_index(&self.shard_namespaces(), namespace)
    }

    /// The base namespace (the only one without sharding).
    pub fn namespace(&self) -> &str {
        match &self.router {
            Some(router) => router.base(),
            None => self.shards[0].namespace(),
        }
    }

    /// The URL without its password.
    pub fn redacted_url(&self) -> &str {
        self.shards[0].redacted_url()
    }
}

/// The position of `namespace` among `shards` (empty: not sharded).
pub fn shard_index(shards: &[String], namespace: &str) -> Option<usize> {
    shards.iter().position(|s| s == namespace)
}
