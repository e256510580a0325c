//! A push-back leaves a record, and a queue-wide limit's held-back jobs
//! are counted, on real Redis: each `release_pushing_back` is one
//! `pushed_back` event on the traffic stream naming the job, its limiter,
//! how long and until when, and the worker (a plain release writes none);
//! `limits()` counts the due jobs a queue-wide limit blocks (unkeyed ones
//! and those of keys with room of their own) and says why a key's jobs are
//! held.

use std::time::Duration;

use redq::events::{EventKind, EventStream, EVENTS_CAP};
use redq::flow::{Blocked, HeldBy, Limit, LimitScope};
use redq::NewJob;
use redq_tests::fixtures::*;
use serde_json::json;

#[tokio::test]
async fn each_push_back_is_a_pushed_back_event_on_the_traffic_stream() {
    let server = server();
    let queue = queue(&server, "flow-pushed-back").await;
    let keyed = queue
        .add("api", NewJob::new(json!(1)).name("call").limit_key("t1"))
        .await
        .unwrap();
    queue.add("api", NewJob::new(json!(2))).await.unwrap();
    let jobs = queue.claim("api", 2, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    for job in &jobs {
        queue
            .release_pushing_back(&job.lease(), Duration::from_millis(2500))
            .await
            .unwrap();
    }
    // A plain release (a shutdown) is not a push-back.
    let again = loop {
        let mut claimed = queue.claim("api", 1, LONG).await.unwrap();
        if let Some(job) = claimed.pop() {
            break job;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    queue.release(&again.lease()).await.unwrap();

    let pushed: Vec<_> = queue
        .operator()
        .latest_events(&[EventStream::Traffic], EVENTS_CAP)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| EventKind::of(&e.kind) == Some(EventKind::PushedBack))
        .collect();
    assert_eq!(pushed.len(), 2, "one event a push-back: {pushed:?}");
    let of_key = pushed
        .iter()
        .find(|e| e.job_id == keyed.id())
        .expect("the keyed job's push-back");
    assert_eq!(of_key.queue, "api");
    assert_eq!(of_key.name.as_deref(), Some("call"));
    let detail = of_key.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("key t1 for 2500 ms until ") && detail.contains(" UTC, worker "),
        "{detail}"
    );
    let unkeyed = pushed.iter().find(|e| e.job_id != keyed.id()).unwrap();
    assert!(
        unkeyed
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with("queue for 2500 ms")),
        "{unkeyed:?}"
    );
    let main = queue
        .operator()
        .latest_events(&[EventStream::Main], EVENTS_CAP)
        .await
        .unwrap();
    assert!(
        main.iter().all(|e| e.kind != "pushed_back"),
        "push-backs stay off the operator's stream"
    );
    let record = queue.inspect(keyed.id()).await.unwrap().unwrap();
    assert_eq!(record.attempts, 0, "a push-back still counts no attempt");
}

#[tokio::test]
async fn a_queue_wide_limit_counts_the_jobs_it_holds_back_and_a_key_says_so() {
    let server = server();
    let queue = queue(&server, "flow-held-by-queue").await;
    for n in 0..20 {
        queue.add("api", NewJob::new(json!(n))).await.unwrap();
        queue
            .add("api", NewJob::new(json!(n)).limit_key("t1"))
            .await
            .unwrap();
    }
    queue
        .set_limit(
            "api",
            LimitScope::Queue,
            Limit::rate(2, Duration::from_secs(10)),
        )
        .await
        .unwrap();
    assert_eq!(queue.claim("api", 10, LONG).await.unwrap().len(), 2);
    let limits = queue.limits("api").await.unwrap();
    assert_eq!(limits.held_by_queue, 38, "{limits:?}");
    assert_eq!(
        limits.queue_blocked(),
        Some(Blocked::Rate { started: 2, of: 2 })
    );
    let t1 = &limits.keys[0];
    assert_eq!(
        limits.why_key_held(t1),
        Some(HeldBy::Queue(Blocked::Rate { started: 2, of: 2 }))
    );
    // The same key read alone, as a held job's detail reads it.
    let one = queue.limits_of_key("api", "t1").await.unwrap();
    assert_eq!(one.keys.len(), 1);
    assert_eq!(one.why(one.keys.first()), limits.why(Some(t1)));

    // A raised limit lets them start: nothing is held back by it then.
    queue
        .set_limit("api", LimitScope::Queue, Limit::concurrency(100))
        .await
        .unwrap();
    let limits = queue.limits("api").await.unwrap();
    assert_eq!(limits.held_by_queue, 0, "{limits:?}");
    assert_eq!(limits.why(Some(&limits.keys[0])), HeldBy::NoWorker);
}
