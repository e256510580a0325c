//! Flow control: concurrency and rate limits per queue and per limit key,
//! stored in Redis, set and changed live.
//!
//! # The model
//!
//! A job may carry a **limit key** ([`NewJob::limit_key`](crate::NewJob::limit_key),
//! [`TypedJob::limit_key`](crate::worker::TypedJob::limit_key)): a tenant, a
//! remote account, anything whose jobs share a budget. Unlike an ordering
//! key it does not serialize its jobs: up to the key's limit of them run at
//! once, in no promised order. Limit keys are scoped to their queue: key
//! `acme` of queue `emails` and key `acme` of queue `sms` are two limiters.
//!
//! Limits live in Redis, per queue, in three [`LimitScope`]s:
//!
//! - **queue-wide** ([`LimitScope::Queue`]): at most `concurrency` jobs of
//!   the queue leased at once, and at most `rate.max` started in any window
//!   of `rate.per`;
//! - **each key** ([`LimitScope::EachKey`]): the same two bounds applied to
//!   every limit key of the queue, each on its own;
//! - **one key** ([`LimitScope::Key`]): an override for one key, which
//!   replaces the each-key default for that key entirely.
//!
//! A job starts only when every limit that applies to it has room.
//!
//! **A concurrency slot is the lease itself.** It frees exactly when the
//! lease ends: ack, nack (retry or dead), dead-letter, release, cancel,
//! forced delete, or the reclaim of a lapsed lease (a worker that died
//! holding a slot gives it back when its lease lapses, not before and not
//! after a separate timeout). Only the lease-fenced scripts end leases, so a
//! stale holder's late ack frees nothing, and nothing frees twice.
//!
//! **A rate is a sliding window log on the Redis clock**: each start (a
//! lease granted) is recorded with the claim's time; a start is allowed
//! while fewer than `max` are recorded in the last `per`. So in every window
//! of length `per` at most `max` jobs start, exactly (to the whole
//! millisecond of Redis's clock), whichever workers and hosts claim. Why not
//! a token bucket: a bucket of capacity B refilling at max/per lets B + max
//! start within one `per`, and "100 a second" for a remote API means a
//! window. The cost is one sorted-set entry per start, kept for `per`: at
//! most `max` entries per limiter.
//!
//! **Push-back**: a handler that hits a remote 429 returns
//! [`JobError::rate_limited`](crate::worker::JobError::rate_limited)`(retry_after)`.
//! The job is released without counting an attempt
//! ([`RedisQueue::release_pushing_back`](crate::RedisQueue::release_pushing_back)), and its limiter (its limit key,
//! or the queue when it has none) starts nothing until `retry_after` from
//! now; of two push-backs the later end wins. Each push-back is a
//! [`pushed_back`](crate::events::EventKind::PushedBack) event on the
//! traffic stream (the job, its limiter, until when, the worker), so a job
//! pushed back again and again is seen. There is no cap: a 429 is the
//! remote's "not now", not a failed attempt, so it counts no attempt and
//! spends none of the job's retry window; the events and the limiter's
//! push-back in [`QueueLimits`] show it.
//!
//! # Bounds
//!
//! Refused before anything is sent, with a sentence naming the value and
//! what is accepted; a refused call writes nothing:
//!
//! | what | accepted |
//! |---|---|
//! | concurrency | 1 to [`MAX_CONCURRENCY`] (1 000 000), or none |
//! | rate max | 1 to [`MAX_RATE`] (100 000) starts per interval |
//! | rate interval | whole milliseconds, 1 ms to [`MAX_INTERVAL`] (24 h) |
//! | push-back | 1 ms to [`MAX_PUSHBACK`] (24 h) |
//! | limit key | 1 to 512 bytes without control characters |
//!
//! # What a claim costs
//!
//! Jobs over a limit are **held**: a due job whose key has no room waits in
//! the queue's held set ([`JobState::Held`](crate::JobState::Held)), not
//! among the waiting jobs, and a key without room is not in the index of
//! ready keys. So claims never scan held jobs, and a throttled key does not
//! block other keys or unkeyed jobs, which are claimed in priority order as
//! before (no head-of-line blocking). One claim call costs
//! O(jobs taken + keys woken (at most 100) + keys found without room (at
//! most 2 × the claim limit + 16)) Redis calls, whatever the number of held
//! jobs.
//!
//! A queue-wide limit holds jobs back without holding them: an unkeyed due
//! job waits among the waiting jobs, and a key with room of its own stays
//! ready, while the queue has no room. [`QueueLimits::held_by_queue`]
//! counts those, and [`QueueLimits::why`] says which limit holds a key's
//! jobs (its own, the queue's, a push-back, a pause, or none: no worker
//! claimed them yet).
//!
//! Keyed jobs always go through the held set and the ready index, whether or
//! not a limit is set for their key, so the accounting is exact at every
//! moment and a limit can be set live. A queue becomes **flow-aware** once it
//! has a limits entry: set by [`RedisQueue::set_limit`](crate::RedisQueue::set_limit), by the enqueue of a
//! keyed job, or by a push-back; clearing writes zeros, never deletes it, so
//! the leased counts stay exact. A queue that never had limits or keys pays
//! one `HGET` per claim call and per ack call, and nothing per job.
//!
//! # Raising a limit
//!
//! A change takes effect at the next claim. A raised limit (or a cleared
//! one) also puts every key with held jobs up for a re-check at once, so
//! their jobs start without waiting for a slot to free or a window to pass;
//! [`RedisQueue::set_limit`](crate::RedisQueue::set_limit) does that in bounded steps (1000 keys a call)
//! before it returns. A lowered limit lets running jobs finish: nothing is
//! taken back, new starts wait until use is under the new limit.
//!
//! # Hand-offs, priorities, ordering keys
//!
//! A flow-aware queue hands nothing off to a parked worker: its enqueues
//! wake its workers, which claim, so every start goes through the limits.
//! Within what the limits allow, jobs are claimed highest priority first,
//! oldest first. A job with both an ordering key and a limit key waits for
//! its ordering key first, then for room under its limit key.
//!
//! # Sharded queues
//!
//! A [`ShardedQueue`](crate::ShardedQueue) sends a job to the shard of its
//! ordering key, else of its limit key, else of its dedup key, else the next
//! in turn. So **per-key limits are exact**: all jobs of a limit key meet on
//! one shard, provided they carry no ordering key of their own (a job's
//! ordering key decides its shard first). **Queue-wide limits are split**:
//! shard `i` of `S` enforces its share, and the shares sum to exactly the
//! limit (concurrency 10 over 3 shards is 4, 3, 3; a rate likewise, over
//! the same interval). A queue-wide limit smaller than the shard count is
//! refused, since some shard would get none. Why split: an exact
//! cross-shard limit would send every claim of every shard through one
//! Redis, which is what sharding exists to avoid. Each-key and one-key
//! limits are written to every shard (a key is used only on its own).
//! [`Operator::limits`](crate::Operator::limits) reads every shard and adds
//! the shares back up.
//!
//! ```no_run
//! use std::time::Duration;
//! use redq::flow::{Limit, LimitScope, Rate};
//! use redq::{NewJob, RedisQueue};
//!
//! # async fn demo() -> Result<(), redq::QueueError> {
//! let queue = RedisQueue::connect("redis://127.0.0.1:6379").await?;
//! // The mail provider takes 100 requests a second, 20 at once...
//! queue.set_limit("emails", LimitScope::Queue, Limit::concurrency(20).and_rate(100, Duration::from_secs(1))).await?;
//! // ... and each tenant gets at most 2 at once, tenant acme 5.
//! queue.set_limit("emails", LimitScope::EachKey, Limit::concurrency(2)).await?;
//! queue.set_limit("emails", LimitScope::Key("acme".into()), Limit::concurrency(5)).await?;
//! queue.add("emails", NewJob::new(serde_json::json!({"to": "ada@acme.test"})).limit_key("acme")).await?;
//!
//! let limits = queue.limits("emails").await?;
//! println!("{} leased, {} held", limits.leased, limits.held);
//! # let _ = Rate::per_second(1);
//! # Ok(()) }
//! ```

