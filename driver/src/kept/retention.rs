//! A queue's retention policy: read, set and cleared live
//! (`lua/retention.lua`).

use std::time::Duration;

use serde::Serialize;

use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{limits, QueueError, RedisQueue};

/// Kept jobs a clear forgets per script call.
const CLEAR_BATCH: u64 = 1000;

/// The smallest size bound accepted: 1 KiB. A kept job is charged its id
/// twice, its record and a quarter more, and 160 bytes for its entries
/// (`lua/lib/kept.lua`): about 220 bytes for a small job without a result,
/// so a bound much under this keeps nothing, or a job at a time.
pub const MIN_RETENTION_BYTES: u64 = 1024;

/// What a queue keeps of its finished (completed and cancelled) jobs. At
/// least one of the count, age and size bounds must be set.
///
/// A policy is whole: [`RedisQueue::set_retention`] replaces the queue's
/// policy with this one, so a bound not set here is no longer a bound.
///
/// A kept job older than the age bound is gone to every read at once
/// ([`RedisQueue::result`], [`RedisQueue::list_kept`], the counts of
/// [`RedisQueue::retention`]), on Redis's clock; its memory is freed by
/// the queue's next ack or cancel, which trims it (see [`crate::kept`]).
///
/// ```
/// use std::time::Duration;
/// use redq::kept::Retention;
/// let keep = Retention::new().max_count(10_000).max_age(Duration::from_secs(86_400));
/// assert_eq!(keep.tombstone_age(), Duration::from_secs(86_400));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Retention {
    max_count: u64,
    max_age: Option<Duration>,
    max_bytes: u64,
    tombstone_age: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention::new()
    }
}

impl Retention {
    /// No bound yet (refused until one is set); tombstones last a day.
    pub fn new() -> Retention {
        Retention {
            max_count: 0,
            max_age: None,
            max_bytes: 0,
            tombstone_age: Duration::from_secs(86_400),
        }
    }

    /// Keep at most `n` completed and `n` cancelled jobs (0 = no count bound).
    #[must_use]
    pub fn max_count(mut self, n: u64) -> Retention {
        self.max_count = n;
        self
    }

    /// Forget kept jobs older than `age`.
    #[must_use]
    pub fn max_age(mut self, age: Duration) -> Retention {
        self.max_age = Some(age);
        self
    }

    /// Keep at most about `bytes` of kept jobs (records, ids and their
    /// entries' overhead as estimated by `lua/lib/kept.lua`; 0 = no size
    /// bound). Refused under [`MIN_RETENTION_BYTES`] when set.
    #[must_use]
    pub fn max_bytes(mut self, bytes: u64) -> Retention {
        self.max_bytes = bytes;
        self
    }

    /// How long a tombstone outlives its kept record (default a day).
    #[must_use]
    pub fn keep_tombstones_for(mut self, age: Duration) -> Retention {
        self.tombstone_age = age;
        self
    }

    /// The count bound (0 = none).
    pub fn count_bound(&self) -> u64 {
        self.max_count
    }

    /// The age bound.
    pub fn age_bound(&self) -> Option<Duration> {
        self.max_age
    }

    /// The size bound in bytes (0 = none).
    pub fn bytes_bound(&self) -> u64 {
        self.max_bytes
    }

    /// How long tombstones last.
    pub fn tombstone_age(&self) -> Duration {
        self.tombstone_age
    }
}

/// A queue's policy and what it keeps now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RetentionState {
    /// The policy, `None` when the queue keeps nothing new.
    pub policy: Option<Retention>,
    /// Bytes charged to the kept jobs.
    pub kept_bytes: u64,
    /// Kept completed jobs.
    pub completed: u64,
    /// Kept cancelled jobs.
    pub cancelled: u64,
    /// Kept jobs past the age bound: no read returns or counts them in
    /// `completed` or `cancelled`, but they hold their memory (and count in
    /// `kept_bytes`) until the queue's next ack or cancel trims them.
    pub expired: u64,
}

impl RetentionState {
    /// The state of one queue over two namespaces: sums, and the first policy found.
    #[must_use]
    pub fn plus(self, other: RetentionState) -> RetentionState {
        RetentionState {
            policy: self.policy.or(other.policy),
            kept_bytes: self.kept_bytes + other.kept_bytes,
            completed: self.completed + other.completed,
            cancelled: self.cancelled + other.cancelled,
            expired: self.expired + other.expired,
        }
    }
}

