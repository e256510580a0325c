//! Why a job run did not succeed.

use std::fmt;
use std::time::Duration;

/// Why a run did not succeed: retry it (after the backoff or a given delay),
/// or fail it now, straight to the dead-letter set.
///
/// Any error converts into a retry with `?`, so handlers can use
/// `anyhow::Result`-style code. `JobError` deliberately does not implement
/// `std::error::Error`, which is what makes that blanket conversion possible.
#[derive(Debug)]
#[non_exhaustive]
pub enum JobError {
    /// Try again: after `after`, or after the job type's backoff.
    Retry {
        /// What went wrong.
        error: String,
        /// A delay chosen by the handler (e.g. a rate limit's Retry-After).
        after: Option<Duration>,
    },
    /// Do not try again: dead-letter the job now.
    Fail {
        /// What went wrong.
        error: String,
    },
}

impl JobError {
    /// Retry after the job type's backoff.
    pub fn retry(error: impl fmt::Display) -> Self {
        JobError::Retry {
            error: error.to_string(),
            after: None,
        }
    }

    /// Retry after exactly `delay`.
    pub fn retry_after(error: impl fmt::Display, delay: Duration) -> Self {
        JobError::Retry {
            error: error.to_string(),
            after: Some(delay),
        }
    }

    /// Dead-letter now.
    pub fn fail(error: impl fmt::Display) -> Self {
        JobError::Fail {
            error: error.to_string(),
        }
    }

    /// The error text that is recorded.
    pub fn message(&self) -> &str {
        match self {
            JobError::Retry { error, .. } | JobError::Fail { error } => error,
        }
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl<E> From<E> for JobError
where
    E: Into<anyhow::Error>,
{
    fn from(error: E) -> Self {
        // `{:#}` keeps anyhow's context chain ("reading config: no such file").
        JobError::retry(format!("{:#}", error.into()))
    }
}
