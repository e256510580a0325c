//! A claim of this worker whose reply was lost after it may have leased
//! jobs (`crate::lost_claim`): the worker gives those jobs back at once
//! instead of leaving them to their leases, whose reclaim would count an
//! attempt they never had. Over shards, each shard's lost claims are looked
//! for on that shard, with what the worker heard of there.
//!
//! The look needs the highest lease id the worker has heard of: every job
//! leased to it under a higher id is one it never saw. It hears of leases
//! in its claims' replies, in hand-offs and in its unparks (a park's
//! hand-offs are leased no higher than its unpark read), and it looks
//! before it claims or parks again, so nothing it takes meanwhile can be
//! mistaken for the lost claim's.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::execute::Shared;
use super::parking::Parking;
use crate::event_kind::EventKind;
use crate::lost_claim::LostClaim;
use crate::park::{HandOffWindow, ParkMark};
use crate::{Lease, QueueError, RedisQueue};

/// The highest lease id this worker has heard of, on each shard (the one
/// namespace of a one-namespace backend is shard 0).
#[derive(Debug)]
pub(crate) struct HeardLeases(Vec<u64>);

impl HeardLeases {
    /// For a backend of `shards` namespaces.
    pub fn new(shards: usize) -> HeardLeases {
        HeardLeases(vec![0; shards.max(1)])
    }

    /// The worker heard of a lease with this id on `shard` (or a park's
    /// unpark read the lease sequence there).
    pub fn heard(&mut self, shard: usize, lease_id: u64) {
        if let Some(highest) = self.0.get_mut(shard) {
            *highest = (*highest).max(lease_id);
        }
    }
}

/// How many times a look may fail (Redis still out of reach) before it is
/// given up, the claim's jobs back when their leases lapse; and how long
/// after a failure the next try waits.
const LOOKS_AT_MOST: u32 = 5;
const LOOK_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// Give back what each of `lost` (a claim, and the shard it was sent to)
/// leased to this worker, one after the other (see [`give_back`]). Returns
/// early at `stop`: the jobs then wait for their leases.
///
/// The jobs given back are counted in the worker's registry record
/// ([`WorkerInfo::claims_lost`](super::WorkerInfo::claims_lost)), and
/// each one given back in the parks' namespace is told to `parking`, to
/// drop a late hand-off message for it ([`Parking::given_back_elsewhere`]).
pub(crate) async fn give_back_all(
    shared: &Shared,
    lost: Vec<(usize, LostClaim)>,
    heard: &mut HeardLeases,
    parking: &mut Parking,
    stop: &CancellationToken,
) {
    let backend = &shared.queue;
    for (shard, lost) in lost {
        let Some(queue) = backend.namespaces().get(shard) else {
            continue;
        };
        let given = give_back(queue, shard, &lost, heard, stop).await;
        if given.is_empty() {
            continue;
        }
        let totals = &shared.totals;
        totals
            .claims_lost
            .fetch_add(given.len() as u64, Ordering::Relaxed);
        totals.beat_now.notify_one();
        // Lease ids count per namespace: only the parks' own are told.
        if backend.handoff().is_some() {
            parking.given_back_elsewhere(&given);
        }
    }
}

/// Give back what `lost` leased to this worker on `shard` (`queue`), once
/// Redis's clock has passed the claim's deadline (at most half the command
/// timeout after it was sent). Answers the lease ids given back, those of
/// a try that failed partway included (the next try's look no longer
/// finds them: they are not leased).
async fn give_back(
    queue: &RedisQueue,
    shard: usize,
    lost: &LostClaim,
    heard: &mut HeardLeases,
    stop: &CancellationToken,
) -> Vec<u64> {
    let mut given = Vec::new();
    for tries in 1..=LOOKS_AT_MOST {
        let heard_through = heard.0.get(shard).copied().unwrap_or(0);
        let look = tokio::select! {
            _ = stop.cancelled() => return given,
            look = queue.give_back_lost_claim(lost, heard_through, &mut given) => look,
        };
        match look {
            Ok(done) => {
                heard.heard(shard, done.highest);
                // Those a failed try released, which this look could not find.
                heard.heard(shard, given.iter().copied().max().unwrap_or(0));
                if !given.is_empty() {
                    tracing::warn!(
                        queue = %lost.queue,
                        shard,
                        jobs = given.len(),
                        "a claim's reply was lost; gave back the jobs it had leased to this worker"
                    );
                } else if done.left > 0 {
                    tracing::warn!(
                        queue = %lost.queue,
                        shard,
                        jobs = done.left,
                        "a claim's reply was lost, and jobs leased to this worker's identity were found that it cannot tell from another handle's; they return when their leases lapse"
                    );
                }
                return given;
            }
            Err(e) if tries < LOOKS_AT_MOST => {
                tracing::debug!(error = %e, "looking for a lost claim's jobs failed; trying again");
                tokio::select! {
                    _ = stop.cancelled() => return given,
                    _ = tokio::time::sleep(LOOK_AGAIN_AFTER) => {}
                }
            }
            Err(e) => tracing::warn!(
                error = %e,
                queue = %lost.queue,
                shard,
                "a claim's reply was lost, and its jobs could not be looked for; they return when their leases lapse"
            ),
        }
    }
    given
}

