//! Durable enqueue: wait until replicas hold the job before returning.
//!
//! Redis replicates asynchronously. An enqueue acknowledged by a primary
//! that is killed before its replica received the write is lost when the
//! replica is promoted (Redis Cluster, Sentinel). [`RedisQueue::add_durable`]
//! follows the enqueue with `WAIT numreplicas timeout` on the primary that
//! owns the namespace's slot, so the caller learns how many replicas hold
//! the job. `WAIT` counts the writes of the connection it runs on; the
//! enqueue went out on one of the handle's pooled connections (which one is
//! the pool's choice), so `WAIT` runs on each of them and the smallest
//! count is reported: a lower bound for this job.
//!
//! Not a consensus commit: a replica that acknowledged may still lose the
//! write if it fails too, and a promoted replica that had not yet received
//! it still wins (Redis has no quorum writes). `WAIT` narrows the window; it
//! does not close it.
//!
//! `WAIT` holds the connection it runs on for one replication round trip,
//! or for the whole `timeout` when too few replicas are connected (right
//! after a failover the promoted primary has none): every other command on
//! that connection waits behind it. Give durable enqueues their own handle,
//! e.g. `RedisQueue::builder(url).namespace(ns).pool_size(1)`, so claims and
//! acks of the same process never queue behind a `WAIT`.

use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use crate::scripts::reply;
use crate::{Enqueued, NewJob, QueueError, RedisQueue};

/// What [`RedisQueue::add_durable`] achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a job held by fewer replicas than asked for may be lost in a failover"]
pub struct Durable {
    /// The enqueue's own outcome (the job is enqueued either way).
    pub enqueued: Enqueued,
    /// How many replicas acknowledged the write (at least).
    pub replicas: u64,
    /// Whether `replicas` reached the number asked for within the timeout.
    pub confirmed: bool,
}

impl RedisQueue {
    /// Enqueue `job`, then wait up to `timeout` until at least `replicas`
    /// replicas of the namespace's primary acknowledged it (`WAIT`). The
    /// job is enqueued even when the wait falls short: check
    /// [`Durable::confirmed`]. `WAIT` runs on each of the handle's pooled
    /// connections (the enqueue went out on one of them) and the smallest
    /// count is reported; docs/cluster.md has the measured cost and what it
    /// does not promise.
    pub async fn add_durable(
        &self,
        queue: &str,
        job: NewJob,
        replicas: u32,
        timeout: Duration,
    ) -> Result<Durable, QueueError> {
        let wait_ms = crate::limits::check_duration("replication timeout", timeout)?;
        let enqueued = self.add(queue, job).await?;
        let acked = self.wait_replicas(replicas, wait_ms).await?;
        Ok(Durable {
            enqueued,
            replicas: acked,
            confirmed: acked >= u64::from(replicas),
        })
    }

    /// `WAIT replicas wait_ms` on every pooled connection to the primary of
    /// this namespace's slot; the smallest count.
    async fn wait_replicas(&self, replicas: u32, wait_ms: u64) -> Result<u64, QueueError> {
        let slot = fred::util::redis_keyslot(self.inner.keys.jobs().as_bytes());
        let waits = self.inner.pool.clients().iter().map(|client| async move {
            // Marked non-blocking: fred's "blocking" handling is for BLPOP
            // and friends; WAIT returns within `wait_ms`, under the command
            // timeout the connection already has.
            let command = CustomCommand::new_static("WAIT", ClusterHash::Custom(slot), false);
            let value: Value = client
                .custom(
                    command,
                    vec![Value::from(replicas as i64), Value::from(wait_ms as i64)],
                )
                .await
                .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
            reply::int(&value).map(|n| n.max(0) as u64)
        });
        let counts = futures::future::try_join_all(waits).await?;
        Ok(counts.into_iter().min().unwrap_or(0))
    }
}
