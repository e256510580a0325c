//! Workflows through the driver's API (`redq::workflow`): a batch's
//! callbacks run once, after all its jobs and by their outcomes; a
//! dependent reads its dependencies' results in a Worker; a tree of depth
//! 3 across two queues releases each parent after its children; a held
//! dependent waits for an operator; a cancelled batch takes its pending jobs
//! and callbacks with it; status is read in O(1) while a batch runs; a
//! 10 000-job batch ends with its callback once; over shards a workflow
//! stays on one shard.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redq::worker::{JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker};
use redq::workflow::{
    Batch, Decision, GateCancelled, GateKind, GateState, MemberState, OnFailure, Tree,
    WaiterDecision,
};
use redq::{Enqueued, Job, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::handle;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

const LEASE: Duration = Duration::from_secs(30);
const DEADLINE: Duration = Duration::from_secs(10);

fn ids(outcomes: &[Enqueued]) -> Vec<String> {
    outcomes.iter().map(|o| o.id().to_owned()).collect()
}

/// Claim what `queue` hands out now and acknowledge it; the ids.
async fn run_all(queue: &RedisQueue, name: &str) -> Vec<String> {
    let jobs = queue.claim(name, 1000, LEASE).await.unwrap();
    let leases: Vec<_> = jobs.iter().map(Job::lease).collect();
    if !leases.is_empty() {
        for outcome in queue.ack_batch(&leases).await.unwrap() {
            outcome.unwrap();
        }
    }
    jobs.into_iter().map(|job| job.id).collect()
}

/// A batch without callbacks is sealed as any other: its status says
/// sealed while its jobs run and done after the last one.
#[tokio::test]
async fn a_batch_without_callbacks_is_done_after_its_last_job() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-no-callbacks")).await;
    let batch = Batch::new().jobs(
        "rows",
        (1..=2).map(|n| NewJob::new(json!({"row": n}))).collect(),
    );
    let handle = queue.enqueue_batch(batch).await.unwrap();
    assert!(handle.callbacks.is_empty());
    let state = async || {
        queue
            .gate(handle.id.as_str())
            .await
            .unwrap()
            .expect("gate")
            .state
    };
    assert_eq!(state().await, GateState::Sealed);
    assert_eq!(run_all(&queue, "rows").await.len(), 2);
    let status = queue.gate(handle.id.as_str()).await.unwrap().expect("gate");
    assert_eq!((status.state, status.succeeded), (GateState::Done, 2));
}

#[tokio::test]
async fn a_batch_runs_on_complete_once_after_all_its_jobs_and_cancels_on_success_after_a_dead_one()
{
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-batch")).await;
    let batch = Batch::new()
        .label("three pages")
        .jobs(
            "pages",
            (1..=3).map(|n| NewJob::new(json!({"page": n}))).collect(),
        )
        .on_complete("done", NewJob::new(json!("complete")).name("complete"))
        .on_success("done", NewJob::new(json!("success")).name("success"));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    assert_eq!(handle.jobs.len(), 3);
    let [complete, success] = <[String; 2]>::try_from(ids(&handle.callbacks)).unwrap();
    assert_eq!(queue.counts("done").await.unwrap().awaiting, 2);
    let waiting = queue.inspect(&complete).await.unwrap().unwrap();
    assert_eq!(waiting.state, JobState::Awaiting);
    assert_eq!(waiting.awaits.as_deref(), Some(handle.id.as_str()));
    let member = queue.inspect(handle.jobs[0].id()).await.unwrap().unwrap();
    assert_eq!(member.gate.as_deref(), Some(handle.id.as_str()));

    let pages = queue.claim("pages", 10, LEASE).await.unwrap();
    assert_eq!(pages.len(), 3);
    queue.ack(&pages[0].lease()).await.unwrap();
    queue.ack(&pages[1].lease()).await.unwrap();
    assert!(
        queue.claim("done", 10, LEASE).await.unwrap().is_empty(),
        "a callback ran before the last job finished"
    );
    queue
        .dead_letter(&pages[2].lease(), "page on fire")
        .await
        .unwrap();

    let released = run_all(&queue, "done").await;
    assert_eq!(
        released,
        std::slice::from_ref(&complete),
        "on_complete once, on_success not"
    );
    assert!(run_all(&queue, "done").await.is_empty(), "released twice");

    let status = queue.gate(handle.id.as_str()).await.unwrap().expect("gate");
    assert_eq!(
        (status.kind, status.state),
        (GateKind::Batch, GateState::Done)
    );
    assert_eq!(
        (
            status.total,
            status.pending,
            status.succeeded,
            status.failed
        ),
        (3, 0, 2, 1)
    );
    assert_eq!(status.label.as_deref(), Some("three pages"));
    let failure = status.first_failure.expect("the first failure");
    assert!(failure.starts_with(&pages[2].id), "{failure}");
    assert!(failure.contains("page on fire"), "{failure}");
    let decisions: HashMap<String, WaiterDecision> = status
        .waiters
        .iter()
        .map(|w| (w.id.clone(), w.decision))
        .collect();
    assert_eq!(decisions[&complete], WaiterDecision::Released);
    assert_eq!(decisions[&success], WaiterDecision::Cancelled);
    assert!(queue.inspect(&success).await.unwrap().is_none());

    let members = queue
        .gate_members(handle.id.as_str(), "", 10)
        .await
        .unwrap();
    assert_eq!(members.next, None);
    let outcomes: HashMap<String, MemberState> = members
        .members
        .into_iter()
        .map(|m| (m.id, m.state))
        .collect();
    assert_eq!(outcomes[&pages[0].id], MemberState::Completed(None));
    assert_eq!(
        outcomes[&pages[2].id],
        MemberState::Dead("page on fire".into())
    );
    let listed = queue.gates(0, 10).await.unwrap();
    let listed: Vec<_> = listed
        .iter()
        .map(|g| (g.id.as_str(), g.waiter_count))
        .collect();
    assert_eq!(listed, [(handle.id.as_str(), 2)]);
}

