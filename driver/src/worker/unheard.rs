//! Hand-offs that never reached their worker. A job handed to a parked
//! worker is leased to it before its message is published (`crate::park`).
//! When the message is lost (the subscriber connection broke, the listener
//! lagged behind a burst, the hand-off channel's slot moved), the job used
//! to wait for its lease to lapse, and its reclaim counted an attempt it
//! never had.
//!
//! So the worker keeps each park until it is settled. Its unpark says how
//! many jobs it handed; once that many have arrived, the park is done. When
//! fewer arrived and no more can (the park's fence came after them, or
//! messages were lost and `FENCE_WAIT` passed), the worker looks up the
//! jobs leased to it in the park's window (`lua/handed_unheard.lua`) and
//! gives back those it never heard of: released, due again at once, no
//! attempt counted. A message that still arrives for one of them is dropped.
//!
//! The count keeps this exact: the jobs found are given back only when they
//! are exactly as many as are missing. A handle of the same identity that
//! claimed inside the park's window (the one the first `Worker` was made on,
//! or one built with the same identity) would add jobs of its own, and then
//! nothing is given back (the missing jobs return when their leases lapse,
//! as before). A park with no count, one that lapsed before its
//! unpark (the worker stalled past the park's grace, or Redis was out of
//! reach), is looked at only after a gap, and whatever its window holds
//! that the worker never heard is given back: a worker's identity is its
//! own (see the [`Worker`](super::Worker) docs).

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

use crate::event_kind::EventKind;
use crate::park::{HandOffWindow, ParkMark, Unparked};
use crate::{Lease, RedisQueue};

/// After a gap, how long a park's missing hand-offs may still arrive before
/// they are looked for: messages sent before the gap may be queued in the
/// listener still.
pub(crate) const FENCE_WAIT: Duration = Duration::from_secs(1);

/// How long a park waits for its fence when no gap was seen: the fence of a
/// live subscription arrives in a round trip, so one this late was lost
/// without the listener noticing.
const FENCE_LOST: Duration = Duration::from_secs(30);

/// How many given-back leases are remembered, to drop their late messages.
const GIVEN_BACK_KEPT: usize = 1024;

/// How many times a park's look may fail (Redis out of reach again, say)
/// before it is given up, its lost hand-offs back after their leases; and
/// how long after a failure the next try waits, so that a look that keeps
/// failing does not keep the worker from its sleep.
const LOOKS_AT_MOST: u32 = 5;
const LOOK_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// One park, from its start until it is settled.
struct Span {
    number: u64,
    queue: String,
    lease_ms: u64,
    began: ParkMark,
    /// `Inbox::gaps` when it began: a gap since may have lost its messages.
    gaps_before: u64,
    end: Option<End>,
    /// Looks that failed, and when the next may be tried.
    looks_failed: u32,
    look_again_at: Option<Instant>,
}

struct End {
    handed: Option<u64>,
    ended: ParkMark,
    at: Instant,
}

/// The worker's parks not yet settled, and what it heard of their hand-offs.
#[derive(Default)]
pub(crate) struct Unheard {
    /// Oldest first; only the last may still be parked.
    spans: VecDeque<Span>,
    /// The lease ids of the jobs handed to this worker that arrived since
    /// the oldest unsettled park began.
    heard: Vec<u64>,
    /// Leases given back unheard, newest last.
    given_back: VecDeque<u64>,
}

/// What a settled-or-not park calls for.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Every job it handed arrived, or nothing says one was lost.
    Done,
    /// Some may still arrive.
    Wait,
    /// Look for the jobs it handed that never arrived: `missing` of them
    /// when its unpark counted them.
    Look { missing: Option<u64> },
}

/// What a park that handed `handed` jobs (`None`: not counted), of which
/// `heard` arrived, calls for: `fenced`, its fence arrived; `gapped`,
/// messages were lost since it began; `waited`, since its unpark; `last`,
/// the worker is stopping.
fn verdict(
    handed: Option<u64>,
    heard: u64,
    fenced: bool,
    gapped: bool,
    waited: Duration,
    last: bool,
) -> Verdict {
    let missing = match handed {
        Some(handed) if handed <= heard => return Verdict::Done,
        Some(handed) => Some(handed - heard),
        None if !gapped => return Verdict::Done,
        None => None,
    };
    let nothing_more = fenced || last || (gapped && waited >= FENCE_WAIT) || waited >= FENCE_LOST;
    if nothing_more {
        Verdict::Look { missing }
    } else {
        Verdict::Wait
    }
}

