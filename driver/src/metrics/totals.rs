//! A queue's totals since it began, per job name: what Prometheus counters
//! want, so exact and monotonic for a reader at any moment.
//!
//! A name's totals are its closed 5 s windows (`t|<name>`) plus its open one,
//! which the scripts fold in only when the name's next window is first
//! written (`lua/lib/metrics.lua`): the open window is the 5 s slot that its
//! marker (`w|<name>`) names. The totals, the marker and that slot are read
//! in one HMGET, so they are of one moment; the slot to read comes from the
//! marker an HMGET before, and when a fold moved a marker in between, the
//! read is made again with the new one.
//! A name written by the earlier layout (no marker) has its whole totals in
//! `t|<name>`, read as they are until its first write adopts them.

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::layout;
use super::read::decode;
use super::{Figures, QueueMetrics};
use crate::limits::check_queue_name;
use crate::{QueueError, RedisQueue};

/// Reads a total tries: a marker moves once a 5 s window per name, so a
/// second read almost always finds the markers the first one named.
const TOTALS_READS: usize = 10;

impl RedisQueue {
    /// A queue's figures per job name since it began: monotonic totals,
    /// never reset by the rollups (what Prometheus counters want).
    pub async fn metric_totals(&self, queue: &str) -> Result<QueueMetrics, QueueError> {
        check_queue_name(queue)?;
        let key = self.inner.keys.metrics(queue);
        let head = self.metric_head(&key).await?;
        let names = &head.names;
        // The open window each name had at the read before (None: no marker).
        let mut hint: Vec<Option<u64>> = vec![None; names.len()];
        for _ in 0..TOTALS_READS {
            let mut fields = Vec::with_capacity(names.len() * 3);
            for (name, open) in names.iter().zip(&hint) {
                fields.push(layout::total_field(name));
                fields.push(layout::open_field(name));
                if let Some(open) = open {
                    fields.push(layout::SECONDS.field(*open, name));
                }
            }
            // At most (NAMES_MAX + 1) * 3 fields: one HMGET, one moment.
            let mut values = self.metric_values(&key, fields).await?.into_iter();
            let mut by_name = BTreeMap::new();
            let mut moved = false;
            for (name, open) in names.iter().zip(hint.iter_mut()) {
                let (total, marker) = (values.next().flatten(), values.next().flatten());
                let slot = if open.is_some() {
                    values.next().flatten()
                } else {
                    None
                };
                let marked = marker.as_deref().and_then(layout::open_window);
                if marked != *open {
                    *open = marked;
                    moved = true;
                    continue;
                }
                let mut figures = match &total {
                    Some(raw) => decode(raw)?.1,
                    None if marked.is_none() => continue,
                    None => Figures::default(),
                };
                if let (Some(open), Some(slot)) = (marked, slot) {
                    let (window, open_figures) = decode(&slot)?;
                    if window == open {
                        figures.add(&open_figures);
                    }
                }
                by_name.insert(name.clone(), figures);
            }
            if !moved {
                return Ok(QueueMetrics {
                    queue: queue.to_owned(),
                    window: None,
                    names: by_name,
                    now: SystemTime::UNIX_EPOCH,
                    recording: head.recording,
                    handoffs_lost: head.handoffs_lost,
                    claims_lost: head.claims_lost,
                });
            }
        }
        Err(QueueError::Protocol(format!(
            "the metrics totals of queue {queue:?} kept changing under {TOTALS_READS} reads; \
             try again"
        )))
    }
}
