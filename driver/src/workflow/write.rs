//! Creating workflows on one namespace: a batch (members in chunks into an
//! open gate, then one seal creating its callbacks), a tree (bottom-up:
//! each subtree's children, then its seal with its parent as the waiter),
//! and a job with dependencies (one seal: the gate, its members and the
//! job). Cancelling a gate, and an operator's decision on a held waiter.

use std::future::Future;
use std::pin::Pin;

use fred::bytes::Bytes;

use super::plan::{check_dependencies, WaiterPlan};
use super::seal::{SealArgs, SealPlan};
use super::{
    Batch, BatchHandle, BatchId, Decision, GateKind, GateState, MemberState, Tree, TreeHandle,
};
use crate::codes::{self, DecideReply, GateCancelReply, SealRefusal};
use crate::enqueue_args::{encode_into, into_gate, Encoded, Jobs};
use crate::limits;
use crate::scripts::{self, reply, text, Op};
use crate::{Enqueued, NewJob, QueueError, RedisQueue};

/// What [`RedisQueue::cancel_gate`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum GateCancelled {
    /// Cancelled now: its waiters are cancelled at their queues' next
    /// claim, and this many of its pending members were cancelled (a
    /// tree's: at every level).
    Cancelled {
        /// Members cancelled by this call, at every level of a tree.
        members_cancelled: u64,
        /// A tree's subtrees whose gates this call cancelled.
        subtrees_cancelled: u64,
    },
    /// It was done already, with waiters held for an operator: those were
    /// cancelled.
    HeldCancelled {
        /// Held waiters cancelled by this call.
        waiters_cancelled: u64,
    },
    /// No gate with this id (never created, or expired).
    NotFound,
    /// It had finished already (done with no waiter held, or cancelled with
    /// nothing left pending); nothing changed.
    AlreadyFinished(GateState),
}

/// Members cancelled concurrently while a gate is cancelled.
const CANCELS_IN_FLIGHT: usize = 32;

/// The members of one queue, encoded, with their places in the caller's list.
struct Group {
    queue: String,
    positions: Vec<usize>,
    encoded: Vec<Encoded>,
    buf: Bytes,
}

/// Validate and encode `jobs` grouped by queue (in first-seen order), so
/// nothing is sent before every job passed.
fn encode_groups(
    jobs: &[(String, NewJob)],
    payload_limit: usize,
) -> Result<Vec<Group>, QueueError> {
    let mut order: Vec<String> = Vec::new();
    // Per queue: the positions, the layouts, the shared text buffer.
    type Part = (Vec<usize>, Vec<Encoded>, Vec<u8>);
    let mut parts: std::collections::HashMap<&str, Part> = std::collections::HashMap::new();
    for (position, (queue, job)) in jobs.iter().enumerate() {
        let part = parts.entry(queue.as_str()).or_insert_with(|| {
            order.push(queue.clone());
            Default::default()
        });
        part.1.push(encode_into(job, payload_limit, &mut part.2)?);
        part.0.push(position);
    }
    Ok(order
        .into_iter()
        .map(|queue| {
            let (positions, encoded, buf) = parts.remove(queue.as_str()).expect("grouped");
            Group {
                queue,
                positions,
                encoded,
                buf: Bytes::from(buf),
            }
        })
        .collect())
}

impl RedisQueue {
    /// Enqueue `batch`: its jobs in chunks of
    /// [`limits::ENQUEUE_CHUNK`] per queue, each chunk atomic, all joining
    /// one new gate, then its callbacks in one call that seals it (see
    /// [`crate::workflow`]). Everything is validated before anything is
    /// sent. If a call fails half-way, the error is
    /// [`QueueError::WorkflowIncomplete`] naming the batch and how many of
    /// its jobs were enqueued: they run, no callback exists, and the open
    /// batch expires 24 hours after its last job joined.
    pub async fn enqueue_batch(&self, batch: Batch) -> Result<BatchHandle, QueueError> {
        self.enqueue_batch_as(BatchId::new(), batch).await
    }

