//! Cancel in each state: the job leaves for good (no index, no record), its
//! dedup key is freed, its ordering key passes to the next job, and it is
//! kept as cancelled (with who and when) when the queue keeps finished jobs,
//! else it leaves a tombstone. A leased job's holder is refused with
//! `JobCancelled`; the lapsed lease does not bring the job back.

use std::time::Duration;

use redq::kept::{Outcome, Retention};
use redq::{CancelOutcome, JobResult, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use serde_json::json;

const LATER: Duration = Duration::from_secs(3600);

fn cancelled_from(outcome: CancelOutcome) -> JobState {
    match outcome {
        CancelOutcome::Cancelled { from, .. } => from,
        other => panic!("expected a cancel, got {other:?}"),
    }
}

/// The job is nowhere in the queue: no live record, in no count.
async fn assert_gone(queue: &RedisQueue, id: &str) {
    assert_eq!(queue.inspect(id).await.unwrap(), None, "{id} is still live");
    let c = queue.counts("q").await.unwrap();
    assert_eq!(
        (c.waiting, c.scheduled, c.leased, c.dead, c.blocked),
        (0, 0, 0, 0, 0),
        "{c:?}"
    );
}

#[tokio::test]
async fn a_waiting_job_cancelled_leaves_for_good_and_frees_its_dedup_key() {
    let server = server();
    let queue = queue(&server, "cancel-waiting").await;
    let job = queue
        .add("q", NewJob::new(json!(1)).dedup_key("once"))
        .await
        .unwrap();
    let outcome = queue.cancel(job.id(), "ops").await.unwrap();
    assert_eq!(cancelled_from(outcome), JobState::Waiting);
    assert_gone(&queue, job.id()).await;
    // No policy: a tombstone answers, and says cancelled.
    assert!(matches!(
        queue.result(job.id()).await.unwrap(),
        JobResult::Tombstone(t) if t.outcome == Outcome::Cancelled
    ));
    assert!(matches!(
        queue.cancel(job.id(), "ops").await.unwrap(),
        CancelOutcome::AlreadyCancelled { .. }
    ));
    // The dedup key is free: the same key creates a new job.
    let again = queue
        .add("q", NewJob::new(json!(2)).dedup_key("once"))
        .await
        .unwrap();
    assert!(matches!(again, redq::Enqueued::Created(_)), "{again:?}");
    assert!(queue
        .claim("q", 10, LONG)
        .await
        .unwrap()
        .iter()
        .all(|j| j.id == again.id()));
}

#[tokio::test]
async fn a_prioritised_and_a_fifo_job_leave_their_own_structure() {
    let server = server();
    let queue = queue(&server, "cancel-waiting-both").await;
    let fifo = queue.add("q", NewJob::new(json!("fifo"))).await.unwrap();
    let urgent = queue
        .add("q", NewJob::new(json!("urgent")).priority(5))
        .await
        .unwrap();
    let keep = queue.add("q", NewJob::new(json!("keep"))).await.unwrap();
    for id in [fifo.id(), urgent.id()] {
        assert_eq!(
            cancelled_from(queue.cancel(id, "").await.unwrap()),
            JobState::Waiting
        );
    }
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, keep.id());
}

#[tokio::test]
async fn a_scheduled_job_cancelled_never_comes_due() {
    let server = server();
    let queue = queue(&server, "cancel-scheduled").await;
    let job = queue
        .add("q", NewJob::new(json!(1)).delay(Duration::from_millis(50)))
        .await
        .unwrap();
    assert_eq!(
        cancelled_from(queue.cancel(job.id(), "").await.unwrap()),
        JobState::Scheduled
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_gone(&queue, job.id()).await;
}

#[tokio::test]
async fn cancelling_an_ordering_key_holder_passes_the_key_and_a_blocked_job_leaves_its_line() {
    let server = server();
    let queue = queue(&server, "cancel-ordering").await;
    let ids: Vec<String> = {
        let mut ids = Vec::new();
        for n in 0..3 {
            let job = NewJob::new(json!(n)).ordering_key("acct-1");
            ids.push(queue.add("q", job).await.unwrap().id().to_owned());
        }
        ids
    };
    assert_eq!(queue.counts("q").await.unwrap().blocked, 2);
    // The middle one is blocked behind the first.
    assert_eq!(
        cancelled_from(queue.cancel(&ids[1], "").await.unwrap()),
        JobState::Blocked
    );
    assert_eq!(queue.counts("q").await.unwrap().blocked, 1);
    // The holder (waiting) goes: the key passes to the third.
    assert_eq!(
        cancelled_from(queue.cancel(&ids[0], "").await.unwrap()),
        JobState::Waiting
    );
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, ids[2]);
    assert_eq!(queue.counts("q").await.unwrap().blocked, 0);
}

