//! Listing a queue's blocked jobs: those queued behind the holder of their
//! ordering key, which run one at a time per key, in seq order.
//!
//! An ordering key crosses queues, so the namespace keeps every queue's
//! blocked jobs in one set (`{ns}:ord:blocked`, by key then seq) and only a
//! count per queue. A listing therefore walks that set, each script call
//! (`lua/list_blocked.lua`) examining at most [`BLOCKED_STEP`] of its
//! members, until the page is full, the queue's count is reached, or the
//! set ends. When only this queue has blocked jobs (the common case) the
//! first call jumps straight to the offset. A page is not one snapshot: a
//! job blocked or released between two calls may be missed or listed twice.

use crate::limits;
use crate::page::Page;
use crate::scripts::{num, reply, text, Op};
use crate::{JobRecord, JobState, QueueError, RedisQueue};

/// The most members of the namespace's blocked set one call examines, of
/// every queue (the script's bound).
pub const BLOCKED_STEP: usize = 1000;

impl RedisQueue {
    /// One page of `queue`'s blocked jobs (state [`JobState::Blocked`]),
    /// by ordering key, then in the order each key will run them; `offset`
    /// of them skipped, at most `count` (1 to 1000) returned, with their
    /// number in all. [`list_jobs`](Self::list_jobs) with
    /// [`JobState::Blocked`] calls this.
    ///
    /// Cost: bounded script calls of at most [`BLOCKED_STEP`] members each,
    /// over the blocked jobs of every queue whose ordering keys sort before
    /// the page's last job (one call when only this queue has blocked jobs,
    /// or when they all fit in one step).
    pub async fn list_blocked(
        &self,
        queue: &str,
        offset: u64,
        count: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        limits::check_limit("page size", count, 1000)?;
        // No set holds 2^32 members: a larger offset is past the end too.
        let start = offset.min(u32::MAX as u64);
        let mut skip = start;
        let mut cursor = String::new();
        let mut items = Vec::new();
        let mut total = None;
        while items.len() < count {
            let want = (count - items.len()) as u64;
            let args = vec![text(cursor.as_str()), num(skip), num(want)];
            let reply = reply::array(self.run(Op::ListBlocked, queue, args).await?)?;
            // The first call's count: the total this page is a part of.
            let total = *total.get_or_insert(reply::count_at(&reply, 0)?);
            skip = skip.saturating_sub(reply::count_at(&reply, 3)?);
            let next = match reply.get(2) {
                Some(value) => reply::text(value.clone())?,
                None => return Err(QueueError::Protocol("list_blocked reply is short".into())),
            };
            items.extend(self.listed_rows(JobState::Blocked, reply.into_iter().skip(4))?);
            // Every job of the queue met (passed over or listed): the rest
            // of the set holds other queues' jobs only.
            let met = start - skip + items.len() as u64;
            if next.is_empty() || met >= total {
                break;
            }
            cursor = next;
        }
        Ok(Page {
            total: total.unwrap_or(0),
            items,
        })
    }
}
