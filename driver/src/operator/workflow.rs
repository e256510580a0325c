//! Workflows over one namespace or the shards of a `ShardedQueue` (see
//! "Sharded queues" in [`crate::workflow`]): creating one goes to the
//! shard it lives on; a gate or a waiter is looked up on each shard in
//! turn until one has it; the list of gates is merged.

use super::Operator;
use crate::workflow::{
    Batch, BatchHandle, Decision, GateCancelled, GateStatus, MemberPage, Tree, TreeHandle,
};
use crate::{QueueError, RedisQueue};

impl Operator {
    /// Enqueue a batch (see [`RedisQueue::enqueue_batch`]), on one shard.
    pub async fn enqueue_batch(&self, batch: Batch) -> Result<BatchHandle, QueueError> {
        match &self.router {
            Some(router) => router.enqueue_batch(batch).await,
            None => self.shards[0].enqueue_batch(batch).await,
        }
    }

    /// Enqueue a tree (see [`RedisQueue::add_tree`]), on one shard.
    pub async fn add_tree(&self, tree: Tree) -> Result<TreeHandle, QueueError> {
        match &self.router {
            Some(router) => router.add_tree(tree).await,
            None => self.shards[0].add_tree(tree).await,
        }
    }

    /// Gate `id`'s status, from the shard holding it (see
    /// [`RedisQueue::gate`]).
    pub async fn gate(&self, id: &str) -> Result<Option<GateStatus>, QueueError> {
        Ok(self.gate_home(id).await?.map(|(_, status)| status))
    }

    /// A page of gate `id`'s members (see [`RedisQueue::gate_members`]);
    /// empty when no shard has the gate.
    pub async fn gate_members(
        &self,
        id: &str,
        cursor: &str,
        count: usize,
    ) -> Result<MemberPage, QueueError> {
        if let [one] = self.shards() {
            return one.gate_members(id, cursor, count).await;
        }
        match self.gate_home(id).await? {
            Some((shard, _)) => shard.gate_members(id, cursor, count).await,
            None => Ok(MemberPage {
                members: Vec::new(),
                next: None,
            }),
        }
    }

    /// The gates whose waiters wait on job `id` (see
    /// [`RedisQueue::waited_on_by`]), from the shard holding the job.
    pub async fn waited_on_by(&self, id: &str) -> Result<Vec<String>, QueueError> {
        for shard in self.shards() {
            let gates = shard.waited_on_by(id).await?;
            if !gates.is_empty() {
                return Ok(gates);
            }
        }
        Ok(Vec::new())
    }

    /// Gates by newest activity first (see [`RedisQueue::gates`]); over
    /// shards, each shard's first `offset + count` merged by their latest
    /// time (done, else sealed, else created), `offset + count` at most
    /// [`MAX_GATES_PAGE`](crate::workflow::MAX_GATES_PAGE).
    pub async fn gates(&self, offset: u64, count: usize) -> Result<Vec<GateStatus>, QueueError> {
        if let [one] = self.shards() {
            return one.gates(offset, count).await;
        }
        let window = (offset as usize).saturating_add(count);
        if count == 0 || window > crate::workflow::MAX_GATES_PAGE {
            return Err(QueueError::invalid(
                "offset + count",
                window.to_string(),
                format!(
                    "1 to {} when several shards are merged",
                    crate::workflow::MAX_GATES_PAGE
                ),
            ));
        }
        let mut lists = Vec::new();
        for shard in self.shards() {
            lists.push(shard.gates(0, window).await?);
        }
        let latest = |g: &GateStatus| g.done_at.or(g.sealed_at).unwrap_or(g.created_at);
        // Newest first, ties the greater id first, as one namespace lists
        // them.
        let merged = super::merge::merge_heads(lists, window, |a, b| {
            latest(b).cmp(&latest(a)).then_with(|| b.id.cmp(&a.id))
        });
        Ok(merged
            .into_iter()
            .skip(offset as usize)
            .take(count)
            .collect())
    }

    /// Cancel gate `id` on the shard holding it (see
    /// [`RedisQueue::cancel_gate`]).
    pub async fn cancel_gate(
        &self,
        id: &str,
        by: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<GateCancelled, QueueError> {
        if let [one] = self.shards() {
            return one.cancel_gate(id, by, progress).await;
        }
        match self.gate_home(id).await? {
            Some((shard, _)) => shard.cancel_gate(id, by, progress).await,
            None => Ok(GateCancelled::NotFound),
        }
    }

    /// Decide a held waiter, on the shard holding it (see
    /// [`RedisQueue::decide_held`]).
    pub async fn decide_held(
        &self,
        waiter: &str,
        decision: Decision,
        by: &str,
    ) -> Result<(), QueueError> {
        let last = self.shards().len() - 1;
        for (i, shard) in self.shards().iter().enumerate() {
            match shard.decide_held(waiter, decision, by).await {
                Err(QueueError::JobNotFound { .. }) if i < last => continue,
                other => return other,
            }
        }
        Err(QueueError::JobNotFound {
            id: waiter.to_owned(),
        })
    }

    /// The shard holding gate `id`, and its status.
    async fn gate_home(&self, id: &str) -> Result<Option<(&RedisQueue, GateStatus)>, QueueError> {
        for shard in self.shards() {
            if let Some(status) = shard.gate(id).await? {
                return Ok(Some((shard, status)));
            }
        }
        Ok(None)
    }
}
