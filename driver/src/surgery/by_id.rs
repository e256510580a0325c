//! The per-job changes on one namespace: [`RedisQueue::promote`],
//! [`RedisQueue::retry_now`], [`RedisQueue::delete_job`],
//! [`RedisQueue::edit_payload`], [`RedisQueue::dead_letter_job`].

use super::{Change, DeadLettered, IfLeased, RetriedNow};
use crate::codes::{self, Refusal};
use crate::enqueue_args::encode_payload;
use crate::limits;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use fred::interfaces::HashesInterface;

use crate::kept::KeptJob;
use crate::{DeadAction, JobState, QueueError, RedisQueue};

/// The words for a state in a refusal.
fn state_words(state: JobState) -> &'static str {
    match state {
        JobState::Waiting => "waiting (already due)",
        JobState::Scheduled => "scheduled",
        JobState::Leased => "leased (running)",
        JobState::Dead => "dead",
        JobState::Blocked => "blocked behind the holder of its ordering key",
        JobState::Held => {
            "held back by its limit key's limits: due already, it runs once its key has \
             room (`redq limits show QUEUE`)"
        }
        JobState::Awaiting => {
            "awaiting its batch, dependencies or tree: it runs once they decide \
             (`redq deps show ID`, `redq batches show GATE`)"
        }
        #[allow(unreachable_patterns)]
        _ => "finished",
    }
}

impl RedisQueue {
    /// The queue job `id` is in, read from its record (the script checks it
    /// again), or [`QueueError::JobNotFound`].
    async fn queue_of(&self, id: &str) -> Result<String, QueueError> {
        limits::check_id(id)?;
        match self.stored_meta(id).await? {
            Some(meta) => Ok(meta.queue),
            None => Err(not_found(id)),
        }
    }

    /// The queue whose delete script reaches job `id`: a live job's queue,
    /// a kept record's queue, or for a tombstone, which names no queue (it
    /// is the namespace's), any queue. Read from the stored records as they
    /// are (a kept job past its age bound, which reads as gone, is deleted
    /// too); the script checks again.
    async fn deleting_queue(&self, id: &str) -> Result<String, QueueError> {
        limits::check_id(id)?;
        if let Some(meta) = self.stored_meta(id).await? {
            return Ok(meta.queue);
        }
        let keys = &self.inner.keys;
        let redis = |e| QueueError::from_redis(e, self.inner.timeout);
        let kept: Option<Vec<u8>> = self.client().hget(keys.kept(), id).await.map_err(redis)?;
        if let Some(raw) = kept {
            return Ok(KeptJob::decode(self.namespace(), id.to_owned(), &raw)?.queue);
        }
        let buried: bool = self
            .client()
            .hexists(keys.tombstones(), id)
            .await
            .map_err(redis)?;
        if buried {
            Ok(crate::record_format::ANY_QUEUE.to_owned())
        } else {
            Err(not_found(id))
        }
    }

    /// Make scheduled job `id` due now, in its place by priority and seq
    /// (see [`crate::surgery`]). Refused with [`QueueError::WrongState`]
    /// for any other state; [`QueueError::JobNotFound`] when there is no
    /// such job.
    pub async fn promote(&self, id: &str) -> Result<(), QueueError> {
        self.promote_call(id, "promote")
            .await?
            .map_err(|refusal| refused(Change::Promote, id, refusal))
    }

    /// Retry job `id` now: a job backing off after a failure is due now
    /// (its attempts kept), a dead job is requeued with attempts reset to 0
    /// (the dead-letter requeue). Refused for a delayed job that never
    /// failed (promote it), and for waiting, held, awaiting, leased and
    /// blocked jobs.
    pub async fn retry_now(&self, id: &str) -> Result<RetriedNow, QueueError> {
        match self.promote_call(id, "retry").await? {
            Ok(()) => Ok(RetriedNow::Promoted),
            Err(Refusal::InState(JobState::Dead)) => {
                let queue = self.queue_of(id).await?;
                let report = self
                    .change_dead(
                        DeadAction::Requeue { attempts: 0 },
                        &queue,
                        &[id.to_owned()],
                    )
                    .await?;
                // Gone or moved between the two calls: it is not dead now.
                if report.done == 1 {
                    Ok(RetriedNow::Requeued)
                } else {
                    Err(not_found(id))
                }
            }
            Err(refusal) => Err(refused(Change::RetryNow, id, refusal)),
        }
    }

    async fn promote_call(&self, id: &str, mode: &str) -> Result<Result<(), Refusal>, QueueError> {
        let queue = self.queue_of(id).await?;
        let args = vec![text(mode), num(1), num(0), text(id)];
        let items = reply::array(self.run(Op::PromoteJob, &queue, args).await?)?;
        codes::promoted(&items)
    }