/// What a look for a lost claim's jobs found, beside what it gave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct GaveBack {
    /// The jobs found but left to their leases because they cannot all be
    /// that claim's: more than it asked for, or lease ids with gaps (a
    /// handle sharing this identity claimed too).
    pub left: usize,
    /// The highest lease id found (0 when none was): heard of from now on.
    pub highest: u64,
}

/// How often, at most, Redis's clock is read while waiting for it to pass
/// a lost claim's deadline (the first wait is from this process's estimate).
const CLOCK_POLL: Duration = Duration::from_millis(50);

impl RedisQueue {
    /// Give back what `lost` leased to this handle's identity: the jobs of
    /// its queue leased under a lease id above `heard_through` (the highest
    /// this identity has heard of) in its window, once Redis's clock has
    /// passed its deadline; each one's lease id is added to `given` as it
    /// is released (all those found, but those whose leases lapsed
    /// meanwhile). The caller must take no lease meanwhile (no claim, no
    /// park), or the look would find it too.
    pub(crate) async fn give_back_lost_claim(
        &self,
        lost: &LostClaim,
        heard_through: u64,
        given: &mut Vec<u64>,
    ) -> Result<GaveBack, QueueError> {
        self.wait_past(lost.deadline_ms).await?;
        let window = HandOffWindow {
            began: ParkMark {
                lease_seq: heard_through,
                now_ms: lost.sent_ms,
            },
            ended: ParkMark {
                lease_seq: crate::queue::MAX_LEASE_ID,
                now_ms: lost.deadline_ms,
            },
            lease_ms: lost.lease_ms,
        };
        let mut found = self.handed_in(&lost.queue, &window).await?;
        let mut done = GaveBack {
            left: 0,
            highest: found.iter().map(|lease| lease.lease_id).max().unwrap_or(0),
        };
        if !one_claims(&mut found, lost.limit) {
            done.left = found.len();
            return Ok(done);
        }
        for lease in &found {
            match self.give_back_lost(lease, EventKind::ClaimLost).await {
                Ok(()) => given.push(lease.lease_id),
                // Lapsed and reclaimed meanwhile (a lease shorter than the wait).
                Err(QueueError::LeaseLost { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Return once Redis's clock is past `deadline_ms`: every claim that
    /// starts later leases nothing.
    async fn wait_past(&self, deadline_ms: u64) -> Result<(), QueueError> {
        let clock = &self.inner.redis_clock;
        if let Some(now) = clock.at_or_before(Instant::now()) {
            let ahead = deadline_ms.saturating_sub(now);
            tokio::time::sleep(Duration::from_millis(ahead)).await;
        }
        let slot_key = self.inner.keys.jobs();
        loop {
            let now = self.redis_now_ms(&slot_key).await?;
            if now > deadline_ms {
                return Ok(());
            }
            let ahead = Duration::from_millis(deadline_ms - now + 1);
            tokio::time::sleep(ahead.min(CLOCK_POLL)).await;
        }
    }
}

/// Whether `found` (sorted here by lease id) can be one claim's leases: at
/// most `limit`, under consecutive lease ids.
fn one_claims(found: &mut [Lease], limit: usize) -> bool {
    found.sort_by_key(|lease| lease.lease_id);
    let (Some(first), Some(last)) = (found.first(), found.last()) else {
        return true;
    };
    found.len() <= limit && last.lease_id - first.lease_id + 1 == found.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leases(ids: &[u64]) -> Vec<Lease> {
        ids.iter()
            .map(|lease_id| Lease {
                queue: "q".into(),
                id: format!("job-{lease_id}"),
                lease_id: *lease_id,
            })
            .collect()
    }

    #[test]
    fn one_claims_leases_are_consecutive_and_no_more_than_it_asked_for() {
        assert!(one_claims(&mut leases(&[]), 1));
        assert!(one_claims(&mut leases(&[7]), 1));
        assert!(one_claims(&mut leases(&[9, 7, 8]), 3));
        assert!(!one_claims(&mut leases(&[7, 8, 9]), 2), "more than asked");
        assert!(!one_claims(&mut leases(&[7, 9]), 5), "a gap");
    }
}
