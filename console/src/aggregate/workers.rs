//! Workers over shards, one row each. A `Worker` over a
//! `redq::ShardedQueue` keeps a heartbeat record in every shard's registry
//! under one id, each with the whole process's figures: listed per shard,
//! one process would read as several, each running and done as much as
//! all of it. Merged by id, it is one row: its figures from its freshest
//! record (not summed), the shards that list it, and gone only when gone
//! on every one of them.

use std::collections::BTreeMap;

use futures::future::try_join_all;
use redq::QueueError;

use super::Target;
use crate::tui::state::WorkerInfo;

impl Target {
    /// Live workers, by id, then the gone ones; a worker listed by several
    /// shards once (see the module docs).
    pub async fn workers(&self) -> Result<Option<Vec<WorkerInfo>>, QueueError> {
        let all = try_join_all(self.shards().iter().map(crate::registry::workers)).await?;
        if !self.is_sharded() {
            return Ok(all.into_iter().next().flatten());
        }
        if all.iter().all(Option::is_none) {
            return Ok(None);
        }
        Ok(Some(merge(
            all.into_iter().map(Option::unwrap_or_default).collect(),
        )))
    }
}

/// Each shard's workers (index = shard) as one list: a worker per id, with
/// the shards that list it; live ones first, each kind by id.
pub fn merge(per_shard: Vec<Vec<WorkerInfo>>) -> Vec<WorkerInfo> {
    let mut by_id: BTreeMap<String, Vec<(usize, WorkerInfo)>> = BTreeMap::new();
    for (shard, workers) in per_shard.into_iter().enumerate() {
        for worker in workers {
            by_id
                .entry(worker.id.clone())
                .or_default()
                .push((shard, worker));
        }
    }
    let mut merged: Vec<WorkerInfo> = by_id.into_values().map(one).collect();
    merged.sort_by(|a, b| (a.gone, &a.id).cmp(&(b.gone, &b.id)));
    merged
}

/// One worker from its records (shard, record), at least one.
///
/// Its figures, state and heartbeat are its freshest record's: every
/// record carries the same process-wide totals, written at a different
/// moment, so the latest is the truest and a sum would count each job once
/// per shard. A live record is fresher than any gone one, whatever the
/// shards' clocks say. It is gone only when gone on every shard: a worker
/// whose heartbeats reach some shards but no longer another (that shard's
/// server or the path to it down) still runs, and claims from the shards
/// it reaches; its row stays live and names the shards that lost it
/// (`gone_shards`). How it hears wake-ups is its least-hearing live
/// shard's, as the exporter counts it: the shard that hears worst is where
/// it may start work late.
fn one(records: Vec<(usize, WorkerInfo)>) -> WorkerInfo {
    let shards: Vec<usize> = records.iter().map(|(shard, _)| *shard).collect();
    let gone_shards: Vec<usize> = records
        .iter()
        .filter(|(_, w)| w.gone)
        .map(|(shard, _)| *shard)
        .collect();
    let live = records.iter().any(|(_, w)| !w.gone);
    let hearing = records
        .iter()
        .filter(|(_, w)| w.gone != live)
        .map(|(_, w)| w.wake_ups)
        .min_by_key(|wake_ups| hearing_rank(*wake_ups));
    let mut worker = records
        .into_iter()
        .map(|(_, w)| w)
        .max_by_key(|w| (!w.gone, w.last_heartbeat))
        .expect("a worker has a record");
    worker.wake_ups = hearing.flatten();
    worker.shards = shards;
    worker.gone_shards = gone_shards;
    worker
}

/// How much a worker hears, least first (the exporter's `WAKE_UPS`
/// order): no subscription, an earlier version's plain channels, plain
/// channels, shard channels.
fn hearing_rank(wake_ups: Option<redq::worker::WakeUps>) -> u8 {
    use redq::worker::WakeUps;
    match wake_ups {
        Some(WakeUps::Polls) => 0,
        None => 1,
        Some(WakeUps::Plain) => 2,
        Some(WakeUps::Shard) => 3,
    }
}

impl WorkerInfo {
    /// Its SHARDS cell: the shards that list it, as ranges (`0-2`,
    /// `0,1,3`), then, while it is live, those that lost it (`0,1 (2
    /// gone)`); empty without shards.
    pub fn shards_text(&self) -> String {
        if self.gone || self.gone_shards.is_empty() {
            return ranges(&self.shards);
        }
        let live: Vec<usize> = self
            .shards
            .iter()
            .filter(|s| !self.gone_shards.contains(s))
            .copied()
            .collect();
        format!("{} ({} gone)", ranges(&live), ranges(&self.gone_shards))
    }
}