#[tokio::test]
async fn a_dead_job_cancelled_leaves_the_dead_set() {
    let server = server();
    let queue = queue(&server, "cancel-dead").await;
    let job = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue.dead_letter(&held.lease(), "poison").await.unwrap();
    assert_eq!(queue.counts("q").await.unwrap().dead, 1);
    assert_eq!(
        cancelled_from(queue.cancel(job.id(), "").await.unwrap()),
        JobState::Dead
    );
    assert_gone(&queue, job.id()).await;
}

#[tokio::test]
async fn a_leased_job_cancelled_refuses_its_holder_and_its_lapsed_lease_brings_nothing_back() {
    let server = server();
    let operator = queue(&server, "cancel-leased").await;
    let worker = handle(&server, operator.namespace()).await;
    operator
        .set_retention("q", &Retention::new().max_count(100))
        .await
        .unwrap();
    let job = operator
        .add("q", NewJob::new(json!(1)).name("t"))
        .await
        .unwrap();
    let held = worker.claim("q", 1, SHORT).await.unwrap().remove(0);
    assert_eq!(
        cancelled_from(operator.cancel(job.id(), "alice").await.unwrap()),
        JobState::Leased
    );
    let cancelled = |r: Result<_, QueueError>| {
        assert!(
            matches!(r, Err(QueueError::JobCancelled { ref id }) if id == job.id()),
            "{:?}",
            r.map(|_| ())
        )
    };
    let before = digest(&server).await;
    cancelled(worker.ack(&held.lease()).await.map(drop));
    cancelled(
        worker
            .nack(&held.lease(), Duration::ZERO, "late")
            .await
            .map(drop),
    );
    cancelled(worker.extend(&held.lease(), LONG).await.map(drop));
    assert_eq!(
        digest(&server).await,
        before,
        "a cancelled holder wrote something"
    );
    // Past the lease: a claim (which reclaims lapsed leases first) finds nothing.
    tokio::time::sleep(SHORT + Duration::from_millis(50)).await;
    assert!(worker.claim("q", 10, LONG).await.unwrap().is_empty());
    assert_eq!(worker.reclaim("q", 10).await.unwrap().requeued, 0);
    // Kept, with who and when and the state it was in.
    let JobResult::Kept(kept) = operator.result(job.id()).await.unwrap() else {
        panic!("not kept");
    };
    assert_eq!(kept.outcome, Outcome::Cancelled);
    assert_eq!(kept.cancelled_by.as_deref(), Some("alice"));
    assert_eq!(kept.cancelled_in.as_deref(), Some("leased"));
    assert_eq!(kept.name.as_deref(), Some("t"));
    let me = worker.identity();
    assert_eq!(kept.holder, Some((me.node, me.instance)));
    let counts = operator.counts("q").await.unwrap();
    assert_eq!((counts.cancelled, counts.leased), (1, 0));
    let listed = operator
        .list_jobs("q", JobState::Cancelled, 0, 10)
        .await
        .unwrap();
    assert_eq!(listed.total, 1);
    assert_eq!(listed.items[0].id, job.id());
}

#[tokio::test]
async fn an_unknown_id_is_not_found_and_a_completed_kept_job_is_already_completed() {
    let server = server();
    let queue = queue(&server, "cancel-finished").await;
    assert_eq!(
        queue.cancel("01NOSUCHJOB", "").await.unwrap(),
        CancelOutcome::NotFound
    );
    queue
        .set_retention("q", &Retention::new().max_count(10))
        .await
        .unwrap();
    let job = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let held = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue.ack(&held.lease()).await.unwrap();
    assert!(matches!(
        queue.cancel(job.id(), "").await.unwrap(),
        CancelOutcome::AlreadyCompleted { .. }
    ));
}

#[tokio::test]
async fn cancel_all_empties_one_state_in_batches_with_progress() {
    let server = server();
    let queue = queue(&server, "cancel-all").await;
    let jobs: Vec<NewJob> = (0..2500).map(|n| NewJob::new(json!(n))).collect();
    queue.add_batch("q", jobs).await.unwrap();
    let later = queue
        .add("q", NewJob::new(json!("later")).delay(LATER))
        .await
        .unwrap();
    let mut seen = Vec::new();
    let done = queue
        .cancel_all("q", JobState::Waiting, "bulk", |done, left| {
            seen.push((done, left))
        })
        .await
        .unwrap();
    assert_eq!(done, 2500);
    assert_eq!(seen, vec![(1000, 1500), (2000, 500), (2500, 0)]);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (0, 1));
    assert!(queue.inspect(later.id()).await.unwrap().is_some());
    assert!(matches!(
        queue
            .cancel_all("q", JobState::Blocked, "", |_, _| {})
            .await,
        Err(QueueError::Invalid { .. })
    ));
}
