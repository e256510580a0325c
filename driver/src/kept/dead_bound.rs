//! A queue's dead-letter bound: read, set, cleared and applied live
//! (`lua/dead_bound.lua`, `lua/lib/dead_bound.lua`).
//!
//! # The model
//!
//! By default a queue's dead-letter set grows without bound: a flood of
//! poison messages can fill Redis. A [`DeadBound`] (opt-in, per queue,
//! stored in Redis and read by the scripts, so every producer, worker and
//! operator of the namespace follows the same bound at once) keeps at most
//! a count of dead letters and/or none older than an age, as Sidekiq's dead
//! set (10 000 jobs, 6 months) and asynq's archive do.
//!
//! # When dead letters are trimmed
//!
//! - **When a job of the queue goes dead** (a nack that dead-letters, a
//!   reclaim of a lapsed lease whose attempts are spent, in a claim or in
//!   [`RedisQueue::reclaim`], a workflow waiter dead-lettered by its gate or
//!   by an operator's decision, an operator's
//!   [`RedisQueue::dead_letter_job`]): in the same script, the oldest dead
//!   letters past the bound go, at most 100 each time (normally the one the
//!   death pushed over the count; a reclaim trims once after all its
//!   deaths).
//! - **When the bound is set** ([`RedisQueue::set_dead_bound`]): at once,
//!   1000 per script call, in a loop until none is past it.
//! - **When asked** ([`RedisQueue::trim_dead`], `redq dead bound trim`): the
//!   age bound on a queue where no job dies, from a cron job or by hand.
//!
//! Nothing else trims: in a queue where no job dies, a dead letter past the
//! age bound stays (and is listed) until the next death or trim.
//!
//! A trimmed dead letter goes as [`RedisQueue::delete_dead`] deletes one:
//! its record, its notes and its detached payload, with one `purged` event
//! per trimming call (its `count`; its `detail` names the bound; `by` the
//! actor of the call that trimmed, when it had one). Setting and clearing a
//! bound write `retention_set` and `retention_cleared` events whose detail
//! begins `dead letters:`.
//!
//! # Cost
//!
//! Without a bound, a retry, an ack and a claim read nothing more; a job
//! that goes dead costs one `HGET` more. The bound is the field
//! `"dead\n" + queue` of `{ns}:retention`, so no script declares a new key
//! for it.

use std::time::Duration;

use serde::Serialize;

use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{limits, QueueError, RedisQueue};

/// Dead letters a set or a trim deletes per script call.
pub const DEAD_TRIM_BATCH: u64 = 1000;

/// The shortest age bound accepted: a minute. A dead letter is there for an
/// operator to look at; one deleted sooner could be gone before anyone saw
/// it (a count bound, or no dead-lettering at all, fits that case better).
pub const MIN_DEAD_AGE: Duration = Duration::from_secs(60);

/// How many dead letters a queue keeps: at most a count, none older than
/// an age, or both. At least one must be set.
///
/// A bound is whole: [`RedisQueue::set_dead_bound`] replaces the queue's
/// bound with this one, so a bound not set here is no longer a bound.
///
/// ```
/// use std::time::Duration;
/// use redq::kept::DeadBound;
/// let bound = DeadBound::new()
///     .max_count(10_000)
///     .max_age(Duration::from_secs(30 * 86_400));
/// assert_eq!(bound.count_bound(), Some(10_000));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct DeadBound {
    max_count: Option<u64>,
    max_age: Option<Duration>,
}

impl DeadBound {
    /// No bound yet (refused until one is set).
    pub fn new() -> DeadBound {
        DeadBound::default()
    }

    /// Keep at most the `n` newest dead letters (1 to 4 294 967 295).
    #[must_use]
    pub fn max_count(mut self, n: u64) -> DeadBound {
        self.max_count = Some(n);
        self
    }

    /// Delete dead letters that died more than `age` ago (at least
    /// [`MIN_DEAD_AGE`], at most ten years), on Redis's clock.
    #[must_use]
    pub fn max_age(mut self, age: Duration) -> DeadBound {
        self.max_age = Some(age);
        self
    }

    /// The count bound, if any.
    pub fn count_bound(&self) -> Option<u64> {
        self.max_count
    }

    /// The age bound, if any.
    pub fn age_bound(&self) -> Option<Duration> {
        self.max_age
    }

    /// The bound's figures as the script takes them (0 = no such bound),
    /// refused with a sentence naming what is wrong and what is accepted.
    fn checked(&self) -> Result<(u64, u64), QueueError> {
        if self.max_count.is_none() && self.max_age.is_none() {
            return Err(QueueError::invalid(
                "dead-letter bound",
                "no bound",
                "a count (--max-count), an age (--max-age) or both",
            ));
        }
        let count = match self.max_count {
            Some(0) => {
                return Err(QueueError::invalid(
                    "dead-letter count",
                    "0",
                    format!(
                        "1 to {} (to keep no dead letters, clear them with `redq dead purge`)",
                        u32::MAX
                    ),
                ))
            }
            Some(n) if n > u32::MAX as u64 => {
                return Err(QueueError::invalid(
                    "dead-letter count",
                    n.to_string(),
                    format!("1 to {}", u32::MAX),
                ))
            }
            Some(n) => n,
            None => 0,
        };
        let age = match self.max_age {
            Some(age) if age < MIN_DEAD_AGE => {
                return Err(QueueError::invalid(
                    "dead-letter age",
                    crate::human::duration_text(age),
                    "at least 1 minute (a dead letter deleted sooner could be gone before \
                     anyone saw it), at most ten years",
                ))
            }
            Some(age) => limits::check_duration("dead-letter age", age)?,
            None => 0,
        };
        Ok((count, age))
    }
}

