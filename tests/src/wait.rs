//! Polling a condition instead of sleeping and hoping.

use std::time::Duration;

use tokio::time::{sleep, Instant};

/// How often [`wait_until`] re-checks its condition: short enough that tests
/// stay fast, long enough not to hammer redis.
const POLL_INTERVAL: Duration = Duration::from_millis(15);

/// Polls `condition` every ~15 ms until it returns `true`.
///
/// Panics, naming `what`, if it is still `false` after `deadline`. The
/// condition is always checked at least once, and once more right at the
/// deadline, so a slow machine never fails a test that just barely made it.
///
/// Accepts both async closures (`async || ...`) and closures returning a
/// future (`|| async move { ... }`).
pub async fn wait_until(deadline: Duration, what: &str, mut condition: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    let give_up_at = started + deadline;
    loop {
        if condition().await {
            return;
        }
        let now = Instant::now();
        if now >= give_up_at {
            panic!(
                "timed out after {:?} waiting for {what}",
                now.duration_since(started)
            );
        }
        // Never sleep past the deadline: the final check happens right at it.
        sleep(POLL_INTERVAL.min(give_up_at - now)).await;
    }
}