mod read;
pub(crate) mod shares;
mod why;
mod write;

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::limits::{check_text, MAX_KEY_LEN};
use crate::QueueError;

pub use read::{KeyLimitUse, QueueLimits, ShardLimit};
pub use why::{Blocked, HeldBy};

/// The most jobs one limit lets be leased at once.
pub const MAX_CONCURRENCY: u32 = 1_000_000;
/// The most starts one rate allows per interval.
pub const MAX_RATE: u32 = 100_000;
/// The longest rate interval.
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// The longest push-back ([`crate::worker::JobError::rate_limited`]).
pub const MAX_PUSHBACK: Duration = Duration::from_secs(24 * 3600);
/// The most keys [`crate::RedisQueue::limits`] reads for one queue.
pub const MAX_LISTED_KEYS: usize = 100_000;

/// At most `max` jobs started in any window of length `per` (Redis clock,
/// whole milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Rate {
    /// Starts allowed per window (1 to [`MAX_RATE`]).
    pub max: u32,
    /// The window (whole milliseconds, 1 ms to [`MAX_INTERVAL`]).
    pub per: Duration,
}

impl Rate {
    /// `max` starts per `per`.
    pub fn new(max: u32, per: Duration) -> Rate {
        Rate { max, per }
    }

    /// `max` starts per second.
    pub fn per_second(max: u32) -> Rate {
        Rate::new(max, Duration::from_secs(1))
    }

