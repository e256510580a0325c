//! Jobs that schedules and workflows create, in a namespace of detached
//! records (`driver/src/record_format.rs`): a schedule's tick, an
//! operator's trigger and a gate's waiter are stored as an enqueue stores
//! a job, detached when their payload is the marker's size or more, whole
//! below it; they run with their payloads, and leave nothing behind.

use std::time::Duration;

use redq::schedule::{Schedule, Scheduler, Triggered};
use redq::workflow::Batch;
use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{wait_until, RedisServer};
use serde_json::{json, Value};

use super::compact_records::STANDARD;
use super::detached_records::{
    detached_count, detached_payload, detached_queue, payload, DETACHED, FROM,
};
use super::lean_record::stored;

/// Asserts job `id` is stored detached with `sent` apart, or whole.
async fn assert_stored(
    server: &RedisServer,
    queue: &RedisQueue,
    id: &str,
    sent: &Value,
    detached: bool,
) {
    let first = stored(server, queue, id).await[0];
    if detached {
        assert_eq!(first, DETACHED, "{id}: stored detached");
        assert_eq!(
            detached_payload(server, queue, id).await.as_ref(),
            Some(sent),
            "{id}"
        );
    } else {
        assert_eq!(first, STANDARD, "{id}: stored whole");
        assert_eq!(detached_payload(server, queue, id).await, None, "{id}");
    }
}

#[tokio::test]
async fn a_schedules_ticks_and_triggers_detach_a_large_payload_and_keep_a_small_one_whole() {
    let server = server();
    let queue = detached_queue(&server, "detached-schedules").await;
    let large = payload("large", FROM as usize);
    let small = payload("small", 1);
    for (name, sent) in [("large", &large), ("small", &small)] {
        queue
            .upsert_schedule(Schedule::new(name, "ticks", "* * * * * *").payload(sent.clone()))
            .await
            .unwrap();
    }
    // One pass of a scheduler fires what is due: each schedule's first
    // tick comes within a second.
    let scheduler = Scheduler::new(queue.clone());
    wait_until(
        Duration::from_secs(10),
        "a tick of each schedule",
        async || {
            scheduler.run_once().await.unwrap();
            queue.counts("ticks").await.unwrap().waiting >= 2
        },
    )
    .await;
    let mut sent_by_id = Vec::new();
    for (name, sent) in [("large", &large), ("small", &small)] {
        let fired = queue.schedule(name).await.unwrap().unwrap();
        let id = fired.last_job_id.expect("the tick's job");
        sent_by_id.push((id, sent.clone()));
        let Triggered::Enqueued(id) = queue.trigger_schedule(name).await.unwrap() else {
            panic!("trigger of {name}");
        };
        sent_by_id.push((id, sent.clone()));
    }
    for (id, sent) in &sent_by_id {
        assert_stored(&server, &queue, id, sent, sent == &large).await;
    }
    // Stop the ticks before counting what is left.
    for name in ["large", "small"] {
        queue.delete_schedule(name).await.unwrap();
    }

    let claimed = queue.claim("ticks", 100, LONG).await.unwrap();
    for (id, sent) in &sent_by_id {
        let job = claimed.iter().find(|j| &j.id == id).expect("claimed");
        assert_eq!(&job.payload, sent, "{id} claimed with its payload");
    }
    for job in &claimed {
        queue.ack(&job.lease()).await.unwrap();
    }
    assert_eq!(
        detached_count(&server, &queue).await,
        0,
        "acked, no payload left"
    );
}

#[tokio::test]
async fn a_gates_waiters_detach_a_large_payload_and_a_cancelled_one_leaves_none() {
    let server = server();
    let queue = detached_queue(&server, "detached-waiters").await;
    let complete = payload("complete", FROM as usize);
    let success = payload("success", FROM as usize);
    let batch = Batch::new()
        .jobs("pages", vec![NewJob::new(json!({"page": 1}))])
        .on_complete("done", NewJob::new(complete.clone()))
        .on_success("done", NewJob::new(success.clone()));
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let [complete_id, success_id] = <[String; 2]>::try_from(
        handle
            .callbacks
            .iter()
            .map(|c| c.id().to_owned())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert_stored(&server, &queue, &complete_id, &complete, true).await;
    assert_stored(&server, &queue, &success_id, &success, true).await;
    let awaiting = queue.inspect(&complete_id).await.unwrap().unwrap();
    assert_eq!(
        (awaiting.state, &awaiting.payload),
        (JobState::Awaiting, &complete)
    );

    // The page dies: on_complete runs with its payload, on_success is
    // cancelled and its payload deleted with it.
    let page = queue.claim("pages", 1, LONG).await.unwrap().remove(0);
    queue
        .dead_letter(&page.lease(), "page on fire")
        .await
        .unwrap();
    let mut ran = Vec::new();
    wait_until(
        Duration::from_secs(10),
        "on_complete to be released",
        async || {
            ran.extend(queue.claim("done", 10, LONG).await.unwrap());
            !ran.is_empty()
        },
    )
    .await;
    assert_eq!(ran.len(), 1, "on_complete alone");
    assert_eq!(
        (ran[0].id.as_str(), &ran[0].payload),
        (complete_id.as_str(), &complete)
    );
    assert_eq!(
        queue.inspect(&success_id).await.unwrap(),
        None,
        "on_success cancelled"
    );
    queue.ack(&ran[0].lease()).await.unwrap();
    assert_eq!(detached_count(&server, &queue).await, 0, "no payload left");
}