    /// [`RedisQueue::enqueue_batch`] under a given id (a sharded queue
    /// picks the shard by it first).
    pub(crate) async fn enqueue_batch_as(
        &self,
        id: BatchId,
        batch: Batch,
    ) -> Result<BatchHandle, QueueError> {
        batch.validate()?;
        let groups = encode_groups(&batch.members, self.inner.payload_limit)?;
        let seal_queue = batch
            .callbacks
            .first()
            .map(|c| c.queue.clone())
            .or_else(|| batch.members.first().map(|(q, _)| q.clone()))
            .expect("validated: a job or a callback");
        let plan = SealPlan {
            gate: Some(id.as_str()),
            label: batch.label.as_deref(),
            ..SealPlan::new(GateKind::Batch, &batch.callbacks)
        };
        let seal = self.seal_args(&seal_queue, &plan)?;
        let mut jobs = vec![None; batch.members.len()];
        let mut enqueued = 0;
        let incomplete = |enqueued: u64, cause: QueueError| QueueError::WorkflowIncomplete {
            gate: id.to_string(),
            enqueued,
            cause: Box::new(cause),
        };
        if let Err(cause) = self
            .send_groups(
                &groups,
                id.as_str(),
                GateKind::Batch,
                &mut jobs,
                &mut enqueued,
            )
            .await
        {
            return Err(incomplete(enqueued, cause));
        }
        // Sealed with or without callbacks, so its status reaches done.
        let callbacks = self
            .seal(&seal_queue, &seal, id.as_str(), GateKind::Batch)
            .await
            .map_err(|cause| incomplete(enqueued, cause))?;
        Ok(BatchHandle {
            id,
            jobs: jobs
                .into_iter()
                .map(|o| o.expect("every job sent"))
                .collect(),
            callbacks,
        })
    }

    /// Enqueue `tree`: bottom-up, each subtree's children into its parent's
    /// gate and then the parent, the root last (see [`crate::workflow`]).
    /// Everything is validated before anything is sent. A failure half-way
    /// is [`QueueError::WorkflowIncomplete`] naming the parent whose part
    /// failed; what was enqueued runs, and a parent never created leaves
    /// its open gate to expire.
    pub async fn add_tree(&self, tree: Tree) -> Result<TreeHandle, QueueError> {
        tree.validate()?;
        // Every job passes an enqueue's checks before the first is sent
        // (the tree is sent level by level, each level encoded as it goes).
        let mut scratch = Vec::new();
        for job in tree.jobs() {
            scratch.clear();
            encode_into(job, self.inner.payload_limit, &mut scratch)?;
        }
        let mut jobs = Vec::with_capacity(tree.size());
        let root = self.send_tree(&tree, None, &mut jobs).await?;
        Ok(TreeHandle { root, jobs })
    }

