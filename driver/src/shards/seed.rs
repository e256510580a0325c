//! The seed [`Queue`] trait over shards.
//!
//! Enqueue routes as [`ShardedQueue::add_batch`] does. A claim visits the
//! shards in turn (starting one further along on every call) until `limit`
//! jobs are found; a shard that fails (its primary failing over) is skipped
//! while others answer, so one shard's outage does not stop the rest.
//! `complete`, `retry` and `fail` go to the shard the job was claimed from,
//! fenced exactly as on one namespace; an id this handle did not claim is
//! looked up in every shard.

use std::time::Duration;

use serde_json::Value;

use super::ShardedQueue;
use crate::{Job, Queue, QueueError};

impl Queue for ShardedQueue {
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
        // One call claims at most MAX_CLAIM in all, as over one namespace.
        let limit = crate::limits::claim_count(limit);
        let mut jobs: Vec<Job> = Vec::new();
        let mut answered = false;
        let mut first_error = None;
        for shard in self.claim_order() {
            let left = limit.saturating_sub(jobs.len());
            if answered && left == 0 {
                break;
            }
            // `left` is 0 here only for a limit of 0: the first shard checks
            // the queue name and lease and answers with no jobs, without a
            // round trip, as a single namespace does.
            match Queue::claim(&self.inner.shards[shard], queue, left, lease).await {
                Ok(got) => {
                    answered = true;
                    self.inner
                        .held
                        .remember(got.iter().map(|job| (job.id.clone(), shard)));
                    jobs.extend(got);
                }
                // The same input is refused by every shard.
                Err(e @ QueueError::Invalid { .. }) => return Err(e),
                Err(e) => {
                    tracing::warn!(shard, error = %e, "claim from one shard failed; trying the others");
                    first_error.get_or_insert(e);
                }
            }
        }
        match (answered, first_error) {
            (false, Some(e)) => Err(e),
            _ => Ok(jobs),
        }
    }

    async fn complete(&self, id: &str) -> Result<(), QueueError> {
        crate::limits::check_id(id)?;
        if let Some(shard) = self.inner.held.get(id) {
            let result = self.inner.shards[shard].complete(id).await;
            self.inner.held.forget_unless_transient(id, &result);
            return result;
        }
        // Only the shard holding the job can object; elsewhere it is unknown,
        // and completing an unknown job succeeds.
        for shard in self.shards() {
            shard.complete(id).await?;
        }
        Ok(())
    }

    async fn retry(&self, id: &str, delay: Duration, error: &str) -> Result<(), QueueError> {
        crate::limits::check_id(id)?;
        if let Some(shard) = self.inner.held.get(id) {
            let result = self.inner.shards[shard].retry(id, delay, error).await;
            self.inner.held.forget_unless_transient(id, &result);
            return result;
        }
        for shard in self.shards() {
            match shard.retry(id, delay, error).await {
                Err(QueueError::JobNotFound { .. }) => continue,
                other => return other,
            }
        }
        Err(QueueError::JobNotFound { id: id.to_owned() })
    }

    async fn fail(&self, id: &str, error: &str) -> Result<(), QueueError> {
        crate::limits::check_id(id)?;
        if let Some(shard) = self.inner.held.get(id) {
            let result = self.inner.shards[shard].fail(id, error).await;
            self.inner.held.forget_unless_transient(id, &result);
            return result;
        }
        for shard in self.shards() {
            match shard.fail(id, error).await {
                Err(QueueError::JobNotFound { .. }) => continue,
                other => return other,
            }
        }
        Err(QueueError::JobNotFound { id: id.to_owned() })
    }

    async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        let mut soonest: Option<Duration> = None;
        for shard in self.shards() {
            if let Some(due) = Queue::next_due(shard, queue).await? {
                soonest = Some(soonest.map_or(due, |s| s.min(due)));
            }
        }
        Ok(soonest)
    }
}
