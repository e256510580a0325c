//! Redis at `maxmemory` with `noeviction`: enqueue fails with a typed error
//! and writes nothing, while claim, ack and dead-lettering keep draining.

use std::time::Duration;

use redq::{Acked, Nacked, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::memory::{cap_memory, capped_server, fill_until_out_of_memory, hold_out_of_memory};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

/// A server whose memory limit is `headroom` bytes above what it uses now,
/// and a queue handle on it.
async fn full_server(headroom: u64) -> (RedisServer, RedisQueue) {
    let server = capped_server();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("oom"))
        .connect()
        .await
        .unwrap();
    cap_memory(&server, headroom).await;
    (server, queue)
}

/// Panics unless Redis is out of memory right now: a plain SET of a new
/// key, which any write that grows memory resembles, is refused with OOM.
async fn assert_full(server: &RedisServer, when: &str) {
    let probe = server.try_cmd(&["SET", "oom-probe", "x"]).await;
    match probe {
        Err(e) if e.details().starts_with("OOM") => {}
        other => panic!("Redis is not out of memory {when}: SET answered {other:?}"),
    }
}

/// Enqueue big jobs until Redis refuses; returns how many were created.
async fn fill(queue: &RedisQueue) -> usize {
    fill_until_out_of_memory(queue, "q").await
}

#[tokio::test]
async fn enqueue_fails_with_out_of_memory_and_writes_nothing() {
    let (server, queue) = full_server(3 << 20).await;
    let created = fill(&queue).await;
    assert!(created > 5, "only {created} jobs fit");

    // No half-written job: every stored job has its payload and its place.
    let counts = queue.counts("q").await.unwrap();
    assert_eq!(counts.waiting, created as u64);
    assert_eq!(hlen(&server, &queue, "jobs").await, created as i64);
    assert_eq!(stored_payloads(&server, &queue).await, created as i64);

    // Nothing at all is written by refused enqueues, single or batch.
    let before = digest(&server).await;
    let err = queue
        .add("q", NewJob::new(json!("tiny")))
        .await
        .unwrap_err();
    assert!(matches!(err, QueueError::OutOfMemory), "{err:?}");
    assert!(err.to_string().contains("out of memory"), "{err}");
    let batch = vec![NewJob::new(json!(1)), NewJob::new(json!(2)).dedup_key("d")];
    assert!(matches!(
        queue.add_batch("new-queue", batch).await,
        Err(QueueError::OutOfMemory)
    ));
    assert!(matches!(
        redq::Queue::enqueue(&queue, "q", vec![json!(1)]).await,
        Err(QueueError::OutOfMemory)
    ));
    assert_eq!(digest(&server).await, before);
    assert!(!queue.queues().await.unwrap().contains(&"new-queue".into()));
}

#[tokio::test]
async fn claim_ack_nack_and_dead_lettering_keep_draining_while_out_of_memory() {
    let (server, queue) = full_server(3 << 20).await;
    let created = fill(&queue).await;
    assert!(created >= 4);
    // Full by a margin no single call below frees (an ack frees one 64 KiB
    // job), so each of them runs, and is checked to run, against a full Redis.
    hold_out_of_memory(&server, 1 << 20).await;

    assert_full(&server, "before the claim").await;
    let jobs = queue.claim("q", 4, LONG).await.unwrap();
    assert_eq!(jobs.len(), 4);
    assert_full(&server, "before the ack").await;
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    assert_full(&server, "before the nack").await;
    assert!(matches!(
        queue
            .nack(&jobs[1].lease(), Duration::ZERO, "retry")
            .await
            .unwrap(),
        Nacked::Retrying { .. }
    ));
    assert_full(&server, "before the dead letter").await;
    assert_eq!(
        queue.dead_letter(&jobs[2].lease(), "poison").await.unwrap(),
        Nacked::DeadLettered { attempts: 1 }
    );
    assert_full(&server, "before the extend").await;
    queue.extend(&jobs[3].lease(), LONG).await.unwrap();
    assert_full(&server, "before the release").await;
    queue.release(&jobs[3].lease()).await.unwrap();
    let events = queue
        .events(10)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .collect::<Vec<_>>();
    assert_eq!(events.len(), 1, "the dead letter was announced");

    // A lapsed lease is reclaimed and dead-lettered too.
    assert_full(&server, "before the short claim").await;
    let short = queue.claim("q", 1, SHORT).await.unwrap();
    assert_eq!(short.len(), 1);
    wait_until(DEADLINE, "the lease to lapse", async || {
        queue.counts("q").await.unwrap().lapsed == 1
    })
    .await;
    assert_full(&server, "before the reclaim").await;
    assert_eq!(queue.reclaim("q", 10).await.unwrap().requeued, 1);
    assert_full(&server, "after the reclaim").await;

    // Drain everything: the acks free memory as they go.
    let mut drained = 1;
    loop {
        let jobs = queue.claim("q", 10, LONG).await.unwrap();
        if jobs.is_empty() {
            break;
        }
        for job in jobs {
            queue.ack(&job.lease()).await.unwrap();
            drained += 1;
        }
    }
    assert_eq!(drained, created - 1, "all but the dead letter completed");
    assert_eq!(queue.purge_dead("q", |_, _| {}).await.unwrap(), 1);
    assert_eq!(hlen(&server, &queue, "jobs").await, 0);
    assert_eq!(stored_payloads(&server, &queue).await, 0);

    // With the memory freed, enqueueing works again.
    queue.add("q", NewJob::new(json!("fits"))).await.unwrap();
}

