//! What became of a job (`lua/kept_get.lua`), waiting for it to finish,
//! and listing a queue's kept jobs (`lua/kept_list.lua`).

use std::time::Duration;

use fred::interfaces::{ClientLike, EventInterface, PubsubInterface};
use serde::Serialize;

use super::{KeptJob, Outcome, Tombstone};
use crate::codes::{self, KeptReply};
use crate::scripts::{self, reply, Op};
use crate::scripts::{num, text};
use crate::{limits, JobRecord, JobState, Page, QueueError, RedisQueue, WorkerIdentity};

/// What became of a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", content = "job", rename_all = "snake_case")]
pub enum JobResult {
    /// It has not finished: it waits, runs, backs off or is dead (a dead
    /// job finishes only if requeued; [`RedisQueue::wait_for`] refuses to
    /// wait for one, at once, with [`QueueError::WrongState`]).
    Live,
    /// It finished and its queue keeps it (boxed: a kept job is large next
    /// to the other answers).
    Kept(Box<KeptJob>),
    /// It finished; only its tombstone is left.
    Tombstone(Tombstone),
    /// No trace of it: never existed, deleted, or completed in a queue that
    /// keeps nothing (or its tombstone expired).
    Unknown,
}

impl JobResult {
    /// How it finished, when it did and that is known.
    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            JobResult::Kept(kept) => Some(kept.outcome),
            JobResult::Tombstone(t) => Some(t.outcome),
            JobResult::Live | JobResult::Unknown => None,
        }
    }
}

impl RedisQueue {
    /// The pub/sub channel where acks, cancels and deletes of queues that
    /// keep jobs publish the ids they finished or deleted (space-separated),
    /// once per call, and a nack the id it dead-lettered.
    pub fn finished_channel(&self) -> String {
        format!("{}:finished", self.wake_channel())
    }

    /// The pub/sub channel on which the holder `identity` is told that a
    /// job it holds was cancelled (`"<job id> <lease id>"`, see `lua/cancel.lua`).
    pub fn holder_channel(&self, identity: WorkerIdentity) -> String {
        format!(
            "{}:holder:{}:{}",
            self.wake_channel(),
            identity.node,
            identity.instance
        )
    }

    /// What became of job `id`, read in one atomic script.
    pub async fn result(&self, id: &str) -> Result<JobResult, QueueError> {
        limits::check_id(id)?;
        let keys = crate::keys::QueueKeys::from(vec![
            self.inner.keys.jobs(),
            self.inner.keys.kept(),
            self.inner.keys.tombstones(),
            self.inner.keys.tombstones_at(),
            self.inner.keys.retention(),
        ]);
        let items = reply::array(
            scripts::run(self.caller(), Op::KeptGet, &keys, vec![text(id)])
                .await
                .map_err(|e| scripts::map_error(e, self.inner.timeout))?,
        )?;
        Ok(match codes::kept_found(items)? {
            KeptReply::Live => JobResult::Live,
            KeptReply::Kept(raw) => JobResult::Kept(Box::new(KeptJob::decode(
                self.namespace(),
                id.to_owned(),
                &raw,
            )?)),
            KeptReply::Tombstone(raw) => JobResult::Tombstone(Tombstone::parse(&raw)?),
            KeptReply::Unknown => JobResult::Unknown,
        })
    }

    /// Wait up to `timeout` for job `id` to finish; what became of it then
    /// ([`JobResult::Live`] when it had not finished in time, and
    /// [`JobResult::Unknown`] once it was deleted).
    ///
    /// A dead job (dead-lettered, now or before the call) does not finish
    /// unless requeued, so the wait ends when it dies, with
    /// [`QueueError::WrongState`] (`change` "wait for", `state` "dead"):
    /// its failure is in [`RedisQueue::inspect`]'s `last_error`.
    ///
    /// How it waits: it subscribes to [`RedisQueue::finished_channel`]
    /// (plainly and as a shard channel) on a connection of its own, then
    /// reads the job, and reads again only when a message names it (or once
    /// more at the deadline): no polling. An ack, cancel or delete of the
    /// job, and a nack that dead-letters it, publish at once; a dead letter
    /// by a lapsed lease's reclaim is read at the deadline. Only queues that
    /// keep finished jobs (a [`super::Retention`] policy) publish, so
    /// waiting for a live job of a queue without one is refused.
    pub async fn wait_for(&self, id: &str, timeout: Duration) -> Result<JobResult, QueueError> {
        limits::check_id(id)?;
        let deadline = tokio::time::Instant::now() + timeout;
        let subscriber = self
            .inner
            .client_builder
            .clone()
            .build_subscriber_client()
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        subscriber
            .init()
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        let outcome = self.wait_subscribed(&subscriber, id, deadline).await;
        let _ = subscriber.quit().await;
        outcome
    }

