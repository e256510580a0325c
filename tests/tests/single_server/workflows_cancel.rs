//! Cancelling workflows and deciding waiters, where the review found them
//! wrong: a tree's cancel reaches every level (and an interrupted one is
//! finished by running it again), over one namespace and over shards; a
//! done batch's held callbacks are cancelled by cancelling it; deciding a
//! job that waits on nothing says what it is; a deleted callback reads as
//! deleted, not pending.

use std::time::Duration;

use futures::FutureExt;
use redq::workflow::{
    Batch, Condition, Decision, GateCancelled, GateState, OnFailure, Tree, WaiterDecision,
};
use redq::{IfLeased, Job, JobState, NewJob, QueueError, RedisQueue, Retention};
use redq_tests::fixtures::handle;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

const LEASE: Duration = Duration::from_secs(30);

/// root → {leaf, mid → {leaf, mid2 → {leaf}}}: parents in `zip`, leaves in
/// `thumbs`; the ids of root, mid and mid2.
fn deep_tree() -> Tree {
    let mid2 = Tree::new("zip", NewJob::new(json!("mid2"))).child("thumbs", NewJob::new(json!(2)));
    let mid = Tree::new("zip", NewJob::new(json!("mid")))
        .child("thumbs", NewJob::new(json!(1)))
        .subtree(mid2);
    Tree::new("zip", NewJob::new(json!("root")))
        .child("thumbs", NewJob::new(json!(0)))
        .subtree(mid)
}

/// Claim what `queue` hands out now and acknowledge it; how many.
async fn run_all(queue: &RedisQueue, name: &str) -> usize {
    let jobs = queue.claim(name, 1000, LEASE).await.unwrap();
    let leases: Vec<_> = jobs.iter().map(Job::lease).collect();
    if !leases.is_empty() {
        for outcome in queue.ack_batch(&leases).await.unwrap() {
            outcome.unwrap();
        }
    }
    jobs.len()
}

/// Nothing of a cancelled tree is left to run: no leaf waits, no parent
/// awaits, and after claiming both queues nothing was handed out.
async fn nothing_left(queue: &RedisQueue) {
    assert_eq!(queue.counts("thumbs").await.unwrap().waiting, 0);
    assert_eq!(run_all(queue, "thumbs").await, 0);
    assert_eq!(run_all(queue, "zip").await, 0);
    assert_eq!(queue.counts("zip").await.unwrap().awaiting, 0);
}

#[tokio::test]
async fn cancelling_a_tree_cancels_every_level_with_progress() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-cancel-tree")).await;
    let root = queue.add_tree(deep_tree()).await.unwrap().root;
    let mut seen = Vec::new();
    let outcome = queue
        .cancel_gate(root.id(), "ops", |done, left| seen.push((done, left)))
        .await
        .unwrap();
    assert_eq!(
        outcome,
        GateCancelled::Cancelled {
            members_cancelled: 5,
            subtrees_cancelled: 2,
        }
    );
    assert_eq!(seen.last(), Some(&(5, 0)));
    nothing_left(&queue).await;
    assert_eq!(
        queue
            .cancel_gate(root.id(), "ops", |_, _| {})
            .await
            .unwrap(),
        GateCancelled::AlreadyFinished(GateState::Cancelled)
    );
}

#[tokio::test]
async fn a_tree_cancel_interrupted_half_way_is_finished_by_running_it_again() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-cancel-resume")).await;
    let root = queue.add_tree(deep_tree()).await.unwrap().root;
    // Interrupted after the root's own members were cancelled, before its
    // subtrees' gates.
    let interrupted = std::panic::AssertUnwindSafe(
        queue.cancel_gate(root.id(), "ops", |_, _| panic!("interrupted")),
    )
    .catch_unwind()
    .await;
    assert!(interrupted.is_err());
    assert_eq!(queue.counts("thumbs").await.unwrap().waiting, 2);
    let again = queue
        .cancel_gate(root.id(), "ops", |_, _| {})
        .await
        .unwrap();
    assert_eq!(
        again,
        GateCancelled::Cancelled {
            members_cancelled: 3,
            subtrees_cancelled: 2,
        }
    );
    nothing_left(&queue).await;
}

#[tokio::test]
async fn over_shards_a_tree_cancel_reaches_every_level_on_its_shard() {
    let server = RedisServer::start();
    let base = unique_namespace("wf-cancel-shards");
    let sharded = redq::ShardedQueue::connect(RedisQueue::builder(&server.url()), &base, 3)
        .await
        .unwrap();
    let root = sharded.add_tree(deep_tree()).await.unwrap().root;
    let outcome = sharded
        .cancel_gate(root.id(), "ops", |_, _| {})
        .await
        .unwrap();
    assert_eq!(
        outcome,
        GateCancelled::Cancelled {
            members_cancelled: 5,
            subtrees_cancelled: 2,
        }
    );
    for shard in sharded.shards() {
        nothing_left(shard).await;
    }
}

