//! Turning a queue's metrics off and back on, live
//! (`lua/metrics_switch.lua`; the method's docs say what it saves).

use std::time::{Duration, SystemTime};

use fred::interfaces::HashesInterface;
use serde::Serialize;

use super::layout::OFF_FIELD;
use crate::codes;
use crate::limits::check_queue_name;
use crate::scripts::{reply, text, Op};
use crate::{Operator, QueueError, RedisQueue};

/// Whether a queue records wait and run times and outcome counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recording {
    /// Every claim, ack, nack, reclaim and cancel adds to them (the default).
    On,
    /// Nothing has been added since `since` (Redis's clock): the figures
    /// read cover only the time before, and any time they were on before.
    Off {
        /// When they were turned off.
        since: SystemTime,
    },
}

impl Recording {
    /// Whether it records.
    pub fn is_on(self) -> bool {
        self == Recording::On
    }

    /// The stored switch: the metrics hash's `off` field (unix ms), if any.
    /// The scripts stop recording when the field is there at all, so any
    /// value reads as off; one that is not a time (never written by redq)
    /// as off since the epoch.
    pub(crate) fn from_field(raw: Option<&[u8]>) -> Recording {
        let Some(raw) = raw else {
            return Recording::On;
        };
        let ms = std::str::from_utf8(raw)
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or(0);
        Recording::Off {
            since: SystemTime::UNIX_EPOCH + Duration::from_millis(ms),
        }
    }

    /// Two shards' switches as one: off when either is (since the earlier).
    #[must_use]
    pub fn plus(self, other: Recording) -> Recording {
        match (self, other) {
            (Recording::Off { since: a }, Recording::Off { since: b }) => {
                Recording::Off { since: a.min(b) }
            }
            (off @ Recording::Off { .. }, _) | (_, off @ Recording::Off { .. }) => off,
            _ => Recording::On,
        }
    }
}

/// What [`RedisQueue::set_metrics_recording`] did, from the switch's own
/// reply: whether it changed, and the switch as it now stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MetricsSwitched {
    /// Whether this call changed the switch (`false`: it was already so).
    pub changed: bool,
    /// The switch now: off since when, or on.
    pub recording: Recording,
}

impl RedisQueue {
    /// Whether `queue` records its metrics now.
    pub async fn metrics_recording(&self, queue: &str) -> Result<Recording, QueueError> {
        check_queue_name(queue)?;
        let key = self.inner.keys.metrics(queue);
        let raw: Option<Vec<u8>> = self
            .client()
            .hget(key, OFF_FIELD)
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        Ok(Recording::from_field(raw.as_deref()))
    }

    /// Turn `queue`'s metrics off (`on` false) or back on: live, for every
    /// worker at its next call. Returns whether it changed anything (an
    /// operator event, `metrics_off` or `metrics_on`, records each change)
    /// and the switch as it now stands.
    ///
    /// Metrics are on for every queue unless turned off. While they are
    /// off, the scripts that record them (claim, hand-off, ack, nack,
    /// reclaim, cancel) still read the switch, in the HMGET they read the
    /// name's window with, and write nothing more: per call that saves
    /// about 10 % of a lone claim's Redis work, 15 % of a lone ack's, 7 % of
    /// a lone hand-off's and 4 % of a batched claim's or ack's (callgrind;
    /// docs/performance.md, "Round fourteen"). What was recorded before stays readable; the figures of
    /// the time they were off are simply not there, and every
    /// [`QueueMetrics`](super::QueueMetrics) says so ([`Recording`]).
    /// The queue's sizes, throughput (`stats`) and events are not metrics
    /// in this sense: they are kept whatever the switch says.
    pub async fn set_metrics_recording(
        &self,
        queue: &str,
        on: bool,
    ) -> Result<MetricsSwitched, QueueError> {
        let want = if on { "on" } else { "off" };
        let items = reply::array(self.run(Op::MetricsSwitch, queue, vec![text(want)]).await?)?;
        let changed = codes::metrics_switched(items.first())?;
        // The reply's second item is when they were turned off (unix ms;
        // 0 for a stored value that is not a time, read as the epoch).
        let recording = if on {
            Recording::On
        } else {
            Recording::Off {
                since: SystemTime::UNIX_EPOCH + Duration::from_millis(reply::count_at(&items, 1)?),
            }
        };
        Ok(MetricsSwitched { changed, recording })
    }
}

impl Operator {
    /// [`RedisQueue::metrics_recording`] over every shard: off when any
    /// shard's is.
    pub async fn metrics_recording(&self, queue: &str) -> Result<Recording, QueueError> {
        let mut all = Recording::On;
        for shard in self.shards() {
            all = all.plus(shard.metrics_recording(queue).await?);
        }
        Ok(all)
    }

    /// [`RedisQueue::set_metrics_recording`] on every shard: changed when
    /// any shard's changed; off since the earliest shard's.
    pub async fn set_metrics_recording(
        &self,
        queue: &str,
        on: bool,
    ) -> Result<MetricsSwitched, QueueError> {
        let mut all = MetricsSwitched {
            changed: false,
            recording: Recording::On,
        };
        for shard in self.shards() {
            let one = shard.set_metrics_recording(queue, on).await?;
            all.changed |= one.changed;
            all.recording = all.recording.plus(one.recording);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_reads_from_its_field() {
        assert_eq!(Recording::from_field(None), Recording::On);
        assert_eq!(
            Recording::from_field(Some(b"junk")),
            Recording::Off {
                since: SystemTime::UNIX_EPOCH
            },
            "the scripts stop at any value"
        );
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(
            Recording::from_field(Some(b"1700000000123")),
            Recording::Off { since: at }
        );
    }

    #[test]
    fn shards_are_off_when_any_is() {
        let early = SystemTime::UNIX_EPOCH + Duration::from_secs(10);
        let late = SystemTime::UNIX_EPOCH + Duration::from_secs(20);
        let off = |since| Recording::Off { since };
        assert_eq!(Recording::On.plus(Recording::On), Recording::On);
        assert_eq!(Recording::On.plus(off(late)), off(late));
        assert_eq!(off(early).plus(Recording::On), off(early));
        assert_eq!(off(late).plus(off(early)), off(early));
    }
}
