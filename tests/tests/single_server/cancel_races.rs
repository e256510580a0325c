//! Cancel racing the holder: each side is one script, so Redis orders them
//! and the second sees the first's result. Two clients in a fixed order
//! (cancel first, then the holder's call; and the reverse), then a
//! concurrent loop where whichever wins, the job is either acknowledged
//! (completed) or cancelled, never both and never back in the queue.

use std::time::Duration;

use redq::kept::{Outcome, Retention};
use redq::{Acked, CancelOutcome, JobResult, JobState, NewJob, QueueError};
use redq_tests::fixtures::*;
use serde_json::json;

fn is_job_cancelled<T: std::fmt::Debug>(r: &Result<T, QueueError>) -> bool {
    matches!(r, Err(QueueError::JobCancelled { .. }))
}

#[tokio::test]
async fn cancel_then_ack_refuses_the_ack_and_ack_then_cancel_finds_it_completed() {
    let server = server();
    let operator = queue(&server, "race-cancel-ack").await;
    let worker = handle(&server, operator.namespace()).await;
    operator
        .set_retention("q", &Retention::new().max_count(100))
        .await
        .unwrap();
    operator.add("q", NewJob::new(json!(1))).await.unwrap();
    operator.add("q", NewJob::new(json!(2))).await.unwrap();
    let held = worker.claim("q", 2, LONG).await.unwrap();

    // Cancel first: the ack is refused, the job stays cancelled.
    operator.cancel(&held[0].id, "ops").await.unwrap();
    assert!(is_job_cancelled(&worker.ack(&held[0].lease()).await));
    assert_eq!(
        operator.result(&held[0].id).await.unwrap().outcome(),
        Some(Outcome::Cancelled)
    );

    // Ack first: the cancel finds it completed and changes nothing.
    assert_eq!(
        worker.ack(&held[1].lease()).await.unwrap(),
        Acked::Completed
    );
    let before = digest(&server).await;
    assert!(matches!(
        operator.cancel(&held[1].id, "ops").await.unwrap(),
        CancelOutcome::AlreadyCompleted { .. }
    ));
    assert_eq!(digest(&server).await, before);
    let counts = operator.counts("q").await.unwrap();
    assert_eq!((counts.completed, counts.cancelled), (1, 1));
}

#[tokio::test]
async fn cancel_then_reclaim_brings_nothing_back_and_reclaim_then_cancel_cancels_the_waiting_job() {
    let server = server();
    let operator = queue(&server, "race-cancel-reclaim").await;
    let worker = handle(&server, operator.namespace()).await;
    let first = operator.add("q", NewJob::new(json!(1))).await.unwrap();
    let second = operator.add("q", NewJob::new(json!(2))).await.unwrap();
    let held = worker.claim("q", 2, SHORT).await.unwrap();
    assert_eq!(held.len(), 2);

    // Cancel the first while its lease runs, then both leases lapse.
    operator.cancel(first.id(), "").await.unwrap();
    tokio::time::sleep(SHORT + Duration::from_millis(50)).await;
    let reclaimed = operator.reclaim("q", 10).await.unwrap();
    assert_eq!(reclaimed.requeued, 1, "only the second comes back");

    // The second was reclaimed (waiting again): cancel takes it from there.
    assert!(matches!(
        operator.cancel(second.id(), "").await.unwrap(),
        CancelOutcome::Cancelled {
            from: JobState::Waiting,
            ..
        }
    ));
    assert!(worker.claim("q", 10, LONG).await.unwrap().is_empty());
    // The stale holders are told it was cancelled, not that they lost it.
    for job in &held {
        assert!(is_job_cancelled(&worker.ack(&job.lease()).await));
    }
}

#[tokio::test]
async fn a_stale_holders_nack_after_a_cancel_is_refused_as_cancelled_and_writes_nothing() {
    let server = server();
    let operator = queue(&server, "race-cancel-nack").await;
    let stale = handle(&server, operator.namespace()).await;
    let current = handle(&server, operator.namespace()).await;
    let job = operator.add("q", NewJob::new(json!(1))).await.unwrap();
    let old = stale.claim("q", 1, SHORT).await.unwrap().remove(0);
    tokio::time::sleep(SHORT + Duration::from_millis(50)).await;
    // Reclaimed and leased again to another worker, then cancelled.
    let new = current.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(new.id, job.id());
    operator.cancel(job.id(), "").await.unwrap();
    let before = digest(&server).await;
    assert!(is_job_cancelled(
        &stale.nack(&old.lease(), Duration::ZERO, "late").await
    ));
    assert!(is_job_cancelled(
        &current.nack(&new.lease(), Duration::ZERO, "late").await
    ));
    assert_eq!(digest(&server).await, before);
    assert!(operator.claim("q", 10, LONG).await.unwrap().is_empty());
}

/// Both sides at full speed on many jobs: every job ends exactly one way,
/// as both sides were told, and nothing is left in the queue.
#[tokio::test]
async fn cancels_and_acks_at_full_speed_each_job_ends_one_way() {
    const JOBS: usize = 400;
    let server = server();
    let operator = queue(&server, "race-cancel-loop").await;
    let worker = handle(&server, operator.namespace()).await;
    operator
        .set_retention("q", &Retention::new().max_count(10_000))
        .await
        .unwrap();
    operator
        .add_batch("q", (0..JOBS).map(|n| NewJob::new(json!(n))).collect())
        .await
        .unwrap();
    let held = worker.claim("q", JOBS, LONG).await.unwrap();
    assert_eq!(held.len(), JOBS);
    let ids: Vec<String> = held.iter().map(|j| j.id.clone()).collect();
    let acks = async {
        let mut out = Vec::new();
        for job in &held {
            out.push(worker.ack(&job.lease()).await);
        }
        out
    };
    let cancels = async {
        let mut out = Vec::new();
        for id in ids.iter().rev() {
            out.push(operator.cancel(id, "loop").await.unwrap());
        }
        out.reverse();
        out
    };
    let (acks, cancels) = tokio::join!(acks, cancels);
    let (mut completed, mut cancelled) = (0, 0);
    for ((ack, cancel), id) in acks.iter().zip(&cancels).zip(&ids) {
        let result = operator.result(id).await.unwrap();
        match (ack, cancel) {
            (Ok(Acked::Completed), CancelOutcome::AlreadyCompleted { .. }) => {
                assert_eq!(result.outcome(), Some(Outcome::Completed), "{id}");
                completed += 1;
            }
            (Err(QueueError::JobCancelled { .. }), CancelOutcome::Cancelled { .. }) => {
                assert_eq!(result.outcome(), Some(Outcome::Cancelled), "{id}");
                cancelled += 1;
            }
            other => panic!("job {id} ended two ways or none: {other:?}"),
        }
        assert!(!matches!(result, JobResult::Live));
    }
    assert_eq!(completed + cancelled, JOBS);
    let counts = operator.counts("q").await.unwrap();
    assert_eq!(
        (
            counts.waiting,
            counts.leased,
            counts.completed,
            counts.cancelled
        ),
        (0, 0, completed as u64, cancelled as u64)
    );
}