/// Sets `n * 10` as its result.
#[derive(Serialize, Deserialize)]
struct Part {
    n: u64,
}
impl TypedJob for Part {
    const NAME: &'static str = "wf.part";
    const QUEUE: &'static str = "parts";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.set_result(&(self.n * 10))?;
        Ok(())
    }
}

/// What each run of [`Total`] saw: each dependency's id and result.
type Report = Arc<Mutex<Vec<Vec<(String, Option<serde_json::Value>)>>>>;

/// Reports its dependencies' ids and results.
#[derive(Serialize, Deserialize)]
struct Total;
impl TypedJob for Total {
    const NAME: &'static str = "wf.total";
    const QUEUE: &'static str = "totals";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let page = cx.dependencies("", 100).await?;
        let seen: Vec<(String, Option<serde_json::Value>)> = page
            .members
            .into_iter()
            .map(|m| match m.state {
                MemberState::Completed(result) => (m.id, result),
                other => (m.id, Some(json!(format!("{other:?}")))),
            })
            .collect();
        cx.service::<Report>()
            .expect("the report")
            .lock()
            .unwrap()
            .push(seen);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependent_runs_once_after_its_dependencies_and_sees_their_results() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-after")).await;
    let a = queue.push(&Part { n: 1 }).await.unwrap().id().to_owned();
    let b = queue.push(&Part { n: 2 }).await.unwrap().id().to_owned();
    let total = NewJob::new(serde_json::to_value(Total).unwrap())
        .name(Total::NAME)
        .after([&a, &b]);
    let total = queue
        .add(Total::QUEUE, total)
        .await
        .unwrap()
        .id()
        .to_owned();
    assert_eq!(
        queue.inspect(&total).await.unwrap().unwrap().state,
        JobState::Awaiting
    );

    let report: Report = Arc::default();
    let mut registry = Registry::new();
    registry.add_job::<Part>().add_job::<Total>();
    let options = WorkOptions::new()
        .queues([Part::QUEUE, Total::QUEUE])
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(report.clone()));
    let worker = RunningWorker::spawn(worker);
    wait_until(DEADLINE, "the dependent to run", async || {
        !report.lock().unwrap().is_empty() && queue.inspect(&total).await.unwrap().is_none()
    })
    .await;
    worker.shutdown().await;

    let runs = report.lock().unwrap().clone();
    assert_eq!(runs.len(), 1, "the dependent ran {} times", runs.len());
    let seen: HashMap<String, Option<serde_json::Value>> = runs[0].iter().cloned().collect();
    let expected = HashMap::from([(a, Some(json!(10))), (b, Some(json!(20)))]);
    assert_eq!(seen, expected);

    // An id with no trace is refused, with nothing written.
    let orphan = NewJob::new(json!(1)).after(["01NOSUCHJOB0000000000000000"]);
    let err = queue.add("totals", orphan).await.unwrap_err();
    assert!(
        err.to_string().contains("is not in this namespace")
            && err
                .to_string()
                .contains("set a retention policy on its queue"),
        "names the way to depend on a job that may finish first: {err}"
    );
    assert_eq!(queue.counts("totals").await.unwrap().awaiting, 0);
}

