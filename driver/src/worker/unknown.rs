//! A claimed job whose name no handler is registered for on this worker.
//!
//! In a rolling deploy producers may ship a job type before every worker
//! has it, and an old worker must not bury the new jobs it claims. So by
//! default the worker records a failed attempt and the job comes back, as
//! Sidekiq and asynq do, after the backoff a job type with every default
//! would get (from 1 s, doubling), so an unlimited job does not spin, and
//! counted against the job's own `max_attempts` or, when it has none, the
//! default `MAX_ATTEMPTS` (10), so a name no worker will ever know (a
//! typo) still reaches the dead letters, after about 4 to 9 minutes.

use std::time::Duration;

use super::attempts;
use super::typed::{DEFAULT_BACKOFF, DEFAULT_MAX_ATTEMPTS};
use crate::Job;

/// What a worker does with a job whose name it has no handler for
/// ([`super::WorkOptions::unknown_names`]). Its error text names the name
/// and says "no handler registered on this worker" either way. A job with
/// no name at all is dead-lettered at once under both: no typed worker can
/// run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownNames {
    /// Record a failed attempt and retry after the default backoff (1 s,
    /// doubling, with jitter); dead-letter once the job's own
    /// `max_attempts` or, when it has none, 10 attempts are spent. With the
    /// defaults a job gets about 4 to 9 minutes to find a worker that has
    /// its type: enough for a rolling deploy to reach the workers, not for
    /// one that takes hours (give those jobs a larger `max_attempts`). The
    /// default.
    #[default]
    Retry,
    /// Dead-letter the job at once: for a fleet that always runs one
    /// registry, where an unknown name is a mistake to see at once.
    DeadLetter,
}

impl UnknownNames {
    /// The failure to record for `job`: the delay before its retry, and
    /// whether it is dead instead.
    pub(super) fn failure(self, job: &Job) -> (Duration, bool) {
        match (self, &job.name) {
            (UnknownNames::Retry, Some(_)) => (
                DEFAULT_BACKOFF.delay(job.attempts.saturating_add(1)),
                attempts::spent(job, DEFAULT_MAX_ATTEMPTS),
            ),
            _ => (Duration::ZERO, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: Option<&str>, attempts: u32, max_attempts: u32) -> Job {
        super::attempts::tests::named_job(name, attempts, max_attempts)
    }

    #[test]
    fn a_retried_unknown_name_without_a_limit_gets_the_default_ten_attempts() {
        let retry = UnknownNames::Retry;
        // Attempt 9 fails: back after the 9th retry's backoff (128 to 256 s).
        let (delay, dead) = retry.failure(&job(Some("new"), 8, 0));
        assert!(!dead);
        assert!(delay >= Duration::from_secs(128) && delay <= Duration::from_secs(256));
        // Attempt 10 fails: dead.
        assert!(retry.failure(&job(Some("new"), 9, 0)).1);
        // Its own limit is the scripts' to enforce.
        assert!(!retry.failure(&job(Some("new"), 9, 25)).1);
    }

    #[test]
    fn dead_letter_and_a_nameless_job_are_dead_at_once() {
        assert_eq!(
            UnknownNames::DeadLetter.failure(&job(Some("new"), 0, 0)),
            (Duration::ZERO, true)
        );
        assert_eq!(
            UnknownNames::Retry.failure(&job(None, 0, 0)),
            (Duration::ZERO, true)
        );
    }
}
