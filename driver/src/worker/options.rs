//! How one worker runs.

use std::time::Duration;

use super::UnknownNames;

/// How a worker picks the next queue to claim from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueOrder {
    /// Always try the queues in the order given: a later queue is served only
    /// when every earlier one is empty.
    Strict,
    /// Draw the order at random for every claim, each queue's chance in
    /// proportion to its weight, so no queue starves (the default).
    #[default]
    Weighted,
}

/// How one [`super::Worker`] runs. Every field has a default; see each.
#[derive(Debug, Clone)]
pub struct WorkOptions {
    pub(crate) queues: Vec<(String, u32)>,
    /// The caller named the queues; otherwise the worker serves its
    /// registered types' queues (`super::served`).
    pub(crate) queues_chosen: bool,
    pub(crate) unknown_names: UnknownNames,
    pub(crate) order: QueueOrder,
    pub(crate) concurrency: usize,
    pub(crate) lease: Duration,
    pub(crate) claim_batch: Option<usize>,
    pub(crate) grace: Duration,
    pub(crate) max_idle: Duration,
    pub(crate) schedules: bool,
    pub(crate) handoff: bool,
}

impl Default for WorkOptions {
    fn default() -> Self {
        WorkOptions {
            queues: vec![(super::DEFAULT_QUEUE.to_owned(), 1)],
            queues_chosen: false,
            unknown_names: UnknownNames::default(),
            order: QueueOrder::Weighted,
            concurrency: 10,
            lease: Duration::from_secs(30),
            claim_batch: None,
            grace: Duration::from_secs(30),
            max_idle: Duration::from_secs(10),
            schedules: true,
            handoff: true,
        }
    }
}

impl WorkOptions {
    /// Defaults: the registered job types' queues (`default` for an empty
    /// registry), weighted order, concurrency 10, lease 30 s, claim batch =
    /// concurrency, grace 30 s, schedulers on, unknown names retried.
    pub fn new() -> Self {
        WorkOptions::default()
    }

    /// The queues to serve, each with weight 1. Without this (or
    /// [`WorkOptions::weighted_queues`]) a worker serves the `QUEUE` of
    /// every job type in its registry, each with weight 1, so no registered
    /// type is left unserved; with it, a registered type whose queue is not
    /// among these is named in a warning when the worker is made (not
    /// refused: one registry may serve workers of different queues).
    #[must_use]
    pub fn queues<I, S>(mut self, queues: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.queues = queues.into_iter().map(|q| (q.into(), 1)).collect();
        self.queues_chosen = true;
        self
    }

    /// The queues to serve with weights (for [`QueueOrder::Weighted`]);
    /// otherwise as [`WorkOptions::queues`].
    #[must_use]
    pub fn weighted_queues<I, S>(mut self, queues: I) -> Self
    where
        I: IntoIterator<Item = (S, u32)>,
        S: Into<String>,
    {
        self.queues = queues.into_iter().map(|(q, w)| (q.into(), w)).collect();
        self.queues_chosen = true;
        self
    }

    /// What to do with a job whose name no handler is registered for on
    /// this worker (default [`UnknownNames::Retry`]; see [`UnknownNames`]).
    #[must_use]
    pub fn unknown_names(mut self, choice: UnknownNames) -> Self {
        self.unknown_names = choice;
        self
    }

    /// Strict or weighted queue order (default weighted).
    #[must_use]
    pub fn order(mut self, order: QueueOrder) -> Self {
        self.order = order;
        self
    }

    /// Jobs run at once, exactly (default 10; 1 runs one job at a time).
    ///
    /// A job's slot frees when its handler returns: its ack (or nack) goes
    /// out in the background, batched with other jobs', and at most this
    /// many finished jobs again may wait for theirs, so the worker holds at
    /// most twice this many leases. Freeing the slot before the ack's round
    /// trip lets a busy worker claim and acknowledge in larger batches.
    #[must_use]
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n;
        self
    }

    /// The lease taken on each claimed job (default 30 s). Running jobs are
    /// extended every third of it, so a job may run far longer than its
    /// lease; a crashed worker's jobs come back after at most one lease.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Most jobs claimed per round trip (default: the concurrency, at most
    /// 1000; never more than the free concurrency slots). Larger batches
    /// mean fewer claim calls: with 50 slots, claiming up to 50 at once
    /// rather than 10 raised throughput by about half in `redq bench`.
    #[must_use]
    pub fn claim_batch(mut self, n: usize) -> Self {
        self.claim_batch = Some(n);
        self
    }

    /// The claim batch in effect.
    pub(crate) fn effective_claim_batch(&self) -> usize {
        self.claim_batch
            .unwrap_or(self.concurrency)
            .min(crate::limits::MAX_CLAIM)
    }

    /// On shutdown, how long running jobs may finish (their
    /// [`JobCx::cancelled`](super::JobCx::cancelled) fires when it starts)
    /// before they are dropped and released for another worker, no attempt
    /// counted (default 30 s). Keep it below the time your platform allows
    /// a stopping process before it kills it (Kubernetes'
    /// `terminationGracePeriodSeconds`, also 30 s by default).
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Longest idle sleep between checks when no wake-up arrives (default
    /// 10 s): a safety net for a wake-up lost while reconnecting.
    #[must_use]
    pub fn max_idle(mut self, max_idle: Duration) -> Self {
        self.max_idle = max_idle;
        self
    }

    /// Let an idle worker of a single queue park on it, so the next enqueue
    /// leases the job straight to it and publishes it on the worker's own
    /// channel (default true): the job starts one round trip sooner than
    /// after a wake-up and a claim. At most one worker is parked on a queue
    /// at a time; the others sleep on the wake-up channel. A worker that
    /// serves several queues never parks.
    #[must_use]
    pub fn handoff(mut self, enabled: bool) -> Self {
        self.handoff = enabled;
        self
    }

    /// Run a schedule scheduler inside this worker (default true).
    #[must_use]
    pub fn schedules(mut self, enabled: bool) -> Self {
        self.schedules = enabled;
        self
    }
}