    /// Send `tree` whose parent joins gate `joins` (its own parent's) as a
    /// member at its creation; the parent's outcome.
    fn send_tree<'a>(
        &'a self,
        tree: &'a Tree,
        joins: Option<&'a str>,
        created: &'a mut Vec<Enqueued>,
    ) -> Pin<Box<dyn Future<Output = Result<Enqueued, QueueError>> + Send + 'a>> {
        Box::pin(async move {
            let (condition, on_failure) = tree.policy();
            let parent = [WaiterPlan {
                queue: tree.queue.clone(),
                job: tree.parent.clone(),
                condition,
                on_failure,
            }];
            // Encoding the parent fixes its id, which is its gate's id: the
            // gate its children and its subtrees' parents join.
            let seal = self.seal_args(
                &tree.queue,
                &SealPlan {
                    parent: joins,
                    ..SealPlan::new(GateKind::Tree, &parent)
                },
            )?;
            let gate = seal.gate();
            let groups = encode_groups(&tree.children, self.inner.payload_limit)?;
            for subtree in &tree.subtrees {
                self.send_tree(subtree, Some(&gate), created).await?;
            }
            let incomplete = |enqueued: u64, cause: QueueError| QueueError::WorkflowIncomplete {
                gate: gate.clone(),
                enqueued,
                cause: Box::new(cause),
            };
            let mut children = vec![None; tree.children.len()];
            let mut enqueued = 0;
            if let Err(cause) = self
                .send_groups(&groups, &gate, GateKind::Tree, &mut children, &mut enqueued)
                .await
            {
                return Err(incomplete(enqueued, cause));
            }
            created.extend(children.into_iter().flatten());
            let root = self
                .seal(&tree.queue, &seal, &gate, GateKind::Tree)
                .await
                .map_err(|cause| incomplete(enqueued, cause))?
                .pop()
                .ok_or_else(|| QueueError::Protocol("gate_seal.lua created no parent".into()))?;
            created.push(root.clone());
            Ok(root)
        })
    }

    /// A job with dependencies ([`NewJob::after`]): one gate_seal call
    /// creating its gate (under the job's own id), counting the listed
    /// jobs, and the job itself, awaiting.
    pub(crate) async fn add_dependent(
        &self,
        queue: &str,
        job: &NewJob,
    ) -> Result<Enqueued, QueueError> {
        let deps = job.dependencies.clone().unwrap_or_default();
        let ids = deps.ids.unwrap_or_default();
        check_dependencies(&ids)?;
        let waiter = [WaiterPlan {
            queue: queue.to_owned(),
            job: job.clone(),
            condition: deps.condition,
            on_failure: deps.on_failure,
        }];
        // The gate id is the job's, fixed when it is encoded.
        let plan = SealPlan {
            dependencies: &ids,
            ..SealPlan::new(GateKind::Dependencies, &waiter)
        };
        let seal = self.seal_args(queue, &plan)?;
        let gate = seal.gate();
        self.seal(queue, &seal, &gate, GateKind::Dependencies)
            .await?
            .pop()
            .ok_or_else(|| QueueError::Protocol("gate_seal.lua created no job".into()))
    }

    fn seal_args(&self, queue: &str, plan: &SealPlan<'_>) -> Result<SealArgs, QueueError> {
        let head = [text(queue), text(self.inner.keys.wake_channel())];
        SealArgs::new(head, plan, self.inner.payload_limit, self.record_format())
    }

    /// Send each group's chunks into gate `gate`, recording each outcome at
    /// its position and counting the jobs whose calls applied.
    async fn send_groups(
        &self,
        groups: &[Group],
        gate: &str,
        kind: GateKind,
        outcomes: &mut [Option<Enqueued>],
        enqueued: &mut u64,
    ) -> Result<(), QueueError> {
        for group in groups {
            let chunks = group
                .encoded
                .chunks(limits::ENQUEUE_CHUNK)
                .zip(group.positions.chunks(limits::ENQUEUE_CHUNK));
            for (chunk, positions) in chunks {
                let jobs = Jobs::Encoded(chunk, &group.buf);
                let done = self
                    .send_jobs_into(&group.queue, jobs, into_gate(gate, kind))
                    .await
                    .map_err(|e| gate_closed(e, gate, kind))?;
                *enqueued += done.len() as u64;
                for (position, outcome) in positions.iter().zip(done) {
                    outcomes[*position] = Some(outcome);
                }
            }
        }
        Ok(())
    }

    /// One gate_seal call; the waiters' outcomes in order.
    async fn seal(
        &self,
        queue: &str,
        args: &SealArgs,
        gate: &str,
        kind: GateKind,
    ) -> Result<Vec<Enqueued>, QueueError> {
        let keys = self.queue_keys(queue)?;
        let reply = scripts::run_with(self.caller(), Op::GateSeal, &keys, args)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))?;
        match codes::gate_sealed(reply::array(reply)?)? {
            Ok(outcomes) => Ok(outcomes),
            Err(refusal) => Err(seal_refused(refusal, gate, kind)),
        }
    }

    /// Cancel gate `id` (a batch, a job's dependencies, a tree): its
    /// waiters are cancelled at their queues' next claim, then its members
    /// still pending are cancelled (`by` kept with each),
    /// [`MAX_MEMBERS_PAGE`](super::MAX_MEMBERS_PAGE) at a time. A member
    /// that is a subtree's parent (awaiting its own tree gate) is cancelled
    /// and so is its gate, level by level down the tree, each level's
    /// pending members counted in `progress(done, left)` and in the reply.
    ///
    /// Safe to call again after an interruption: a cancelled gate is swept
    /// again (its pending members and its subtrees' gates), and the reply
    /// is [`GateCancelled::AlreadyFinished`] only when nothing was left.
    /// A gate that is done with waiters held for an operator
    /// ([`OnFailure::Hold`](super::OnFailure::Hold)) has those waiters
    /// cancelled ([`GateCancelled::HeldCancelled`]).
    ///
    /// Bounded: one gate_cancel per gate of the tree, one cancel per
    /// pending member, and one O(1) gate read per member that is awaiting
    /// or was cancelled or deleted (a subtree's parent is one of those);
    /// the tree is walked with a stack, not by recursion.
    pub async fn cancel_gate(
        &self,
        id: &str,
        by: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<GateCancelled, QueueError> {
        limits::check_text("gate id", id, limits::MAX_ID_LEN)?;
        crate::kept::check_by(by)?;
        let Some(status) = self.gate(id).await? else {
            return Ok(GateCancelled::NotFound);
        };
        match self.cancel_one_gate(&status, by).await? {
            GateCancelReply::Cancelled => {}
            GateCancelReply::NotFound => return Ok(GateCancelled::NotFound),
            GateCancelReply::AlreadyDone(state) => match super::decode::state(&state)? {
                // Interrupted before: sweep again what is left.
                GateState::Cancelled => {}
                GateState::Done => return self.cancel_held(&status, by).await,
                other => return Ok(GateCancelled::AlreadyFinished(other)),
            },
        }
        let resumed = status.state == GateState::Cancelled;
        let mut sweep = Sweep {
            done: 0,
            left: status.pending,
            subtrees: 0,
        };
        let mut stack = vec![id.to_owned()];
        let mut seen = std::collections::HashSet::new();
        seen.insert(id.to_owned());
        while let Some(gate) = stack.pop() {
            for parent in self
                .cancel_members(&gate, by, &mut sweep, &mut progress)
                .await?
            {
                if seen.contains(&parent) {
                    continue;
                }
                let Some(sub) = self.subtree_gate(&parent).await? else {
                    continue;
                };
                let reply = self.cancel_one_gate(&sub, by).await?;
                let go_on = match reply {
                    GateCancelReply::Cancelled => {
                        sweep.subtrees += 1;
                        true
                    }
                    // Cancelled before, perhaps by an interrupted call.
                    GateCancelReply::AlreadyDone(state) => state == "cancelled" && sub.pending > 0,
                    GateCancelReply::NotFound => false,
                };
                if go_on {
                    sweep.left += sub.pending;
                    progress(sweep.done, sweep.left);
                    seen.insert(parent.clone());
                    stack.push(parent);
                }
            }
        }
        if resumed && sweep.done == 0 && sweep.subtrees == 0 {
            return Ok(GateCancelled::AlreadyFinished(GateState::Cancelled));
        }
        Ok(GateCancelled::Cancelled {
            members_cancelled: sweep.done,
            subtrees_cancelled: sweep.subtrees,
        })
    }

    /// One gate_cancel call for gate `status`, in its first waiter's queue.
    async fn cancel_one_gate(
        &self,
        status: &super::GateStatus,
        by: &str,
    ) -> Result<GateCancelReply, QueueError> {
        let queue = status
            .waiters
            .first()
            .map(|w| w.queue.clone())
            .unwrap_or_else(|| super::read::READ_QUEUE.to_owned());
        let args = vec![text(&status.id), text(by)];
        let items = reply::array(self.run(Op::GateCancel, &queue, args).await?)?;
        codes::gate_cancelled(&items)
    }

    /// Cancel gate `gate`'s pending members, page by page; the members that
    /// may be a subtree's parent (awaiting, or cancelled or deleted, by this
    /// call or an interrupted one).
    async fn cancel_members(
        &self,
        gate: &str,
        by: &str,
        sweep: &mut Sweep,
        progress: &mut impl FnMut(u64, u64),
    ) -> Result<Vec<String>, QueueError> {
        let mut parents = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = self
                .gate_members(gate, &cursor, super::MAX_MEMBERS_PAGE)
                .await?;
            let mut pending = Vec::new();
            for m in &page.members {
                match m.state {
                    MemberState::Pending(state) => {
                        pending.push(m.id.as_str());
                        if state == crate::JobState::Awaiting {
                            parents.push(m.id.clone());
                        }
                    }
                    MemberState::Cancelled | MemberState::Deleted => parents.push(m.id.clone()),
                    MemberState::Completed(_) | MemberState::Dead(_) => {}
                }
            }
            for ids in pending.chunks(CANCELS_IN_FLIGHT) {
                let outcomes =
                    futures::future::try_join_all(ids.iter().map(|id| self.cancel(id, by))).await?;
                sweep.done += outcomes
                    .iter()
                    .filter(|o| matches!(o, crate::CancelOutcome::Cancelled { .. }))
                    .count() as u64;
                sweep.left = sweep.left.saturating_sub(ids.len() as u64);
                progress(sweep.done, sweep.left);
            }
            match page.next {
                Some(next) => cursor = next,
                None => break,
            }
        }
        Ok(parents)
    }

    /// The tree gate job `id` is the parent of (kept under its own id,
    /// with it as its waiter), when it is not done.
    async fn subtree_gate(&self, id: &str) -> Result<Option<super::GateStatus>, QueueError> {
        Ok(self.gate(id).await?.filter(|g| {
            g.kind == GateKind::Tree
                && g.state != GateState::Done
                && g.waiters.iter().any(|w| w.id == id)
        }))
    }

    /// Gate `status` is done: cancel its waiters held for an operator.
    async fn cancel_held(
        &self,
        status: &super::GateStatus,
        by: &str,
    ) -> Result<GateCancelled, QueueError> {
        let held = status
            .waiters
            .iter()
            .filter(|w| w.decision == super::WaiterDecision::Held);
        let mut cancelled = 0;
        for waiter in held {
            if let crate::CancelOutcome::Cancelled { .. } = self.cancel(&waiter.id, by).await? {
                cancelled += 1;
            }
        }
        Ok(match cancelled {
            0 => GateCancelled::AlreadyFinished(GateState::Done),
            n => GateCancelled::HeldCancelled {
                waiters_cancelled: n,
            },
        })
    }

    /// Decide a held waiter ([`OnFailure::Hold`](super::OnFailure::Hold)):
    /// release it into its queue, or dead-letter it; `by` says who. Only a
    /// waiter whose decision is `held` is decided by hand: anything else
    /// is refused in words, nothing changed. A job that exists but waits on
    /// nothing, or finished (a callback its batch cancelled), is refused as
    /// [`QueueError::Invalid`] about a `"waiter"`, saying what it is; a job
    /// with no trace is [`QueueError::JobNotFound`].
    pub async fn decide_held(
        &self,
        waiter: &str,
        decision: Decision,
        by: &str,
    ) -> Result<(), QueueError> {
        limits::check_id(waiter)?;
        crate::kept::check_by(by)?;
        let Some(meta) = self.stored_meta(waiter).await? else {
            return Err(self.finished_waiter(waiter).await?);
        };
        let word = match decision {
            Decision::Release => "release",
            Decision::DeadLetter => "dead",
        };
        let args = vec![text(waiter), text(word), text(by)];
        let items = reply::array(self.run(Op::GateDecide, &meta.queue, args).await?)?;
        match codes::gate_decided(&items)? {
            DecideReply::Decided => Ok(()),
            DecideReply::NotFound => Err(QueueError::JobNotFound {
                id: waiter.to_owned(),
            }),
            DecideReply::NotWaiting => {
                let where_ = match self.inspect(waiter).await? {
                    Some(job) => format!("queue {}, state {}", job.queue, job.state.as_str()),
                    None => format!("queue {}, finished since", meta.queue),
                };
                Err(not_a_waiter(
                    waiter,
                    format!(
                        "job {waiter} ({where_}) waits on nothing: there is nothing to \
                         release or fail"
                    ),
                ))
            }
            DecideReply::NotHeld(current) => {
                let now = super::decode::decision(&current)
                    .map(|d| d.as_str().to_owned())
                    .unwrap_or(current);
                Err(QueueError::invalid(
                    "held waiter",
                    waiter,
                    format!(
                        "only a waiter held for an operator is released or failed by hand; \
                         this one is {now}"
                    ),
                ))
            }
        }
    }

    /// Why job `id`, whose record is gone, is not decided: it finished
    /// (completed, or cancelled: by an operator, or by what it waited on),
    /// or it has no trace ([`QueueError::JobNotFound`]).
    async fn finished_waiter(&self, id: &str) -> Result<QueueError, QueueError> {
        const HOLD: &str = "a cancelled job is not released or failed; a callback that should \
                            be recoverable is made with OnFailure::Hold";
        let rule = match self.result(id).await? {
            crate::JobResult::Kept(kept) if kept.outcome == crate::kept::Outcome::Cancelled => {
                let by = kept.cancelled_by.clone().unwrap_or_default();
                if kept.cancelled_in.as_deref() == Some("awaiting") && by.starts_with("dependency ")
                {
                    let what = match self.gate(id).await? {
                        Some(g) if g.kind == GateKind::Tree => "its tree",
                        Some(_) => "its dependencies",
                        None => "its batch",
                    };
                    format!(
                        "job {id} (queue {}) was cancelled by {what} when a member failed \
                         ({by}); {HOLD}",
                        kept.queue
                    )
                } else if by.is_empty() {
                    format!("job {id} (queue {}) was cancelled; {HOLD}", kept.queue)
                } else {
                    format!(
                        "job {id} (queue {}) was cancelled ({by}); {HOLD}",
                        kept.queue
                    )
                }
            }
            crate::JobResult::Kept(kept) => format!(
                "job {id} (queue {}) completed: there is nothing to release or fail",
                kept.queue
            ),
            crate::JobResult::Tombstone(t) => match t.outcome {
                crate::kept::Outcome::Cancelled => format!(
                    "job {id} was cancelled (its queue keeps only a tombstone; a batch's \
                     callback is cancelled by its batch when a member failed); {HOLD}"
                ),
                crate::kept::Outcome::Completed => {
                    format!("job {id} completed: there is nothing to release or fail")
                }
            },
            crate::JobResult::Live | crate::JobResult::Unknown => {
                return Ok(QueueError::JobNotFound { id: id.to_owned() })
            }
        };
        Ok(not_a_waiter(id, rule))
    }
}

