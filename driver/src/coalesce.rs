//! Coalescing concurrent single enqueues into batches.
//!
//! A service that calls `add` from many tasks at once pays one script run
//! and one round trip per job. When an `add` starts while another is still
//! in flight, it joins a queue instead; one task sends whatever has piled up
//! as one enqueue script call per queue (each job still validated, created
//! and reported on its own). A lone `add` goes straight out, so coalescing
//! never adds latency to an idle producer.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::{mpsc, oneshot};

use crate::enqueue_args::SingleJob;
use crate::{Enqueued, QueueError};

/// Whatever sends one enqueue script call for a batch of one queue's jobs
/// (the handle's shared state, in `queue.rs`). A trait, so that this module
/// needs nothing of the handle that holds a [`Coalescer`]: the dependency
/// runs one way, from the handle down to here.
pub(crate) trait SendBatch: Send + Sync + 'static {
    /// One script call for `jobs`, all of `queue`; outcomes in input order.
    fn send_batch(
        self: Arc<Self>,
        queue: String,
        jobs: Vec<SingleJob>,
    ) -> impl Future<Output = Result<Vec<Enqueued>, QueueError>> + Send;
}

/// One job waiting to be sent: its queue, the job encoded, and where its
/// outcome goes.
pub(crate) struct Pending {
    pub queue: String,
    pub job: SingleJob,
    pub reply: oneshot::Sender<Result<Enqueued, QueueError>>,
}

/// Most jobs one coalesced script call carries.
const BATCH: usize = 1000;

/// Per-connection coalescing state.
#[derive(Default)]
pub(crate) struct Coalescer {
    in_flight: AtomicUsize,
    sender: Mutex<Option<mpsc::UnboundedSender<Pending>>>,
}

/// Counts an `add` as in flight while it lives.
pub(crate) struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Coalescer {
    /// Register an `add`; the flag says whether another was already in
    /// flight (then it should be coalesced).
    pub fn enter(&self) -> (InFlight<'_>, bool) {
        let busy = self.in_flight.fetch_add(1, Ordering::AcqRel) > 0;
        (InFlight(&self.in_flight), busy)
    }

    /// Queue `pending` for the batching task, starting the task on first use.
    /// Gives `pending` back when no task can run (no runtime, or it ended),
    /// so the caller sends it directly.
    pub fn submit<S: SendBatch>(&self, via: Weak<S>, pending: Pending) -> Result<(), Box<Pending>> {
        let mut sender = self.sender.lock().expect("coalescer poisoned");
        if sender.as_ref().is_none_or(|s| s.is_closed()) {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return Err(Box::new(pending));
            };
            let (tx, rx) = mpsc::unbounded_channel();
            runtime.spawn(run(via, rx));
            *sender = Some(tx);
        }
        sender
            .as_ref()
            .expect("sender set above")
            .send(pending)
            .map_err(|e| Box::new(e.0))
    }
}

/// Send batches until the connection is dropped.
async fn run<S: SendBatch>(sender: Weak<S>, mut requests: mpsc::UnboundedReceiver<Pending>) {
    // A few batches may be in flight at once, so jobs keep flowing while a
    // batch waits for its reply. Only concurrent adds share batches, and
    // concurrent adds have no order among themselves to keep.
    let in_flight = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        let Ok(slot) = in_flight.clone().acquire_owned().await else {
            break;
        };
        let limit = batch_limit(requests.len(), in_flight.available_permits() + 1);
        if requests.recv_many(&mut batch, limit).await == 0 {
            break;
        }
        let Some(sender) = sender.upgrade() else {
            break;
        };
        let jobs = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
        tokio::spawn(async move {
            send(sender, jobs).await;
            drop(slot);
        });
    }
}

/// Most coalesced batches in flight at once.
const IN_FLIGHT: usize = 4;

/// Fewest jobs a batch is cut down to when others are waiting behind it.
const SPLIT_FLOOR: usize = 16;

/// How many of the `waiting` adds the next batch takes, with `free_slots`
/// batches (this one included) free to be sent.
///
/// What is waiting is shared among the free slots rather than sent as one
/// batch: the adds answered together come back together, so one batch of
/// 99 beside a lone add would stay so, and the client would answer the 99
/// while Redis idled, then Redis run them while the client idled. Batches
/// of about a quarter of the adds in flight keep both busy: `redq bench
/// --case enqueue_window` (100 in flight, 200 000 jobs) ran 1.38× (pinned)
/// and 1.17× (unpinned) as many jobs a second as with one batch of all that
/// waited, at 19–22 jobs a call instead of 42–49 (docs/performance.md,
/// round eight). Below
/// [`SPLIT_FLOOR`] a batch costs Redis more per job than the overlap gains.
fn batch_limit(waiting: usize, free_slots: usize) -> usize {
    waiting
        .div_ceil(free_slots.max(1))
        .clamp(SPLIT_FLOOR, BATCH)
}

/// Send one batch, one script call per queue in it, and answer each caller.
async fn send<S: SendBatch>(sender: Arc<S>, batch: Vec<Pending>) {
    // Group by queue, keeping each queue's arrival order.
    let mut groups: Vec<(String, Vec<Pending>)> = Vec::new();
    for pending in batch {
        match groups.iter_mut().find(|(q, _)| *q == pending.queue) {
            Some((_, jobs)) => jobs.push(pending),
            None => groups.push((pending.queue.clone(), vec![pending])),
        }
    }
    for (name, jobs) in groups {
        let encoded: Vec<SingleJob> = jobs.iter().map(|p| p.job.clone()).collect();
        match sender.clone().send_batch(name, encoded).await {
            Ok(outcomes) => {
                for (pending, outcome) in jobs.into_iter().zip(outcomes) {
                    let _ = pending.reply.send(Ok(outcome));
                }
            }
            Err(e) => {
                for pending in jobs {
                    let _ = pending.reply.send(Err(e.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_waits_is_shared_among_the_free_slots() {
        assert_eq!(batch_limit(99, 4), 25, "the first of four batches");
        assert_eq!(batch_limit(74, 3), 25, "the second takes as much");
        assert_eq!(batch_limit(24, 1), 24, "the last slot takes the rest");
    }

    #[test]
    fn a_batch_is_not_cut_below_the_floor_nor_grown_past_the_most() {
        assert_eq!(batch_limit(20, 4), SPLIT_FLOOR);
        assert_eq!(
            batch_limit(0, 4),
            SPLIT_FLOOR,
            "the next add to arrive goes out"
        );
        assert_eq!(batch_limit(10_000, 1), BATCH);
        assert_eq!(
            batch_limit(10, 0),
            SPLIT_FLOOR,
            "no slot count divides by zero"
        );
    }
}
