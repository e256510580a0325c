//! Retry delays: small pure functions, so they are easy to test and to
//! replace, and [`Backoff`], the policy a job carries into Redis so that a
//! reclaim (which runs in a script, without the job type's code) backs off
//! too.

use std::time::Duration;

use serde::ser::SerializeStruct;

use crate::{limits, QueueError};

/// An exponential backoff policy: the delay before retry `attempt` is
/// [`exponential_backoff`]`(attempt, base, cap)`.
///
/// A job stores its policy (two numbers in its record) so that when its
/// lease lapses (its worker died or hung) the reclaim puts it back after the
/// same backoff a failed attempt would wait, computed in the reclaim script
/// from the attempts so far, instead of at once: a job that crashes every
/// worker that runs it does not cycle through the fleet as fast as leases
/// lapse. Typed jobs carry [`crate::worker::TypedJob::BACKOFF`]; untyped
/// ones [`crate::NewJob::reclaim_backoff`], default [`Backoff::NONE`] (a
/// reclaimed job is due at once, as before the policy existed).
///
/// The script's jitter is derived from the lapsed lease's id rather than a
/// random number (scripts must be deterministic), which spreads jobs
/// reclaimed together just as well: their lease ids differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
}

impl Backoff {
    /// No backoff: a reclaimed job is due at once.
    pub const NONE: Backoff = Backoff {
        base: Duration::ZERO,
        cap: Duration::ZERO,
    };

    /// Start at `base`, double per attempt, never above `cap` (a `cap`
    /// below `base` is raised to `base`).
    pub const fn exponential(base: Duration, cap: Duration) -> Backoff {
        let cap = if cap.as_nanos() < base.as_nanos() {
            base
        } else {
            cap
        };
        Backoff { base, cap }
    }

    /// The first delay.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The longest delay.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// A jittered delay before retry `attempt` (1 for the first retry).
    pub fn delay(&self, attempt: u32) -> Duration {
        exponential_backoff(attempt, self.base, self.cap)
    }

    /// Whether reclaims wait at all.
    pub fn is_none(&self) -> bool {
        self.cap.is_zero()
    }

    /// Base and cap in whole milliseconds, as the record stores them; a
    /// policy Redis could not represent is refused naming what is accepted.
    pub(crate) fn to_ms(self) -> Result<(u64, u64), QueueError> {
        Ok((
            limits::check_duration("reclaim backoff base", self.base)?,
            limits::check_duration("reclaim backoff cap", self.cap)?,
        ))
    }
}

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

/// As `{"base_ms": .., "cap_ms": ..}`, the units the record stores.
impl serde::Serialize for Backoff {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Backoff", 2)?;
        out.serialize_field("base_ms", &(self.base.as_millis() as u64))?;
        out.serialize_field("cap_ms", &(self.cap.as_millis() as u64))?;
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_delays_like_the_function_and_raises_a_low_cap_to_its_base() {
        let policy = Backoff::exponential(Duration::from_millis(100), Duration::from_secs(1));
        for attempt in 1..=8 {
            let ceiling = backoff_ceiling(attempt, policy.base(), policy.cap());
            let d = policy.delay(attempt);
            assert!(d >= ceiling / 2 && d <= ceiling, "attempt {attempt}: {d:?}");
        }
        let low = Backoff::exponential(Duration::from_secs(5), Duration::from_secs(1));
        assert_eq!(low.cap(), Duration::from_secs(5));
        assert_eq!(Backoff::NONE.to_ms().unwrap(), (0, 0));
        assert_eq!(policy.to_ms().unwrap(), (100, 1000));
    }

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