    /// Delete job `id` for good, in any state, releasing its ordering key
    /// (to the next job behind it) and its dedup key. A leased job is
    /// refused with [`QueueError::WrongState`] unless `if_leased` is
    /// [`IfLeased::VoidLease`]; then its worker is told at once, as of a
    /// cancel (the job's `cx.cancelled()` fires). A finished job's kept
    /// record (completed or cancelled, with its result) or tombstone is
    /// deleted too; [`RedisQueue::delete_job_reported`] says which it was.
    /// [`QueueError::JobNotFound`] when there is no trace of the job.
    pub async fn delete_job(&self, id: &str, if_leased: IfLeased) -> Result<(), QueueError> {
        self.delete_job_reported(id, if_leased).await.map(|_| ())
    }

    /// [`RedisQueue::delete_job`], saying what was deleted: `None` for a
    /// live job, [`JobState::Completed`] or [`JobState::Cancelled`] for what
    /// was kept of a finished one (its kept record, with its result, or its
    /// tombstone). One script decides which before it writes anything.
    pub async fn delete_job_reported(
        &self,
        id: &str,
        if_leased: IfLeased,
    ) -> Result<Option<JobState>, QueueError> {
        let queue = self.deleting_queue(id).await?;
        let force = u64::from(if_leased == IfLeased::VoidLease);
        let args = vec![num(1), num(force), text(""), text(""), text(id)];
        let items = reply::array(self.run(Op::DeleteJob, &queue, args).await?)?;
        codes::deleted(&items)?.map_err(|refusal| refused(Change::Delete, id, refusal))
    }

    /// Move job `id`, which waits its turn (waiting, scheduled, held or
    /// blocked), to the dead-letter set unrun, to look at or requeue later
    /// ([`RedisQueue::requeue_dead`]): it dies as a failed job dies, its
    /// attempts kept, its error `dead-lettered by an operator (WHO):
    /// REASON` (`reason` may be empty; the handle's actor is WHO), its
    /// ordering key passed on, its gates counting it failed, a `dead`
    /// event; the queue's dead-letter bound, if it has one, applied (older
    /// dead letters past it deleted: [`DeadLettered::bound_deleted`]).
    /// Returns the state it was in. A leased, awaiting or dead job
    /// is refused with [`QueueError::WrongState`] and nothing changes;
    /// [`QueueError::JobNotFound`] when there is no such job.
    pub async fn dead_letter_job(
        &self,
        id: &str,
        reason: &str,
    ) -> Result<DeadLettered, QueueError> {
        if reason.len() > limits::MAX_REASON_LEN {
            return Err(QueueError::invalid(
                "reason",
                reason,
                format!("at most {} bytes", limits::MAX_REASON_LEN),
            ));
        }
        let queue = self.queue_of(id).await?;
        let args = vec![text(id), text(reason)];
        let items = reply::array(self.run(Op::DeadLetterJob, &queue, args).await?)?;
        let (from, bound_deleted) = codes::dead_lettered(&items)?
            .map_err(|refusal| refused(Change::DeadLetter, id, refusal))?;
        Ok(DeadLettered {
            from,
            bound_deleted,
        })
    }

    /// Replace the payload of job `id`, which must not be running: waiting,
    /// scheduled, held, blocked, awaiting or dead. The payload is checked as an enqueue
    /// checks it (the same function: JSON nesting, this handle's payload
    /// limit). Returns the state the job is in; a leased job is refused
    /// with [`QueueError::WrongState`] and keeps its payload.
    pub async fn edit_payload(
        &self,
        id: &str,
        payload: &serde_json::Value,
    ) -> Result<JobState, QueueError> {
        let limit = self.inner.payload_limit;
        let mut buf = Vec::new();
        encode_payload(payload, limit, &mut buf)?;
        let json = String::from_utf8(buf).expect("serde_json writes UTF-8");
        let queue = self.queue_of(id).await?;
        let args = vec![num(limit as u64), text(id), text(json)];
        let items = reply::array(self.run(Op::EditJob, &queue, args).await?)?;
        codes::edited(&items)?.map_err(|refusal| refused(Change::Edit, id, refusal))
    }
}

fn not_found(id: &str) -> QueueError {
    QueueError::JobNotFound { id: id.to_owned() }
}

/// The error for a change that did not apply.
fn refused(change: Change, id: &str, refusal: Refusal) -> QueueError {
    match refusal {
        Refusal::NotFound => not_found(id),
        Refusal::InState(state) => change.refused(id, state_words(state)),
        Refusal::NotBackingOff => change.refused(
            id,
            "scheduled but has not failed (a delay, not a backoff: promote it)",
        ),
    }
}
