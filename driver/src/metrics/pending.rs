//! The 5 s window each name last wrote, which the scripts fold into the
//! 1 min and 1 h rollups only when a newer 5 s window of that name is first
//! written (`lua/lib/metrics.lua`): until then a reader of those rollups
//! adds it from the 5 s ring, so the sums are exact at any moment.

use super::layout::{self, Rollup};
use super::read::{decode, Cell};
use crate::{QueueError, RedisQueue};

impl RedisQueue {
    /// Each name's open 5 s window that falls in `oldest..=newest` of
    /// `rollup`: none for the 5 s rollup itself, which holds it already.
    /// Two HMGETs: the totals (which say the window), then those 5 s slots.
    pub(super) async fn pending_windows(
        &self,
        key: &str,
        names: &[String],
        rollup: Rollup,
        oldest: u64,
        newest: u64,
    ) -> Result<Vec<Cell>, QueueError> {
        if rollup.prefix == layout::SECONDS.prefix || names.is_empty() {
            return Ok(Vec::new());
        }
        let totals = names.iter().map(|n| layout::total_field(n)).collect();
        let totals = self.metric_values(key, totals).await?;
        let mut open = Vec::new();
        for (name, raw) in names.iter().zip(totals) {
            let Some(raw) = raw else { continue };
            let seconds = decode(&raw)?.0;
            let window = seconds * layout::SECONDS.width_ms / rollup.width_ms;
            // 0: totals written before the fold (every rollup written each call).
            if seconds != 0 && (oldest..=newest).contains(&window) {
                open.push((name, seconds, window));
            }
        }
        if open.is_empty() {
            return Ok(Vec::new());
        }
        let fields = open
            .iter()
            .map(|(name, seconds, _)| layout::SECONDS.field(*seconds, name))
            .collect();
        let values = self.metric_values(key, fields).await?;
        let mut pending = Vec::new();
        for ((name, seconds, window), raw) in open.into_iter().zip(values) {
            let Some(raw) = raw else { continue };
            let (stored, figures) = decode(&raw)?;
            if stored == seconds {
                pending.push(Cell {
                    name: name.clone(),
                    window,
                    figures,
                });
            }
        }
        Ok(pending)
    }
}