#[tokio::test]
async fn a_tree_of_depth_three_across_two_queues_releases_each_parent_after_its_children() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-tree")).await;
    let job = |name: &str| NewJob::new(json!(name)).name(name);
    let tree = Tree::new("a", job("root"))
        .child("b", job("leaf-1"))
        .subtree(
            Tree::new("b", job("mid"))
                .child("a", job("leaf-2"))
                .subtree(Tree::new("a", job("low")).child("b", job("leaf-3"))),
        );
    let handle = queue.add_tree(tree).await.unwrap();
    assert_eq!(handle.jobs.len(), 6);
    let root = handle.root.id().to_owned();

    let mut order: Vec<String> = Vec::new();
    let started = Instant::now();
    while !order.contains(&"root".to_owned()) {
        assert!(
            started.elapsed() < DEADLINE,
            "the tree did not finish: {order:?}"
        );
        for name in ["a", "b"] {
            let jobs = queue.claim(name, 10, LEASE).await.unwrap();
            for job in jobs {
                order.push(job.name.clone().unwrap());
                queue.ack(&job.lease()).await.unwrap();
            }
        }
    }
    let at = |name: &str| {
        let found: Vec<usize> = (0..order.len()).filter(|&i| order[i] == name).collect();
        assert_eq!(
            found.len(),
            1,
            "{name} ran {} times: {order:?}",
            found.len()
        );
        found[0]
    };
    assert!(at("leaf-3") < at("low"), "{order:?}");
    assert!(
        at("low") < at("mid") && at("leaf-2") < at("mid"),
        "{order:?}"
    );
    assert!(
        at("mid") < at("root") && at("leaf-1") < at("root"),
        "{order:?}"
    );

    let status = queue.gate(&root).await.unwrap().expect("the root's gate");
    assert_eq!(
        (status.kind, status.state),
        (GateKind::Tree, GateState::Done)
    );
    assert_eq!((status.total, status.succeeded), (2, 2), "leaf-1 and mid");
    assert_eq!(status.waiters[0].id, root);
}

#[tokio::test]
async fn a_held_dependent_waits_for_an_operator_who_releases_it_once() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-hold")).await;
    let charge = queue
        .add("pay", NewJob::new(json!("charge")))
        .await
        .unwrap();
    let receipt = NewJob::new(json!("receipt"))
        .after([charge.id()])
        .on_dependency_failure(OnFailure::Hold);
    let receipt = queue.add("mail", receipt).await.unwrap().id().to_owned();
    let refund = NewJob::new(json!("refund"))
        .after([charge.id()])
        .on_dependency_failure(OnFailure::Hold);
    let refund = queue.add("mail", refund).await.unwrap().id().to_owned();

    let err = queue
        .decide_held(&receipt, Decision::Release, "ops")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("only a waiter held for an operator"),
        "{err}"
    );
    let job = queue.claim("pay", 1, LEASE).await.unwrap().remove(0);
    queue
        .dead_letter(&job.lease(), "card declined")
        .await
        .unwrap();
    assert!(queue.claim("mail", 10, LEASE).await.unwrap().is_empty());
    let status = queue.gate(&receipt).await.unwrap().expect("gate");
    assert_eq!(status.waiters[0].decision, WaiterDecision::Held);
    assert_eq!(
        queue.inspect(&receipt).await.unwrap().unwrap().state,
        JobState::Awaiting
    );

    queue
        .decide_held(&receipt, Decision::Release, "ops")
        .await
        .unwrap();
    queue
        .decide_held(&refund, Decision::DeadLetter, "ops")
        .await
        .unwrap();
    assert_eq!(
        run_all(&queue, "mail").await,
        std::slice::from_ref(&receipt)
    );
    let refund = queue
        .inspect(&refund)
        .await
        .unwrap()
        .expect("dead-lettered");
    assert_eq!(refund.state, JobState::Dead);
    let status = queue.gate(&receipt).await.unwrap().expect("gate");
    assert_eq!(status.waiters[0].decision, WaiterDecision::OperatorReleased);
    assert!(matches!(
        queue
            .decide_held(&receipt, Decision::DeadLetter, "ops")
            .await,
        Err(QueueError::JobNotFound { .. } | QueueError::Invalid { .. })
    ));
}