#[tokio::test]
async fn requeueing_dead_letters_works_while_out_of_memory() {
    let (server, queue) = full_server(3 << 20).await;
    let created = fill(&queue).await;
    hold_out_of_memory(&server, 1 << 20).await;
    let jobs = queue.claim("q", 2, LONG).await.unwrap();
    for job in &jobs {
        queue.dead_letter(&job.lease(), "x").await.unwrap();
    }
    assert!(matches!(
        queue.add("q", NewJob::new(json!(0))).await,
        Err(QueueError::OutOfMemory)
    ));
    assert_full(&server, "before the requeue").await;
    assert_eq!(queue.requeue_all_dead("q", |_, _| {}).await.unwrap(), 2);
    assert_full(&server, "after the requeue").await;
    assert_eq!(queue.counts("q").await.unwrap().waiting, created as u64);
}

/// Pausing is what an operator reaches for in an incident, and a full Redis
/// is one: pause and resume both work at maxmemory with noeviction.
#[tokio::test]
async fn pause_and_resume_work_while_out_of_memory() {
    let (server, queue) = full_server(3 << 20).await;
    queue.pause("held").await.unwrap();
    let created = fill(&queue).await;
    assert!(created > 1);
    hold_out_of_memory(&server, 1 << 20).await;
    let still_full = || async {
        matches!(
            queue.add("q", NewJob::new(json!("tiny"))).await,
            Err(QueueError::OutOfMemory)
        )
    };
    assert!(still_full().await, "Redis must be out of memory here");

    queue.pause("q").await.unwrap();
    assert!(queue.counts("q").await.unwrap().paused);
    assert!(queue.claim("q", 1, LONG).await.unwrap().is_empty());
    // Pausing again is harmless.
    queue.pause("q").await.unwrap();
    assert!(still_full().await, "the pause did not free memory");

    queue.resume("q").await.unwrap();
    assert!(!queue.counts("q").await.unwrap().paused);
    assert_eq!(queue.claim("q", 1, LONG).await.unwrap().len(), 1);
    assert!(queue.counts("held").await.unwrap().paused);
    queue.resume("held").await.unwrap();
    assert!(!queue.counts("held").await.unwrap().paused);
    assert!(still_full().await);

    // Each change is an event, the resumes too: written with the change,
    // out of memory as well, so the events never leave a running queue
    // reading as paused.
    let mut changes: Vec<(String, String)> = queue
        .events(50)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "paused" || e.kind == "resumed")
        .map(|e| (e.kind, e.queue))
        .collect();
    changes.reverse();
    let expected = [
        ("paused", "held"),
        ("paused", "q"),
        ("resumed", "q"),
        ("resumed", "held"),
    ]
    .map(|(kind, queue)| (kind.to_owned(), queue.to_owned()));
    assert_eq!(changes, expected);
}
