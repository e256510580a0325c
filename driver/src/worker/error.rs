//! Why a job run did not succeed.

use std::fmt;
use std::time::Duration;

/// Why a run did not succeed: retry it (after the backoff or a given delay),
/// fail it now, straight to the dead-letter set, give it back because a
/// remote service rate-limited it ([`JobError::rate_limited`]), or give it
/// back because the worker is shutting down ([`JobError::stopped`]).
///
/// Any error converts into a retry with `?`: every `std::error::Error`,
/// `anyhow::Error` (through its conversion into a boxed error, so this crate
/// needs no `anyhow` dependency of its own), `String` and `&str`. The
/// recorded text is the error and its sources joined by `: `, as `{:#}`
/// prints an `anyhow` chain ("reading config: no such file"). `JobError`
/// deliberately does not implement `std::error::Error`, which is what makes
/// that blanket conversion possible.
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
    /// A remote service said "not now" (a 429): give the job back without
    /// counting an attempt, and push its limiter back; see
    /// [`JobError::rate_limited`].
    RateLimited {
        /// How long its limiter starts nothing (1 ms to 24 h; the worker
        /// clamps a value outside that range into it).
        retry_after: Duration,
    },
    /// The run stopped early for the worker's shutdown: give the job back
    /// without counting an attempt; see [`JobError::stopped`].
    Stopped,
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

    /// A remote service rate-limited this run (e.g. an HTTP 429 with
    /// `Retry-After`): the worker releases the job with a push-back
    /// ([`RedisQueue::release_pushing_back`](crate::RedisQueue::release_pushing_back)).
    /// No attempt is counted and no error recorded; the job's limiter (its
    /// limit key, or its queue when it has none) starts nothing for
    /// `retry_after`, so the key's other jobs wait too, without spending
    /// their attempts.
    ///
    /// What the handler sees next time: the same job, with the same
    /// attempt number ([`JobCx::attempt`](super::JobCx::attempt) unchanged)
    /// and payload, claimed again (by any worker) once the push-back is
    /// over and its limits have room; its progress and log lines not yet
    /// sent are dropped, as on any release. `retry_after` is clamped to
    /// 1 ms ..= 24 h. A [`MemoryQueue`](crate::MemoryQueue) worker, which
    /// has no limits, puts the job back due after `retry_after`.
    pub fn rate_limited(retry_after: Duration) -> Self {
        JobError::RateLimited { retry_after }
    }

    /// The run stopped early because the worker is shutting down (its
    /// [`JobCx::cancelled`](super::JobCx::cancelled) fired), after saving
    /// what it must: the worker gives the job back at once, due again
    /// immediately with no attempt counted, as it does with a job still
    /// running when the grace period ends. So a handler that cooperates
    /// with a shutdown is not charged an attempt that one ignoring it is
    /// not. Returned while the worker is not shutting down (an operator's
    /// cancel, or by mistake), it is an ordinary retry after the backoff,
    /// with an error saying so, so that a handler returning it at every run
    /// cannot spin.
    pub fn stopped() -> Self {
        JobError::Stopped
    }

    /// The error text that is recorded (a rate-limited or stopped run
    /// records none; this is its description for logs).
    pub fn message(&self) -> &str {
        match self {
            JobError::Retry { error, .. } | JobError::Fail { error } => error,
            JobError::RateLimited { .. } => "rate limited by a remote service",
            JobError::Stopped => "stopped early for the worker's shutdown",
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
    E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
{
    fn from(error: E) -> Self {
        let error = error.into();
        let mut text = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        JobError::retry(text)
    }
}

#[cfg(test)]
mod tests {
    use super::JobError;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("reading config")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    fn converted(error: impl Into<JobError>) -> JobError {
        error.into()
    }

    #[test]
    fn any_error_converts_into_a_retry_recording_its_source_chain() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = converted(Outer(io));
        assert!(matches!(error, JobError::Retry { after: None, .. }));
        assert_eq!(error.message(), "reading config: no such file");
        assert_eq!(converted("plain text").message(), "plain text");
        assert_eq!(converted(String::from("owned")).message(), "owned");
    }

    #[test]
    fn an_anyhow_error_keeps_its_context_chain() {
        use anyhow::Context as _;
        let failed: anyhow::Result<u32> = "x".parse::<u32>().context("loading the invoice");
        let error = converted(failed.unwrap_err());
        assert_eq!(
            error.message(),
            "loading the invoice: invalid digit found in string"
        );
    }
}
