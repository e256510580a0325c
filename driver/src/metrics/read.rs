//! Reading a queue's metrics hash: one HGET of its names, then HMGETs of
//! the fields the range covers (in chunks), and TIME for where "now" is.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use fred::interfaces::{ClientLike, HashesInterface};
use fred::types::{ClusterHash, CustomCommand};
use futures::future::try_join_all;

use super::layout::{self, Rollup, BUCKETS, OTHER};
use super::{Figures, Histogram, MetricsWindow, QueueMetrics, Recording};
use crate::limits::check_queue_name;
use crate::{Operator, QueueError, RedisQueue};

/// Fields per HMGET: a long range over many names is read in pieces.
const FIELDS_PER_READ: usize = 1_000;

/// One name's figures in one window of the rollup that was read.
pub(super) struct Cell {
    pub name: String,
    /// The window number in that rollup.
    pub window: u64,
    pub figures: Figures,
}

/// What a metrics hash says of itself, read before its figures.
pub(super) struct Head {
    /// The names admitted, and `(other)`.
    pub names: Vec<String>,
    pub recording: Recording,
    /// [`QueueMetrics::handoffs_lost`].
    pub handoffs_lost: u64,
    /// [`QueueMetrics::claims_lost`].
    pub claims_lost: u64,
}

/// What [`RedisQueue::read_windows`] found, and the range it covered.
pub(super) struct WindowedRead {
    pub now_ms: u64,
    pub head: Head,
    pub rollup: Rollup,
    /// The first and last window numbers of the range.
    pub oldest: u64,
    pub newest: u64,
    pub cells: Vec<Cell>,
}

impl WindowedRead {
    /// The sums per name, stamped with the range's "now".
    pub(super) fn with_sums(
        &self,
        queue: &str,
        window: MetricsWindow,
        names: BTreeMap<String, Figures>,
    ) -> QueueMetrics {
        QueueMetrics {
            queue: queue.to_owned(),
            window: Some(window),
            names,
            now: SystemTime::UNIX_EPOCH + Duration::from_millis(self.now_ms),
            recording: self.head.recording,
            handoffs_lost: self.head.handoffs_lost,
            claims_lost: self.head.claims_lost,
        }
    }
}

impl RedisQueue {
    /// A queue's figures per job name over the last `window` (the current
    /// 5 s, 1 min or 1 h window included, so up to one window more recent
    /// than a whole one).
    pub async fn metrics(
        &self,
        queue: &str,
        window: MetricsWindow,
    ) -> Result<QueueMetrics, QueueError> {
        let read = self.read_windows(queue, window).await?;
        let mut by_name: BTreeMap<String, Figures> = BTreeMap::new();
        for cell in &read.cells {
            by_name
                .entry(cell.name.clone())
                .or_default()
                .add(&cell.figures);
        }
        Ok(read.with_sums(queue, window, by_name))
    }

    /// Every (name, window) cell of `window`'s range that holds figures:
    /// the closed windows from their rollup ring, the open one from the 5 s
    /// ring (`pending.rs`). What [`RedisQueue::metrics`] sums by name and
    /// [`RedisQueue::metrics_history`] also by window.
    pub(super) async fn read_windows(
        &self,
        queue: &str,
        window: MetricsWindow,
    ) -> Result<WindowedRead, QueueError> {
        check_queue_name(queue)?;
        let key = self.inner.keys.metrics(queue);
        let now_ms = self.redis_now_ms(&key).await?;
        let head = self.metric_head(&key).await?;
        let names = &head.names;
        let (rollup, windows) = window.rollup();
        let newest = now_ms / rollup.width_ms;
        let oldest = newest.saturating_sub(windows - 1);
        let mut fields = Vec::new();
        let mut wanted = Vec::new();
        for name in names {
            for w in oldest..=newest {
                fields.push(rollup.field(w, name));
                wanted.push((name.as_str(), w));
            }
        }
        let values = self.metric_values(&key, fields).await?;
        let mut cells = Vec::new();
        for ((name, w), raw) in wanted.into_iter().zip(values) {
            let Some(raw) = raw else { continue };
            let (stored_window, figures) = decode(&raw)?;
            // A slot still holding an older window (the ring wrapped) is skipped.
            if stored_window == w {
                cells.push(Cell {
                    name: name.to_owned(),
                    window: w,
                    figures,
                });
            }
        }
        cells.extend(
            self.pending_windows(&key, names, rollup, oldest, newest)
                .await?,
        );
        Ok(WindowedRead {
            now_ms,
            head,
            rollup,
            oldest,
            newest,
            cells,
        })
    }