/// Progress through a tree being cancelled.
struct Sweep {
    /// Members cancelled.
    done: u64,
    /// Members pending that are not cancelled yet (as far as read).
    left: u64,
    /// Subtree gates cancelled.
    subtrees: u64,
}

/// A decision refused because the job is no waiter (it waits on nothing,
/// or finished): `what` is `"waiter"`, the rule the whole sentence.
fn not_a_waiter(id: &str, rule: String) -> QueueError {
    QueueError::invalid("waiter", id, rule)
}

/// A gate_seal refusal in words.
fn seal_refused(refusal: SealRefusal, gate: &str, kind: GateKind) -> QueueError {
    match refusal {
        SealRefusal::UnknownDependency(id) => QueueError::invalid(
            "dependency",
            id.as_str(),
            format!(
                "job {id} is not in this namespace: never created, or it already finished in a \
                 queue that keeps no finished jobs. To depend on a job that may finish first, \
                 set a retention policy on its queue (RedisQueue::set_retention, redq retention \
                 set), or add this job as its batch's callback"
            ),
        ),
        SealRefusal::GateClosed(state) => closed(gate, kind, &state),
        SealRefusal::TooManyGates(id) => QueueError::invalid(
            "dependency",
            id.as_str(),
            format!("job {id} already counts toward 100 batches, trees or dependents, the most one job may"),
        ),
    }
}

