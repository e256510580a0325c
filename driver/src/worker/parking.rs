//! The worker's idle side: sleeping until work is due, parked on its queue
//! when it can be, so the next enqueue hands it a job directly (see
//! `crate::park`).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::backend::{Backend, Held};
use super::presence::Totals;
use super::unheard::{Unheard, FENCE_WAIT};
use super::wake::Inbox;
use crate::Job;

/// A park lasts at most this long; an idle worker renews it after each
/// check. It bounds how long a worker that died parked keeps being handed
/// jobs (at most its free slots' worth, which return when their leases lapse).
const PARK_AT_MOST: Duration = Duration::from_secs(5);

/// How long a park's record outlives the worker's wait on it, so that the
/// worker's own unpark finds it and learns how many jobs it handed
/// (`super::unheard`). A worker that died parked is handed no more for it:
/// the park's capacity bounds that, not its length.
const PARK_GRACE: Duration = Duration::from_secs(1);

/// One worker's parking state.
pub(crate) struct Parking {
    pub inbox: Arc<Inbox>,
    handed: mpsc::UnboundedReceiver<Job>,
    /// Handed jobs taken from the listener and not started yet.
    arrived: VecDeque<Job>,
    /// The parks not yet settled: hand-offs whose messages were lost are
    /// looked for and given back.
    unheard: Unheard,
    /// The queue this worker is parked on, if any.
    parked_on: Option<String>,
    /// When that park's record has surely lapsed: counted from the park's
    /// reply, after the server set it.
    park_lapsed_by: Instant,
    /// Whether that park's messages go on a shard channel: its unpark's
    /// fence goes the same way, after them (`crate::park`).
    parked_shard: bool,
    /// While parked: when to check the queue again (the park's end, or the
    /// next scheduled job or lease expiry), the jobs the park may be handed,
    /// and how many it was handed so far.
    wake_at: Instant,
    capacity: usize,
    handed_so_far: usize,
    /// Whether this worker may park at all (one queue, option on).
    allowed: bool,
    /// Parks asked for (each numbered by this count), and the number of
    /// the park this worker holds now (or held last): its unpark's fence
    /// carries it.
    parks: u64,
    park_number: u64,
    /// The lease sequence the last unpark read: every job its park handed
    /// is leased under an id no higher (`crate::lost_claim`).
    unparked_through: u64,
    /// Where the worker counts the hand-offs it gave back as lost, for its
    /// registry record.
    totals: Arc<Totals>,
}

impl Parking {
    pub fn new(
        inbox: Arc<Inbox>,
        handed: mpsc::UnboundedReceiver<Job>,
        queues: &[String],
        enabled: bool,
        totals: Arc<Totals>,
    ) -> Self {
        Parking {
            inbox,
            handed,
            arrived: VecDeque::new(),
            unheard: Unheard::default(),
            parked_on: None,
            park_lapsed_by: Instant::now(),
            parked_shard: false,
            wake_at: Instant::now(),
            capacity: 0,
            handed_so_far: 0,
            allowed: enabled && queues.len() == 1,
            parks: 0,
            park_number: 0,
            unparked_through: 0,
            totals,
        }
    }

    /// Jobs handed to this worker and not yet started, at most `max`: they
    /// are already leased to it, so they go before anything claimed.
    pub fn take_handed(&mut self, max: usize) -> Vec<Job> {
        self.take_arrivals();
        let take = max.min(self.arrived.len());
        let jobs: Vec<Job> = self.arrived.drain(..take).collect();
        self.handed_so_far += jobs.len();
        jobs
    }

    /// The lease sequence the last unpark read (0 before any): no job its
    /// park handed is leased under a higher id.
    pub fn unparked_through(&self) -> u64 {
        self.unparked_through
    }

    /// Jobs under these lease ids were given back as a lost claim's
    /// (`super::lost_claims`). One may in fact have been handed to a park
    /// this worker abandoned (its unpark failed until it lapsed, so its
    /// count was never read): should its message still arrive, it is
    /// dropped, not run under a lease given up.
    pub fn given_back_elsewhere(&mut self, lease_ids: &[u64]) {
        for lease_id in lease_ids {
            self.unheard.note_given_back(*lease_id);
        }
    }

    /// Take what the listener forwarded, noting each hand-off as heard, and
    /// dropping any given back already as lost (`super::unheard`).
    fn take_arrivals(&mut self) {
        while let Ok(job) = self.handed.try_recv() {
            if self.unheard.arrived(job.lease().lease_id) {
                self.arrived.push_back(job);
            }
        }
    }

