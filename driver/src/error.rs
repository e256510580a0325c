//! The one error type of the crate.

use std::time::Duration;

/// Everything that can go wrong talking to a redq queue.
///
/// Input errors ([`QueueError::Invalid`], [`QueueError::PayloadTooLarge`]) are
/// raised before anything is sent to Redis, so nothing is ever half written.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// An argument broke a rule; `what` names it, `rule` says what is accepted.
    #[error("invalid {what} {value:?}: {rule}")]
    Invalid {
        /// Which argument (e.g. "queue name").
        what: &'static str,
        /// The offending value, shortened when long.
        value: String,
        /// What is accepted instead.
        rule: String,
    },
    /// A payload is larger than the configured limit.
    #[error("payload is {size} bytes, over the limit of {limit} bytes")]
    PayloadTooLarge {
        /// Serialized payload size in bytes.
        size: usize,
        /// The configured limit ([`crate::RedisQueueBuilder::payload_limit`]).
        limit: usize,
    },
    /// The job is not held under this lease any more: the lease lapsed and was
    /// reclaimed, or the job was claimed again. Nothing was changed.
    #[error("lease lost on job {id}: it is no longer held under lease {lease_id}")]
    LeaseLost {
        /// The job.
        id: String,
        /// The lease that was presented (0 when none was known).
        lease_id: u64,
    },
    /// No job with this id exists (in the given queue, when one was named).
    #[error("no job {id}")]
    JobNotFound {
        /// The job id that was looked up.
        id: String,
    },
    /// Redis refused a write because it reached `maxmemory` (policy
    /// `noeviction`). Nothing was written; claims, acks and dead-lettering
    /// keep working so workers can drain the queue.
    #[error("redis is out of memory (maxmemory reached); nothing was written")]
    OutOfMemory,
    /// A command did not complete within the configured timeout; it may or
    /// may not have been applied.
    #[error("redis command timed out after {0:?}; it may or may not have been applied")]
    Timeout(Duration),
    /// Connecting failed: the URL or settings are unusable, or the server
    /// could not be reached; the message says which.
    #[error("connection: {0}")]
    Config(String),
    /// Redis answered something the driver did not expect (a bug or a
    /// foreign writer in the namespace).
    #[error("unexpected reply from redis: {0}")]
    Protocol(String),
    /// Any other Redis or connection failure.
    #[error("redis error: {0}")]
    Redis(#[source] RedisError),
}

/// An error reported by the Redis client, kept as the source of
/// [`QueueError::Redis`]. Its text never contains credentials.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct RedisError(pub(crate) fred::error::Error);

impl QueueError {
    pub(crate) fn invalid(
        what: &'static str,
        value: impl AsRef<str>,
        rule: impl Into<String>,
    ) -> Self {
        QueueError::Invalid {
            what,
            value: shorten(value.as_ref()),
            rule: rule.into(),
        }
    }

    pub(crate) fn from_redis(err: fred::error::Error, timeout: Duration) -> Self {
        use fred::error::ErrorKind;
        let details = err.details();
        if details.starts_with("OOM") || details.contains("maxmemory") {
            return QueueError::OutOfMemory;
        }
        if *err.kind() == ErrorKind::Timeout {
            return QueueError::Timeout(timeout);
        }
        QueueError::Redis(RedisError(err))
    }
}

/// Keep error messages readable when a caller passes a huge value.
fn shorten(value: &str) -> String {
    const MAX: usize = 80;
    if value.len() <= MAX {
        return value.to_owned();
    }
    let mut end = MAX;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &value[..end], value.len())
}
