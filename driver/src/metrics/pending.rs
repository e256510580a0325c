//! The 5 s window each name last wrote, which the scripts fold into the
//! totals and the 1 min and 1 h rollups only when a newer 5 s window of that
//! name is first written (`lua/lib/metrics.lua`): until then a reader of
//! those rollups adds it from the 5 s ring, so the sums are exact at any
//! moment.

use super::layout::{self, Rollup};
use super::read::{decode, Cell};
use crate::{QueueError, RedisQueue};

/// A name's open 5 s window, from what an HMGET of its marker and its totals
/// gave: the marker, else (the earlier layout, before the marker) the
/// totals' window position, where 0 means none (the layout before that,
/// which wrote every rollup each call).
pub(super) fn open_window_of(
    marker: Option<&[u8]>,
    totals: Option<&[u8]>,
) -> Result<Option<u64>, QueueError> {
    if let Some(marker) = marker {
        return Ok(layout::open_window(marker));
    }
    match totals {
        Some(raw) => Ok(Some(decode(raw)?.0).filter(|w| *w != 0)),
        None => Ok(None),
    }
}

impl RedisQueue {
    /// Each name's open 5 s window that falls in `oldest..=newest` of
    /// `rollup`: none for the 5 s rollup itself, which holds it already.
    /// Two HMGETs: the markers (and totals, for a name written by the
    /// earlier layout), then those 5 s slots.
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
        let fields = names
            .iter()
            .flat_map(|n| [layout::open_field(n), layout::total_field(n)])
            .collect();
        let stored = self.metric_values(key, fields).await?;
        let mut open = Vec::new();
        for (name, pair) in names.iter().zip(stored.chunks(2)) {
            let Some(seconds) = open_window_of(pair[0].as_deref(), pair[1].as_deref())? else {
                continue;
            };
            let window = seconds * layout::SECONDS.width_ms / rollup.width_ms;
            if (oldest..=newest).contains(&window) {
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
