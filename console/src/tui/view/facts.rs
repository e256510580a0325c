//! How each fact about a job or a worker is written: one function per
//! fact, used by every list and by the job detail, so a lease holder or a
//! try count reads the same on every screen.

/// Tries made out of the most allowed: `3/5`; `3/∞` when attempts are
/// unlimited.
pub fn tries(attempts: u32, max_attempts: u32) -> String {
    match max_attempts {
        0 => format!("{attempts}/∞"),
        max => format!("{attempts}/{max}"),
    }
}

/// A listed job's tries: of its limit, or for a kept job (completed or
/// cancelled, which keeps no limit) its failed attempts alone, rather than
/// a limit of 0 read as "unlimited".
pub fn tries_of(job: &redq::JobRecord) -> String {
    match crate::output::is_kept(job) {
        true => job.attempts.to_string(),
        false => tries(job.attempts, job.max_attempts),
    }
}

/// A listed job's priority; `—` for a kept job, which keeps none (not a 0
/// read as one).
pub fn priority_of(job: &redq::JobRecord) -> String {
    match crate::output::is_kept(job) {
        true => "—".to_owned(),
        false => job.priority.to_string(),
    }
}

/// A queue's pause in words: `None` while it runs, `paused`, or over
/// shards a pause that reached only some of them, `paused 1/3` (claims go
/// on in the others): the table's STATE, the badge and the job view's
/// header say the same.
pub fn pause_of(counts: &redq::QueueCounts) -> Option<String> {
    match (counts.paused_shards, counts.shards) {
        (0, _) if !counts.paused => None,
        (paused, of) if paused > 0 && paused < of => Some(format!("paused {paused}/{of}")),
        _ => Some("paused".to_owned()),
    }
}

/// A worker, as the driver's registry names it (`node-instance`, both in
/// decimal): the Leases screen, the Workers screen and the job detail all
/// write a lease holder this way, so one can be looked up in the other.
pub fn worker(node: u64, instance: u32) -> String {
    format!("{node}-{instance}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_says_how_many_shards_it_reached() {
        let counts = |paused: bool, paused_shards: u32, shards: u32| redq::QueueCounts {
            paused,
            paused_shards,
            shards,
            ..crate::tui::state::tests::queue_counts("q")
        };
        assert_eq!(pause_of(&counts(false, 0, 1)), None);
        assert_eq!(pause_of(&counts(true, 1, 1)).as_deref(), Some("paused"));
        assert_eq!(pause_of(&counts(true, 1, 3)).as_deref(), Some("paused 1/3"));
        assert_eq!(pause_of(&counts(true, 3, 3)).as_deref(), Some("paused"));
    }
    use redq::{JobRecord, JobState};

    #[test]
    fn tries_always_show_the_limit() {
        assert_eq!(tries(3, 3), "3/3");
        assert_eq!(tries(1, 0), "1/∞");
    }

    #[test]
    fn a_worker_reads_as_the_registry_names_it() {
        assert_eq!(worker(0x9cd2_5af9, 1), "2631031545-1");
    }

    /// A job of `state` with 1 failed try, priority 0 and no limit.
    fn job(state: JobState) -> JobRecord {
        let mut job = crate::tui::state::tests::job("01J0", "emails", state, None);
        job.max_attempts = 0;
        job
    }

    #[test]
    fn a_kept_job_shows_its_failed_tries_and_no_made_up_priority() {
        let kept = job(JobState::Completed);
        assert_eq!(
            (tries_of(&kept), priority_of(&kept)),
            ("1".into(), "—".into())
        );
        let waiting = job(JobState::Waiting);
        assert_eq!(
            (tries_of(&waiting), priority_of(&waiting)),
            ("1/∞".into(), "0".into())
        );
    }
}