    async fn wait_subscribed(
        &self,
        subscriber: &fred::clients::SubscriberClient,
        id: &str,
        deadline: tokio::time::Instant,
    ) -> Result<JobResult, QueueError> {
        let mut messages = subscriber.message_rx();
        // On a cluster, on this namespace's primary: no other primary that
        // hangs deafens the wait (crate::own_primary).
        let channel = self.finished_channel();
        let on_own_primary = crate::own_primary::on_own_primary(subscriber, &channel);
        // Also as a shard channel, as a worker's wake-ups are: the acks
        // publish the finished ids plainly, so that waiters of earlier
        // versions hear them, and a later version may move them to the
        // shard channel (off the cluster bus, docs/cluster.md) once no
        // earlier waiter is left. Sent together, one round trip for both. A
        // refused SSUBSCRIBE (Redis before 7.0, an ACL without
        // `+ssubscribe`) leaves the plain one, which today's acks use.
        let (plain, shard) = tokio::join!(
            on_own_primary.subscribe(channel.as_str()),
            on_own_primary.ssubscribe(channel.as_str())
        );
        plain.map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        if let Err(e) = shard {
            tracing::debug!(error = %e.details(), "waiting without the shard channel");
        }
        // Subscribed before the first read: a finish after it is announced.
        let first = self.result(id).await?;
        if first != JobResult::Live {
            return Ok(first);
        }
        if let Some(meta) = self.stored_meta(id).await? {
            if meta.died_at_ms > 0 {
                return Err(dead(id));
            }
            if self.retention(&meta.queue).await?.policy.is_none() {
                return Err(QueueError::invalid(
                    "wait",
                    id,
                    format!(
                        "a job of a queue that keeps finished jobs; queue {} keeps none (set a retention policy)",
                        meta.queue
                    ),
                ));
            }
        }
        loop {
            tokio::select! {
                message = messages.recv() => {
                    // A message naming another job: keep waiting. Lagged
                    // (some messages lost) or closed: look now.
                    if let Ok(message) = message {
                        let names = message.value.as_str().map(|s| s.split(' ').any(|m| m == id));
                        if names != Some(true) {
                            continue;
                        }
                    }
                },
                () = tokio::time::sleep_until(deadline) => {
                    return Ok(self.settled(id).await?.unwrap_or(JobResult::Live));
                }
            }
            if let Some(now) = self.settled(id).await? {
                return Ok(now);
            }
        }
    }

    /// What became of job `id` once it no longer runs: finished or gone
    /// (`Some`), or dead ([`dead`]'s error); `None` while it may still
    /// finish.
    async fn settled(&self, id: &str) -> Result<Option<JobResult>, QueueError> {
        let now = self.result(id).await?;
        if now != JobResult::Live {
            return Ok(Some(now));
        }
        match self.stored_meta(id).await? {
            Some(meta) if meta.died_at_ms > 0 => Err(dead(id)),
            Some(_) => Ok(None),
            // Finished between the two reads.
            None => {
                let again = self.result(id).await?;
                Ok((again != JobResult::Live).then_some(again))
            }
        }
    }

    /// One page of `queue`'s kept jobs with `outcome`, newest first; `count`
    /// is 1 to 1000.
    pub async fn list_kept(
        &self,
        queue: &str,
        outcome: Outcome,
        offset: u64,
        count: usize,
    ) -> Result<Page<KeptJob>, QueueError> {
        limits::check_limit("page size", count, 1000)?;
        let offset = offset.min(u32::MAX as u64);
        let args = vec![text(outcome.as_str()), num(offset), num(count as u64)];
        let items = reply::array(self.run(Op::KeptList, queue, args).await?)?;
        let total = reply::count_at(&items, 0)?;
        let mut jobs = Vec::new();
        let mut rest = items.into_iter().skip(2);
        while let (Some(id), Some(raw)) = (rest.next(), rest.next()) {
            jobs.push(KeptJob::decode(
                self.namespace(),
                reply::text(id)?,
                &reply::bytes(raw)?,
            )?);
        }
        Ok(Page { total, items: jobs })
    }
}

/// Why a wait for job `id` ends when the job is dead: it finishes only if
/// requeued.
fn dead(id: &str) -> QueueError {
    QueueError::WrongState {
        id: id.to_owned(),
        change: "wait for",
        state: "dead",
        accepted: "a dead job finishes only once requeued (redq dead requeue, retry_now); \
                   its failure is its last error (redq jobs show)",
    }
}

impl KeptJob {
    /// The kept job as a listing row of [`RedisQueue::list_jobs`] (state
    /// completed or cancelled). What is not kept reads as its default: no
    /// payload, priority 0, `max_attempts` 0. `attempts` is, as for every
    /// job, the failed attempts: a job that succeeded at its first run
    /// failed none.
    pub fn to_record(&self) -> JobRecord {
        let (state, failed) = match self.outcome {
            Outcome::Completed => (JobState::Completed, self.attempt.saturating_sub(1)),
            Outcome::Cancelled => (JobState::Cancelled, self.attempt),
        };
        JobRecord {
            id: self.id.clone(),
            queue: self.queue.clone(),
            state,
            payload: serde_json::Value::Null,
            name: self.name.clone(),
            priority: 0,
            attempts: failed,
            max_attempts: 0,
            enqueued_at: self.enqueued_at,
            due_at: None,
            lease_id: None,
            lease_expires_at: None,
            holder: self.holder,
            last_error: None,
            died_at: None,
            dedup_key: None,
            ordering_key: None,
            limit_key: None,
            trace_parent: None,
            retry_window: None,
            reclaim_backoff: crate::Backoff::NONE,
            finished_at: Some(self.finished_at),
            namespace: self.namespace.clone(),
            gate: None,
            awaits: None,
        }
    }
}
