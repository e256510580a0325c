//! A queue's figures window by window over a [`MetricsWindow`] (for a
//! throughput chart with a time scale), read in the same one pass as
//! [`RedisQueue::metrics`]'s sums, which come with it.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use futures::future::try_join_all;

use super::{Figures, MetricsWindow, QueueMetrics};
use crate::limits::check_queue_name;
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
        check_queue_name(queue)?;
        let key = self.inner.keys.metrics(queue);
        let now_ms = self.redis_now_ms(&key).await?;
        let names = self.metric_names(&key).await?;
        let (rollup, windows) = window.rollup();
        let newest = now_ms / rollup.width_ms;
        let oldest = newest.saturating_sub(windows - 1);
        let mut fields = Vec::new();
        let mut wanted = Vec::new();
        for name in &names {
            for w in oldest..=newest {
                fields.push(rollup.field(w, name));
                wanted.push((name.as_str(), w));
            }
        }
        let values = self.metric_values(&key, fields).await?;
        let at = |w: u64| SystemTime::UNIX_EPOCH + Duration::from_millis(w * rollup.width_ms);
        let mut points: Vec<MetricsPoint> = (oldest..=newest)
            .map(|w| MetricsPoint {
                start: at(w),
                figures: Figures::default(),
            })
            .collect();
        let mut by_name: BTreeMap<String, Figures> = BTreeMap::new();
        for ((name, w), raw) in wanted.into_iter().zip(values) {
            let Some(raw) = raw else { continue };
            let (stored_window, figures) = super::read::decode(&raw)?;
            // A slot still holding an older window (the ring wrapped) is skipped.
            if stored_window == w {
                by_name.entry(name.to_owned()).or_default().add(&figures);
                points[(w - oldest) as usize].figures.add(&figures);
            }
        }
        for open in self
            .pending_windows(&key, &names, rollup, oldest, newest)
            .await?
        {
            points[(open.window - oldest) as usize]
                .figures
                .add(&open.figures);
            by_name.entry(open.name).or_default().add(&open.figures);
        }
        Ok(MetricsHistory {
            metrics: QueueMetrics {
                queue: queue.to_owned(),
                window: Some(window),
                names: by_name,
                now: SystemTime::UNIX_EPOCH + Duration::from_millis(now_ms),
            },
            width: Duration::from_millis(rollup.width_ms),
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
