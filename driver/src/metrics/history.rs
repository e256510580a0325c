//! A queue's figures window by window over a [`MetricsWindow`] (for a
//! throughput chart with a time scale), read in the same one pass as
//! [`RedisQueue::metrics`]'s sums, which come with it.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use futures::future::try_join_all;

use super::{Figures, MetricsWindow, QueueMetrics};
use crate::{Operator, QueueError, RedisQueue};

/// One rollup window of a queue's history: every name's figures summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsPoint {
    /// When the window began (Redis clock).
    pub start: SystemTime,
    /// What happened in it.
    pub figures: Figures,
}

/// A queue's figures per name over a window, and window by window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsHistory {
    /// The sums per name, as [`RedisQueue::metrics`] gives them.
    pub metrics: QueueMetrics,
    /// How wide each point's window is (5 s, 1 min or 1 h).
    pub width: Duration,
    /// Every window of the range, oldest first, empty ones included (with
    /// zero figures), so a chart's time scale is even.
    pub points: Vec<MetricsPoint>,
}

impl RedisQueue {
    /// [`RedisQueue::metrics`] and the same figures window by window.
    pub async fn metrics_history(
        &self,
        queue: &str,
        window: MetricsWindow,
    ) -> Result<MetricsHistory, QueueError> {
        let read = self.read_windows(queue, window).await?;
        let width_ms = read.rollup.width_ms;
        let at = |w: u64| SystemTime::UNIX_EPOCH + Duration::from_millis(w * width_ms);
        let mut points: Vec<MetricsPoint> = (read.oldest..=read.newest)
            .map(|w| MetricsPoint {
                start: at(w),
                figures: Figures::default(),
            })
            .collect();
        let mut by_name: BTreeMap<String, Figures> = BTreeMap::new();
        for cell in &read.cells {
            points[(cell.window - read.oldest) as usize]
                .figures
                .add(&cell.figures);
            by_name
                .entry(cell.name.clone())
                .or_default()
                .add(&cell.figures);
        }
        Ok(MetricsHistory {
            metrics: read.with_sums(queue, window, by_name),
            width: Duration::from_millis(width_ms),
            points,
        })
    }
}

impl MetricsHistory {
    /// These and another shard's history of the same queue and window:
    /// sums per name, and points added where their windows match.
    #[must_use]
    pub fn plus(mut self, other: MetricsHistory) -> MetricsHistory {
        let mut theirs: BTreeMap<SystemTime, Figures> = other
            .points
            .into_iter()
            .map(|p| (p.start, p.figures))
            .collect();
        for point in &mut self.points {
            if let Some(figures) = theirs.remove(&point.start) {
                point.figures.add(&figures);
            }
        }
        // A shard whose clock is a window ahead adds its newest window.
        for (start, figures) in theirs {
            if self.points.last().is_none_or(|last| start > last.start) {
                self.points.push(MetricsPoint { start, figures });
            }
        }
        self.metrics = self.metrics.plus(other.metrics);
        self
    }
}

impl Operator {
    /// [`RedisQueue::metrics_history`] over every shard, summed.
    pub async fn metrics_history(
        &self,
        queue: &str,
        window: MetricsWindow,
    ) -> Result<MetricsHistory, QueueError> {
        let all = try_join_all(
            self.shards()
                .iter()
                .map(|s| s.metrics_history(queue, window)),
        )
        .await?;
        all.into_iter()
            .reduce(MetricsHistory::plus)
            .ok_or_else(|| QueueError::Protocol("no shards".into()))
    }
}
