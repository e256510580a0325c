//! Retry delays: a small pure function, so it is easy to test and to replace.

use std::time::Duration;

/// Exponential backoff with "equal jitter": the delay before retry `attempt`
/// (1-based) is drawn uniformly from `[d/2, d]` where
/// `d = min(cap, base * 2^(attempt-1))`. Jitter spreads retries of jobs that
/// failed together (a dependency outage) so they do not return in lockstep;
/// keeping half of `d` fixed keeps the backoff meaningful.
pub fn exponential_backoff(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let ceiling = backoff_ceiling(attempt, base, cap);
    let half = ceiling / 2;
    let spread = (ceiling - half).as_millis() as u64;
    half + Duration::from_millis(if spread == 0 {
        0
    } else {
        rand::random_range(0..=spread)
    })
}

/// The upper bound of [`exponential_backoff`] for `attempt`.
pub fn backoff_ceiling(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let doublings = attempt.saturating_sub(1).min(40);
    base.checked_mul(1u32 << doublings.min(31))
        .and_then(|d| if doublings > 31 { None } else { Some(d) })
        .unwrap_or(cap)
        .min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_within_jitter_bounds_and_stop_at_the_cap() {
        let base = Duration::from_millis(100);
        let cap = Duration::from_secs(10);
        for attempt in 1..=20 {
            let ceiling = backoff_ceiling(attempt, base, cap);
            for _ in 0..50 {
                let d = exponential_backoff(attempt, base, cap);
                assert!(
                    d >= ceiling / 2 && d <= ceiling,
                    "attempt {attempt}: {d:?} outside [{:?}, {ceiling:?}]",
                    ceiling / 2
                );
            }
        }
        assert_eq!(backoff_ceiling(1, base, cap), base);
        assert_eq!(backoff_ceiling(4, base, cap), base * 8);
        assert_eq!(backoff_ceiling(30, base, cap), cap);
        assert_eq!(backoff_ceiling(u32::MAX, base, cap), cap);
    }
}