    /// `max` starts per minute.
    pub fn per_minute(max: u32) -> Rate {
        Rate::new(max, Duration::from_secs(60))
    }

    /// `max` starts per hour.
    pub fn per_hour(max: u32) -> Rate {
        Rate::new(max, Duration::from_secs(3600))
    }

    /// Refuse a rate outside the bounds (see the module docs).
    pub fn validate(&self) -> Result<(), QueueError> {
        if self.max == 0 || self.max > MAX_RATE {
            return Err(QueueError::invalid(
                "rate",
                self.max.to_string(),
                format!("a rate allows 1 to {MAX_RATE} starts per interval"),
            ));
        }
        let whole_ms = self.per.subsec_nanos().is_multiple_of(1_000_000);
        if self.per < Duration::from_millis(1) || self.per > MAX_INTERVAL || !whole_ms {
            return Err(QueueError::invalid(
                "rate interval",
                crate::human::duration_text(self.per),
                "a rate interval is whole milliseconds from 1 ms to 24 h",
            ));
        }
        Ok(())
    }
}

/// `100/1s`, `5/500ms`, `1000/1h`: the form `redq limits set --rate` reads.
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.max, interval(self.per))
    }
}

/// An interval in the largest whole unit: `1h`, `2m`, `1s`, `1500ms`.
fn interval(per: Duration) -> String {
    let ms = per.as_millis();
    match ms {
        0 => "0ms".to_owned(),
        _ if ms.is_multiple_of(3_600_000) => format!("{}h", ms / 3_600_000),
        _ if ms.is_multiple_of(60_000) => format!("{}m", ms / 60_000),
        _ if ms.is_multiple_of(1000) => format!("{}s", ms / 1000),
        _ => format!("{ms}ms"),
    }
}

/// A concurrency bound, a rate, both, or neither ([`Limit::none`], which
/// clears a scope).
///
/// ```
/// use std::time::Duration;
/// use redq::flow::Limit;
/// let limit = Limit::concurrency(5).and_rate(100, Duration::from_secs(1));
/// assert!(limit.validate().is_ok());
/// assert!(Limit::concurrency(0).validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Limit {
    /// At most this many leased at once (1 to [`MAX_CONCURRENCY`]), or no bound.
    pub concurrency: Option<u32>,
    /// At most this many started per window, or no bound.
    pub rate: Option<Rate>,
}

impl Limit {
    /// No bound at all: setting it clears the scope.
    pub fn none() -> Limit {
        Limit::default()
    }

    /// At most `n` leased at once.
    pub fn concurrency(n: u32) -> Limit {
        Limit::none().and_concurrency(n)
    }

    /// At most `max` started in any window of `per`.
    pub fn rate(max: u32, per: Duration) -> Limit {
        Limit::none().and_rate(max, per)
    }

    /// This limit with a concurrency bound of `n` as well.
    #[must_use]
    pub fn and_concurrency(mut self, n: u32) -> Limit {
        self.concurrency = Some(n);
        self
    }

    /// This limit with a rate of `max` per `per` as well.
    #[must_use]
    pub fn and_rate(mut self, max: u32, per: Duration) -> Limit {
        self.rate = Some(Rate::new(max, per));
        self
    }

    /// Whether it bounds nothing.
    pub fn is_none(&self) -> bool {
        self.concurrency.is_none() && self.rate.is_none()
    }

