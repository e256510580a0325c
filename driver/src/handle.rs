//! The handle: [`RedisQueue`] and what its clones share.
//!
//! Modules depend one way, so that each can be read without the ones above
//! it: `coalesce.rs` (batching, knows no handle; it sends through its
//! `SendBatch` trait) <- this module (the shared state, which holds a
//! coalescer) <- `connect.rs` (builds a handle) <- `queue.rs`, `admin.rs`,
//! … (the calls on a handle; `queue.rs` implements `SendBatch`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use fred::clients::Pool;

use crate::identity::WorkerIdentity;
use crate::keys::{Keys, QueueKeys};

/// A handle on the queues of one namespace in one Redis. Cheap to clone:
/// clones share the connection pool, and the worker identity recorded on
/// the leases they take (a `Worker` takes one of its own but for the first
/// on a handle: [`RedisQueue::identity`]).
#[derive(Clone)]
pub struct RedisQueue {
    pub(crate) inner: Arc<Inner>,
    pub(crate) identity: WorkerIdentity,
}

impl std::fmt::Debug for RedisQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisQueue")
            .field("url", &self.inner.url)
            .field("namespace", &self.inner.namespace)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub pool: Pool,
    /// Kept to open dedicated connections (a worker's wake-up subscriber).
    /// Its `Debug` would print the password: never log it.
    pub client_builder: fred::types::Builder,
    pub keys: Keys,
    pub namespace: String,
    pub url: String,
    /// The identity the handle was built with (`RedisQueueBuilder::identity`).
    pub identity: WorkerIdentity,
    /// How many `Worker`s were made on this handle and its clones: the
    /// first keeps the handle's identity, each later one takes its own.
    pub workers_made: std::sync::atomic::AtomicU32,
    pub payload_limit: usize,
    pub timeout: Duration,
    pub queue_keys: RwLock<HashMap<String, Arc<QueueKeys>>>,
    /// Batches concurrent single enqueues (see `coalesce.rs`).
    pub coalescer: crate::coalesce::Coalescer,
    /// Leases this handle took, so the seed trait's id-only calls stay fenced.
    pub held: crate::remembered::Remembered<crate::Lease>,
    /// Who operator actions are recorded as (`RedisQueueBuilder::actor`).
    pub actor: Option<String>,
    /// How this handle calls the scripts (settled at connect).
    pub script_calls: crate::scripts::CallMode,
    /// The record format enqueues write (`crate::record_format`), as
    /// `RecordFormat::to_bits` makes it.
    pub record_format: std::sync::atomic::AtomicU64,
    /// The queues whose acks go to the whole ack script for now, not its
    /// variant (`crate::scripts::variant_route`).
    pub whole_acks: crate::scripts::variant_route::WholeQueues,
    /// The same for claims.
    pub whole_claims: crate::scripts::variant_route::WholeQueues,
    /// Where Redis's clock stands, for the deadline each claim carries.
    pub redis_clock: crate::redis_clock::RedisClock,
}
