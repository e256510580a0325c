//! The seed `Queue` trait, and its Redis implementation.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use crate::{Job, Lease, QueueError, RedisQueue};

/// A queue backend.
///
/// One backend holds any number of named queues, each claimed separately, so
/// that different kinds of work can share one store without one starving the
/// other.
pub trait Queue: Send + Sync + 'static {
    /// Queue `payloads` in `queue`, due now.
    fn enqueue(
        &self,
        queue: &str,
        payloads: Vec<Value>,
    ) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// Queue jobs in `queue`, due now, each with its ordering key. A job is
    /// not claimed while another with the same key, queued before it in any
    /// queue, is still waiting, claimed or due to be retried; once that one
    /// is complete or failed, the next is. Jobs with different keys, and jobs
    /// with none, are claimed as they come due.
    fn enqueue_ordered(
        &self,
        queue: &str,
        jobs: Vec<(String, Value)>,
    ) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// Claim up to `limit` due jobs from `queue` for `lease`. None of them is
    /// claimed again until the lease lapses.
    fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> impl Future<Output = Result<Vec<Job>, QueueError>> + Send;

    /// A job is done; it will not be seen again.
    fn complete(&self, id: &str) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// A job is to be tried again after `delay`.
    fn retry(
        &self,
        id: &str,
        delay: Duration,
        error: &str,
    ) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// A job will not be tried again.
    fn fail(&self, id: &str, error: &str) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// How long until the next job in `queue` is due, if one is waiting: how
    /// long a worker with nothing to do may sleep.
    fn next_due(
        &self,
        queue: &str,
    ) -> impl Future<Output = Result<Option<Duration>, QueueError>> + Send;
}

/// The seed trait names jobs by id alone. `RedisQueue` remembers the lease of
/// every job it claimed through this trait, so `complete`, `retry` and `fail`
/// stay fenced: once the lease was reclaimed or the job claimed by someone
/// else, they return [`QueueError::LeaseLost`] and change nothing. For a job
/// whose lease this handle does not remember (claimed with the inherent
/// [`RedisQueue::claim`], or already resolved once), the job's current lease
/// is used only if it is held by this handle's [`crate::WorkerIdentity`];
/// otherwise the call is [`QueueError::LeaseLost`] too.
///
/// `complete` of a job that no longer exists succeeds (a repeated complete
/// is harmless); `retry` and `fail` of one return
/// [`QueueError::JobNotFound`].
impl Queue for RedisQueue {
    async fn enqueue(&self, queue: &str, payloads: Vec<Value>) -> Result<(), QueueError> {
        self.add_batch(queue, crate::options::plain_jobs(payloads))
            .await?;
        Ok(())
    }

    async fn enqueue_ordered(
        &self,
        queue: &str,
        jobs: Vec<(String, Value)>,
    ) -> Result<(), QueueError> {
        self.add_batch(queue, crate::options::ordered_jobs(jobs))
            .await?;
        Ok(())
    }

    async fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<Job>, QueueError> {
        let jobs = RedisQueue::claim(self, queue, limit, lease).await?;
        self.inner
            .held
            .remember(jobs.iter().map(|job| (job.id.clone(), job.lease())));
        Ok(jobs)
    }

    async fn complete(&self, id: &str) -> Result<(), QueueError> {
        let Some(lease) = self.held_lease(id).await? else {
            return Ok(());
        };
        let result = self.ack(&lease).await;
        self.inner.held.forget_unless_transient(id, &result);
        result.map(drop)
    }

    async fn retry(&self, id: &str, delay: Duration, error: &str) -> Result<(), QueueError> {
        let lease = self
            .held_lease(id)
            .await?
            .ok_or_else(|| QueueError::JobNotFound { id: id.to_owned() })?;
        let result = self.nack(&lease, delay, error).await;
        self.inner.held.forget_unless_transient(id, &result);
        result.map(drop)
    }

    async fn fail(&self, id: &str, error: &str) -> Result<(), QueueError> {
        let lease = self
            .held_lease(id)
            .await?
            .ok_or_else(|| QueueError::JobNotFound { id: id.to_owned() })?;
        let result = self.dead_letter(&lease, error).await;
        self.inner.held.forget_unless_transient(id, &result);
        result.map(drop)
    }

    async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        RedisQueue::next_due(self, queue).await
    }
}

impl RedisQueue {
    /// The lease this handle holds on `id`: the one it remembers from a
    /// trait claim, else the job's current lease if this handle's identity
    /// holds it. `None` when the job no longer exists.
    ///
    /// Never "whatever lease is current": after this handle's lease lapsed
    /// and another worker claimed the job, that would complete, retry or
    /// fail the other worker's job.
    async fn held_lease(&self, id: &str) -> Result<Option<Lease>, QueueError> {
        crate::limits::check_id(id)?;
        if let Some(lease) = self.inner.held.get(id) {
            return Ok(Some(lease));
        }
        let Some(meta) = self.stored_meta(id).await? else {
            return Ok(None);
        };
        let me = self.identity;
        let mine = meta.lease_id != 0
            && meta.worker_node == me.node
            && meta.worker_instance == me.instance;
        if !mine {
            return Err(QueueError::LeaseLost {
                id: id.to_owned(),
                lease_id: 0,
            });
        }
        // Fenced by the exact lease read: if it changes before the call
        // lands, the call is refused with LeaseLost.
        Ok(Some(Lease {
            queue: meta.queue,
            id: id.to_owned(),
            lease_id: meta.lease_id,
        }))
    }
}
