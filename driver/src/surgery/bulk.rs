//! The bulk forms on one namespace: every scheduled job of a queue
//! promoted, every job backing off retried now, every job in a state
//! deleted, [`SURGERY_BATCH`] per script call with progress after each.

use fred::types::Value;

use super::{IfLeased, SURGERY_BATCH};
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{JobState, QueueCounts, QueueError, RedisQueue};

/// One bulk change, as its script takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bulk {
    /// Every scheduled job due now.
    Promote,
    /// Every scheduled job with a failed attempt due now.
    RetryNow,
    /// Every job in this state deleted (leased ones only when forced).
    Delete(JobState, IfLeased),
}

impl Bulk {
    /// The script's bulk-mode arguments, continuing at `cursor`.
    fn call(self, cursor: &str) -> (Op, Vec<Value>) {
        let batch = num(SURGERY_BATCH as u64);
        match self {
            Bulk::Promote => (Op::PromoteJob, vec![text("promote"), batch, text(cursor)]),
            Bulk::RetryNow => (Op::PromoteJob, vec![text("retry"), batch, text(cursor)]),
            Bulk::Delete(state, if_leased) => {
                let force = u64::from(if_leased == IfLeased::VoidLease);
                let args = vec![batch, num(force), text(state.as_str()), text(cursor)];
                (Op::DeleteJob, args)
            }
        }
    }

    /// Where the first call starts.
    fn first_cursor(self) -> &'static str {
        match self {
            Bulk::Promote | Bulk::RetryNow => "0",
            Bulk::Delete(..) => "",
        }
    }

    /// How many jobs the change may reach, from a counts snapshot: what the
    /// progress's "left" starts at, and what bounds the rounds.
    pub(crate) fn reach(self, counts: &QueueCounts) -> u64 {
        match self {
            Bulk::Promote | Bulk::RetryNow => counts.scheduled,
            Bulk::Delete(state, _) => counts.in_state(state),
        }
    }

    /// Refuse, before anything is sent, what the script would refuse.
    fn check(self) -> Result<(), QueueError> {
        let Bulk::Delete(state, if_leased) = self else {
            return Ok(());
        };
        let accepted = "one of waiting, scheduled, held, blocked, awaiting, dead, \
                        leased (leased only when forced)";
        match state {
            JobState::Leased if if_leased == IfLeased::Refuse => Err(QueueError::invalid(
                "state",
                "leased",
                "leased jobs are deleted only when forced, which voids their leases",
            )),
            JobState::Waiting
            | JobState::Scheduled
            | JobState::Held
            | JobState::Blocked
            | JobState::Awaiting
            | JobState::Dead
            | JobState::Leased => Ok(()),
            #[allow(unreachable_patterns)]
            other => Err(QueueError::invalid("state", other.as_str(), accepted)),
        }
    }
}

impl RedisQueue {
    /// Make every scheduled job of `queue` due now (see
    /// [`promote`](Self::promote)), [`SURGERY_BATCH`] per atomic step;
    /// `progress` is told (done so far, scheduled left) after each. The
    /// number promoted.
    pub async fn promote_all(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_surgery(Bulk::Promote, queue, progress).await
    }

    /// Retry now every job of `queue` backing off after a failure (see
    /// [`retry_now`](Self::retry_now); dead jobs are not included: that is
    /// [`requeue_all_dead`](Self::requeue_all_dead)). Delayed jobs that
    /// never failed are left scheduled. `progress` as for
    /// [`promote_all`](Self::promote_all).
    pub async fn retry_all_now(
        &self,
        queue: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_surgery(Bulk::RetryNow, queue, progress).await
    }

    /// How many jobs of `queue` are backing off after a failure (scheduled,
    /// with a failed attempt): what [`retry_all_now`](Self::retry_all_now)
    /// would retry now; delayed jobs that never failed are not counted. A
    /// dry run of its script (`lua/promote_job.lua`, mode `count`) that
    /// writes nothing, [`SURGERY_BATCH`] jobs examined per call, so like any
    /// count over several calls it is of a moment, not a snapshot.
    pub async fn backing_off(&self, queue: &str) -> Result<u64, QueueError> {
        let (mut cursor, mut counted) = (0_i64, 0);
        loop {
            let batch = num(SURGERY_BATCH as u64);
            let args = vec![text("count"), batch, text(cursor.to_string())];
            let items = reply::array(self.run(Op::PromoteJob, queue, args).await?)?;
            counted += reply::count_at(&items, 0)?;
            let scheduled = reply::count_at(&items, 1)?;
            match items.get(2) {
                // A set growing as fast as it is walked still ends: the
                // walk stops at the size it has now.
                Some(Value::Integer(next)) if *next >= 0 && (*next as u64) < scheduled => {
                    cursor = *next
                }
                _ => break,
            }
        }
        Ok(counted)
    }

    /// Delete every job of `queue` in `state` (waiting, scheduled, held,
    /// blocked, awaiting, dead, or leased with [`IfLeased::VoidLease`]),
    /// releasing what each held, [`SURGERY_BATCH`] per atomic step;
    /// `progress` is told (done so far, left in that state) after each. The
    /// number deleted.
    ///
    /// Each job goes as [`delete_job`](Self::delete_job) deletes it, by the
    /// same code in `lua/delete_job.lua`: an awaiting job (a batch's
    /// callback, a dependent, a tree's parent) leaves its gate's waiters as
    /// one whose job is gone, and counts as deleted, a failure, toward each
    /// gate it is a member of, which may fire them (their waiters are then
    /// decided by their own policies, e.g. a dependent dead-lettered).
    pub async fn delete_all(
        &self,
        queue: &str,
        state: JobState,
        if_leased: IfLeased,
        progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        self.drain_surgery(Bulk::Delete(state, if_leased), queue, progress)
            .await
    }

    /// The loop behind the bulk forms. It stops when the script has
    /// examined the whole set, or, for the changes that take the head of a
    /// set each time, when a round changes nothing or after as many rounds
    /// as the set held jobs at the start (jobs arriving meanwhile cannot
    /// keep it looping).
    pub(crate) async fn drain_surgery(
        &self,
        bulk: Bulk,
        queue: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        bulk.check()?;
        let reach = bulk.reach(&self.counts(queue).await?);
        let max_rounds = reach / SURGERY_BATCH as u64 + 1;
        // Filtering forms walk a cursor and may change nothing in a round.
        let walks = matches!(bulk, Bulk::RetryNow | Bulk::Delete(JobState::Blocked, _));
        let mut cursor = bulk.first_cursor().to_owned();
        let (mut done, mut rounds) = (0, 0);
        loop {
            let (op, args) = bulk.call(&cursor);
            let items = reply::array(self.run(op, queue, args).await?)?;
            let changed = reply::count_at(&items, 0)?;
            done += changed;
            progress(done, reply::count_at(&items, 1)?);
            rounds += 1;
            let next = match items.get(2) {
                Some(Value::Integer(n)) => (*n >= 0).then(|| n.to_string()),
                Some(other) => Some(reply::text(other.clone())?).filter(|c| !c.is_empty()),
                None => None,
            };
            let Some(next) = next else { break };
            if !walks && (changed == 0 || rounds >= max_rounds) {
                break;
            }
            cursor = next;
        }
        Ok(done)
    }
}
