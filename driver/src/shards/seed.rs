//! The seed [`Queue`] trait over shards.
//!
//! Enqueue routes as [`ShardedQueue::add_batch`] does. A claim visits the
//! shards in turn (starting one further along on every call) until `limit`
//! jobs are found; a shard that fails (its primary failing over) is skipped
//! while others answer, so one shard's outage does not stop the rest. A
//! shard that does not answer within [`SHARD_PATIENCE`] (its primary hangs)
//! is left to answer in the background and not asked again until it has;
//! the jobs such a late claim leases are given back (released: due at once,
//! no attempt counted), since the caller has gone on without them.
//! `complete`, `retry` and `fail` go to the shard the job was claimed from,
//! fenced exactly as on one namespace; an id this handle did not claim is
//! looked up in every shard at once. `next_due` asks every shard at once,
//! each for at most the patience.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::patience::LateClaim;
use super::{ShardClaim, ShardedQueue, Shards, SHARD_PATIENCE};
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
            if self.inner.late_claims[shard].load(Ordering::Acquire) {
                first_error.get_or_insert(QueueError::Timeout(SHARD_PATIENCE));
                continue;
            }
            // `left` is 0 here only for a limit of 0: the first shard checks
            // the queue name and lease and answers with no jobs, without a
            // round trip, as a single namespace does.
            let name = queue.to_owned();
            let claim = move |handle: crate::RedisQueue| async move {
                Queue::claim(&handle, &name, left, lease).await
            };
            match self.claim_patiently(shard, claim).await {
                ShardClaim::Answered(Ok(got)) => {
                    answered = true;
                    self.inner
                        .held
                        .remember(got.iter().map(|job| (job.id.clone(), shard)));
                    jobs.extend(got);
                }
                // The same input is refused by every shard.
                ShardClaim::Answered(Err(e @ QueueError::Invalid { .. })) => return Err(e),
                ShardClaim::Answered(Err(e)) => {
                    tracing::warn!(shard, error = %e, "claim from one shard failed; trying the others");
                    first_error.get_or_insert(e);
                }
                ShardClaim::Late(claim) => {
                    give_back_when_answered(self.inner.clone(), shard, claim);
                    first_error.get_or_insert(QueueError::Timeout(SHARD_PATIENCE));
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
        let results = self.on_every_shard(|shard| shard.complete(id)).await;
        results.into_iter().collect()
    }

    async fn retry(&self, id: &str, delay: Duration, error: &str) -> Result<(), QueueError> {
        crate::limits::check_id(id)?;
        if let Some(shard) = self.inner.held.get(id) {
            let result = self.inner.shards[shard].retry(id, delay, error).await;
            self.inner.held.forget_unless_transient(id, &result);
            return result;
        }
        let results = self
            .on_every_shard(|shard| shard.retry(id, delay, error))
            .await;
        holders_answer(id, results)
    }

    async fn fail(&self, id: &str, error: &str) -> Result<(), QueueError> {
        crate::limits::check_id(id)?;
        if let Some(shard) = self.inner.held.get(id) {
            let result = self.inner.shards[shard].fail(id, error).await;
            self.inner.held.forget_unless_transient(id, &result);
            return result;
        }
        let results = self.on_every_shard(|shard| shard.fail(id, error)).await;
        holders_answer(id, results)
    }

    /// The soonest over the shards that answer, asked all at once, each for
    /// at most the shard patience: one shard failing over or hung must not
    /// keep the caller (a worker going idle) from sleeping on the others.
    async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        let asks = self
            .on_every_shard(|shard| async move {
                tokio::time::timeout(SHARD_PATIENCE, shard.next_due(queue))
                    .await
                    .unwrap_or(Err(QueueError::Timeout(SHARD_PATIENCE)))
            })
            .await;
        let mut soonest: Option<Duration> = None;
        let mut first_error = None;
        let mut answered = false;
        for due in asks {
            match due {
                Ok(due) => {
                    answered = true;
                    soonest = soonest.into_iter().chain(due).min();
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match (answered, first_error) {
            (false, Some(e)) => Err(e),
            _ => Ok(soonest),
        }
    }
}

impl ShardedQueue {
    /// `call` on every shard at once, its answers in shard order: a slow
    /// shard holds the whole up only as long as itself, not the sum.
    async fn on_every_shard<'a, F, T>(
        &'a self,
        call: impl Fn(&'a crate::RedisQueue) -> F,
    ) -> Vec<Result<T, QueueError>>
    where
        F: Future<Output = Result<T, QueueError>> + 'a,
    {
        futures::future::join_all(self.shards().iter().map(call)).await
    }
}

/// The answer of the shard that holds job `id` (the first that does not say
/// it has no such job), or `JobNotFound` when none holds it.
fn holders_answer(id: &str, results: Vec<Result<(), QueueError>>) -> Result<(), QueueError> {
    results
        .into_iter()
        .find(|result| !matches!(result, Err(QueueError::JobNotFound { .. })))
        .unwrap_or_else(|| Err(QueueError::JobNotFound { id: id.to_owned() }))
}

/// Let `claim`, which outlasted the patience on `shard`, answer in the
/// background, and release every job it leases: the caller went on without
/// them. The shard is not claimed from through the trait until it answers;
/// a claim that never does (its command timed out while the server still
/// holds it) leases its jobs to no one, and they come back when their
/// leases lapse, as a lost claim reply's always did.
fn give_back_when_answered(shards: Arc<Shards>, shard: usize, claim: LateClaim) {
    shards.late_claims[shard].store(true, Ordering::Release);
    tokio::spawn(async move {
        match claim.await {
            Ok(jobs) => {
                for job in jobs {
                    if let Err(e) = shards.shards[shard].release(&job.lease()).await {
                        tracing::warn!(shard, id = %job.id, error = %e, "could not give back a late claim's job; it returns when its lease lapses");
                    }
                }
            }
            Err(e) => tracing::warn!(
                shard,
                error = %e,
                "a slow shard's claim failed; any job it leased returns when its lease lapses"
            ),
        }
        shards.late_claims[shard].store(false, Ordering::Release);
    });
}