/// A queue's dead-letter bound and its dead letters now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeadBoundState {
    /// The bound, `None` when the queue has none.
    pub bound: Option<DeadBound>,
    /// How many dead letters the queue has (on a sharded handle: over every
    /// shard).
    pub dead: u64,
}

/// What setting a bound did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeadBoundSet {
    /// The bound it replaced, `None` when the queue had none.
    pub replaced: Option<DeadBound>,
    /// Dead letters deleted at once because they were past the new bound.
    pub trimmed: u64,
}

/// A bound from the script's figures (0 = no such bound).
fn bound_of(count: u64, age_ms: u64) -> Option<DeadBound> {
    (count > 0 || age_ms > 0).then(|| DeadBound {
        max_count: (count > 0).then_some(count),
        max_age: (age_ms > 0).then(|| Duration::from_millis(age_ms)),
    })
}

impl RedisQueue {
    /// `queue`'s dead-letter bound, and how many dead letters it has.
    pub async fn dead_bound(&self, queue: &str) -> Result<DeadBoundState, QueueError> {
        let items = reply::array(self.run(Op::DeadBound, queue, vec![text("show")]).await?)?;
        let field = |i: usize| reply::count_at(&items, i);
        Ok(DeadBoundState {
            bound: bound_of(field(0)?, field(1)?),
            dead: field(2)?,
        })
    }

    /// Bound `queue`'s dead letters by `bound`, replacing any bound it had,
    /// and delete at once those past it (1000 per script call, in a loop;
    /// one `purged` event each call that deleted any). From then on every
    /// death in the queue trims toward it (see [`crate::kept::dead_bound`]).
    /// Refused, with nothing written, without a bound, with a count of 0
    /// or an age under [`MIN_DEAD_AGE`].
    pub async fn set_dead_bound(
        &self,
        queue: &str,
        bound: &DeadBound,
    ) -> Result<DeadBoundSet, QueueError> {
        let (count, age) = bound.checked()?;
        let args = vec![text("set"), num(count), num(age), num(DEAD_TRIM_BATCH)];
        let items = reply::array(self.run(Op::DeadBound, queue, args).await?)?;
        let field = |i: usize| reply::count_at(&items, i);
        let (first, left) = (field(0)?, field(1)?);
        let replaced = if field(2)? == 1 {
            bound_of(field(3)?, field(4)?)
        } else {
            None
        };
        let more = if first == DEAD_TRIM_BATCH {
            self.trim_dead_from(queue, left).await?
        } else {
            0
        };
        Ok(DeadBoundSet {
            replaced,
            trimmed: first + more,
        })
    }

    /// Remove `queue`'s dead-letter bound (its dead letters stay). Returns
    /// the bound it had, `None` when it had none.
    pub async fn clear_dead_bound(&self, queue: &str) -> Result<Option<DeadBound>, QueueError> {
        let items = reply::array(self.run(Op::DeadBound, queue, vec![text("clear")]).await?)?;
        let field = |i: usize| reply::count_at(&items, i);
        if field(0)? == 0 {
            return Ok(None);
        }
        Ok(bound_of(field(1)?, field(2)?).or(Some(DeadBound::new())))
    }

    /// Delete now `queue`'s dead letters past its bound (1000 per script
    /// call, in a loop): how an operator or a cron job applies the age bound
    /// to a queue where no job dies. Returns how many were deleted (0 when
    /// the queue has no bound).
    pub async fn trim_dead(&self, queue: &str) -> Result<u64, QueueError> {
        let dead = self.dead_bound(queue).await?.dead;
        self.trim_dead_from(queue, dead).await
    }

    /// Trim calls until one deletes less than a batch, at most as many as
    /// `dead` (the dead letters there were) takes, so jobs dying meanwhile
    /// cannot keep it looping.
    async fn trim_dead_from(&self, queue: &str, dead: u64) -> Result<u64, QueueError> {
        let rounds = dead / DEAD_TRIM_BATCH + 1;
        let mut trimmed = 0;
        for _ in 0..rounds {
            let args = vec![text("trim"), num(DEAD_TRIM_BATCH)];
            let items = reply::array(self.run(Op::DeadBound, queue, args).await?)?;
            let now = reply::count_at(&items, 0)?;
            trimmed += now;
            if now < DEAD_TRIM_BATCH {
                break;
            }
        }
        Ok(trimmed)
    }
}
