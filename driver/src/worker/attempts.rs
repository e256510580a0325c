//! The attempt limit a failed run is held to when its job has none.
//!
//! The scripts enforce a job's own `max_attempts`. A job enqueued by name
//! (`NewJob::name`, a schedule's `job_name`, `redq enqueue`) usually has
//! none (0: unlimited), because whoever enqueued it did not know the type;
//! the worker does, so it applies the type's `MAX_ATTEMPTS` itself: the
//! failed run that reaches it is dead-lettered in the same fenced call that
//! would have retried it, so its error text, `dead` event and
//! `Worker::failures` message are those of any dead-lettering at max
//! attempts. A job with a limit of its own keeps it.

use crate::Job;

/// Whether the run of `job` that just failed (attempt `job.attempts + 1`)
/// spends its attempts under `type_limit` (0: unlimited), which applies
/// only to a job without a limit of its own.
pub(super) fn spent(job: &Job, type_limit: u32) -> bool {
    job.max_attempts == 0 && type_limit > 0 && job.attempts.saturating_add(1) >= type_limit
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A claimed job named `name`, after `attempts` failed runs, with its
    /// own limit `max_attempts` (0: none).
    pub(in crate::worker) fn named_job(
        name: Option<&str>,
        attempts: u32,
        max_attempts: u32,
    ) -> Job {
        Job {
            id: "j".into(),
            queue: "q".into(),
            payload: serde_json::Value::Null,
            attempts,
            lease_id: 1,
            lease_expires_at: std::time::SystemTime::UNIX_EPOCH,
            priority: 0,
            enqueued_at: std::time::SystemTime::UNIX_EPOCH,
            ordering_key: None,
            name: name.map(str::to_owned),
            max_attempts,
            noted: false,
            trace_parent: None,
            awaits: None,
        }
    }

    fn job(attempts: u32, max_attempts: u32) -> Job {
        named_job(Some("t"), attempts, max_attempts)
    }

    #[test]
    fn the_type_limit_applies_only_to_a_job_without_its_own() {
        // Attempt 3 of a type allowing 3: spent.
        assert!(!spent(&job(1, 0), 3));
        assert!(spent(&job(2, 0), 3));
        // Its own limit is the scripts' to enforce.
        assert!(!spent(&job(2, 5), 3));
        // A type allowing unlimited attempts.
        assert!(!spent(&job(1000, 0), 0));
    }
}