    /// The names admitted, whether the queue records now, and its lost
    /// hand-offs and claims: one HMGET.
    pub(super) async fn metric_head(&self, key: &str) -> Result<Head, QueueError> {
        type Fields = (Option<Vec<u8>>, Option<Vec<u8>>, Option<u64>, Option<u64>);
        let (raw, off, lost, claims_lost): Fields = self
            .client()
            .hmget(
                key,
                vec![
                    "names",
                    layout::OFF_FIELD,
                    layout::HANDOFFS_LOST_FIELD,
                    layout::CLAIMS_LOST_FIELD,
                ],
            )
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        let mut names = Vec::new();
        if let Some(raw) = raw {
            let value = rmpv::decode::read_value(&mut &raw[..]).map_err(|e| bad(&e.to_string()))?;
            for name in value
                .as_array()
                .ok_or_else(|| bad("names is not an array"))?
            {
                names.push(
                    name.as_str()
                        .ok_or_else(|| bad("a name is not text"))?
                        .to_owned(),
                );
            }
        }
        names.push(OTHER.to_owned());
        Ok(Head {
            names,
            recording: Recording::from_field(off.as_deref()),
            handoffs_lost: lost.unwrap_or(0),
            claims_lost: claims_lost.unwrap_or(0),
        })
    }

    pub(super) async fn metric_values(
        &self,
        key: &str,
        fields: Vec<String>,
    ) -> Result<Vec<Option<Vec<u8>>>, QueueError> {
        let reads = fields.chunks(FIELDS_PER_READ).map(|chunk| async move {
            self.client()
                .hmget::<Vec<Option<Vec<u8>>>, _, _>(key, chunk.to_vec())
                .await
                .map_err(|e| QueueError::from_redis(e, self.inner.timeout))
        });
        Ok(try_join_all(reads).await?.into_iter().flatten().collect())
    }

    /// Redis's clock (the one the scripts record on), from the node holding `key`.
    pub(crate) async fn redis_now_ms(&self, key: &str) -> Result<u64, QueueError> {
        let slot = ClusterHash::Custom(fred::util::redis_keyslot(key.as_bytes()));
        let command = CustomCommand::new_static("TIME", slot, false);
        let time: Vec<String> = self
            .client()
            .custom(command, Vec::<String>::new())
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        let part = |i: usize| -> Result<u64, QueueError> {
            time.get(i)
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| bad("TIME replied oddly"))
        };
        Ok(part(0)? * 1000 + part(1)? / 1000)
    }
}

impl Operator {
    /// [`RedisQueue::metrics`] over every shard, summed per name.
    pub async fn metrics(
        &self,
        queue: &str,
        window: MetricsWindow,
    ) -> Result<QueueMetrics, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.metrics(queue, window))).await?;
        all.into_iter()
            .reduce(QueueMetrics::plus)
            .ok_or_else(|| QueueError::Protocol("no shards".into()))
    }

    /// [`RedisQueue::metric_totals`] over every shard, summed per name.
    pub async fn metric_totals(&self, queue: &str) -> Result<QueueMetrics, QueueError> {
        let all = try_join_all(self.shards().iter().map(|s| s.metric_totals(queue))).await?;
        all.into_iter()
            .reduce(QueueMetrics::plus)
            .ok_or_else(|| QueueError::Protocol("no shards".into()))
    }
}

fn bad(why: &str) -> QueueError {
    QueueError::Protocol(format!("a stored metrics value is malformed: {why}"))
}

/// A stored value: its window number and its figures. The value is a map
/// from `lua/lib/metrics.lua`'s positions (from 1) to numbers, zeros left
/// out, or an array when the positions set run 1, 2, ...
pub(super) fn decode(raw: &[u8]) -> Result<(u64, Figures), QueueError> {
    let value = rmpv::decode::read_value(&mut &raw[..]).map_err(|e| bad(&e.to_string()))?;
    let number = |v: &rmpv::Value| -> u64 {
        v.as_u64()
            .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
            .unwrap_or(0)
    };
    let mut at = [0u64; layout::LEN];
    let mut set = |position: u64, v: &rmpv::Value| -> Result<(), QueueError> {
        let slot = (position as usize)
            .checked_sub(1)
            .and_then(|i| at.get_mut(i))
            .ok_or_else(|| {
                bad(&format!(
                    "position {position} is outside 1..{}",
                    layout::LEN
                ))
            })?;
        *slot = number(v);
        Ok(())
    };
    match &value {
        rmpv::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                set(i as u64 + 1, v)?;
            }
        }
        rmpv::Value::Map(entries) => {
            for (k, v) in entries {
                set(
                    k.as_u64()
                        .ok_or_else(|| bad("a position is not a number"))?,
                    v,
                )?;
            }
        }
        _ => return Err(bad("neither a map nor an array")),
    }
    let histogram = |sum: usize, first: usize| {
        let mut h = Histogram {
            counts: [0; BUCKETS],
            sum_ms: at[sum],
        };
        h.counts.copy_from_slice(&at[first..first + BUCKETS]);
        h
    };
    Ok((
        at[layout::WINDOW],
        Figures {
            completed: at[layout::COMPLETED],
            retried: at[layout::RETRIED],
            dead_lettered: at[layout::DEAD],
            cancelled: at[layout::CANCELLED],
            reclaimed: at[layout::RECLAIMED],
            wait: histogram(layout::WAIT_SUM, layout::WAIT_BUCKET),
            run: histogram(layout::RUN_SUM, layout::RUN_BUCKET),
        },
    ))
}
