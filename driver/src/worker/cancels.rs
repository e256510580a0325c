//! The jobs a worker is running, by id and lease, so that an operator's
//! cancel published on the worker's holder channel (see `crate::kept`)
//! fires the job's [`JobCx`](super::JobCx) cancellation at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Running jobs: id → (lease id, the job's cancellation).
#[derive(Debug, Default)]
pub(crate) struct RunningJobs(Mutex<HashMap<String, (u64, CancellationToken)>>);

/// Removes its job from [`RunningJobs`] when the run ends.
pub(crate) struct Running {
    jobs: Arc<RunningJobs>,
    id: String,
    lease_id: u64,
}

impl RunningJobs {
    /// Note job `id` running under `lease_id`, cancelled through `cancel`.
    pub fn start(self: &Arc<Self>, id: &str, lease_id: u64, cancel: CancellationToken) -> Running {
        self.lock().insert(id.to_owned(), (lease_id, cancel));
        Running {
            jobs: self.clone(),
            id: id.to_owned(),
            lease_id,
        }
    }

    /// An operator cancelled job `id` held under `lease_id`: fire its
    /// cancellation, if it runs here under that lease. Returns whether it did.
    pub fn cancel(&self, id: &str, lease_id: u64) -> bool {
        match self.lock().get(id) {
            Some((held, token)) if *held == lease_id => {
                token.cancel();
                true
            }
            _ => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        self.0.lock().expect("running jobs poisoned")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut jobs = self.jobs.lock();
        if jobs
            .get(&self.id)
            .is_some_and(|(lease, _)| *lease == self.lease_id)
        {
            jobs.remove(&self.id);
        }
    }
}

/// A message on a holder channel, `"<job id> <lease id>"`.
pub(crate) fn parse_cancel(body: &str) -> Option<(&str, u64)> {
    let (id, lease) = body.split_once(' ')?;
    Some((id, lease.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_fires_only_the_job_under_that_lease_and_ends_with_the_run() {
        let jobs = Arc::new(RunningJobs::default());
        let token = CancellationToken::new();
        let running = jobs.start("j1", 7, token.clone());
        assert!(!jobs.cancel("j1", 6));
        assert!(!token.is_cancelled());
        assert!(jobs.cancel("j1", 7));
        assert!(token.is_cancelled());
        drop(running);
        assert!(!jobs.cancel("j1", 7));
        assert_eq!(parse_cancel("01J 42"), Some(("01J", 42)));
        assert_eq!(parse_cancel("01J"), None);
    }
}