impl RedisQueue {
    /// What `queue` keeps of its finished jobs.
    pub async fn retention(&self, queue: &str) -> Result<RetentionState, QueueError> {
        let items = reply::array(self.run(Op::Retention, queue, vec![text("show")]).await?)?;
        if items.is_empty() {
            return Ok(RetentionState {
                policy: None,
                kept_bytes: 0,
                completed: 0,
                cancelled: 0,
                expired: 0,
            });
        }
        let field = |i: usize| reply::count_at(&items, i);
        let (count, age, bytes, tomb) = (field(0)?, field(1)?, field(2)?, field(3)?);
        let policy = (count > 0 || age > 0 || bytes > 0).then(|| Retention {
            max_count: count,
            max_age: (age > 0).then(|| Duration::from_millis(age)),
            max_bytes: bytes,
            tombstone_age: Duration::from_millis(tomb),
        });
        Ok(RetentionState {
            policy,
            kept_bytes: field(4)?,
            completed: field(5)?,
            cancelled: field(6)?,
            expired: field(7)?,
        })
    }

    /// Keep `queue`'s finished jobs within `policy`, from its next ack or
    /// cancel on (what is kept beyond the new bounds is trimmed over the
    /// next calls, a bounded amount each; beyond a new age bound it is gone
    /// to every read at once). `policy` replaces the queue's policy whole:
    /// a bound it does not set is dropped, not kept from before. A size
    /// bound under [`MIN_RETENTION_BYTES`] is refused.
    pub async fn set_retention(&self, queue: &str, policy: &Retention) -> Result<(), QueueError> {
        if policy.max_count == 0 && policy.max_age.is_none() && policy.max_bytes == 0 {
            return Err(QueueError::invalid(
                "retention",
                "no bound",
                "a count, an age or a size bound",
            ));
        }
        let age = policy
            .max_age
            .map(|a| limits::check_duration("retention age", a))
            .transpose()?
            .unwrap_or(0);
        if policy.max_age == Some(Duration::ZERO) {
            return Err(QueueError::invalid("retention age", "0s", "at least 1 ms"));
        }
        let tomb = limits::check_duration("tombstone age", policy.tombstone_age)?;
        if tomb == 0 {
            return Err(QueueError::invalid("tombstone age", "0s", "at least 1 ms"));
        }
        if policy.max_count > u32::MAX as u64 {
            return Err(QueueError::invalid(
                "retention count",
                policy.max_count.to_string(),
                format!("at most {}", u32::MAX),
            ));
        }
        if policy.max_bytes > 0 && policy.max_bytes < MIN_RETENTION_BYTES {
            return Err(QueueError::invalid(
                "retention size",
                format!("{} bytes", policy.max_bytes),
                format!(
                    "at least {MIN_RETENTION_BYTES} bytes (1KB): a kept job is charged about 220 bytes \
                     plus its result and a quarter, so a smaller bound keeps next to nothing"
                ),
            ));
        }
        if policy.max_bytes > limits::MAX_TIME_MS {
            return Err(QueueError::invalid(
                "retention size",
                policy.max_bytes.to_string(),
                format!("at most {}", limits::MAX_TIME_MS),
            ));
        }
        let args = vec![
            text("set"),
            num(policy.max_count),
            num(age),
            num(policy.max_bytes),
            num(tomb),
        ];
        self.run(Op::Retention, queue, args).await?;
        Ok(())
    }

    /// Stop keeping `queue`'s finished jobs and forget those kept (each
    /// leaves a tombstone), 1000 per script call; `progress` is told
    /// (forgotten so far, left). Returns how many were forgotten.
    pub async fn clear_retention(
        &self,
        queue: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        let mut forgotten = 0;
        loop {
            let args = vec![text("clear"), num(CLEAR_BATCH)];
            let items = reply::array(self.run(Op::Retention, queue, args).await?)?;
            let (now, left) = (reply::count_at(&items, 0)?, reply::count_at(&items, 1)?);
            forgotten += now;
            progress(forgotten, left);
            if now == 0 || left == 0 {
                return Ok(forgotten);
            }
        }
    }
}
