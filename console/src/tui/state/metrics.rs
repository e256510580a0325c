//! Throughput figures from the driver's 5-second stats buckets.

use std::time::{Duration, SystemTime};

use redq::{StatsBucket, STATS_BUCKET};

use crate::clock::epoch_ms;

/// How far back "now" rates look: three complete buckets.
pub const RATE_WINDOW: Duration = Duration::from_secs(15);
/// The sparkline window.
pub const SPARK_WINDOW: Duration = Duration::from_secs(15 * 60);

fn bucket_ms() -> u64 {
    STATS_BUCKET.as_millis() as u64
}

/// Start of the bucket `now` falls in, in epoch ms.
fn current_bucket(now: SystemTime) -> u64 {
    epoch_ms(now) / bucket_ms() * bucket_ms()
}

/// Processed and failed per second over the last complete [`RATE_WINDOW`]
/// (the bucket in progress is left out, so a rate does not dip each time a
/// new bucket starts).
pub fn rates(stats: &[StatsBucket], now: SystemTime) -> (f64, f64) {
    let end = current_bucket(now);
    let start = end.saturating_sub(RATE_WINDOW.as_millis() as u64);
    let (mut processed, mut failed) = (0, 0);
    for b in stats {
        let at = epoch_ms(b.start);
        if at >= start && at < end {
            processed += b.processed;
            failed += b.failed;
        }
    }
    let secs = RATE_WINDOW.as_secs_f64();
    (processed as f64 / secs, failed as f64 / secs)
}

/// Whether anything was processed or failed since `now - window`.
pub fn active_within(stats: &[StatsBucket], now: SystemTime, window: Duration) -> bool {
    let since = epoch_ms(now).saturating_sub(window.as_millis() as u64 + bucket_ms());
    stats
        .iter()
        .any(|b| epoch_ms(b.start) >= since && b.processed + b.failed > 0)
}

/// `columns` sums over the last [`SPARK_WINDOW`], oldest first; `pick`
/// chooses processed or failed.
pub fn series(
    stats: &[StatsBucket],
    now: SystemTime,
    columns: usize,
    pick: impl Fn(&StatsBucket) -> u64,
) -> Vec<u64> {
    let mut out = vec![0; columns];
    if columns == 0 {
        return out;
    }
    let end = current_bucket(now) + bucket_ms();
    let span = SPARK_WINDOW.as_millis() as u64;
    let start = end.saturating_sub(span);
    for b in stats {
        let at = epoch_ms(b.start);
        if at < start || at >= end {
            continue;
        }
        let column = ((at - start) as u128 * columns as u128 / span as u128) as usize;
        out[column.min(columns - 1)] += pick(b);
    }
    out
}

/// A text sparkline (`▁▂▃▄▅▆▇█`, a space for zero), scaled to its maximum.
pub fn sparkline(values: &[u64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&v| {
            if v == 0 || max == 0 {
                ' '
            } else {
                BARS[((v * 8).div_ceil(max) as usize).clamp(1, 8) - 1]
            }
        })
        .collect()
}

/// A rate for a table cell: `0`, `0.4`, `12`, `1.2k`.
pub fn rate_text(per_second: f64) -> String {
    if per_second <= 0.0 {
        "0".to_owned()
    } else if per_second < 10.0 {
        format!("{per_second:.1}")
    } else if per_second < 1000.0 {
        format!("{per_second:.0}")
    } else {
        format!("{:.1}k", per_second / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    fn bucket(secs: u64, processed: u64, failed: u64) -> StatsBucket {
        StatsBucket {
            start: UNIX_EPOCH + Duration::from_secs(secs),
            processed,
            failed,
        }
    }

    #[test]
    fn rates_use_complete_buckets_only() {
        let now = UNIX_EPOCH + Duration::from_secs(1002);
        let stats = [
            bucket(980, 100, 0), // too old
            bucket(985, 15, 3),
            bucket(990, 15, 0),
            bucket(995, 15, 0),
            bucket(1000, 999, 999), // in progress
        ];
        assert_eq!(rates(&stats, now), (3.0, 0.2));
    }

    #[test]
    fn series_spreads_buckets_over_columns() {
        let now = UNIX_EPOCH + Duration::from_secs(10_000);
        let stats = [
            bucket(10_000, 4, 0),
            bucket(10_000 - 450, 2, 0),
            bucket(1, 9, 0),
        ];
        let s = series(&stats, now, 10, |b| b.processed);
        assert_eq!(s.len(), 10);
        assert_eq!(s[9], 4);
        assert_eq!(s.iter().sum::<u64>(), 6);
    }

    #[test]
    fn sparkline_scales_to_the_maximum() {
        assert_eq!(sparkline(&[0, 1, 4, 8]), " ▁▄█");
        assert_eq!(sparkline(&[0, 0]), "  ");
    }

    #[test]
    fn rate_texts() {
        assert_eq!(rate_text(0.0), "0");
        assert_eq!(rate_text(0.4), "0.4");
        assert_eq!(rate_text(12.4), "12");
        assert_eq!(rate_text(1234.0), "1.2k");
    }
}