#[tokio::test]
async fn cancelling_a_batch_cancels_its_pending_jobs_and_its_callbacks() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-cancel")).await;
    let batch = Batch::new()
        .jobs("work", (0..5).map(|n| NewJob::new(json!(n))).collect())
        .on_complete("done", NewJob::new(json!("after")));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let first = queue.claim("work", 1, LEASE).await.unwrap().remove(0);
    queue.ack(&first.lease()).await.unwrap();

    let mut seen = Vec::new();
    let outcome = queue
        .cancel_gate(handle.id.as_str(), "ops", |done, left| {
            seen.push((done, left))
        })
        .await
        .unwrap();
    assert_eq!(
        outcome,
        GateCancelled::Cancelled {
            members_cancelled: 4,
            subtrees_cancelled: 0,
        }
    );
    assert_eq!(seen.last(), Some(&(4, 0)));
    assert_eq!(queue.counts("work").await.unwrap().waiting, 0);
    assert!(queue.claim("done", 10, LEASE).await.unwrap().is_empty());
    assert_eq!(queue.counts("done").await.unwrap().awaiting, 0);

    let status = queue.gate(handle.id.as_str()).await.unwrap().expect("gate");
    assert_eq!(status.state, GateState::Cancelled);
    assert_eq!(status.waiters[0].decision, WaiterDecision::Cancelled);
    assert_eq!(
        queue
            .cancel_gate(handle.id.as_str(), "ops", |_, _| {})
            .await
            .unwrap(),
        GateCancelled::AlreadyFinished(GateState::Cancelled)
    );
}

