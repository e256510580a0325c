//! Deleting every awaiting job of a queue (`delete_all` with
//! `JobState::Awaiting`) leaves their workflows as deleting each by id
//! does: each leaves its gate's waiters, counts as deleted toward the gates
//! it is a member of, and a dependent of it is decided by its policy.

use std::time::Duration;

use redq::workflow::{GateStatus, Tree};
use redq::{IfLeased, Job, JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(30);

/// One workflow over three queues: a tree whose root R (archive) waits on
/// a subtree S (archive, waiting on its child C in thumbs) and a child T
/// (thumbs); and D (mail), which depends on S.
struct Flow {
    root: String,
    sub: String,
    dependent: String,
}

async fn build(queue: &RedisQueue) -> Flow {
    let tree = Tree::new("archive", NewJob::new(json!("R")))
        .subtree(
            Tree::new("archive", NewJob::new(json!("S"))).child("thumbs", NewJob::new(json!("C"))),
        )
        .child("thumbs", NewJob::new(json!("T")));
    let handle = queue.add_tree(tree).await.unwrap();
    // S is the one archive job that is not the root.
    let mut sub = None;
    for e in &handle.jobs {
        let job = queue.inspect(e.id()).await.unwrap().unwrap();
        if job.queue == "archive" && e.id() != handle.root.id() {
            sub = Some(e.id().to_owned());
        }
    }
    let sub = sub.expect("the subtree's parent");
    let dependent = queue
        .add("mail", NewJob::new(json!("D")).after([sub.as_str()]))
        .await
        .unwrap();
    Flow {
        root: handle.root.id().to_owned(),
        sub,
        dependent: dependent.id().to_owned(),
    }
}

/// Claim what `name` hands out now and acknowledge it.
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

/// A gate as a user compares it across namespaces: everything but ids and
/// times, and its first failure's outcome word.
fn shape(gate: Option<GateStatus>) -> Option<String> {
    gate.map(|g| {
        let failure = g
            .first_failure
            .as_deref()
            .and_then(|f| f.split([' ', ':']).nth(1))
            .unwrap_or("-")
            .to_owned();
        let decisions: Vec<String> = g
            .waiters
            .iter()
            .map(|w| format!("{:?}", w.decision))
            .collect();
        format!(
            "{:?} total {} pending {} succeeded {} failed {} first {failure} waiters {decisions:?}",
            g.state, g.total, g.pending, g.succeeded, g.failed
        )
    })
}

/// What a user sees of the flow after the delete, then after the mail
/// queue's claim decides D and the thumbs jobs complete.
async fn observe(queue: &RedisQueue, flow: &Flow) -> Vec<String> {
    let mut seen = Vec::new();
    for name in ["archive", "thumbs", "mail"] {
        let c = queue.counts(name).await.unwrap();
        seen.push(format!(
            "{name}: waiting {} awaiting {} dead {}",
            c.waiting, c.awaiting, c.dead
        ));
    }
    for id in [&flow.root, &flow.sub, &flow.dependent] {
        let job = queue.inspect(id).await.unwrap();
        seen.push(format!("{:?}", job.map(|j| j.state)));
        seen.push(format!("{:?}", shape(queue.gate(id).await.unwrap())));
    }
    // D's gate fired when S counted: its claim decides it.
    run_all(queue, "mail").await;
    let d = queue.inspect(&flow.dependent).await.unwrap();
    let error = d
        .as_ref()
        .and_then(|d| d.last_error.clone())
        .unwrap_or_default();
    seen.push(format!(
        "D after claim: {:?}, error names a deleted dependency: {}",
        d.map(|d| d.state),
        error.contains(&format!("{} deleted", flow.sub))
    ));
    seen.push(format!("thumbs ran {}", run_all(queue, "thumbs").await));
    for id in [&flow.root, &flow.sub] {
        seen.push(format!("{:?}", shape(queue.gate(id).await.unwrap())));
    }
    let c = queue.counts("archive").await.unwrap();
    seen.push(format!(
        "archive after: waiting {} awaiting {}",
        c.waiting, c.awaiting
    ));
    seen
}

#[tokio::test]
async fn deleting_all_awaiting_jobs_keeps_their_workflows_as_deleting_each_by_id_does() {
    let server = server();
    let bulk = queue(&server, "bulk-awaiting").await;
    let by_id = queue(&server, "byid-awaiting").await;
    let bulk_flow = build(&bulk).await;
    let by_id_flow = build(&by_id).await;
    assert_eq!(bulk.counts("archive").await.unwrap().awaiting, 2);

    let mut reports = Vec::new();
    let done = bulk
        .delete_all(
            "archive",
            JobState::Awaiting,
            IfLeased::Refuse,
            |done, left| reports.push((done, left)),
        )
        .await
        .unwrap();
    assert_eq!(done, 2);
    assert_eq!(reports.last(), Some(&(2, 0)));
    // By id, in the order the bulk form meets them (by id: S before R).
    for id in [&by_id_flow.sub, &by_id_flow.root] {
        by_id.delete_job(id, IfLeased::Refuse).await.unwrap();
    }

    let seen = observe(&bulk, &bulk_flow).await;
    assert_eq!(seen, observe(&by_id, &by_id_flow).await);
    // And what that is: the awaiting jobs gone, S counted deleted in R's
    // gate and in D's, D dead-lettered for it, C and T run to their gates'
    // end with no waiter left to release (R's and S's gates read their
    // deleted waiter as deleted).
    let expected = [
        "archive: waiting 0 awaiting 0 dead 0",
        "thumbs: waiting 2 awaiting 0 dead 0",
        "mail: waiting 0 awaiting 1 dead 0",
        "None",
        "Some(\"Sealed total 2 pending 1 succeeded 0 failed 1 first deleted waiters [\\\"Deleted\\\"]\")",
        "None",
        "Some(\"Sealed total 1 pending 1 succeeded 0 failed 0 first - waiters [\\\"Deleted\\\"]\")",
        "Some(Awaiting)",
        "Some(\"Done total 1 pending 0 succeeded 0 failed 1 first deleted waiters [\\\"Pending\\\"]\")",
        "D after claim: Some(Dead), error names a deleted dependency: true",
        "thumbs ran 2",
    ];
    assert_eq!(seen[..expected.len()], expected, "{seen:#?}");
    let last = &seen[expected.len()..];
    assert!(
        last[0].starts_with("Some(\"Done total 2 pending 0 succeeded 1 failed 1"),
        "{last:?}"
    );
    assert!(
        last[1].starts_with("Some(\"Done total 1 pending 0 succeeded 1 failed 0"),
        "{last:?}"
    );
    assert_eq!(last[2], "archive after: waiting 0 awaiting 0");
}