/// Which of the leases `unheard` (found in a park's window, never heard)
/// to give back, when `missing` were counted missing: all, unless the count
/// says some are not this park's.
fn to_give_back(unheard: Vec<Lease>, missing: Option<u64>) -> Vec<Lease> {
    match missing {
        Some(missing) if unheard.len() as u64 != missing => {
            tracing::warn!(
                missing,
                found = unheard.len(),
                "hand-offs to this worker were lost, but its leases in their window do not match \
                 their count (another handle of the same identity claiming?): they return when \
                 their leases lapse"
            );
            Vec::new()
        }
        _ => unheard,
    }
}

impl Unheard {
    /// A park began: number `number` on `queue`, its jobs leased for
    /// `lease_ms`, at `began`, after `gaps` gaps.
    pub fn began(&mut self, number: u64, queue: &str, lease_ms: u64, began: ParkMark, gaps: u64) {
        self.spans.push_back(Span {
            number,
            queue: queue.to_owned(),
            lease_ms,
            began,
            gaps_before: gaps,
            end: None,
            looks_failed: 0,
            look_again_at: None,
        });
    }

    /// Park `number` ended as `unparked` says.
    pub fn ended(&mut self, number: u64, unparked: Unparked) {
        if let Some(span) = self.spans.iter_mut().rev().find(|s| s.number == number) {
            span.end = Some(End {
                handed: unparked.handed,
                ended: unparked.ended,
                at: Instant::now(),
            });
        }
    }

    /// Park `number` ended unseen: its unpark never answered before it
    /// lapsed, so the end of its window is not known and it cannot be
    /// looked at.
    pub fn abandoned(&mut self, number: u64) {
        self.spans.retain(|s| s.number != number);
        if self.spans.is_empty() {
            self.heard.clear();
        }
    }

    /// The job under `lease_id` was given back (here, or as a lost
    /// claim's: `super::lost_claims`): a hand-off message that still
    /// arrives for it is dropped.
    pub fn note_given_back(&mut self, lease_id: u64) {
        if self.given_back.len() == GIVEN_BACK_KEPT {
            self.given_back.pop_front();
        }
        self.given_back.push_back(lease_id);
    }

    /// A handed job under `lease_id` arrived. False when it was given back
    /// already (its message came late): drop it.
    pub fn arrived(&mut self, lease_id: u64) -> bool {
        if let Some(at) = self.given_back.iter().position(|l| *l == lease_id) {
            self.given_back.remove(at);
            return false;
        }
        if !self.spans.is_empty() {
            self.heard.push(lease_id);
        }
        true
    }

    /// When the oldest ended park is to be looked at if nothing arrives
    /// meanwhile (the worker sleeps no longer than that).
    pub fn look_by(&self, gaps: u64) -> Option<Instant> {
        let span = self.spans.front()?;
        let end = span.end.as_ref()?;
        let wait = if gaps > span.gaps_before {
            FENCE_WAIT
        } else {
            FENCE_LOST
        };
        Some((end.at + wait).max(span.look_again_at.unwrap_or(end.at)))
    }

    /// Settle what parks can be: `fenced` and `gaps` as the listener had
    /// them before the worker took what had arrived. A park whose
    /// hand-offs are missing is looked at and its unheard jobs given back
    /// (`last`: the worker stops, nothing more arrives). A park whose look
    /// failed waits `LOOK_AGAIN_AFTER` before the next try, and is given up
    /// after `LOOKS_AT_MOST` (or at once when `last`). Answers how many
    /// jobs it gave back.
    pub async fn settle(&mut self, queue: &RedisQueue, fenced: u64, gaps: u64, last: bool) -> u64 {
        let mut given_back = 0;
        while let Some(span) = self.spans.front() {
            let Some(end) = &span.end else {
                return given_back;
            };
            let heard = self
                .heard
                .iter()
                .filter(|l| **l > span.began.lease_seq && **l <= end.ended.lease_seq)
                .count() as u64;
            let verdict = verdict(
                end.handed,
                heard,
                fenced >= span.number,
                gaps > span.gaps_before,
                end.at.elapsed(),
                last,
            );
            let too_soon = span.look_again_at.is_some_and(|at| Instant::now() < at);
            match verdict {
                Verdict::Wait => return given_back,
                Verdict::Look { .. } if too_soon && !last => return given_back,
                Verdict::Done => {}
                Verdict::Look { missing } => {
                    let name = span.queue.clone();
                    let window = HandOffWindow {
                        began: span.began,
                        ended: end.ended,
                        lease_ms: span.lease_ms,
                    };
                    match self.look(queue, &name, &window, missing).await {
                        Ok(released) => given_back += released,
                        Err(e) => {
                            if self.look_again_later(&name, &e, last) {
                                return given_back;
                            }
                        }
                    }
                }
            }
            self.spans.pop_front();
            match self.spans.front() {
                Some(next) => {
                    let after = next.began.lease_seq;
                    self.heard.retain(|l| *l > after);
                }
                None => self.heard.clear(),
            }
        }
        given_back
    }

