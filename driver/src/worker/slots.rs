//! A worker's two bounds: handlers running at once (its concurrency), and
//! leases held (running, or finished and waiting for their ack).
//!
//! A job's slot frees as soon as its handler returns, not when its ack has
//! come back: the ack goes to the acker task, which sends everything that
//! piled up in one script call. Holding the slot through that round trip
//! split a worker's slots between the claim in flight, the ack in flight and
//! the acks waiting to be sent, so a saturated worker of concurrency 50
//! claimed and acknowledged about 15 jobs a call; freed at once, about 26,
//! and each processed job cost the server a quarter less (redq bench --case
//! process: 36 to 41k jobs/s became 52 to 53k, docs/performance.md). The
//! leases a worker holds stay bounded all the same: at most as many finished
//! jobs again may wait for their ack, so a slow Redis slows the claims
//! rather than letting acks pile up.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many leases a worker holds at most, per slot: its running job and
/// one finished job waiting for its ack.
const LEASES_PER_SLOT: usize = 2;

/// The slots and lease room of one worker.
pub(crate) struct Slots {
    running: Arc<Semaphore>,
    leases: Arc<Semaphore>,
}

/// What one job holds: a slot while its handler runs, and room for its
/// lease until its outcome is recorded (the task ends).
pub(crate) struct Slot {
    running: Option<OwnedSemaphorePermit>,
    _lease: OwnedSemaphorePermit,
}

impl Slot {
    /// The handler returned: its slot is free for the next job, while the
    /// lease stays counted until this job's ack (or nack) is answered.
    pub fn handler_done(&mut self) {
        self.running = None;
    }
}

impl Slots {
    pub fn new(concurrency: usize) -> Slots {
        Slots {
            running: Arc::new(Semaphore::new(concurrency)),
            leases: Arc::new(Semaphore::new(concurrency * LEASES_PER_SLOT)),
        }
    }

    /// A slot, once one is free and the worker may hold one more lease.
    pub async fn acquire(&self) -> Slot {
        let running = self.running.clone().acquire_owned().await;
        let lease = self.leases.clone().acquire_owned().await;
        Slot {
            running: Some(running.expect("slots are never closed")),
            _lease: lease.expect("slots are never closed"),
        }
    }

    /// A slot, if one is free now.
    pub fn try_acquire(&self) -> Option<Slot> {
        let lease = self.leases.clone().try_acquire_owned().ok()?;
        let running = self.running.clone().try_acquire_owned().ok()?;
        Some(Slot {
            running: Some(running),
            _lease: lease,
        })
    }

    /// How many jobs could start now.
    pub fn free(&self) -> usize {
        self.running
            .available_permits()
            .min(self.leases.available_permits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_finished_handler_frees_its_slot_but_its_lease_counts_until_the_job_ends() {
        let slots = Slots::new(2);
        let mut first = slots.acquire().await;
        let _second = slots.try_acquire().unwrap();
        assert!(slots.try_acquire().is_none(), "two slots, both running");
        first.handler_done();
        let mut third = slots.try_acquire().expect("the finished handler's slot");
        third.handler_done();
        let mut fourth = slots.try_acquire().expect("a fourth lease, the last");
        assert_eq!(slots.free(), 0);
        // Four leases held (two running, two awaiting their ack): no more,
        // though a slot is free.
        fourth.handler_done();
        assert!(
            slots.try_acquire().is_none(),
            "at most twice the slots in leases"
        );
        drop(first);
        assert!(
            slots.try_acquire().is_some(),
            "a job that ended gave its lease back"
        );
    }
}
