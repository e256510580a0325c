//! Workflows over shards (see "Sharded queues" in [`crate::workflow`]): a
//! batch or a tree lives on one shard, a job with dependencies on the shard
//! of its dependencies. A member whose ordering or limit key routes to
//! another shard is refused, since its key's order or limit would then be
//! split from the other jobs of that key.

use super::{
    Batch, BatchHandle, BatchId, Decision, GateCancelled, GateStatus, MemberPage, Tree, TreeHandle,
};
use crate::{Enqueued, NewJob, QueueError, ShardedQueue};

impl ShardedQueue {
    /// Enqueue `batch` on one shard, chosen by its id (see
    /// [`RedisQueue::enqueue_batch`](crate::RedisQueue::enqueue_batch)).
    pub async fn enqueue_batch(&self, batch: Batch) -> Result<BatchHandle, QueueError> {
        let id = BatchId::new();
        let shard = self.shard_of_key(id.as_str());
        let jobs = batch.members.iter().map(|(_, job)| job);
        let callbacks = batch.callbacks.iter().map(|c| &c.job);
        self.on_shard(shard, jobs.chain(callbacks), "a batch")?;
        self.shards()[shard].enqueue_batch_as(id, batch).await
    }

    /// Enqueue `tree` on one shard: its root parent's key's shard when it
    /// has an ordering or limit key, else one at random (see
    /// [`RedisQueue::add_tree`](crate::RedisQueue::add_tree)).
    pub async fn add_tree(&self, tree: Tree) -> Result<TreeHandle, QueueError> {
        // The root's key's shard, else any: a fresh id's.
        let key = tree
            .parent
            .ordering_key
            .clone()
            .or(tree.parent.limit_key.clone());
        let shard = self.shard_of_key(&key.unwrap_or_else(|| BatchId::new().to_string()));
        self.on_shard(shard, tree.jobs().into_iter(), "a tree")?;
        self.shards()[shard].add_tree(tree).await
    }

    /// Gate `id`'s status, from the shard holding it ([`Operator::gate`](crate::Operator::gate)).
    pub async fn gate(&self, id: &str) -> Result<Option<GateStatus>, QueueError> {
        self.operator().gate(id).await
    }

    /// The gates whose waiters wait on job `id` ([`Operator::waited_on_by`](crate::Operator::waited_on_by)).
    pub async fn waited_on_by(&self, id: &str) -> Result<Vec<String>, QueueError> {
        self.operator().waited_on_by(id).await
    }

    /// A page of gate `id`'s members ([`Operator::gate_members`](crate::Operator::gate_members)).
    pub async fn gate_members(
        &self,
        id: &str,
        cursor: &str,
        count: usize,
    ) -> Result<MemberPage, QueueError> {
        self.operator().gate_members(id, cursor, count).await
    }

    /// Gates of every shard, newest activity first ([`Operator::gates`](crate::Operator::gates)).
    pub async fn gates(&self, offset: u64, count: usize) -> Result<Vec<GateStatus>, QueueError> {
        self.operator().gates(offset, count).await
    }

    /// Cancel gate `id` on its shard ([`Operator::cancel_gate`](crate::Operator::cancel_gate)).
    pub async fn cancel_gate(
        &self,
        id: &str,
        by: &str,
        progress: impl FnMut(u64, u64),
    ) -> Result<GateCancelled, QueueError> {
        self.operator().cancel_gate(id, by, progress).await
    }

    /// Decide a held waiter on its shard ([`Operator::decide_held`](crate::Operator::decide_held)).
    pub async fn decide_held(
        &self,
        waiter: &str,
        decision: Decision,
        by: &str,
    ) -> Result<(), QueueError> {
        self.operator().decide_held(waiter, decision, by).await
    }

    /// A job with dependencies: on the shard holding its first dependency,
    /// where all of them must live.
    pub(crate) async fn add_dependent(
        &self,
        queue: &str,
        job: NewJob,
    ) -> Result<Enqueued, QueueError> {
        let ids = job
            .dependencies
            .as_ref()
            .and_then(|d| d.ids.clone())
            .unwrap_or_default();
        crate::workflow::plan::check_dependencies(&ids)?;
        let mut home = None;
        for (i, shard) in self.shards().iter().enumerate() {
            if shard.stored_meta(&ids[0]).await?.is_some()
                || shard.result(&ids[0]).await? != crate::JobResult::Unknown
            {
                home = Some(i);
                break;
            }
        }
        let Some(home) = home else {
            return Err(QueueError::invalid(
                "dependency",
                ids[0].as_str(),
                format!(
                    "job {} is not on any shard (never created, or finished without a kept \
                     record or tombstone)",
                    ids[0]
                ),
            ));
        };
        self.on_shard(home, std::iter::once(&job), "a job with dependencies")?;
        match self.shards()[home].add(queue, job).await {
            Err(QueueError::Invalid {
                what: "dependency",
                value,
                ..
            }) if value != ids[0] => Err(QueueError::invalid(
                "dependency",
                value.as_str(),
                format!(
                    "job {value} is not on the shard of job {} (a job's dependencies all live \
                     on one shard: enqueue them as one batch, or with one limit key, which \
                     routes them to one shard and limits nothing unless a limit is set for \
                     it)",
                    ids[0]
                ),
            )),
            other => other,
        }
    }

    /// Refuse a member whose ordering or limit key routes to another shard
    /// than `shard`.
    fn on_shard<'a>(
        &self,
        shard: usize,
        jobs: impl Iterator<Item = &'a NewJob>,
        what: &str,
    ) -> Result<(), QueueError> {
        for job in jobs {
            let key = job.ordering_key.as_deref().or(job.limit_key.as_deref());
            if let Some(key) = key {
                if self.shard_of_key(key) != shard {
                    return Err(QueueError::invalid(
                        "workflow member",
                        key,
                        format!(
                            "{what} lives on one shard, and this job's ordering or limit key \
                             routes to another; give the workflow's keyed jobs keys of one \
                             shard, or enqueue this job outside it"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