    /// The oldest park's look failed with `e`: whether to try it again
    /// after `LOOK_AGAIN_AFTER` (else it is given up).
    fn look_again_later(&mut self, name: &str, e: &crate::QueueError, last: bool) -> bool {
        let span = self.spans.front_mut().expect("the span looked at");
        span.looks_failed += 1;
        let give_up = last || span.looks_failed >= LOOKS_AT_MOST;
        tracing::warn!(
            error = %e,
            queue = %name,
            given_up = give_up,
            "looking for lost hand-offs failed; if given up, they return when their leases lapse"
        );
        if !give_up {
            span.look_again_at = Some(Instant::now() + LOOK_AGAIN_AFTER);
        }
        !give_up
    }

    /// Find the jobs leased to this worker in `window` on `queue` that it
    /// never heard of, and give them back; answers how many it did.
    async fn look(
        &mut self,
        queue: &RedisQueue,
        name: &str,
        window: &HandOffWindow,
        missing: Option<u64>,
    ) -> Result<u64, crate::QueueError> {
        let found = queue.handed_in(name, window).await?;
        let unheard = found
            .into_iter()
            .filter(|lease| !self.heard.contains(&lease.lease_id))
            .collect();
        let give_back = to_give_back(unheard, missing);
        if give_back.is_empty() {
            return Ok(0);
        }
        tracing::warn!(
            queue = name,
            jobs = give_back.len(),
            "jobs handed to this worker never reached it (hand-off messages lost); giving them back, no attempt counted"
        );
        let mut released = 0;
        for lease in give_back {
            self.note_given_back(lease.lease_id);
            if let Err(e) = queue.give_back_lost(&lease, EventKind::HandoffLost).await {
                tracing::warn!(error = %e, id = %lease.id, "giving back a lost hand-off failed; it returns when its lease lapses");
                continue;
            }
            released += 1;
        }
        Ok(released)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Duration = Duration::ZERO;

    fn lease(id: &str, lease_id: u64) -> Lease {
        Lease {
            queue: "q".into(),
            id: id.into(),
            lease_id,
        }
    }

    #[test]
    fn a_park_whose_hand_offs_all_arrived_is_done_at_once() {
        assert_eq!(verdict(Some(3), 3, false, true, NOW, false), Verdict::Done);
        assert_eq!(verdict(Some(0), 0, false, false, NOW, false), Verdict::Done);
    }

    #[test]
    fn a_park_short_of_hand_offs_waits_for_its_fence_then_looks() {
        assert_eq!(verdict(Some(3), 1, false, false, NOW, false), Verdict::Wait);
        let look = Verdict::Look { missing: Some(2) };
        assert_eq!(verdict(Some(3), 1, true, false, NOW, false), look);
        // After a gap the fence may never come: a moment, then look.
        assert_eq!(verdict(Some(3), 1, false, true, NOW, false), Verdict::Wait);
        assert_eq!(verdict(Some(3), 1, false, true, FENCE_WAIT, false), look);
        // Without a gap, a fence this late was lost unnoticed.
        assert_eq!(verdict(Some(3), 1, false, false, FENCE_LOST, false), look);
        assert_eq!(verdict(Some(3), 1, false, false, NOW, true), look);
    }

    #[test]
    fn a_park_without_a_count_is_looked_at_only_after_a_gap() {
        assert_eq!(verdict(None, 0, true, false, NOW, true), Verdict::Done);
        assert_eq!(
            verdict(None, 0, true, true, NOW, false),
            Verdict::Look { missing: None }
        );
    }

    #[test]
    fn unheard_jobs_are_given_back_only_when_they_match_the_count() {
        let found = || vec![lease("a", 7), lease("b", 9)];
        assert_eq!(to_give_back(found(), Some(2)), found());
        assert_eq!(to_give_back(found(), None), found());
        // One more than missing: another handle's claim; one fewer: a job
        // already acted on. Either way the window is not only this park's.
        assert!(to_give_back(found(), Some(1)).is_empty());
        assert!(to_give_back(found(), Some(3)).is_empty());
    }

    #[test]
    fn a_message_for_a_job_given_back_is_dropped_once() {
        let mut unheard = Unheard::default();
        unheard.note_given_back(7);
        assert!(!unheard.arrived(7));
        assert!(unheard.arrived(7));
    }

    #[test]
    fn only_the_latest_given_back_leases_are_remembered() {
        let mut unheard = Unheard::default();
        for lease_id in 1..=GIVEN_BACK_KEPT as u64 + 1 {
            unheard.note_given_back(lease_id);
        }
        assert!(unheard.arrived(1), "the oldest is forgotten");
        assert!(!unheard.arrived(2));
        assert!(!unheard.arrived(GIVEN_BACK_KEPT as u64 + 1));
    }
}
