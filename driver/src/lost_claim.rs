//! Claims whose reply was lost after they may have run: the connection
//! dropped or the command timed out with the claim sent (or, for a claim
//! of several detached records, with the read of their payloads sent).
//! Such a claim may have leased jobs that its caller never saw; they used
//! to wait for their leases to lapse, and the reclaim counted an attempt
//! each never had (a job allowed one attempt went to the dead letters
//! without running).
//!
//! The client does not send a claim again by itself
//! (`scripts::resend_safe`): a second run would lease other jobs, and the
//! first run's would be left to their leases with no error to say so. The
//! caller gets the error, and a `Worker` gives the first run's jobs back
//! (`crate::worker`'s `lost_claims`): released, due again at once, no
//! attempt counted.
//!
//! Where to look is exact without costing a claim anything. A claim carries
//! the moment, on Redis's clock, after which it leases nothing
//! (`crate::redis_clock`); once Redis's clock has passed it, the claim has
//! run or never will lease. The jobs it leased are leased to the worker's
//! identity, under lease ids above every lease the worker has heard of
//! (the lease sequence only grows), consecutive (one script takes them in
//! one run), no more than it asked for, and expire `lease` after a moment
//! between its send and that deadline.

use crate::QueueError;

/// A claim sent that may have leased jobs its caller never saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LostClaim {
    pub queue: String,
    /// How many jobs it asked for: it leased no more.
    pub limit: usize,
    pub lease_ms: u64,
    /// Redis's clock when it was sent, at the latest.
    pub sent_ms: u64,
    /// The moment on Redis's clock after which it leases nothing.
    pub deadline_ms: u64,
}

impl LostClaim {
    /// The claim of `limit` jobs of `queue` for `lease_ms`, sent at `sent`
    /// with `deadline_ms`, failed with `error`: the claim it may have left
    /// leases behind, or `None` when it surely leased nothing (the server
    /// answered it with an error) or cannot be looked for (it carried no
    /// deadline, so it may still run at any time).
    pub fn after(
        error: &QueueError,
        queue: &str,
        limit: usize,
        lease_ms: u64,
        sent: Option<u64>,
        deadline_ms: Option<u64>,
    ) -> Option<LostClaim> {
        if !unanswered(error) {
            return None;
        }
        Some(LostClaim {
            queue: queue.to_owned(),
            limit,
            lease_ms,
            sent_ms: sent?,
            deadline_ms: deadline_ms?,
        })
    }
}

/// Whether `error` leaves a script's run unknown: the command timed out, or
/// its connection broke before the reply came. An error reply means the
/// script ran and refused, and a refusing script writes nothing.
fn unanswered(error: &QueueError) -> bool {
    use fred::error::ErrorKind;
    match error {
        QueueError::Timeout(_) => true,
        QueueError::Redis(redis) => matches!(
            redis.0.kind(),
            ErrorKind::IO | ErrorKind::Canceled | ErrorKind::Timeout
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn only_a_claim_left_unanswered_with_a_deadline_is_looked_for() {
        let timeout = QueueError::Timeout(Duration::from_secs(1));
        let lost = LostClaim::after(&timeout, "q", 4, 1000, Some(10), Some(20));
        assert_eq!(
            lost,
            Some(LostClaim {
                queue: "q".into(),
                limit: 4,
                lease_ms: 1000,
                sent_ms: 10,
                deadline_ms: 20,
            })
        );
        assert_eq!(
            LostClaim::after(&timeout, "q", 4, 1000, Some(10), None),
            None
        );
        let refused = QueueError::Protocol("no".into());
        assert_eq!(
            LostClaim::after(&refused, "q", 4, 1000, Some(10), Some(20)),
            None
        );
        let server = fred::error::Error::new(fred::error::ErrorKind::Unknown, "ERR redq: x");
        let refused = QueueError::Redis(crate::error::RedisError(server));
        assert_eq!(
            LostClaim::after(&refused, "q", 4, 1000, Some(10), Some(20)),
            None
        );
        let broken = fred::error::Error::new(fred::error::ErrorKind::IO, "connection closed");
        let broken = QueueError::Redis(crate::error::RedisError(broken));
        assert!(LostClaim::after(&broken, "q", 4, 1000, Some(10), Some(20)).is_some());
    }
}
