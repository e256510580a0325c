//! Edit (`lua/edit_job.lua`): the payload of a job that is not running is
//! replaced, validated as on enqueue; a leased job is refused and keeps it.

use std::time::Duration;

use redq::{JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use serde_json::json;

use super::surgery_promote::{assert_refused, backing_off};

const LATER: Duration = Duration::from_secs(3600);

fn job(n: i64) -> NewJob {
    NewJob::new(json!({ "n": n }))
}

async fn payload_of(queue: &RedisQueue, id: &str) -> serde_json::Value {
    queue.inspect(id).await.unwrap().unwrap().payload
}

#[tokio::test]
async fn the_payload_of_a_waiting_scheduled_blocked_or_dead_job_is_replaced() {
    let server = server();
    let queue = queue(&server, "edit-states").await;
    let waiting = queue.add("q", job(0)).await.unwrap().id().to_owned();
    let scheduled = queue
        .add("q", job(1).delay(LATER))
        .await
        .unwrap()
        .id()
        .to_owned();
    let retrying = backing_off(&queue, "r", 2).await;
    queue.add("k", job(3).ordering_key("key")).await.unwrap();
    let blocked = queue
        .add("k", job(4).ordering_key("key"))
        .await
        .unwrap()
        .id()
        .to_owned();
    queue.add("d", job(5)).await.unwrap();
    let dead = claim_n(&queue, "d", 1).await.remove(0);
    queue.dead_letter(&dead.lease(), "poison").await.unwrap();

    let cases = [
        (&waiting, JobState::Waiting),
        (&scheduled, JobState::Scheduled),
        (&retrying, JobState::Scheduled),
        (&blocked, JobState::Blocked),
        (&dead.id, JobState::Dead),
    ];
    for (id, state) in cases {
        let edited = json!({ "edited": id });
        assert_eq!(queue.edit_payload(id, &edited).await.unwrap(), state);
        let record = queue.inspect(id).await.unwrap().unwrap();
        assert_eq!((record.state, record.payload), (state, edited));
    }
    // The record's other fields are as they were: the retry keeps its
    // attempt, and the waiting job is claimed with the new payload.
    assert_eq!(queue.inspect(&retrying).await.unwrap().unwrap().attempts, 1);
    let claimed = claim_n(&queue, "q", 1).await;
    assert_eq!(claimed[0].payload, json!({ "edited": waiting }));
}

#[tokio::test]
async fn an_edit_is_refused_for_a_leased_job_or_a_payload_enqueue_would_refuse() {
    let server = server();
    let queue = RedisQueue::builder(&server.url())
        .namespace(redq_tests::unique_namespace("edit-refusals"))
        .payload_limit(64)
        .connect()
        .await
        .unwrap();
    queue.add("q", job(0)).await.unwrap();
    let held = claim_n(&queue, "q", 1).await.remove(0);
    let waiting = queue.add("q", job(1)).await.unwrap().id().to_owned();

    let before = digest(&server).await;
    assert_refused(
        queue.edit_payload(&held.id, &json!(2)).await,
        &held.id,
        "edit",
        "leased",
    );
    let large = json!({ "text": "x".repeat(100) });
    assert!(matches!(
        queue.edit_payload(&waiting, &large).await,
        Err(QueueError::PayloadTooLarge { limit: 64, .. })
    ));
    // The enqueue check refuses the same payload the same way.
    assert!(matches!(
        queue.add("q", NewJob::new(large)).await,
        Err(QueueError::PayloadTooLarge { limit: 64, .. })
    ));
    let mut deep = json!(0);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    assert_invalid(queue.edit_payload(&waiting, &deep).await, "payload");
    assert!(matches!(
        queue.edit_payload("01NOSUCHJOB", &json!(1)).await,
        Err(QueueError::JobNotFound { .. })
    ));
    assert_eq!(
        digest(&server).await,
        before,
        "a refused edit wrote something"
    );
    assert_eq!(payload_of(&queue, &held.id).await, json!({ "n": 0 }));
}
