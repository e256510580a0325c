//! Jobs handed to a parked worker (see `crate::park`), from the hand-off
//! listener to a concurrency slot.
//!
//! A job handed over while a slot is free starts from the listener's own
//! task: the worker loop is not woken first to spawn it, one task hop fewer
//! between the enqueue and the handler. A job that finds no free slot (the
//! loop holds them for a moment while it counts them) is kept for the loop,
//! which starts kept jobs before anything it claims. Every job runs holding
//! a slot, so the worker's concurrency bound holds either way, and the
//! worker's drain at shutdown (all slots back) waits for both kinds.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::backend::Claimed;
use super::execute::{execute, Shared};
use crate::Job;

/// The hand-offs of one worker, shared by its listener and its loop.
pub(crate) struct Handed {
    shared: Arc<Shared>,
    slots: Arc<Semaphore>,
    state: Mutex<State>,
}

struct State {
    /// Whether the listener may start jobs itself; off from the start of
    /// shutdown (or an operator's quiet), when handed jobs are given back.
    direct: bool,
    /// Handed, not started yet, in the order they were handed.
    kept: VecDeque<Job>,
    /// Jobs handed during the current park, and how many it may hand.
    handed: usize,
    capacity: usize,
}

/// What became of a job handed to [`Handed::deliver`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivered {
    /// Started in a free slot; the park still has room.
    Started,
    /// Kept for the worker loop, or started with the park now used up:
    /// either way the loop must look (take it, or leave the park and claim).
    WakeTheLoop,
}

impl Handed {
    pub fn new(shared: Arc<Shared>, slots: Arc<Semaphore>) -> Self {
        Handed {
            shared,
            slots,
            state: Mutex::new(State {
                direct: true,
                kept: VecDeque::new(),
                handed: 0,
                capacity: 0,
            }),
        }
    }

    /// Start `job` (leased to this worker by an enqueue) in a free slot, or
    /// keep it for the loop. A job is started here only when none handed
    /// before it is still kept, so handed jobs start in the order handed.
    pub fn deliver(&self, job: Job) -> Delivered {
        let (permit, used_up) = {
            let mut state = self.state.lock().expect("hand-offs poisoned");
            state.handed += 1;
            let used_up = state.handed >= state.capacity;
            let permit = if state.direct && state.kept.is_empty() {
                self.slots.clone().try_acquire_owned().ok()
            } else {
                None
            };
            if permit.is_none() {
                state.kept.push_back(job);
                return Delivered::WakeTheLoop;
            }
            (permit, used_up)
        };
        if let Some(permit) = permit {
            self.start(job, permit);
        }
        if used_up {
            Delivered::WakeTheLoop
        } else {
            Delivered::Started
        }
    }

    /// Run handed `job` in the slot `permit` holds, as a task of its own.
    pub fn start(&self, job: Job, permit: OwnedSemaphorePermit) {
        self.start_claimed(Claimed { job, shard: 0 }, permit);
    }

    /// Run `job` in the slot `permit` holds, as a task of its own. Not
    /// joined: the slot, given back when the task ends, is what shutdown
    /// waits for.
    pub fn start_claimed(&self, job: Claimed, permit: OwnedSemaphorePermit) {
        tokio::spawn(execute(self.shared.clone(), job, permit));
    }

    /// Kept jobs, at most `max`, oldest first: already leased to this
    /// worker, they go before anything claimed.
    pub fn take(&self, max: usize) -> Vec<Job> {
        let mut state = self.state.lock().expect("hand-offs poisoned");
        let n = max.min(state.kept.len());
        state.kept.drain(..n).collect()
    }

    /// A new park began, able to take `capacity` jobs.
    pub fn parked(&self, capacity: usize) {
        let mut state = self.state.lock().expect("hand-offs poisoned");
        state.handed = 0;
        state.capacity = capacity;
    }

    /// Whether the current park may still be handed jobs.
    pub fn room_left(&self) -> bool {
        let state = self.state.lock().expect("hand-offs poisoned");
        state.handed < state.capacity
    }

    /// From now on keep every handed job for the loop (which gives them
    /// back at shutdown); jobs already started keep their slots.
    pub fn stop_starting(&self) {
        self.state.lock().expect("hand-offs poisoned").direct = false;
    }
}