fn closed(gate: &str, kind: GateKind, state: &str) -> QueueError {
    QueueError::invalid(
        match kind {
            GateKind::Batch => "batch",
            GateKind::Dependencies => "dependent job",
            GateKind::Tree => "tree parent",
        },
        gate,
        format!("it is {state}: jobs join it only while it is being enqueued"),
    )
}

/// An enqueue into a gate that no longer takes members, in words.
fn gate_closed(err: QueueError, gate: &str, kind: GateKind) -> QueueError {
    match err {
        QueueError::Protocol(text) if text == codes::GATE_CLOSED_ON_ENQUEUE => {
            closed(gate, kind, "sealed, done or cancelled")
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_failing_half_way_says_which_how_many_and_what_became_of_them() {
        let err = QueueError::WorkflowIncomplete {
            gate: "01BATCH".into(),
            enqueued: 2000,
            cause: Box::new(QueueError::OutOfMemory),
        };
        assert_eq!(
            err.to_string(),
            "01BATCH is incomplete: 2000 of its jobs were enqueued, then redis is out of memory \
             (maxmemory reached); nothing was written; they run, nothing waits on them, and it \
             expires in 24 hours"
        );
    }

    #[test]
    fn an_enqueue_into_a_closed_gate_names_it_and_its_kind() {
        let err = gate_closed(
            QueueError::Protocol(codes::GATE_CLOSED_ON_ENQUEUE.into()),
            "01G",
            GateKind::Batch,
        );
        assert_eq!(
            err.to_string(),
            "invalid batch \"01G\": it is sealed, done or cancelled: jobs join it only while it \
             is being enqueued"
        );
        let other = gate_closed(QueueError::OutOfMemory, "01G", GateKind::Tree);
        assert!(matches!(other, QueueError::OutOfMemory));
    }
}
