//! Cancelling jobs of one namespace: by id, or every job of a queue in one
//! state in bounded batches (`lua/cancel.lua`).

use std::time::SystemTime;

use super::{CancelOutcome, JobResult};
use crate::codes;
use crate::limits;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{JobState, QueueError, RedisQueue};

/// Jobs cancelled per script call of a bulk cancel.
pub const CANCEL_BATCH: usize = 1000;

/// The longest "cancelled by" text kept.
pub const MAX_CANCELLED_BY: usize = 128;

pub(crate) fn check_by(by: &str) -> Result<(), QueueError> {
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
        codes::cancelled(&items)
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
        let initial = self.counts(queue).await?.cancellable_in(state)?;
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

fn finished(outcome: super::Outcome, at: SystemTime) -> CancelOutcome {
    match outcome {
        super::Outcome::Cancelled => CancelOutcome::AlreadyCancelled { at },
        super::Outcome::Completed => CancelOutcome::AlreadyCompleted { at },
    }
}
