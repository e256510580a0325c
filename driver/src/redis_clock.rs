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
//! Redis's time in a claim (or in the `TIME` a handle reads before its
//! first claim) with the moment that call was sent, which came before it:
//! so the estimate is never behind Redis's clock, only ahead by the time
//! that claim waited to start. A deadline may then come late
//! (after a slow claim, the next one's window is that much wider, towards
//! how claims behaved before they carried one), never early: a claim that
//! starts within its window of being sent always leases. Only a step back
//! of Redis's own clock can make one early, and the refused claim's reply
//! measures the clock again.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Redis's clock (unix ms) less this process's monotonic milliseconds.
#[derive(Debug)]
pub(crate) struct RedisClock {
    base: Instant,
    /// `UNKNOWN` until a reply has shown it. Paired with the moment the
    /// claim was sent: never behind Redis's clock.
    offset_ms: AtomicI64,
    /// The same reading paired with the moment its reply arrived, which
    /// came after it: never ahead of Redis's clock (where a claim whose
    /// reply was lost may have leased from: `crate::lost_claim`).
    offset_low_ms: AtomicI64,
    /// Whether the clock was read on purpose (`TIME`) already: once a
    /// handle, so that a Redis out of reach does not make every claim wait
    /// for a read before its own failure.
    read_asked: AtomicBool,
}

const UNKNOWN: i64 = i64::MIN;

impl Default for RedisClock {
    fn default() -> Self {
        RedisClock {
            base: Instant::now(),
            offset_ms: AtomicI64::new(UNKNOWN),
            offset_low_ms: AtomicI64::new(UNKNOWN),
            read_asked: AtomicBool::new(false),
        }
    }
}

impl RedisClock {
    fn local_ms(&self) -> i64 {
        self.base.elapsed().as_millis() as i64
    }

    /// A claim (or a `TIME`) sent at `sent`, whose reply arrived just now,
    /// found Redis's clock at `redis_now_ms`.
    pub fn heard(&self, redis_now_ms: u64, sent: Instant) {
        let sent_ms = sent.saturating_duration_since(self.base).as_millis() as i64;
        self.offset_ms
            .store(redis_now_ms as i64 - sent_ms, Ordering::Relaxed);
        // Rounded up, so that it stays behind Redis's clock.
        let arrived_ms = self.base.elapsed().as_micros().div_ceil(1000) as i64;
        self.offset_low_ms
            .store(redis_now_ms as i64 - arrived_ms, Ordering::Relaxed);
    }

    /// Whether to read the clock on purpose now: true the first time
    /// only, and only while no reading has shown it.
    pub fn read_first(&self) -> bool {
        !self.known() && !self.read_asked.swap(true, Ordering::Relaxed)
    }

    /// Whether a reading has shown where Redis's clock stands.
    pub fn known(&self) -> bool {
        self.offset_ms.load(Ordering::Relaxed) != UNKNOWN
    }

    /// Redis's clock at `moment`, at the latest (from the last reading's
    /// reply), once a reply has shown where that clock stands.
    pub fn at_or_before(&self, moment: Instant) -> Option<u64> {
        let offset = self.offset_low_ms.load(Ordering::Relaxed);
        if offset == UNKNOWN {
            return None;
        }
        let local = moment.saturating_duration_since(self.base).as_millis() as i64;
        Some(u64::try_from(local + offset).unwrap_or(0))
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
    fn the_clock_is_read_on_purpose_once_and_only_while_unknown() {
        let clock = RedisClock::default();
        assert!(clock.read_first());
        assert!(!clock.read_first(), "once, even if that read failed");
        let heard_first = RedisClock::default();
        heard_first.heard(42, Instant::now());
        assert!(!heard_first.read_first(), "a claim's reply showed it");
    }

    #[test]
    fn a_clock_far_from_this_machines_is_followed() {
        let clock = RedisClock::default();
        clock.heard(42, Instant::now());
        let at = clock.in_redis_time(Duration::from_millis(10)).unwrap();
        assert!((52..1_052).contains(&at), "{at}");
    }

    #[test]
    fn the_clock_before_a_moment_is_never_ahead_of_the_reading() {
        let clock = RedisClock::default();
        let sent = Instant::now();
        assert_eq!(clock.at_or_before(sent), None);
        std::thread::sleep(Duration::from_millis(20));
        // Redis read 1 000 000 somewhere between the send and now: at the
        // send it read 1 000 000 at the most, and the estimate of that
        // moment is at least 20 ms below it (the reply came 20 ms later).
        clock.heard(1_000_000, sent);
        let before = clock.at_or_before(sent).unwrap();
        assert!((998_000..=999_980).contains(&before), "{before}");
        let later = clock
            .at_or_before(sent + Duration::from_millis(500))
            .unwrap();
        assert_eq!(later - before, 500);
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
