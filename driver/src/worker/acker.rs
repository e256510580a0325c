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

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::backend::{Backend, Held};
use crate::kept::Completion;
use crate::{Acked, QueueError};

/// What the acker tells a job.
pub(crate) type AckReply = Result<Acked, QueueError>;

/// One finished job waiting for its acknowledgement, with its result and
/// run time (sent in the same call).
pub(crate) type AckRequest = (Held, Completion, oneshot::Sender<AckReply>);

/// Most acknowledgements sent in one batch.
const BATCH: usize = 500;

/// Acknowledge requests until every sender is gone.
pub(crate) async fn run(backend: Backend, mut requests: mpsc::UnboundedReceiver<AckRequest>) {
    let shards = backend.namespaces().len();
    if shards <= 1 {
        return acknowledge(backend, 0, requests).await;
    }
    let mut ackers = JoinSet::new();
    let mut to_shard = Vec::with_capacity(shards);
    for shard in 0..shards {
        let (sender, receiver) = mpsc::unbounded_channel();
        to_shard.push(sender);
        ackers.spawn(acknowledge(backend.clone(), shard, receiver));
    }
    while let Some(request) = requests.recv().await {
        let shard = request.0.shard;
        // Cannot fail: each acker runs until its sender, held here, is gone.
        let _ = to_shard[shard].send(request);
    }
    drop(to_shard);
    while ackers.join_next().await.is_some() {}
}

/// Send what has piled up of `requests` (leases of `shard`) as one batch,
/// again and again, until every sender is gone.
async fn acknowledge(
    backend: Backend,
    shard: usize,
    mut requests: mpsc::UnboundedReceiver<AckRequest>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while requests.recv_many(&mut batch, BATCH).await > 0 {
        let mut leases = Vec::with_capacity(batch.len());
        let mut completions = Vec::with_capacity(batch.len());
        let mut replies = Vec::with_capacity(batch.len());
        for (held, completion, reply) in batch.drain(..) {
            debug_assert_eq!(held.shard, shard, "a lease sent to another shard's acker");
            leases.push(held.lease);
            completions.push(completion);
            replies.push(reply);
        }
        let outcomes = backend.ack_batch(shard, leases, completions).await;
        for (reply, outcome) in replies.into_iter().zip(outcomes) {
            let _ = reply.send(outcome);
        }
    }
}
