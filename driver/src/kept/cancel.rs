//! Cancelling jobs of one namespace: by id, or every job of a queue in one
//! state in bounded batches (`lua/cancel.lua`).

use std::time::SystemTime;

use serde::Serialize;

use super::JobResult;
use crate::codes::{cancel_code, CancelCode};
use crate::job::ms_to_time;
use crate::limits;
use crate::queue::{num, text};
use crate::scripts::{reply, Op};
use crate::{JobState, QueueError, RedisQueue};

/// Jobs cancelled per script call of a bulk cancel.
pub const CANCEL_BATCH: usize = 1000;

/// The longest "cancelled by" text kept.
pub const MAX_CANCELLED_BY: usize = 128;

/// What a cancel did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CancelOutcome {
    /// The job was cancelled now, from state `from`.
    Cancelled {
        /// The state it was in.
        from: JobState,
        /// When (Redis clock).
        at: SystemTime,
    },
    /// It had been cancelled before.
    AlreadyCancelled {
        /// When.
        at: SystemTime,
    },
    /// It had completed before.
    AlreadyCompleted {
        /// When.
        at: SystemTime,
    },
    /// No such job, and no trace of one (a completed job of a queue that
    /// keeps nothing leaves none).
    NotFound,
}

fn check_by(by: &str) -> Result<(), QueueError> {
    if by.len() > MAX_CANCELLED_BY || by.chars().any(char::is_control) {
        return Err(QueueError::invalid(
            "cancelled by",
            by,
            format!("at most {MAX_CANCELLED_BY} bytes without control characters"),
        ));
    }
    Ok(())
}

impl RedisQueue {
    /// Cancel job `id` in whatever state it is in; `by` says who (kept with
    /// a cancelled job, "" for nobody in particular). See [`crate::kept`].
    pub async fn cancel(&self, id: &str, by: &str) -> Result<CancelOutcome, QueueError> {
        limits::check_id(id)?;
        check_by(by)?;
        let Some(meta) = self.stored_meta(id).await? else {
            return Ok(match self.result(id).await? {
                JobResult::Kept(kept) => finished(kept.outcome, kept.finished_at),
                JobResult::Tombstone(t) => finished(t.outcome, t.finished_at),
                JobResult::Live | JobResult::Unknown => CancelOutcome::NotFound,
            });
        };
        let args = vec![text(by), text("id"), text(id)];
        let items = reply::array(self.run(Op::Cancel, &meta.queue, args).await?)?;
        let at =
            || -> Result<SystemTime, QueueError> { Ok(ms_to_time(reply::count_at(&items, 2)?)) };
        Ok(match cancel_code(items.first())? {
            CancelCode::Cancelled => {
                let state = items
                    .get(1)
                    .cloned()
                    .map(reply::text)
                    .transpose()?
                    .unwrap_or_default();
                CancelOutcome::Cancelled {
                    from: JobState::parse(&state).ok_or_else(|| {
                        QueueError::Protocol(format!("cancel.lua replied state {state:?}"))
                    })?,
                    at: at()?,
                }
            }
            CancelCode::AlreadyCancelled => CancelOutcome::AlreadyCancelled { at: at()? },
            CancelCode::AlreadyCompleted => CancelOutcome::AlreadyCompleted { at: at()? },
            CancelCode::NotFound => CancelOutcome::NotFound,
        })
    }

    /// Cancel every job of `queue` in `state` (waiting, scheduled, leased,
    /// dead or held; blocked jobs are reached by cancelling their waiting
    /// holders, or by id), [`CANCEL_BATCH`] per script call, oldest first
    /// (held: by limit key, then claim order);
    /// `progress` is told (done so far, left). Stops after as many batches
    /// as the state held at the start, so jobs arriving meanwhile cannot
    /// keep it looping. Returns how many were cancelled.
    pub async fn cancel_all(
        &self,
        queue: &str,
        state: JobState,
        by: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        check_by(by)?;
        let initial = count_in_state(&self.counts(queue).await?, state)?;
        let max_rounds = initial / CANCEL_BATCH as u64 + 1;
        let mut done = 0;
        for _ in 0..max_rounds {
            let args = vec![text(by), text(state.as_str()), num(CANCEL_BATCH as u64)];
            let items = reply::array(self.run(Op::Cancel, queue, args).await?)?;
            let (now, left) = (reply::count_at(&items, 0)?, reply::count_at(&items, 1)?);
            done += now;
            progress(done, left);
            if now == 0 || left == 0 {
                break;
            }
        }
        Ok(done)
    }
}

/// How many jobs of `counts` are in `state`, for the states a bulk cancel
/// takes (others are refused, saying which are taken).
pub fn count_in_state(counts: &crate::QueueCounts, state: JobState) -> Result<u64, QueueError> {
    Ok(match state {
        JobState::Waiting => counts.waiting,
        JobState::Scheduled => counts.scheduled,
        JobState::Leased => counts.leased,
        JobState::Dead => counts.dead,
        JobState::Held => counts.held,
        _ => {
            return Err(QueueError::invalid(
                "state",
                state.as_str(),
                "one of waiting, scheduled, leased, dead, held (blocked jobs follow their waiting holder; cancel them by id)",
            ))
        }
    })
}

fn finished(outcome: super::Outcome, at: SystemTime) -> CancelOutcome {
    match outcome {
        super::Outcome::Cancelled => CancelOutcome::AlreadyCancelled { at },
        super::Outcome::Completed => CancelOutcome::AlreadyCompleted { at },
    }
}
