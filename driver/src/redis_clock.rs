//! Where Redis's clock stands against this process's monotonic clock, as
//! the last claim's reply showed it, so that a claim can carry a deadline
//! on Redis's own clock (`lua/claim.lua`): a claim that starts after its
//! caller has given up on the reply (Redis stalled by `CLIENT PAUSE`, a
//! `DEBUG SLEEP`, a slow script) leases nothing, rather than leasing jobs
//! that nobody will run until their leases lapse, an attempt counted.
//!
//! Measured from replies, not assumed, so a client whose wall clock is off
//! by any amount sends a deadline Redis reads right; the monotonic clock
//! keeps a step of this machine's wall clock out of it. Each reading pairs
//! Redis's time in a claim with the moment that claim was sent, which came
//! before it: so the estimate is never behind Redis's clock, only ahead by
//! the time that claim waited to start. A deadline may then come late
//! (after a slow claim, the next one's window is that much wider, towards
//! how claims behaved before they carried one), never early: a claim that
//! starts within its window of being sent always leases. Only a step back
//! of Redis's own clock can make one early, and the refused claim's reply
//! measures the clock again.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Redis's clock (unix ms) less this process's monotonic milliseconds.
#[derive(Debug)]
pub(crate) struct RedisClock {
    base: Instant,
    /// `UNKNOWN` until a reply has shown it.
    offset_ms: AtomicI64,
}

const UNKNOWN: i64 = i64::MIN;

impl Default for RedisClock {
    fn default() -> Self {
        RedisClock {
            base: Instant::now(),
            offset_ms: AtomicI64::new(UNKNOWN),
        }
    }
}

impl RedisClock {
    fn local_ms(&self) -> i64 {
        self.base.elapsed().as_millis() as i64
    }

    /// A claim sent at `sent` found Redis's clock at `redis_now_ms`.
    pub fn heard(&self, redis_now_ms: u64, sent: Instant) {
        let sent_ms = sent.saturating_duration_since(self.base).as_millis() as i64;
        self.offset_ms
            .store(redis_now_ms as i64 - sent_ms, Ordering::Relaxed);
    }

    /// The moment on Redis's clock `within` from now, once a reply has
    /// shown where that clock stands.
    pub fn in_redis_time(&self, within: Duration) -> Option<u64> {
        let offset = self.offset_ms.load(Ordering::Relaxed);
        if offset == UNKNOWN {
            return None;
        }
        let at = self.local_ms() + offset + within.as_millis() as i64;
        u64::try_from(at).ok()
    }
}

/// How long after it is sent a claim may still start and lease jobs: half
/// its caller's timeout, so that even a claim that starts at the last
/// moment has the other half for its reply to travel back (and the clock
/// estimate room to be off). A claim that starts later leases nothing and
/// answers as if nothing were due: a caller still waiting takes it as such.
pub(crate) fn claim_start_window(timeout: Duration) -> Duration {
    timeout / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_deadline_until_a_reply_has_shown_the_clock() {
        let clock = RedisClock::default();
        assert_eq!(clock.in_redis_time(Duration::from_secs(5)), None);
        clock.heard(1_000_000, Instant::now());
        let at = clock.in_redis_time(Duration::from_secs(5)).unwrap();
        // Measured a moment ago: 5 s ahead of that reading, and later only
        // by the time the test itself took (a second allowed, on a busy
        // machine).
        assert!((1_005_000..1_006_000).contains(&at), "{at}");
    }

    #[test]
    fn a_clock_far_from_this_machines_is_followed() {
        let clock = RedisClock::default();
        clock.heard(42, Instant::now());
        let at = clock.in_redis_time(Duration::from_millis(10)).unwrap();
        assert!((52..1_052).contains(&at), "{at}");
    }

    #[test]
    fn a_claim_that_waited_to_start_moves_the_next_deadline_later_not_earlier() {
        let clock = RedisClock::default();
        let sent = Instant::now();
        // Redis started that claim 2 s after it was sent: its clock read
        // 1 002 000 then, so at the send it read 1 000 000 at the most.
        clock.heard(1_002_000, sent);
        let at = clock.in_redis_time(Duration::ZERO).unwrap();
        assert!(at >= 1_002_000, "{at}");
    }
}
