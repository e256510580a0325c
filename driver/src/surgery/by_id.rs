//! The per-job changes on one namespace: [`RedisQueue::promote`],
//! [`RedisQueue::retry_now`], [`RedisQueue::delete_job`],
//! [`RedisQueue::edit_payload`].

use super::{Change, IfLeased, RetriedNow};
use crate::codes::{self, DeleteCode, EditCode, PromoteCode};
use crate::enqueue_args::encode_payload;
use crate::limits;
use crate::queue::{num, text};
use crate::scripts::{reply, Op};
use crate::{DeadAction, JobState, QueueError, RedisQueue};

/// The words for a state in a refusal.
fn state_words(state: JobState) -> &'static str {
    match state {
        JobState::Waiting => "waiting (already due)",
        JobState::Scheduled => "scheduled",
        JobState::Leased => "leased (running)",
        JobState::Dead => "dead",
        JobState::Blocked => "blocked behind the holder of its ordering key",
        JobState::Held => "held back by its limit key's limits",
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

    /// Make scheduled job `id` due now, in its place by priority and seq
    /// (see [`crate::surgery`]). Refused with [`QueueError::WrongState`]
    /// for any other state; [`QueueError::JobNotFound`] when there is no
    /// such job.
    pub async fn promote(&self, id: &str) -> Result<(), QueueError> {
        match self.promote_call(id, "promote").await? {
            PromoteCode::Promoted => Ok(()),
            code => Err(promote_refusal(Change::Promote, id, code)),
        }
    }

    /// Retry job `id` now: a job backing off after a failure is due now
    /// (its attempts kept), a dead job is requeued with attempts reset to 0
    /// (the dead-letter requeue). Refused for a delayed job that never
    /// failed (promote it), and for waiting, leased and blocked jobs.
    pub async fn retry_now(&self, id: &str) -> Result<RetriedNow, QueueError> {
        let code = self.promote_call(id, "retry").await?;
        match code {
            PromoteCode::Promoted => Ok(RetriedNow::Promoted),
            PromoteCode::Dead => {
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
            code => Err(promote_refusal(Change::RetryNow, id, code)),
        }
    }

    async fn promote_call(&self, id: &str, mode: &str) -> Result<PromoteCode, QueueError> {
        let queue = self.queue_of(id).await?;
        let args = vec![text(mode), num(1), num(0), text(id)];
        let items = reply::array(self.run(Op::PromoteJob, &queue, args).await?)?;
        codes::promote_code(items.get(3))
    }

    /// Delete job `id` for good, in any state, releasing its ordering key
    /// (to the next job behind it) and its dedup key. A leased job is
    /// refused with [`QueueError::WrongState`] unless `if_leased` is
    /// [`IfLeased::VoidLease`].
    pub async fn delete_job(&self, id: &str, if_leased: IfLeased) -> Result<(), QueueError> {
        let queue = self.queue_of(id).await?;
        let force = u64::from(if_leased == IfLeased::VoidLease);
        let args = vec![num(1), num(force), text(""), text(""), text(id)];
        let items = reply::array(self.run(Op::DeleteJob, &queue, args).await?)?;
        match codes::delete_code(items.get(3))? {
            DeleteCode::Deleted => Ok(()),
            DeleteCode::NotFound => Err(not_found(id)),
            DeleteCode::Leased => Err(Change::Delete.refused(id, state_words(JobState::Leased))),
        }
    }

    /// Replace the payload of job `id`, which must not be running: waiting,
    /// scheduled, blocked or dead. The payload is checked as an enqueue
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
        let state = items.get(1).cloned().map(reply::text).transpose()?;
        let state = state.as_deref().and_then(JobState::parse);
        match codes::edit_code(items.first())? {
            EditCode::Edited => state
                .ok_or_else(|| QueueError::Protocol("edit_job.lua replied without a state".into())),
            EditCode::NotFound => Err(not_found(id)),
            EditCode::Leased => Err(Change::Edit.refused(id, state_words(JobState::Leased))),
        }
    }
}

fn not_found(id: &str) -> QueueError {
    QueueError::JobNotFound { id: id.to_owned() }
}

/// The error for a promote or retry-now code that did not promote.
fn promote_refusal(change: Change, id: &str, code: PromoteCode) -> QueueError {
    let state = match code {
        PromoteCode::NotFound => return not_found(id),
        PromoteCode::Promoted => "promoted",
        PromoteCode::Waiting => state_words(JobState::Waiting),
        PromoteCode::Leased => state_words(JobState::Leased),
        PromoteCode::Dead => state_words(JobState::Dead),
        PromoteCode::Blocked => state_words(JobState::Blocked),
        PromoteCode::NotBackingOff => {
            "scheduled but has not failed (a delay, not a backoff: promote it)"
        }
    };
    change.refused(id, state)
}