#[tokio::test]
async fn status_is_read_while_a_batch_runs_at_a_cost_that_does_not_grow_with_it() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-status")).await;
    let make = |n: usize| {
        Batch::new()
            .jobs("rows", (0..n).map(|i| NewJob::new(json!(i))).collect())
            .on_complete("report", NewJob::new(json!("report")))
    };
    let small = queue.enqueue_batch(make(4)).await.unwrap();
    let large = queue.enqueue_batch(make(3000)).await.unwrap();
    let job = queue.claim("rows", 1, LEASE).await.unwrap().remove(0);
    queue.ack(&job.lease()).await.unwrap();
    let running = queue.gate(small.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        (
            running.state,
            running.total,
            running.pending,
            running.succeeded
        ),
        (GateState::Sealed, 4, 3, 1)
    );

    server.seen_since_reset().await;
    queue.gate(small.id.as_str()).await.unwrap().unwrap();
    let reading_small = server.seen_since_reset().await.commands;
    queue.gate(large.id.as_str()).await.unwrap().unwrap();
    let reading_large = server.seen_since_reset().await.commands;
    assert_eq!(
        reading_small, reading_large,
        "a larger batch costs more to read"
    );

    let page = queue
        .gate_members(large.id.as_str(), "", 1000)
        .await
        .unwrap();
    assert_eq!(page.members.len(), 1000);
    assert!(page.next.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_thousand_job_batch_runs_its_callback_once() {
    const JOBS: usize = 10_000;
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-10k")).await;
    let started = Instant::now();
    let batch = Batch::new()
        .jobs(
            "rows",
            (0..JOBS).map(|i| NewJob::new(json!({"row": i}))).collect(),
        )
        .on_complete("report", NewJob::new(json!("imported")));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let enqueued = started.elapsed();
    let mut done = 0;
    while done < JOBS {
        let ran = run_all(&queue, "rows").await.len();
        assert!(ran > 0, "rows ran out after {done}");
        done += ran;
    }
    let callback = run_all(&queue, "report").await;
    assert_eq!(callback, ids(&handle.callbacks));
    assert!(run_all(&queue, "report").await.is_empty());
    let elapsed = started.elapsed();
    let status = queue.gate(handle.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        (status.state, status.succeeded),
        (GateState::Done, JOBS as u64)
    );
    eprintln!("10 000-job batch: enqueued in {enqueued:?}, run and called back in {elapsed:?}");
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
}

#[tokio::test]
async fn over_shards_a_workflow_lives_on_one_shard_and_keyed_members_elsewhere_are_refused() {
    let server = RedisServer::start();
    let base = unique_namespace("wf-shards");
    let sharded = redq::ShardedQueue::connect(RedisQueue::builder(&server.url()), &base, 3)
        .await
        .unwrap();
    let operator = sharded.operator();
    let batch = Batch::new()
        .jobs("rows", (0..6).map(|i| NewJob::new(json!(i))).collect())
        .on_complete("report", NewJob::new(json!("report")));
    let handle = operator.enqueue_batch(batch).await.unwrap();
    let home = sharded.shard_of_key(handle.id.as_str());
    for (i, shard) in sharded.shards().iter().enumerate() {
        let rows = shard.counts("rows").await.unwrap().waiting;
        assert_eq!(rows, if i == home { 6 } else { 0 }, "shard {i}");
    }
    let home_queue = &sharded.shards()[home];
    assert_eq!(run_all(home_queue, "rows").await.len(), 6);
    assert_eq!(run_all(home_queue, "report").await, ids(&handle.callbacks));
    let status = operator.gate(handle.id.as_str()).await.unwrap().unwrap();
    assert_eq!(status.state, GateState::Done);

    // A member keyed to another shard than the batch's is refused, nothing sent.
    let elsewhere = (0..100)
        .map(|i| format!("key-{i}"))
        .find(|key| sharded.shard_of_key(key) != sharded.shard_of_key("fixed"))
        .unwrap();
    let tree = Tree::new("t", NewJob::new(json!(0)).ordering_key("fixed"))
        .child("t", NewJob::new(json!(1)).ordering_key(elsewhere));
    let err = operator.add_tree(tree).await.unwrap_err();
    assert!(err.to_string().contains("lives on one shard"), "{err}");
    for shard in sharded.shards() {
        assert_eq!(shard.counts("t").await.unwrap().waiting, 0);
    }

    // A dependent goes where its dependencies are.
    let dep = sharded
        .add("rows", NewJob::new(json!("dep")))
        .await
        .unwrap();
    let dependent = NewJob::new(json!("after")).after([dep.id()]);
    let dependent = sharded.add("report", dependent).await.unwrap();
    let dep_home = holder(&sharded, dep.id()).await;
    assert_eq!(dep_home.len(), 1);
    assert_eq!(holder(&sharded, dependent.id()).await, dep_home);
}

/// The shards that hold job `id`.
async fn holder(sharded: &redq::ShardedQueue, id: &str) -> Vec<usize> {
    let mut found = Vec::new();
    for (i, shard) in sharded.shards().iter().enumerate() {
        if shard.inspect(id).await.unwrap().is_some() {
            found.push(i);
        }
    }
    found
}

/// One ack call whose jobs count in more gates than one Lua `unpack` holds
/// (60 jobs, each the dependency of 80 others: 4 800 gates, 9 600 values to
/// store) stores every gate and releases every dependent.
#[tokio::test]
async fn an_ack_counting_its_jobs_in_thousands_of_gates_releases_every_dependent() {
    const DEPS: usize = 60;
    const EACH: usize = 80;
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("wf-many-gates")).await;
    let deps = (0..DEPS).map(|i| NewJob::new(json!(i))).collect();
    let deps = ids(&queue.add_batch("deps", deps).await.expect("dependencies"));
    // A job with dependencies is enqueued alone (one atomic call each).
    let adds = deps.iter().flat_map(|dep| {
        let queue = &queue;
        (0..EACH).map(move |i| queue.add("dependents", NewJob::new(json!(i)).after([dep.as_str()])))
    });
    futures::future::try_join_all(adds)
        .await
        .expect("dependents");
    assert_eq!(
        queue.counts("dependents").await.unwrap().awaiting,
        (DEPS * EACH) as u64
    );
    let ran = run_all(&queue, "deps").await;
    assert_eq!(
        ran.len(),
        DEPS,
        "one claim and one ack call for every dependency"
    );
    let mut released = 0;
    wait_until(
        DEADLINE,
        "every dependent to be released and run",
        async || {
            released += run_all(&queue, "dependents").await.len();
            released == DEPS * EACH
        },
    )
    .await;
    assert_eq!(queue.counts("dependents").await.unwrap().awaiting, 0);
}
