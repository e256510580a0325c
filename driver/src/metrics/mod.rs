//! Wait and run times and outcome counts, per queue and job name, kept in
//! Redis by the scripts themselves (`lua/lib/metrics.lua`), and read here.
//!
//! # What is recorded
//!
//! - **Wait**: a claim's Redis time minus the time the job was due (its
//!   `not_before`: set at enqueue, and again to the new due time whenever a
//!   retry, a reclaim, a release or a dead-letter requeue puts it back), for
//!   every job a claim or a hand-off leases.
//! - **Run**: the `run_ms` the worker sends with its (batched) ack.
//! - **Counts**: completed (acked), retried (a failed attempt put back, by a
//!   nack or a lapsed lease), dead-lettered, cancelled, reclaimed (lapsed
//!   leases; each is also counted as retried or dead-lettered).
//! - **Lost hand-offs**: per queue, not per name, the jobs a parked worker
//!   gave back because their messages never reached it
//!   ([`QueueMetrics::handoffs_lost`]), and the jobs a worker gave back
//!   because its claim's reply never reached it
//!   ([`QueueMetrics::claims_lost`]), each counted by the give-back itself
//!   and while the metrics are off too.
//!
//! Recording rides the scripts that already run (claim, ack, nack, reclaim,
//! cancel): no round trip is added; each call adds one HMGET and one HSET
//! of the queue's metrics hash for its whole batch (each name's 5 s window
//! and the marker naming it), and one HMGET more when it opens a name's next
//! 5 s window and folds the closed one into the totals and the 1 min and
//! 1 h rollups. Readers add a name's still open window to those.
//!
//! # Turning them off
//!
//! [`RedisQueue::set_metrics_recording`](crate::RedisQueue::set_metrics_recording)
//! turns a queue's metrics off (or back on), live; see [`Recording`] for
//! what that keeps and what it saves a call.
//!
//! # Rollups and memory
//!
//! Times go into [`Histogram`]s of [`BUCKETS`] log-scale buckets (1 ms to
//! about 70 min, then "longer"), in three rollups, plus totals that are never
//! reset (for Prometheus counters): 5 s windows for 16 minutes, 1 minute
//! windows for 24 hours, 1 hour windows for 90 days. Each rollup is a ring of
//! slots overwritten by the first write of a newer window, so memory is
//! bounded without a janitor: at most 192 + 1440 + 2160 + 2 = 3794 values of
//! about 130 bytes each (field and hash overhead included) per job name and
//! queue, only for the windows in which something happened: about 0.5 MB
//! for a name busy in every 5 s window for 90 days. At most
//! [`NAMES_MAX`] names are recorded per queue; jobs of any later name are
//! counted under [`OTHER`], jobs without a name under [`NONE`].

mod histogram;
mod history;
pub(crate) mod layout;
mod pending;
mod read;
mod switch;
mod totals;

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde::Serialize;

pub use histogram::Histogram;
pub use history::{MetricsHistory, MetricsPoint};
pub use layout::{BUCKETS, NAMES_MAX, NONE, OTHER};
pub use switch::{MetricsSwitched, Recording};

/// A range of recent time to read metrics for, ending now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MetricsWindow {
    /// The last 5 minutes, in 5 s windows.
    Last5Minutes,
    /// The last hour, in 1 minute windows.
    LastHour,
    /// The last 24 hours, in 1 minute windows.
    LastDay,
    /// The last 90 days, in 1 hour windows.
    Last90Days,
}

impl MetricsWindow {
    /// The rollup read and how many of its windows (the current one included).
    pub(crate) fn rollup(self) -> (layout::Rollup, u64) {
        match self {
            MetricsWindow::Last5Minutes => (layout::SECONDS, 60),
            MetricsWindow::LastHour => (layout::MINUTES, 60),
            MetricsWindow::LastDay => (layout::MINUTES, 1_440),
            MetricsWindow::Last90Days => (layout::HOURS, 2_160),
        }
    }

    /// The span it covers, at most (the current window may have just begun).
    pub fn span(self) -> Duration {
        let (rollup, windows) = self.rollup();
        Duration::from_millis(rollup.width_ms * windows)
    }
}

/// What happened to one job name's jobs (or a queue's, summed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    /// Jobs acknowledged as done.
    pub completed: u64,
    /// Failed attempts put back to be tried again.
    pub retried: u64,
    /// Jobs moved to the dead-letter set.
    pub dead_lettered: u64,
    /// Jobs cancelled by an operator.
    pub cancelled: u64,
    /// Lapsed leases taken back (each also counted as retried or dead-lettered).
    pub reclaimed: u64,
    /// From due to claimed.
    pub wait: Histogram,
    /// From the handler's start to its ack, as the worker measured it.
    pub run: Histogram,
}

impl Figures {
    /// Add another's figures (another window, name or shard).
    pub fn add(&mut self, other: &Figures) {
        self.completed += other.completed;
        self.retried += other.retried;
        self.dead_lettered += other.dead_lettered;
        self.cancelled += other.cancelled;
        self.reclaimed += other.reclaimed;
        self.wait.add(&other.wait);
        self.run.add(&other.run);
    }
}

/// A queue's figures per job name, over a [`MetricsWindow`] or since the
/// queue began (the totals).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueMetrics {
    /// The queue.
    pub queue: String,
    /// The range read; `None` for the totals.
    pub window: Option<MetricsWindow>,
    /// Per job name ([`NONE`], [`OTHER`] included when they have figures).
    pub names: BTreeMap<String, Figures>,
    /// Redis's clock when read (`UNIX_EPOCH` for the totals, read without it).
    pub now: SystemTime,
    /// Whether the queue records them now: while off, nothing is added
    /// (see [`RedisQueue::set_metrics_recording`](crate::RedisQueue::set_metrics_recording)).
    pub recording: Recording,
    /// Jobs handed to a parked worker that it gave back because their
    /// messages never reached it (each also a `handoff_lost` event), since
    /// the queue began, whatever the window read: a queue-wide alarm, not a
    /// figure of one name's work, counted while recording is off too.
    /// Above 0, a worker's subscription broke or lagged (README,
    /// "Hand-offs").
    pub handoffs_lost: u64,
    /// Jobs a worker's claim leased whose reply never reached it, which
    /// the worker gave back (each also a `claim_lost` event), counted as
    /// [`QueueMetrics::handoffs_lost`] is. Above 0, a worker's connection
    /// dropped or timed out with a claim in flight (README, "Guarantees").
    pub claims_lost: u64,
}

impl QueueMetrics {
    /// The queue's figures: every name's summed.
    pub fn total(&self) -> Figures {
        let mut sum = Figures::default();
        for figures in self.names.values() {
            sum.add(figures);
        }
        sum
    }

    /// These and another namespace's metrics of the same queue (a shard).
    #[must_use]
    pub fn plus(mut self, other: QueueMetrics) -> QueueMetrics {
        for (name, figures) in other.names {
            self.names.entry(name).or_default().add(&figures);
        }
        self.now = self.now.max(other.now);
        self.recording = self.recording.plus(other.recording);
        self.handoffs_lost += other.handoffs_lost;
        self.claims_lost += other.claims_lost;
        self
    }
}
