//! What promote, retry now and edit say about held and awaiting jobs, and
//! the count of jobs backing off that `redq jobs retry --queue` asks with:
//! a held job (due, held back by its limit key's limits) and an awaiting
//! one (waiting on its batch, dependencies or tree) are named as what they
//! are, not as waiting or blocked; both can be edited; the count is of the
//! jobs backing off only, and writes nothing.

use std::time::Duration;

use redq::flow::{Limit, LimitScope};
use redq::surgery::SURGERY_BATCH;
use redq::{JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use serde_json::json;

const LATER: Duration = Duration::from_secs(3600);

/// A queue `mail` with one key of concurrency 1: the first `acme` job
/// leased, the second held. Its id.
async fn held_job(queue: &RedisQueue) -> String {
    queue
        .set_limit("mail", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    for n in 0..2 {
        queue
            .add("mail", NewJob::new(json!({ "n": n })).limit_key("acme"))
            .await
            .unwrap();
    }
    queue.claim("mail", 10, LATER).await.unwrap();
    let page = queue
        .list_jobs("mail", JobState::Held, 0, 10)
        .await
        .unwrap();
    page.items[0].id.clone()
}

/// A job of `orders` that depends on one not yet run. Its id.
async fn awaiting_job(queue: &RedisQueue) -> String {
    let first = queue.add("charges", NewJob::new(json!(1))).await.unwrap();
    let then = queue
        .add("orders", NewJob::new(json!(2)).after([first.id()]))
        .await
        .unwrap();
    let state = queue.inspect(then.id()).await.unwrap().unwrap().state;
    assert_eq!(state, JobState::Awaiting);
    then.id().to_owned()
}

/// The refusal's text, which must be a wrong-state refusal.
fn refusal<T: std::fmt::Debug>(result: Result<T, QueueError>) -> String {
    match result {
        Err(e @ QueueError::WrongState { .. }) => e.to_string(),
        other => panic!("expected a wrong-state refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn promote_and_retry_now_name_a_held_job_held_and_an_awaiting_one_awaiting() {
    let server = server();
    let queue = queue(&server, "refusal-words").await;
    let held = held_job(&queue).await;
    let awaiting = awaiting_job(&queue).await;
    let before = digest(&server).await;

    for said in [
        refusal(queue.promote(&held).await),
        refusal(queue.retry_now(&held).await),
    ] {
        assert!(said.contains("it is held back by its limit key"), "{said}");
        // And where to look.
        assert!(said.contains("redq limits show"), "{said}");
        assert!(!said.contains("waiting"), "{said}");
    }
    for said in [
        refusal(queue.promote(&awaiting).await),
        refusal(queue.retry_now(&awaiting).await),
    ] {
        assert!(
            said.contains("it is awaiting its batch, dependencies or tree"),
            "{said}"
        );
        assert!(!said.contains("ordering key"), "{said}");
        assert!(said.contains("redq deps show"), "{said}");
    }
    assert_eq!(
        digest(&server).await,
        before,
        "a refused promote wrote something"
    );
}

#[tokio::test]
async fn a_held_or_awaiting_job_is_edited_and_the_leased_refusal_says_so() {
    let server = server();
    let queue = queue(&server, "edit-words").await;
    let held = held_job(&queue).await;
    let awaiting = awaiting_job(&queue).await;

    let edited = queue.edit_payload(&held, &json!({ "h": 3 })).await.unwrap();
    assert_eq!(edited, JobState::Held);
    let edited = queue.edit_payload(&awaiting, &json!("a")).await.unwrap();
    assert_eq!(edited, JobState::Awaiting);
    let payload = |id: String| {
        let queue = queue.clone();
        async move { queue.inspect(&id).await.unwrap().unwrap().payload }
    };
    assert_eq!(payload(held).await, json!({ "h": 3 }));
    assert_eq!(payload(awaiting).await, json!("a"));

    // The refusal of a running job names every state that is accepted.
    let leased = queue
        .list_jobs("mail", JobState::Leased, 0, 1)
        .await
        .unwrap()
        .items
        .remove(0);
    let said = refusal(queue.edit_payload(&leased.id, &json!(0)).await);
    for state in [
        "waiting",
        "scheduled",
        "held",
        "blocked",
        "awaiting",
        "dead",
    ] {
        assert!(said.contains(state), "{state} missing from: {said}");
    }
}

#[tokio::test]
async fn backing_off_counts_only_the_jobs_that_failed_past_a_batch_and_writes_nothing() {
    let server = server();
    let queue = queue(&server, "count-backing-off").await;
    assert_eq!(queue.backing_off("q").await.unwrap(), 0);
    queue
        .add_batch("q", (0..3).map(|n| NewJob::new(json!(n))).collect())
        .await
        .unwrap();
    for job in queue.claim("q", 3, LATER).await.unwrap() {
        // After the delayed ones in the schedule: the count walks past a
        // whole batch of them.
        queue.nack(&job.lease(), 2 * LATER, "boom").await.unwrap();
    }
    let delayed = SURGERY_BATCH + 2;
    queue
        .add_batch(
            "q",
            (0..delayed)
                .map(|n| NewJob::new(json!(n)).delay(LATER))
                .collect(),
        )
        .await
        .unwrap();
    let before = digest(&server).await;
    assert_eq!(queue.backing_off("q").await.unwrap(), 3);
    assert_eq!(digest(&server).await, before, "a count wrote something");
    assert_eq!(
        queue.counts("q").await.unwrap().scheduled,
        (delayed + 3) as u64
    );
}
