//! The backend a configuration chose, behind the seed [`Queue`] trait so
//! that code written against it runs unchanged whatever the deployment
//! picked.

use std::time::Duration;

use serde_json::Value;

use crate::worker::WorkerBackend;
use crate::{Job, MemoryQueue, Operator, Queue, QueueError, RedisQueue, ShardedQueue};

/// The queue [`from_config`](super::from_config) connected. It implements
/// [`Queue`] by passing each call to the backend, and converts into a
/// [`WorkerBackend`], so [`Worker::new`](crate::worker::Worker::new) and
/// [`JobQueue::new`](crate::worker::JobQueue::new) take it as they take each
/// backend; match on it for what only one backend offers
/// ([`ShardedQueue::shards`], [`MemoryQueue::dead_letters`]). Cheap to
/// clone, like each backend.
#[derive(Debug, Clone)]
pub enum ConfiguredQueue {
    /// One namespace in Redis (`shards = 1`, the default).
    Redis(RedisQueue),
    /// Several namespaces in Redis (`shards` above 1).
    Sharded(ShardedQueue),
    /// In process memory (`mode = "inline"`).
    Inline(MemoryQueue),
}

impl ConfiguredQueue {
    /// The operator API over the configured namespaces; `None` in inline
    /// mode, which keeps no dead letters or counts beyond
    /// [`MemoryQueue`]'s own methods.
    pub fn operator(&self) -> Option<Operator> {
        match self {
            ConfiguredQueue::Redis(queue) => Some(Operator::from(queue.clone())),
            ConfiguredQueue::Sharded(queue) => Some(Operator::from(queue.clone())),
            ConfiguredQueue::Inline(_) => None,
        }
    }
}

/// A worker or a typed push handle runs on whichever backend was configured.
impl From<ConfiguredQueue> for WorkerBackend {
    fn from(queue: ConfiguredQueue) -> Self {
        match queue {
            ConfiguredQueue::Redis(queue) => queue.into(),
            ConfiguredQueue::Sharded(queue) => queue.into(),
            ConfiguredQueue::Inline(queue) => queue.into(),
        }
    }
}

/// Every call goes to the backend, with that backend's semantics.
impl Queue for ConfiguredQueue {
    async fn enqueue(&self, queue: &str, payloads: Vec<Value>) -> Result<(), QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => q.enqueue(queue, payloads).await,
            ConfiguredQueue::Sharded(q) => q.enqueue(queue, payloads).await,
            ConfiguredQueue::Inline(q) => q.enqueue(queue, payloads).await,
        }
    }

    async fn enqueue_ordered(
        &self,
        queue: &str,
        jobs: Vec<(String, Value)>,
    ) -> Result<(), QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => q.enqueue_ordered(queue, jobs).await,
            ConfiguredQueue::Sharded(q) => q.enqueue_ordered(queue, jobs).await,
            ConfiguredQueue::Inline(q) => q.enqueue_ordered(queue, jobs).await,
        }
    }

    async fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<Job>, QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => Queue::claim(q, queue, limit, lease).await,
            ConfiguredQueue::Sharded(q) => Queue::claim(q, queue, limit, lease).await,
            ConfiguredQueue::Inline(q) => q.claim(queue, limit, lease).await,
        }
    }

    async fn complete(&self, id: &str) -> Result<(), QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => q.complete(id).await,
            ConfiguredQueue::Sharded(q) => q.complete(id).await,
            ConfiguredQueue::Inline(q) => q.complete(id).await,
        }
    }

    async fn retry(&self, id: &str, delay: Duration, error: &str) -> Result<(), QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => q.retry(id, delay, error).await,
            ConfiguredQueue::Sharded(q) => q.retry(id, delay, error).await,
            ConfiguredQueue::Inline(q) => q.retry(id, delay, error).await,
        }
    }

    async fn fail(&self, id: &str, error: &str) -> Result<(), QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => q.fail(id, error).await,
            ConfiguredQueue::Sharded(q) => q.fail(id, error).await,
            ConfiguredQueue::Inline(q) => q.fail(id, error).await,
        }
    }

    async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        match self {
            ConfiguredQueue::Redis(q) => Queue::next_due(q, queue).await,
            ConfiguredQueue::Sharded(q) => Queue::next_due(q, queue).await,
            ConfiguredQueue::Inline(q) => q.next_due(queue).await,
        }
    }
}
