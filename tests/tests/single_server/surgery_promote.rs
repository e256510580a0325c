//! Promote and retry now (`lua/promote_job.lua`): a scheduled job becomes
//! due now in its place by priority and seq; every other state is refused
//! and nothing is written; ordering keys and paused queues are respected.

use std::time::{Duration, SystemTime};

use redq::{JobState, NewJob, QueueError, RedisQueue, RetriedNow};
use redq_tests::fixtures::*;
use serde_json::json;

const LATER: Duration = Duration::from_secs(3600);

fn job(n: i64) -> NewJob {
    NewJob::new(json!({ "n": n }))
}

/// Assert `result` is the refusal of `change` for job `id`, naming `state`.
#[track_caller]
pub fn assert_refused<T: std::fmt::Debug>(
    result: Result<T, QueueError>,
    id: &str,
    change: &str,
    state: &str,
) {
    match result {
        Err(QueueError::WrongState {
            id: got,
            change: got_change,
            state: got_state,
            accepted,
        }) => {
            assert_eq!((got.as_str(), got_change), (id, change));
            assert!(
                got_state.starts_with(state),
                "state {got_state:?}, expected {state}"
            );
            assert!(!accepted.is_empty());
        }
        other => panic!("expected {change} of {id} refused as {state}, got {other:?}"),
    }
}

/// A job that failed once and backs off for an hour.
pub async fn backing_off(queue: &RedisQueue, name: &str, n: i64) -> String {
    let id = queue.add(name, job(n)).await.unwrap().id().to_owned();
    let claimed = claim_n(queue, name, 1).await;
    queue
        .nack(&claimed[0].lease(), LATER, "boom")
        .await
        .unwrap();
    id
}

#[tokio::test]
async fn a_promoted_job_is_claimed_where_a_due_job_of_its_priority_and_seq_would_be() {
    let server = server();
    let queue = queue(&server, "promote-place").await;
    queue.add("q", job(0)).await.unwrap();
    let delayed = queue
        .add("q", job(1).priority(5).delay(LATER))
        .await
        .unwrap();
    queue.add("q", job(2).priority(5)).await.unwrap();

    let before = SystemTime::now() - Duration::from_secs(1);
    queue.promote(delayed.id()).await.unwrap();
    let record = queue.inspect(delayed.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Waiting);
    assert!(record
        .due_at
        .is_none_or(|due| due >= before && due < before + LATER / 2));
    assert_eq!(queue.counts("q").await.unwrap().scheduled, 0);

    // Priority 5 first, and within it enqueue order: the promoted job's
    // seq is older than job 2's.
    assert_eq!(numbers(&claim_n(&queue, "q", 3).await), vec![1, 2, 0]);
}

#[tokio::test]
async fn promote_refuses_every_other_state_and_writes_nothing() {
    let server = server();
    let queue = queue(&server, "promote-refusals").await;
    let waiting = queue.add("q", job(0)).await.unwrap().id().to_owned();
    let holder = queue
        .add("k", job(1).ordering_key("key"))
        .await
        .unwrap()
        .id()
        .to_owned();
    let blocked = queue
        .add("k", job(2).ordering_key("key"))
        .await
        .unwrap()
        .id()
        .to_owned();
    let leased = claim_n(&queue, "k", 1).await.remove(0);
    assert_eq!(leased.id, holder);
    queue.add("d", job(3)).await.unwrap();
    let dead = claim_n(&queue, "d", 1).await.remove(0);
    queue.dead_letter(&dead.lease(), "poison").await.unwrap();

    let before = digest(&server).await;
    assert_refused(
        queue.promote(&waiting).await,
        &waiting,
        "promote",
        "waiting",
    );
    assert_refused(queue.promote(&holder).await, &holder, "promote", "leased");
    assert_refused(
        queue.promote(&blocked).await,
        &blocked,
        "promote",
        "blocked",
    );
    assert_refused(queue.promote(&dead.id).await, &dead.id, "promote", "dead");
    assert!(matches!(
        queue.promote("01NOSUCHJOB").await,
        Err(QueueError::JobNotFound { id }) if id == "01NOSUCHJOB"
    ));
    assert_invalid(queue.promote("").await, "job id");
    assert_eq!(
        digest(&server).await,
        before,
        "a refused promote wrote something"
    );
}

#[tokio::test]
async fn a_promoted_job_keeps_its_ordering_key_ahead_of_the_jobs_behind_it() {
    let server = server();
    let queue = queue(&server, "promote-ordering").await;
    // A delayed job takes its key when enqueued; the next job with the key
    // waits behind it even though it is due now.
    let first = queue
        .add("q", job(0).ordering_key("acct").delay(LATER))
        .await
        .unwrap();
    queue.add("q", job(1).ordering_key("acct")).await.unwrap();
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());

    queue.promote(first.id()).await.unwrap();
    let claimed = claim_n(&queue, "q", 1).await;
    assert_eq!(numbers(&claimed), vec![0]);
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    queue.ack(&claimed[0].lease()).await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![1]);
}

#[tokio::test]
async fn a_job_promoted_in_a_paused_queue_waits_until_the_queue_resumes() {
    let server = server();
    let queue = queue(&server, "promote-paused").await;
    let delayed = queue.add("q", job(0).delay(LATER)).await.unwrap();
    queue.pause("q").await.unwrap();
    queue.promote(delayed.id()).await.unwrap();
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(
        (counts.waiting, counts.scheduled, counts.paused),
        (1, 0, true)
    );
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
    queue.resume("q").await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![0]);
}

#[tokio::test]
async fn retry_now_runs_a_backing_off_job_at_once_with_its_attempts_kept() {
    let server = server();
    let queue = queue(&server, "retry-now").await;
    let id = backing_off(&queue, "q", 7).await;
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());

    assert_eq!(queue.retry_now(&id).await.unwrap(), RetriedNow::Promoted);
    let again = claim_n(&queue, "q", 1).await;
    assert_eq!((again[0].id.as_str(), again[0].attempts), (id.as_str(), 1));
}

#[tokio::test]
async fn retry_now_refuses_a_delayed_job_that_never_failed_and_writes_nothing() {
    let server = server();
    let queue = queue(&server, "retry-delayed").await;
    let delayed = queue.add("q", job(0).delay(LATER)).await.unwrap();
    let waiting = queue.add("q", job(1)).await.unwrap();
    let before = digest(&server).await;
    assert_refused(
        queue.retry_now(delayed.id()).await,
        delayed.id(),
        "retry now",
        "scheduled but has not failed",
    );
    assert_refused(
        queue.retry_now(waiting.id()).await,
        waiting.id(),
        "retry now",
        "waiting",
    );
    assert_eq!(digest(&server).await, before);
    // Promote is the call for it.
    queue.promote(delayed.id()).await.unwrap();
}

#[tokio::test]
async fn retry_now_of_a_dead_job_requeues_it_with_attempts_reset() {
    let server = server();
    let queue = queue(&server, "retry-dead").await;
    queue.add("q", job(0).max_attempts(1)).await.unwrap();
    let claimed = claim_n(&queue, "q", 1).await.remove(0);
    queue
        .nack(&claimed.lease(), Duration::ZERO, "spent")
        .await
        .unwrap();
    assert_eq!(queue.counts("q").await.unwrap().dead, 1);

    assert_eq!(
        queue.retry_now(&claimed.id).await.unwrap(),
        RetriedNow::Requeued
    );
    let again = claim_n(&queue, "q", 1).await;
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (claimed.id.as_str(), 0)
    );
}