    /// Refuse a limit outside the bounds (see the module docs), before
    /// anything is sent.
    pub fn validate(&self) -> Result<(), QueueError> {
        if let Some(n) = self.concurrency {
            if n == 0 || n > MAX_CONCURRENCY {
                return Err(concurrency_refused(&n.to_string()));
            }
        }
        if let Some(rate) = &self.rate {
            rate.validate()?;
        }
        Ok(())
    }

    /// The three numbers the scripts store: concurrency, rate max, rate
    /// interval in ms (each 0 for none). Only for a validated limit.
    pub(crate) fn spec(&self) -> [u64; 3] {
        let (max, per) = match &self.rate {
            Some(rate) => (rate.max as u64, rate.per.as_millis() as u64),
            None => (0, 0),
        };
        [self.concurrency.unwrap_or(0) as u64, max, per]
    }

    /// The limit three stored numbers describe (0 = none).
    pub(crate) fn from_spec([concurrency, max, per]: [u64; 3]) -> Limit {
        Limit {
            concurrency: (concurrency > 0).then(|| concurrency.min(u32::MAX as u64) as u32),
            rate: (max > 0 && per > 0).then(|| Rate {
                max: max.min(u32::MAX as u64) as u32,
                per: Duration::from_millis(per),
            }),
        }
    }
}

/// `5 at once, 100/1s`; `none` when it bounds nothing.
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.concurrency, &self.rate) {
            (None, None) => f.write_str("none"),
            (Some(n), None) => write!(f, "{n} at once"),
            (None, Some(rate)) => write!(f, "{rate}"),
            (Some(n), Some(rate)) => write!(f, "{n} at once, {rate}"),
        }
    }
}

/// Which limiter of a queue a limit is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitScope {
    /// The queue as a whole: every job of it, keyed or not.
    Queue,
    /// The default for every limit key of the queue.
    EachKey,
    /// One limit key's override of the each-key default.
    Key(String),
}

impl LimitScope {
    /// Refuse a bad limit key.
    pub fn validate(&self) -> Result<(), QueueError> {
        if let LimitScope::Key(key) = self {
            check_limit_key(key)?;
        }
        Ok(())
    }

    /// The scope and key arguments of `lua/limits_set.lua`.
    pub(crate) fn args(&self) -> (&'static str, &str) {
        match self {
            LimitScope::Queue => ("queue", ""),
            LimitScope::EachKey => ("each_key", ""),
            LimitScope::Key(key) => ("key", key),
        }
    }
}

/// `queue-wide`, `each key`, `key "acme"`.
impl fmt::Display for LimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitScope::Queue => f.write_str("queue-wide"),
            LimitScope::EachKey => f.write_str("each key"),
            LimitScope::Key(key) => write!(f, "key {key:?}"),
        }
    }
}

/// Read a concurrency bound as typed (`redq limits set --concurrency`):
/// a whole number from 1 to [`MAX_CONCURRENCY`]. The refusal names the
/// text as it was typed and the accepted range, the same sentence
/// [`Limit::validate`] gives, so a `-1` or a `99999999999` is judged by the
/// same rule as a 0.
///
/// ```
/// assert_eq!(redq::flow::parse_concurrency("20").unwrap(), 20);
/// let refused = redq::flow::parse_concurrency("-1").unwrap_err().to_string();
/// assert!(refused.contains("\"-1\"") && refused.contains("1 to 1000000"), "{refused}");
/// ```
pub fn parse_concurrency(text: &str) -> Result<u32, QueueError> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => Ok(n),
        _ => Err(concurrency_refused(text)),
    }
}

/// The one sentence a concurrency outside 1 to [`MAX_CONCURRENCY`] gets.
fn concurrency_refused(value: &str) -> QueueError {
    QueueError::invalid(
        "concurrency",
        value,
        format!(
            "a concurrency limit is 1 to {MAX_CONCURRENCY} jobs at once (leave it unset for none)"
        ),
    )
}

/// A limit key: 1 to 512 bytes without control characters (the same rule
/// as ordering keys; the scripts use `\n` inside sorted-set members).
pub(crate) fn check_limit_key(key: &str) -> Result<(), QueueError> {
    check_text("limit key", key, MAX_KEY_LEN)
}