    /// Settle the parks that can be (`super::unheard`); `last` at shutdown.
    async fn settle(&mut self, queue: &crate::RedisQueue, last: bool) {
        // Read before taking the arrivals: every hand-off before a fence
        // seen here is among them.
        let fenced = self.inbox.fenced.load(Ordering::Acquire);
        let gaps = self.inbox.gaps.load(Ordering::Acquire);
        self.take_arrivals();
        let given_back = self.unheard.settle(queue, fenced, gaps, last).await;
        if given_back > 0 {
            self.totals
                .handoffs_lost
                .fetch_add(given_back, Ordering::Relaxed);
            self.totals.beat_now.notify_one();
        }
    }

    /// Whether to go on waiting parked after starting handed jobs, with no
    /// round trip: nothing else became due, the park has time and room left.
    pub fn may_stay(&mut self) -> bool {
        self.parked_on.is_some()
            && self.inbox.listening.load(Ordering::Acquire)
            && Instant::now() < self.wake_at
            && self.handed_so_far < self.capacity
            && !self.due_since_parked()
    }

    /// Whether a wake-up for this worker's queues came after its park.
    /// Until the park's own message arrives, every wake-up seen was
    /// published before the park, which found nothing due: work this
    /// worker had claimed already. Heeding those made a worker on a
    /// steadily fed queue leave its park after its next hand-off, claim
    /// and park again, over and over (the latency bench ran whole stretches
    /// so, four script calls a job instead of two).
    fn due_since_parked(&self) -> bool {
        self.inbox.park_seen.load(Ordering::Acquire) >= self.park_number
            && self.inbox.due.swap(false, Ordering::AcqRel)
    }

    /// Wait, still parked, for the next hand-off or wake-up.
    pub async fn wait(&self, shutdown: &CancellationToken) {
        tokio::select! {
            _ = self.inbox.wake.notified() => {}
            _ = tokio::time::sleep_until(self.wake_at) => {}
            _ = shutdown.cancelled() => {}
        }
    }

    /// Stop being handed jobs (before claiming again). Jobs handed just
    /// before still arrive, and are taken by [`Parking::take_handed`].
    /// False when the unpark failed: the worker is still parked, and must
    /// not claim (a claim's leases inside the park's window would be taken
    /// for its hand-offs: `super::unheard`) until a later call succeeds, or
    /// until the park has surely lapsed: then its window's end is unknown,
    /// and its lost hand-offs, if any, return when their leases lapse.
    pub async fn leave(&mut self, backend: &Backend) -> bool {
        let Some(queue) = backend.handoff() else {
            return true;
        };
        if let Some(name) = &self.parked_on {
            match queue
                .unpark(name, self.inbox.token, self.parked_shard, self.park_number)
                .await
            {
                Ok(unparked) => {
                    self.unparked_through = unparked.ended.lease_seq;
                    self.unheard.ended(self.park_number, unparked);
                    self.parked_on = None;
                }
                Err(e) if Instant::now() < self.park_lapsed_by => {
                    tracing::warn!(error = %e, queue = %name, "unpark failed; trying again before claiming");
                    return false;
                }
                Err(e) => {
                    tracing::warn!(error = %e, queue = %name, "unpark failed; the park has lapsed by itself");
                    self.unheard.abandoned(self.park_number);
                    self.parked_on = None;
                }
            }
        }
        self.settle(queue, false).await;
        true
    }

