//! A sharded worker's claims, which no one shard can hold up.
//!
//! A worker over a [`ShardedQueue`] claims from its shards one after
//! another. A shard whose primary hangs (stopped, swapping, cut off without
//! a reset) does not fail a command: it leaves it unanswered until the
//! handle's command timeout (10 s by default). Waiting on it held every
//! other shard's jobs up with it: with one of three primaries stopped, a
//! worker ran 50 jobs in 12 s out of the 2 000 waiting on the two that
//! answered (docs/cluster.md, "A shard that does not answer").
//!
//! So a claim waits at most
//! [`SHARD_PATIENCE`](crate::shards::SHARD_PATIENCE) for a shard. A claim
//! that has not answered by then is left to answer in the background and the
//! worker goes on to the next shard; the slow shard is not claimed from
//! again until that claim has answered. Its jobs, leased to this worker
//! when it does, are not lost: the worker starts each one that finds a
//! free slot and gives the rest back (a release: due at once, no attempt
//! counted). A claim that never answers (its command timed out, or its
//! connection dropped, after the server ran it) is a lost claim: the worker
//! looks for its jobs on its shard and gives them back
//! (`super::lost_claims`) before claiming from that shard again.

use std::time::Duration;

use tokio::sync::mpsc;

use super::backend::Claimed;
use super::wake::Inbox;
use crate::lost_claim::LostClaim;
use crate::shards::ShardClaim;
use crate::{Job, QueueError, RedisQueue, ShardedQueue};

/// What a late claim brings: its shard and its answer.
type Answer = (usize, Result<Vec<Job>, QueueError>);

/// The state of one running worker's claims over shards: which shards have
/// a claim outstanding, and the answers that came after the worker stopped
/// waiting for them.
pub(crate) struct ShardClaims {
    outstanding: Vec<bool>,
    answers: mpsc::UnboundedSender<Answer>,
    answered: mpsc::UnboundedReceiver<Answer>,
    inbox: std::sync::Arc<Inbox>,
    /// Claims that failed after they may have leased jobs, with their
    /// shards (`crate::lost_claim`): a late claim notes its own when it
    /// fails, wherever the worker is then.
    lost: std::sync::Arc<std::sync::Mutex<Vec<(usize, LostClaim)>>>,
}

impl ShardClaims {
    /// For a worker over `shards` shards (none for a one-namespace or
    /// memory backend), woken through `inbox` when a late claim answers.
    pub fn new(shards: usize, inbox: std::sync::Arc<Inbox>) -> ShardClaims {
        let (answers, answered) = mpsc::unbounded_channel();
        ShardClaims {
            outstanding: vec![false; shards],
            answers,
            answered,
            inbox,
            lost: Default::default(),
        }
    }

    /// The claims noted lost since the last call, with their shards. A
    /// late claim's is among them once its answer was taken
    /// ([`ShardClaims::late`]), before its shard is claimed from again.
    pub fn take_lost(&mut self) -> Vec<(usize, LostClaim)> {
        std::mem::take(&mut *self.lost.lock().expect("lost claims poisoned"))
    }

    /// Claim up to `n` jobs of `queue` from the shards in turn, starting one
    /// further along each call, until `n` are found. A shard that fails is
    /// skipped while another answers; one that does not answer within the
    /// patience is left to answer in the background (see the module docs).
    pub async fn claim(
        &mut self,
        sharded: &ShardedQueue,
        queue: &str,
        n: usize,
        lease: Duration,
    ) -> Result<Vec<Claimed>, QueueError> {
        let mut jobs = Vec::new();
        let mut first_error = None;
        let mut answered_or_waiting = false;
        for shard in sharded.claim_order() {
            let left = n.saturating_sub(jobs.len());
            if left == 0 {
                break;
            }
            if self.outstanding[shard] {
                answered_or_waiting = true;
                continue;
            }
            let name = queue.to_owned();
            let lost = self.lost.clone();
            let claim = move |handle: RedisQueue| async move {
                let mut noted = None;
                let claimed = handle.claim_noting(&name, left, lease, &mut noted).await;
                if let Some(noted) = noted {
                    lost.lock()
                        .expect("lost claims poisoned")
                        .push((shard, noted));
                }
                claimed
            };
            match sharded.claim_patiently(shard, claim).await {
                ShardClaim::Answered(Ok(got)) => {
                    answered_or_waiting = true;
                    jobs.extend(got.into_iter().map(|job| Claimed { job, shard }));
                }
                ShardClaim::Answered(Err(e @ QueueError::Invalid { .. })) => return Err(e),
                ShardClaim::Answered(Err(e)) => {
                    tracing::warn!(shard, error = %e, "claim from one shard failed; trying the others");
                    first_error.get_or_insert(e);
                }
                ShardClaim::Late(claim) => {
                    answered_or_waiting = true;
                    self.outstanding[shard] = true;
                    let answers = self.answers.clone();
                    let inbox = self.inbox.clone();
                    tokio::spawn(async move {
                        // Sent before the wake-up, so the woken worker finds it.
                        let _ = answers.send((shard, claim.await));
                        inbox.wake.notify_one();
                    });
                }
            }
        }
        match (answered_or_waiting, first_error) {
            (false, Some(e)) => Err(e),
            _ => Ok(jobs),
        }
    }

    /// The jobs of late claims that have answered since the last look; each
    /// such shard is claimed from again.
    pub fn late(&mut self) -> Vec<Claimed> {
        let mut jobs = Vec::new();
        while let Ok(answer) = self.answered.try_recv() {
            self.take(answer, &mut jobs);
        }
        jobs
    }

    /// At shutdown: the jobs of late claims that answer within `wait`
    /// (to be given back). Later answers are not waited for.
    pub async fn finish(&mut self, wait: Duration) -> Vec<Claimed> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut jobs = self.late();
        while self.outstanding.contains(&true) {
            match tokio::time::timeout_at(deadline, self.answered.recv()).await {
                Ok(Some(answer)) => self.take(answer, &mut jobs),
                Ok(None) | Err(_) => break,
            }
        }
        jobs
    }

    /// A late claim's answer: its shard may be claimed from again, and its
    /// jobs go to `jobs`.
    fn take(&mut self, (shard, answer): Answer, jobs: &mut Vec<Claimed>) {
        self.outstanding[shard] = false;
        match answer {
            Ok(got) => jobs.extend(got.into_iter().map(|job| Claimed { job, shard })),
            Err(e) => tracing::warn!(
                shard,
                error = %e,
                "a slow shard's claim failed; any job it leased returns when its lease lapses"
            ),
        }
    }
}