/// A push-back of 1 ms to [`MAX_PUSHBACK`], in whole milliseconds
/// (rounded up, so a push-back never ends early).
pub(crate) fn check_pushback(retry_after: Duration) -> Result<u64, QueueError> {
    if retry_after.is_zero() || retry_after > MAX_PUSHBACK {
        return Err(QueueError::invalid(
            "push-back",
            format!("{retry_after:?}"),
            "a push-back (retry after) is 1 ms to 24 h",
        ));
    }
    Ok(retry_after.as_nanos().div_ceil(1_000_000) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(limit: Limit) -> String {
        limit.validate().expect_err("refused").to_string()
    }

    #[test]
    fn limits_inside_the_bounds_are_accepted() {
        for limit in [
            Limit::none(),
            Limit::concurrency(1),
            Limit::concurrency(MAX_CONCURRENCY),
            Limit::rate(1, Duration::from_millis(1)),
            Limit::rate(MAX_RATE, MAX_INTERVAL),
            Limit::concurrency(5).and_rate(100, Duration::from_secs(1)),
        ] {
            assert!(limit.validate().is_ok(), "{limit:?}");
        }
    }

    #[test]
    fn zero_huge_and_fractional_limits_are_refused_with_what_is_accepted() {
        let text = refused(Limit::concurrency(0));
        assert!(
            text.contains("\"0\"") && text.contains("1 to 1000000"),
            "{text}"
        );
        assert!(refused(Limit::concurrency(MAX_CONCURRENCY + 1)).contains("1000001"));
        let text = refused(Limit::rate(0, Duration::from_secs(1)));
        assert!(text.contains("1 to 100000 starts"), "{text}");
        assert!(refused(Limit::rate(MAX_RATE + 1, Duration::from_secs(1))).contains("100001"));
        let text = refused(Limit::rate(1, Duration::ZERO));
        assert!(
            text.contains("1 ms to 24 h") && text.contains("\"0 ms\""),
            "{text}"
        );
        assert!(
            refused(Limit::rate(1, MAX_INTERVAL + Duration::from_millis(1)))
                .contains("rate interval")
        );
        assert!(refused(Limit::rate(1, Duration::from_micros(1500))).contains("whole"));
        // A bad rate is refused even next to a good concurrency.
        assert!(Limit::concurrency(3)
            .and_rate(0, Duration::from_secs(1))
            .validate()
            .is_err());
    }

    #[test]
    fn a_bad_limit_key_is_refused() {
        assert!(LimitScope::Key(String::new()).validate().is_err());
        assert!(LimitScope::Key("a\nb".into()).validate().is_err());
        assert!(LimitScope::Key("x".repeat(513)).validate().is_err());
        let text = LimitScope::Key(String::new())
            .validate()
            .unwrap_err()
            .to_string();
        assert!(text.contains("limit key"), "{text}");
        assert!(LimitScope::Key("acme".into()).validate().is_ok());
        assert!(LimitScope::Queue.validate().is_ok());
    }

    #[test]
    fn a_pushback_is_1_ms_to_24_h_rounded_up_to_whole_ms() {
        assert!(check_pushback(Duration::ZERO).is_err());
        assert!(check_pushback(MAX_PUSHBACK + Duration::from_millis(1)).is_err());
        assert_eq!(check_pushback(Duration::from_micros(1)).unwrap(), 1);
        assert_eq!(check_pushback(Duration::from_micros(1500)).unwrap(), 2);
        assert_eq!(check_pushback(MAX_PUSHBACK).unwrap(), 86_400_000);
    }

    #[test]
    fn the_stored_numbers_round_trip() {
        for limit in [
            Limit::none(),
            Limit::concurrency(7),
            Limit::rate(100, Duration::from_secs(1)),
            Limit::concurrency(2).and_rate(5, Duration::from_millis(250)),
        ] {
            assert_eq!(Limit::from_spec(limit.spec()), limit);
        }
        assert_eq!(Limit::none().spec(), [0, 0, 0]);
    }

    #[test]
    fn limits_print_the_way_the_cli_reads_them() {
        assert_eq!(Limit::none().to_string(), "none");
        assert_eq!(
            Limit::concurrency(5)
                .and_rate(100, Duration::from_secs(1))
                .to_string(),
            "5 at once, 100/1s"
        );
        assert_eq!(
            Rate::new(3, Duration::from_millis(1500)).to_string(),
            "3/1500ms"
        );
        assert_eq!(Rate::per_minute(9).to_string(), "9/1m");
        assert_eq!(Rate::per_hour(9).to_string(), "9/1h");
        assert_eq!(LimitScope::Key("acme".into()).to_string(), "key \"acme\"");
    }
}
