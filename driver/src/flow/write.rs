//! Changing limits (`lua/limits_set.lua`, then `lua/limits_wake.lua` until
//! every held key was put up for a re-check) and pushing a limiter back
//! (`lua/release.lua` with a push-back).

use std::time::Duration;

use super::{check_pushback, Limit, LimitScope};
use crate::codes;
use crate::limits::check_queue_name;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{Lease, QueueError, RedisQueue};

/// At most this many `limits_wake` calls follow one change: each puts up to
/// 1000 held keys up for a re-check, so this covers ten million keys; a
/// claim re-checks any left by itself once their time comes.
const MAX_WAKE_CALLS: usize = 10_000;

impl RedisQueue {
    /// Set `queue`'s limit for `scope` (see the [module docs](crate::flow));
    /// [`Limit::none`] clears it. Whether anything changed (`false`: the
    /// same limit was already set). Validated first: a bad limit or key is
    /// refused and nothing is written.
    ///
    /// Takes effect at the next claim. After a change, every key of the
    /// queue with held jobs is put up for a re-check at once (in calls of
    /// 1000 keys), so a raised limit starts held jobs without waiting.
    pub async fn set_limit(
        &self,
        queue: &str,
        scope: LimitScope,
        limit: Limit,
    ) -> Result<bool, QueueError> {
        check_queue_name(queue)?;
        scope.validate()?;
        limit.validate()?;
        let (scope_name, key) = scope.args();
        let [concurrency, max, per] = limit.spec();
        let args = vec![
            text(scope_name),
            text(key),
            num(concurrency),
            num(max),
            num(per),
        ];
        let items = reply::array(self.run(Op::LimitsSet, queue, args).await?)?;
        let changed = codes::limits_set(items.first())?;
        let mut cursor = items.get(1).cloned().map(reply::text).transpose()?;
        for _ in 0..MAX_WAKE_CALLS {
            match cursor.as_deref() {
                None | Some("0") | Some("") => break,
                Some(at) => {
                    let next = self.run(Op::LimitsWake, queue, vec![text(at)]).await?;
                    cursor = Some(reply::text(next)?);
                }
            }
        }
        Ok(changed)
    }

    /// Clear `queue`'s limit for `scope`: [`RedisQueue::set_limit`] with
    /// [`Limit::none`]. Clearing a key's override puts it back under the
    /// each-key default. The queue stays flow-aware (its counts stay exact).
    pub async fn clear_limit(&self, queue: &str, scope: LimitScope) -> Result<bool, QueueError> {
        self.set_limit(queue, scope, Limit::none()).await
    }

    /// Give a claimed job back unrun because a remote service said "not
    /// now" (a 429): no attempt counted, and its limiter (its limit key, or
    /// the queue when it has none) starts nothing for `retry_after` (1 ms to
    /// 24 h; the later of two push-backs wins). The job is held with its
    /// key's others, or waits with its queue's, and starts again once the
    /// push-back is over and its limits have room. Fenced like
    /// [`RedisQueue::release`]: a lease that is no longer held changes
    /// nothing and returns [`QueueError::LeaseLost`]. This is what the
    /// worker does for [`JobError::rate_limited`](crate::worker::JobError::rate_limited).
    pub async fn release_pushing_back(
        &self,
        lease: &Lease,
        retry_after: Duration,
    ) -> Result<(), QueueError> {
        crate::queue::check_lease(lease)?;
        let pushback_ms = check_pushback(retry_after)?;
        let args = vec![
            text(lease.id.as_str()),
            num(lease.lease_id),
            num(pushback_ms),
        ];
        codes::released(&self.run(Op::Release, &lease.queue, args).await?, lease)
    }
}