/// Ascending indexes as `0-2,5,7,8`: runs of three or more as a range, so
/// a worker on all of 64 shards reads `0-63`.
fn ranges(indexes: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indexes.len() {
        let mut end = i;
        while end + 1 < indexes.len() && indexes[end + 1] == indexes[end] + 1 {
            end += 1;
        }
        match end - i {
            0 => parts.push(indexes[i].to_string()),
            1 => parts.extend([indexes[i].to_string(), indexes[end].to_string()]),
            _ => parts.push(format!("{}-{}", indexes[i], indexes[end])),
        }
        i = end + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use redq::worker::{WakeUps, WorkerState};

    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_764_455_825 + secs)
    }

    /// Worker `id`'s record on one shard: `processed` done, beat at `beat`.
    fn record(id: &str, processed: u64, beat: u64, gone: bool) -> WorkerInfo {
        WorkerInfo {
            id: id.into(),
            node: 9,
            instance: 1,
            host: "web-1".into(),
            pid: 42,
            started_at: at(0),
            queues: vec!["emails".into()],
            in_flight: processed % 3,
            processed,
            failed: 0,
            last_heartbeat: at(beat),
            shards: Vec::new(),
            gone_shards: Vec::new(),
            state: WorkerState::Running,
            gone,
            wake_ups: Some(WakeUps::Shard),
            version: None,
            handoffs_lost: None,
            claims_lost: None,
        }
    }

    #[test]
    fn one_worker_on_three_shards_is_one_row_with_its_freshest_figures() {
        let merged = merge(vec![
            vec![record("9-1", 90, 100, false)],
            vec![record("9-1", 92, 103, false), record("9-2", 5, 100, false)],
            vec![record("9-1", 91, 101, false)],
        ]);
        let ids: Vec<&str> = merged.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["9-1", "9-2"]);
        let w = &merged[0];
        assert_eq!((w.processed, w.in_flight), (92, 2), "not 273, nor 90");
        assert_eq!(w.last_heartbeat, at(103));
        assert_eq!((w.shards.as_slice(), w.gone), (&[0, 1, 2][..], false));
        assert_eq!(w.shards_text(), "0-2");
        assert_eq!(merged[1].shards_text(), "1");
    }

    #[test]
    fn a_worker_gone_on_one_shard_but_beating_on_others_is_live() {
        // Its heartbeats stopped reaching shard 2: the record there is old.
        let merged = merge(vec![
            vec![record("9-1", 92, 200, false)],
            vec![record("9-1", 92, 201, false)],
            vec![record("9-1", 40, 150, true)],
        ]);
        assert_eq!(merged.len(), 1);
        let w = &merged[0];
        assert!(!w.gone);
        assert_eq!((w.processed, w.gone_shards.as_slice()), (92, &[2][..]));
        assert_eq!(w.shards_text(), "0,1 (2 gone)");
    }

    #[test]
    fn a_worker_gone_on_every_shard_is_gone_with_its_last_figures() {
        let merged = merge(vec![
            vec![record("9-1", 92, 150, true), record("8-1", 1, 200, false)],
            vec![record("9-1", 93, 151, true)],
        ]);
        let ids: Vec<(&str, bool)> = merged.iter().map(|w| (w.id.as_str(), w.gone)).collect();
        assert_eq!(ids, [("8-1", false), ("9-1", true)], "live first");
        let gone = &merged[1];
        assert_eq!((gone.processed, gone.last_heartbeat), (93, at(151)));
        assert_eq!(gone.gone_shards, [0, 1]);
        assert_eq!(gone.shards_text(), "0,1");
    }

    #[test]
    fn a_live_record_wins_over_a_gone_one_whatever_the_clocks_say() {
        // Shard 1's server clock runs ahead: its gone record reads later.
        let merged = merge(vec![
            vec![record("9-1", 92, 200, false)],
            vec![record("9-1", 40, 500, true)],
        ]);
        assert_eq!((merged[0].processed, merged[0].gone), (92, false));
    }

    #[test]
    fn it_hears_wake_ups_as_its_least_hearing_live_shard_does() {
        let mut plain = record("9-1", 92, 100, false);
        plain.wake_ups = Some(WakeUps::Plain);
        let mut deaf_but_gone = record("9-1", 92, 50, true);
        deaf_but_gone.wake_ups = Some(WakeUps::Polls);
        let merged = merge(vec![
            vec![record("9-1", 92, 101, false)],
            vec![plain],
            vec![deaf_but_gone],
        ]);
        assert_eq!(merged[0].wake_ups, Some(WakeUps::Plain));
    }

    #[test]
    fn shard_lists_read_as_ranges() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[0, 1]), "0,1");
        assert_eq!(ranges(&[0, 1, 3]), "0,1,3");
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8, 9, 10]), "0-2,5,7-10");
        assert_eq!(ranges(&(0..64).collect::<Vec<_>>()), "0-63");
    }
}