    /// Sleep until a queue has due work, a wake-up or a hand-off arrives,
    /// `max_idle` passes, or shutdown. Parks on the queue first when this
    /// worker may (`capacity` free slots, jobs leased for `lease`).
    pub async fn idle(
        &mut self,
        backend: &Backend,
        queues: &[String],
        max_idle: Duration,
        lease: Duration,
        capacity: usize,
        shutdown: &CancellationToken,
    ) {
        let mut sleep_for = max_idle;
        let handoff = backend
            .handoff()
            .filter(|_| self.allowed && self.inbox.listening.load(Ordering::Acquire));
        for name in queues {
            let due = if let Some(queue) = handoff {
                let park_for = max_idle.min(PARK_AT_MOST);
                self.parks += 1;
                let number = self.parks;
                let shard = self.inbox.shard_listening.load(Ordering::Acquire);
                let gaps = self.inbox.gaps.load(Ordering::Acquire);
                match queue
                    .park(
                        name,
                        self.inbox.token,
                        lease,
                        capacity,
                        park_for + PARK_GRACE,
                        number,
                        shard,
                    )
                    .await
                {
                    Ok(parked) => {
                        if let Some(began) = parked.began {
                            let lease_ms = lease.as_millis() as u64;
                            self.unheard.began(number, name, lease_ms, began, gaps);
                            self.parked_on = Some(name.clone());
                            self.park_lapsed_by = Instant::now() + park_for + PARK_GRACE;
                            self.parked_shard = shard;
                            self.park_number = number;
                            self.capacity = capacity;
                            self.handed_so_far = 0;
                            sleep_for = sleep_for.min(park_for);
                        }
                        Ok(parked.due_in)
                    }
                    Err(e) => Err(e),
                }
            } else {
                backend.next_due(name).await
            };
            match due {
                Ok(Some(due)) => sleep_for = sleep_for.min(due),
                Ok(None) => {}
                // The park or the look at what is due next: either way the
                // worker sleeps at most max_idle and looks again.
                Err(e) => {
                    tracing::warn!(error = %e, queue = %name, "could not park or see when work is next due; looking again within max_idle")
                }
            }
        }
        // Something is due now yet nothing was claimed (a lease lapsing this
        // very millisecond): wait a moment rather than spin.
        let sleep_for = sleep_for.max(Duration::from_millis(1));
        self.wake_at = Instant::now() + sleep_for;
        // A park with hand-offs missing is looked at in time.
        if let Some(look_by) = self
            .unheard
            .look_by(self.inbox.gaps.load(Ordering::Acquire))
        {
            self.wake_at = self.wake_at.min(look_by.max(Instant::now()));
        }
        self.wait(shutdown).await;
    }

    /// At shutdown: leave the park, wait for the fence after the last
    /// hand-off, give back what was handed and never arrived, and give back
    /// (release, no attempt counted) every handed job that will not run
    /// here.
    pub async fn finish(&mut self, backend: &Backend) {
        self.leave(backend).await;
        // Messages on one channel arrive in publish order: once the last
        // unpark's fence is in, so is every job handed before it.
        if self.inbox.listening.load(Ordering::Acquire) {
            let deadline = tokio::time::Instant::now() + FENCE_WAIT;
            while self.inbox.fenced.load(Ordering::Acquire) < self.park_number {
                if tokio::time::timeout_at(deadline, self.inbox.wake.notified())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
        if let Some(queue) = backend.handoff() {
            self.settle(queue, true).await;
        }
        for job in self.take_handed(usize::MAX) {
            let held = Held {
                lease: job.lease(),
                shard: 0,
            };
            if let Err(e) = backend.release(&held).await {
                tracing::warn!(error = %e, id = %job.id, "releasing a handed job failed; it returns when its lease lapses");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked_worker() -> (Arc<Inbox>, Parking) {
        let inbox = Arc::new(Inbox::new(Arc::default(), Arc::default()));
        let (_handed, received) = mpsc::unbounded_channel();
        let mut parking = Parking::new(
            inbox.clone(),
            received,
            &["q".to_owned()],
            true,
            Arc::default(),
        );
        parking.parks = 3;
        parking.park_number = 3;
        parking.parked_on = Some("q".to_owned());
        (inbox, parking)
    }

    #[test]
    fn only_a_wake_up_after_the_parks_own_message_makes_a_parked_worker_claim() {
        let (inbox, parking) = parked_worker();
        // A wake-up delivered before park 3's message: published before the
        // park, for work the worker had taken.
        inbox.park_seen.store(2, Ordering::Release);
        inbox.due.store(true, Ordering::Release);
        assert!(!parking.due_since_parked());
        // The message arrives (the listener clears `due`, then shows it).
        inbox.due.store(false, Ordering::Release);
        inbox.park_seen.store(3, Ordering::Release);
        assert!(!parking.due_since_parked());
        // A wake-up after it counts, once.
        inbox.due.store(true, Ordering::Release);
        assert!(parking.due_since_parked());
        assert!(!parking.due_since_parked());
        // Messages lost: any wake-up counts.
        inbox.park_seen.store(u64::MAX, Ordering::Release);
        inbox.due.store(true, Ordering::Release);
        assert!(parking.due_since_parked());
    }
}
