//! Where the console reads and writes: one namespace (`--shards 1`, the
//! default), or the `n` shard namespaces a `redq::ShardedQueue` spreads one
//! queue over (`--shards n`).
//!
//! Every screen and subcommand goes through a [`Target`], which is the
//! driver's [`redq::Operator`] (every read, merge and write over the shards
//! is the driver's; `Target` derefs to it) plus what only the console
//! needs: `--shards 1` meaning "this namespace", shard tags telling
//! which shard a row came from (`tags`, [`shard_index`]), and workers
//! registered on several shards merged into one row each (`workers`).

mod counts;
mod tags;
mod workers;

use redq::{Operator, QueueError, RedisQueue, ShardedQueue};

/// The console's handle on the queues: the driver's operator calls, over
/// one namespace or the shards.
#[derive(Clone, Debug)]
pub struct Target {
    operator: Operator,
}

impl std::ops::Deref for Target {
    type Target = Operator;

    fn deref(&self) -> &Operator {
        &self.operator
    }
}

impl Target {
    /// One namespace, as the console has always watched.
    pub fn single(queue: RedisQueue) -> Target {
        Target {
            operator: Operator::from(queue),
        }
    }

    /// The shards of `base` on the builder's URL. `ShardedQueue::attach`
    /// names them with `redq::shard_namespaces`, so they are exactly the
    /// namespaces producers and workers use, writes nothing, and refuses an
    /// `n` the producers' and workers' marks contradict (a wrong count
    /// would show part of the queue). `n` = 1 is [`Target::single`]
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
        let sharded = ShardedQueue::attach(builder, base, n).await?;
        Ok(Target {
            operator: Operator::from(sharded),
        })
    }

    /// The index of the shard with this namespace; `None` without sharding.
    pub fn shard_of(&self, namespace: &str) -> Option<usize> {
        shard_index(&self.shard_namespaces(), namespace)
    }
}

/// The position of `namespace` among `shards` (empty: not sharded).
pub fn shard_index(shards: &[String], namespace: &str) -> Option<usize> {
    shards.iter().position(|s| s == namespace)
}
