//! A bounded log-scale histogram of times and its percentile estimates.

use std::time::Duration;

use serde::Serialize;

use super::layout::BUCKETS;

/// Times in [`BUCKETS`] fixed buckets: bucket `b` counts times of at most
/// 2^b ms and more than 2^(b-1) ms (bucket 0: at most 1 ms); the last
/// bucket counts every time over 2^22 ms (about 70 minutes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Histogram {
    /// How many times fell in each bucket.
    pub counts: [u64; BUCKETS],
    /// The sum of the times, in ms.
    pub sum_ms: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: [0; BUCKETS],
            sum_ms: 0,
        }
    }
}

impl Histogram {
    /// The upper bound of bucket `b` in ms; `None` for the last (unbounded) one.
    pub fn upper_bound_ms(b: usize) -> Option<u64> {
        (b + 1 < BUCKETS).then(|| 1u64 << b)
    }

    /// How many times were recorded.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Add another histogram's counts (another window, name or shard).
    pub fn add(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.sum_ms += other.sum_ms;
    }

    /// The mean time, if any was recorded.
    pub fn mean(&self) -> Option<Duration> {
        let count = self.count();
        (count > 0).then(|| Duration::from_secs_f64(self.sum_ms as f64 / count as f64 / 1000.0))
    }

    /// An estimate of the `q` quantile (0.5 = the median), `None` when
    /// nothing was recorded. The estimate lies in the same bucket as the
    /// true value (interpolated linearly within it), so it is within a
    /// factor of 2 of it; in the last bucket it is its lower bound (2^22 ms):
    /// the true value is at least that.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let rank = (q.clamp(0.0, 1.0) * count as f64).ceil().max(1.0);
        let mut before = 0u64;
        for (b, &n) in self.counts.iter().enumerate() {
            if n == 0 || ((before + n) as f64) < rank {
                before += n;
                continue;
            }
            let lower = if b == 0 {
                0.0
            } else {
                (1u64 << (b - 1)) as f64
            };
            let Some(upper) = Histogram::upper_bound_ms(b) else {
                return Some(Duration::from_millis(lower as u64));
            };
            let within = (rank - before as f64) / n as f64;
            let ms = lower + (upper as f64 - lower) * within;
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(times_ms: &[u64]) -> Histogram {
        let mut h = Histogram::default();
        for &ms in times_ms {
            let b = (0..BUCKETS)
                .find(|&b| Histogram::upper_bound_ms(b).is_none_or(|u| ms <= u))
                .unwrap();
            h.counts[b] += 1;
            h.sum_ms += ms;
        }
        h
    }

    #[test]
    fn a_quantile_is_within_a_factor_of_two_of_the_true_value() {
        let times: Vec<u64> = (1..=1000).map(|i| i * 7).collect();
        let h = with(&times);
        for q in [0.5, 0.9, 0.99] {
            let truth = times[((q * 1000.0) as usize).saturating_sub(1)] as f64;
            let estimate = h.quantile(q).unwrap().as_secs_f64() * 1000.0;
            assert!(
                estimate <= truth * 2.0 && estimate >= truth / 2.0,
                "q {q}: {estimate} vs {truth}"
            );
        }
    }

    #[test]
    fn an_empty_histogram_has_no_quantile_and_the_last_bucket_gives_its_lower_bound() {
        assert_eq!(Histogram::default().quantile(0.5), None);
        let h = with(&[10_000_000]);
        assert_eq!(h.quantile(0.99), Some(Duration::from_millis(1 << 22)));
        assert_eq!(h.mean(), Some(Duration::from_secs(10_000)));
    }
}