/// A batch of one job with two callbacks held when it fails.
async fn failed_batch_with_held_callbacks(queue: &RedisQueue) -> (String, Vec<String>) {
    let held = || NewJob::new(json!("callback"));
    let batch = Batch::new()
        .job("work", NewJob::new(json!("kaput")))
        .callback("after", held(), Condition::AllSucceeded, OnFailure::Hold)
        .callback("after", held(), Condition::AllSucceeded, OnFailure::Hold);
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let job = queue.claim("work", 1, LEASE).await.unwrap().remove(0);
    queue.dead_letter(&job.lease(), "kaput").await.unwrap();
    assert_eq!(run_all(queue, "after").await, 0);
    let callbacks = handle.callbacks.iter().map(|c| c.id().to_owned()).collect();
    (handle.id.to_string(), callbacks)
}

#[tokio::test]
async fn cancelling_a_done_batch_cancels_its_held_callbacks() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-cancel-held")).await;
    let (batch, callbacks) = failed_batch_with_held_callbacks(&queue).await;
    let status = queue.gate(&batch).await.unwrap().unwrap();
    assert_eq!(status.state, GateState::Done);
    assert!(status
        .waiters
        .iter()
        .all(|w| w.decision == WaiterDecision::Held));

    let outcome = queue.cancel_gate(&batch, "ops", |_, _| {}).await.unwrap();
    assert_eq!(
        outcome,
        GateCancelled::HeldCancelled {
            waiters_cancelled: 2
        }
    );
    assert_eq!(queue.counts("after").await.unwrap().awaiting, 0);
    for id in &callbacks {
        assert!(queue.inspect(id).await.unwrap().is_none());
    }
    let status = queue.gate(&batch).await.unwrap().unwrap();
    assert!(status
        .waiters
        .iter()
        .all(|w| w.decision == WaiterDecision::Cancelled));
    assert_eq!(
        queue.cancel_gate(&batch, "ops", |_, _| {}).await.unwrap(),
        GateCancelled::AlreadyFinished(GateState::Done)
    );
}

/// The rule of a refused decision about a job that is no waiter.
async fn refusal(queue: &RedisQueue, id: &str) -> String {
    match queue.decide_held(id, Decision::Release, "ops").await {
        Err(QueueError::Invalid {
            what: "waiter",
            rule,
            ..
        }) => rule,
        other => panic!("{id}: {other:?}"),
    }
}

#[tokio::test]
async fn deciding_a_job_that_waits_on_nothing_says_what_it_is() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-decide-words")).await;
    let waiting = queue.add("mail", NewJob::new(json!(1))).await.unwrap();
    let id = waiting.id();
    assert_eq!(
        refusal(&queue, id).await,
        format!("job {id} (queue mail, state waiting) waits on nothing: there is nothing to release or fail")
    );

    let dead = queue.add("ledger", NewJob::new(json!(2))).await.unwrap();
    let job = queue.claim("ledger", 10, LEASE).await.unwrap();
    for job in &job {
        queue.dead_letter(&job.lease(), "boom").await.unwrap();
    }
    assert!(refusal(&queue, dead.id())
        .await
        .contains("(queue ledger, state dead) waits on nothing"));

    // A batch's on_success cancelled by the batch's failure: kept, and said.
    queue
        .set_retention("pdf", &Retention::new().max_count(100))
        .await
        .unwrap();
    let batch = Batch::new()
        .job("pages", NewJob::new(json!("p")))
        .on_success("pdf", NewJob::new(json!("pdf")));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let job = queue.claim("pages", 1, LEASE).await.unwrap().remove(0);
    queue.dead_letter(&job.lease(), "kaput").await.unwrap();
    assert_eq!(run_all(&queue, "pdf").await, 0);
    let callback = handle.callbacks[0].id();
    let rule = refusal(&queue, callback).await;
    assert!(rule.contains("was cancelled by its batch"), "{rule}");
    assert!(rule.contains("OnFailure::Hold"), "{rule}");

    // No trace at all: not found, as before.
    assert!(matches!(
        queue
            .decide_held("01NOSUCHJOB0000000000000", Decision::Release, "ops")
            .await,
        Err(QueueError::JobNotFound { .. })
    ));
    assert_eq!(
        queue.inspect(id).await.unwrap().unwrap().state,
        JobState::Waiting
    );
}

#[tokio::test]
async fn a_deleted_callback_reads_as_deleted_not_pending() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-deleted-waiter")).await;
    let batch = Batch::new()
        .job("work", NewJob::new(json!(1)))
        .on_complete("after", NewJob::new(json!("a")))
        .on_complete("after", NewJob::new(json!("b")));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let deleted = handle.callbacks[0].id();
    queue.delete_job(deleted, IfLeased::Refuse).await.unwrap();
    let decisions = |status: redq::workflow::GateStatus| {
        status
            .waiters
            .iter()
            .map(|w| w.decision)
            .collect::<Vec<_>>()
    };
    let status = queue.gate(handle.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        decisions(status),
        [WaiterDecision::Deleted, WaiterDecision::Pending]
    );
    // Its batch still finishes and releases the other one.
    assert_eq!(run_all(&queue, "work").await, 1);
    assert_eq!(run_all(&queue, "after").await, 1);
    let status = queue.gate(handle.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        decisions(status),
        [WaiterDecision::Deleted, WaiterDecision::Released]
    );
}
