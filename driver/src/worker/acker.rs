//! Batched acknowledgements: finished jobs hand their lease to one acker
//! task, which acknowledges everything that has piled up in one script call.
//! Under load that turns N round trips (and N script runs) into a few; when
//! idle a lone ack goes out at once, so no latency is added. Every job stays
//! fenced by its own lease and learns its own outcome.
//!
//! Over shards, each shard has an acker of its own: a primary that hangs
//! (stopped, swapping) answers nothing until the command timeout, and one
//! batch for every shard waited for it, holding up every other shard's
//! acks behind it until the leases awaiting them filled the worker's room
//! for leases and its claims stopped (docs/cluster.md, "A shard that does
//! not answer").
//!
//! An ack that meets a connection's trouble (Redis restarting, paused,
//! unreachable, or a reply later than the command timeout) is sent again,
//! with a growing pause, for as long as the job's lease lasts and the
//! worker's shutdown grace has not ended (`super::resend`): a finished job
//! whose ack got through late is not run again, nor charged an attempt. If
//! an earlier send was applied after all, the next finds the job gone
//! ([`AckReply::sent_before`] tells the job so).

use std::time::SystemTime;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::backend::{Backend, Held};
use super::resend::{may_have_been_applied, worth_sending_again, FIRST_PAUSE, LONGEST_PAUSE};
use crate::kept::Completion;
use crate::{Acked, Lease, QueueError};

/// What the acker tells a job.
#[derive(Debug)]
pub(crate) struct AckReply {
    /// The outcome of the last send.
    pub outcome: Result<Acked, QueueError>,
    /// An earlier send of this ack may have been applied: it went unanswered
    /// (a timeout, a connection closed under it). A later send that finds
    /// the job gone then most likely found it acknowledged by that one.
    pub sent_before: bool,
}

/// One finished job waiting for its acknowledgement, with its result and
/// run time (sent in the same call).
#[derive(Debug)]
pub(crate) struct AckRequest {
    pub held: Held,
    pub completion: Completion,
    /// When its lease lapses (the worker's last word on it): no send is
    /// tried after it.
    pub lease_ends: SystemTime,
    pub reply: oneshot::Sender<AckReply>,
}

/// Most acknowledgements sent in one batch.
const BATCH: usize = 500;

/// Acknowledge requests until every sender is gone; stop sending any again
/// once `grace_over` (the end of the worker's shutdown grace).
pub(crate) async fn run(
    backend: Backend,
    mut requests: mpsc::UnboundedReceiver<AckRequest>,
    grace_over: CancellationToken,
) {
    let shards = backend.namespaces().len();
    if shards <= 1 {
        return acknowledge(backend, 0, requests, grace_over).await;
    }
    let mut ackers = JoinSet::new();
    let mut to_shard = Vec::with_capacity(shards);
    for shard in 0..shards {
        let (sender, receiver) = mpsc::unbounded_channel();
        to_shard.push(sender);
        ackers.spawn(acknowledge(
            backend.clone(),
            shard,
            receiver,
            grace_over.clone(),
        ));
    }
    while let Some(request) = requests.recv().await {
        let shard = request.held.shard;
        // Cannot fail: each acker runs until its sender, held here, is gone.
        let _ = to_shard[shard].send(request);
    }
    drop(to_shard);
    while ackers.join_next().await.is_some() {}
}

/// Acks to send in one call: the leases and completions side by side, as
/// the call takes them (moved, never copied: a completion carries its
/// job's result), and who waits for each.
#[derive(Default)]
struct Batch {
    leases: Vec<Lease>,
    completions: Vec<Completion>,
    waiting: Vec<Waiting>,
}

/// A job waiting for its ack's outcome.
struct Waiting {
    lease_ends: SystemTime,
    reply: oneshot::Sender<AckReply>,
    /// An earlier send of its ack may have been applied.
    sent_before: bool,
}

impl Batch {
    fn len(&self) -> usize {
        self.waiting.len()
    }

    fn push(&mut self, request: AckRequest, shard: usize) {
        debug_assert_eq!(
            request.held.shard, shard,
            "a lease sent to another shard's acker"
        );
        self.leases.push(request.held.lease);
        self.completions.push(request.completion);
        self.waiting.push(Waiting {
            lease_ends: request.lease_ends,
            reply: request.reply,
            sent_before: false,
        });
    }
}

/// Send what has piled up of `requests` (leases of `shard`) as one batch,
/// again and again, until every sender is gone. Acks a connection's
/// trouble held up go again in the next batch, after a pause, with
/// whatever else has piled up meanwhile.
async fn acknowledge(
    backend: Backend,
    shard: usize,
    mut requests: mpsc::UnboundedReceiver<AckRequest>,
    grace_over: CancellationToken,
) {
    let mut arrived = Vec::with_capacity(BATCH);
    let mut batch = Batch::default();
    let mut pause = FIRST_PAUSE;
    loop {
        if batch.len() == 0 {
            if requests.recv_many(&mut arrived, BATCH).await == 0 {
                return;
            }
            pause = FIRST_PAUSE;
        } else {
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = grace_over.cancelled() => {}
            }
            pause = (pause * 2).min(LONGEST_PAUSE);
            while batch.len() + arrived.len() < BATCH {
                match requests.try_recv() {
                    Ok(request) => arrived.push(request),
                    Err(_) => break,
                }
            }
        }
        for request in arrived.drain(..) {
            batch.push(request, shard);
        }
        let outcomes = backend
            .ack_batch(shard, &batch.leases, &batch.completions)
            .await;
        let sent = std::mem::take(&mut batch);
        let mut last_error = None;
        let each = sent
            .leases
            .into_iter()
            .zip(sent.completions)
            .zip(sent.waiting);
        for (((lease, completion), mut waiting), outcome) in each.zip(outcomes) {
            match outcome {
                Err(e) if worth_sending_again(&e, waiting.lease_ends, &grace_over) => {
                    waiting.sent_before |= may_have_been_applied(&e);
                    batch.leases.push(lease);
                    batch.completions.push(completion);
                    batch.waiting.push(waiting);
                    last_error = Some(e);
                }
                outcome => {
                    let reply = AckReply {
                        outcome,
                        sent_before: waiting.sent_before,
                    };
                    let _ = waiting.reply.send(reply);
                }
            }
        }
        if let Some(e) = last_error {
            tracing::warn!(
                error = %e,
                jobs = batch.len(),
                again_in_ms = pause.as_millis() as u64,
                "acknowledging finished jobs failed; sending it again while their leases last"
            );
        }
    }
}
