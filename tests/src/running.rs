//! A `Worker` running on its own task, for tests that start one, act on the
//! queue, then shut it down gracefully and read its report.

use std::time::Duration;

use redq::worker::{CancellationToken, Worker, WorkerReport};
use tokio::task::JoinHandle;

/// How long a graceful shutdown may take before the test fails.
const STOP_DEADLINE: Duration = Duration::from_secs(10);

/// A running worker; [`RunningWorker::shutdown`] stops it.
pub struct RunningWorker {
    stop: CancellationToken,
    handle: JoinHandle<WorkerReport>,
}

impl RunningWorker {
    /// Run `worker` until [`RunningWorker::shutdown`]; a failed run fails the test.
    pub fn spawn(worker: Worker) -> RunningWorker {
        let stop = CancellationToken::new();
        let run = tokio::spawn(worker.run(stop.clone()));
        let handle = tokio::spawn(async move { run.await.expect("join").expect("worker run") });
        RunningWorker { stop, handle }
    }

    /// Cancel, wait (with a deadline) for the graceful shutdown, and return
    /// what the worker did.
    pub async fn shutdown(self) -> WorkerReport {
        self.stop.cancel();
        tokio::time::timeout(STOP_DEADLINE, self.handle)
            .await
            .expect("worker stops")
            .expect("worker task")
    }
}
