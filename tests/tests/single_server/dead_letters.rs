//! The dead-letter set: listing, inspecting, requeueing, deleting, purging,
//! and the events feed.

use std::time::{Duration, SystemTime};

use redq::{DeadLetterReport, JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::wait_until;
use serde_json::json;

/// Enqueue `n` jobs and dead-letter them one by one, oldest first, each in
/// its own millisecond so "newest first" is well defined. Returns their ids
/// in the order they died.
async fn kill_jobs(queue: &RedisQueue, name: &str, n: usize) -> Vec<String> {
    queue.add_batch(name, numbered(n)).await.unwrap();
    let jobs = claim_n(queue, name, n).await;
    let mut ids = Vec::new();
    for job in jobs {
        queue
            .dead_letter(&job.lease(), &format!("error {}", job.payload["n"]))
            .await
            .unwrap();
        // The script read Redis's clock (this machine's) before it replied:
        // 2 ms past the reply, the next one reads a later millisecond, however
        // long the call took under load.
        let replied = SystemTime::now();
        ids.push(job.id.clone());
        wait_until(DEADLINE, "the clock to move on", async || {
            SystemTime::now() > replied + Duration::from_millis(2)
        })
        .await;
    }
    ids
}

/// Many dead letters quickly (no ordering needed).
async fn kill_many(queue: &RedisQueue, name: &str, n: usize) -> Vec<String> {
    queue.add_batch(name, numbered(n)).await.unwrap();
    let mut ids = Vec::new();
    loop {
        let jobs = queue.claim(name, 1000, LONG).await.unwrap();
        if jobs.is_empty() {
            break;
        }
        let kills = jobs.iter().map(|job| {
            let lease = job.lease();
            async move { queue.dead_letter(&lease, "bulk").await }
        });
        futures::future::try_join_all(kills).await.unwrap();
        ids.extend(jobs.into_iter().map(|j| j.id));
    }
    assert_eq!(ids.len(), n);
    ids
}

#[tokio::test]
async fn dead_letters_are_listed_newest_first_in_pages() {
    let server = server();
    let queue = queue(&server, "dead-list").await;
    let ids = kill_jobs(&queue, "q", 5).await;
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();

    let page1 = queue.dead_letters("q", 0, 2).await.unwrap();
    let page2 = queue.dead_letters("q", 2, 2).await.unwrap();
    let page3 = queue.dead_letters("q", 4, 2).await.unwrap();
    let past = queue.dead_letters("q", 10, 2).await.unwrap();
    assert_eq!((page1.total, page2.total, page3.total), (5, 5, 5));
    assert_eq!(
        (page1.items.len(), page2.items.len(), page3.items.len()),
        (2, 2, 1)
    );
    assert!(past.items.is_empty());
    let listed: Vec<String> = [page1.items, page2.items, page3.items]
        .concat()
        .into_iter()
        .map(|r| {
            assert_eq!(r.state, JobState::Dead);
            assert_eq!(r.attempts, 1);
            assert!(r.died_at.is_some());
            assert!(r.last_error.as_deref().unwrap().starts_with("error "));
            r.id
        })
        .collect();
    assert_eq!(listed, newest_first);
    // The same listing through list_jobs.
    let all = queue.list_jobs("q", JobState::Dead, 0, 10).await.unwrap();
    let ids: Vec<String> = all.items.into_iter().map(|r| r.id).collect();
    assert_eq!(ids, newest_first);
}

#[tokio::test]
async fn inspect_shows_a_dead_letter_with_its_error_and_payload() {
    let server = server();
    let queue = queue(&server, "dead-inspect").await;
    let before = SystemTime::now() - Duration::from_secs(1);
    let id = queue
        .add(
            "q",
            NewJob::new(json!({"order": 42}))
                .name("charge")
                .max_attempts(9),
        )
        .await
        .unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue
        .dead_letter(&job.lease(), "card declined")
        .await
        .unwrap();
    let record = queue.inspect(id.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Dead);
    assert_eq!(record.payload, json!({"order": 42}));
    assert_eq!(record.name.as_deref(), Some("charge"));
    assert_eq!(record.last_error.as_deref(), Some("card declined"));
    assert_eq!((record.attempts, record.max_attempts), (1, 9));
    let died = record.died_at.unwrap();
    assert!(died > before && died <= SystemTime::now());
    assert_eq!(record.lease_id, None);
}

#[tokio::test]
async fn requeue_one_resets_attempts_and_makes_it_claimable_again() {
    let server = server();
    let queue = queue(&server, "dead-requeue-one").await;
    queue
        .add("q", NewJob::new(json!("x")).max_attempts(2))
        .await
        .unwrap();
    for _ in 0..2 {
        let job = claim_n(&queue, "q", 1).await.remove(0);
        queue
            .nack(&job.lease(), Duration::ZERO, "nope")
            .await
            .unwrap();
    }
    let dead = queue.dead_letters("q", 0, 10).await.unwrap().items;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].attempts, 2);
    let report = queue
        .requeue_dead("q", std::slice::from_ref(&dead[0].id))
        .await
        .unwrap();
    assert_eq!(
        report,
        DeadLetterReport {
            done: 1,
            not_found: 0,
            dead_left: 0
        }
    );
    let record = queue.inspect(&dead[0].id).await.unwrap().unwrap();
    assert_eq!((record.state, record.attempts), (JobState::Waiting, 0));
    assert_eq!(record.died_at, None);
    let job = claim_n(&queue, "q", 1).await.remove(0);
    assert_eq!((job.id.as_str(), job.attempts), (dead[0].id.as_str(), 0));
    // Attempts start over: it has max_attempts again before dying.
    let outcome = queue
        .nack(&job.lease(), Duration::ZERO, "again")
        .await
        .unwrap();
    assert!(matches!(
        outcome,
        redq::Nacked::Retrying { attempts: 1, .. }
    ));
}

#[tokio::test]
async fn requeue_with_attempts_sets_the_counter_and_the_rest_of_its_tries() {
    let server = server();
    let queue = queue(&server, "dead-requeue-attempts").await;
    let ids = kill_jobs(&queue, "q", 2).await;
    let report = queue
        .requeue_dead_with_attempts("q", &ids[..1], 2)
        .await
        .unwrap();
    assert_eq!((report.done, report.dead_left), (1, 1));
    let record = queue.inspect(&ids[0]).await.unwrap().unwrap();
    assert_eq!((record.state, record.attempts), (JobState::Waiting, 2));
    let requeued = queue.requeue_all_dead_with_attempts("q", 1, |_, _| {});
    assert_eq!(requeued.await.unwrap(), 1);
    assert_eq!(queue.inspect(&ids[1]).await.unwrap().unwrap().attempts, 1);
    // Each requeue's event says where its jobs restart, newest first.
    let said: Vec<(u32, Option<u64>)> = queue
        .events(10)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == "requeued")
        .map(|e| (e.attempts, e.count))
        .collect();
    assert_eq!(said, [(1, Some(1)), (2, Some(1))]);
    // The counter goes on from there: a job with 3 attempts allowed that
    // restarted at 2 is dead after one more failure.
    let three = queue
        .add("r", NewJob::new(json!("r")).max_attempts(3))
        .await
        .unwrap();
    for _ in 0..3 {
        let job = claim_n(&queue, "r", 1).await.remove(0);
        queue
            .nack(&job.lease(), Duration::ZERO, "no")
            .await
            .unwrap();
    }
    let id = three.id().to_owned();
    queue
        .requeue_dead_with_attempts("r", std::slice::from_ref(&id), 2)
        .await
        .unwrap();
    let job = claim_n(&queue, "r", 1).await.remove(0);
    assert_eq!((job.id.as_str(), job.attempts), (id.as_str(), 2));
    let outcome = queue
        .nack(&job.lease(), Duration::ZERO, "no")
        .await
        .unwrap();
    assert!(
        matches!(outcome, redq::Nacked::DeadLettered { attempts: 3 }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn requeue_several_reports_unknown_ids_and_leaves_the_rest() {
    let server = server();
    let queue = queue(&server, "dead-requeue-some").await;
    let ids = kill_jobs(&queue, "q", 4).await;
    let pick = vec![
        ids[0].clone(),
        ids[2].clone(),
        "01JNOTADEADLETTER000000000".into(),
    ];
    let report = queue.requeue_dead("q", &pick).await.unwrap();
    assert_eq!(
        report,
        DeadLetterReport {
            done: 2,
            not_found: 1,
            dead_left: 2
        }
    );
    // Requeueing the same ids again finds nothing to do.
    let again = queue.requeue_dead("q", &pick[..2]).await.unwrap();
    assert_eq!((again.done, again.not_found), (0, 2));
    let jobs = claim_n(&queue, "q", 2).await;
    let mut claimed: Vec<String> = jobs.into_iter().map(|j| j.id).collect();
    claimed.sort();
    let mut expected = vec![ids[0].clone(), ids[2].clone()];
    expected.sort();
    assert_eq!(claimed, expected);
    // Dead letters of another queue are not found through this one.
    let other = queue
        .requeue_dead("elsewhere", std::slice::from_ref(&ids[1]))
        .await
        .unwrap();
    assert_eq!((other.done, other.not_found), (0, 1));
}

#[tokio::test]
async fn requeue_all_moves_every_dead_letter_back_in_bounded_batches() {
    let server = server();
    let queue = queue(&server, "dead-requeue-all").await;
    let n = redq::limits::DEAD_BATCH * 2 + 300;
    let ids = kill_many(&queue, "q", n).await;
    assert_eq!(queue.counts("q").await.unwrap().dead, n as u64);
    let mut progress = Vec::new();
    let moved = queue
        .requeue_all_dead("q", |done, left| progress.push((done, left)))
        .await
        .unwrap();
    assert_eq!(moved, n as u64);
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert_eq!(progress.last(), Some(&(n as u64, 0)));
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.dead, counts.waiting), (0, n as u64));
    let mut claimed = Vec::new();
    loop {
        let jobs = queue.claim("q", 1000, LONG).await.unwrap();
        if jobs.is_empty() {
            break;
        }
        assert!(jobs.iter().all(|j| j.attempts == 0));
        claimed.extend(jobs.into_iter().map(|j| j.id));
    }
    claimed.sort();
    let mut expected = ids;
    expected.sort();
    assert_eq!(claimed, expected);
    // Nothing left to requeue.
    assert_eq!(queue.requeue_all_dead("q", |_, _| {}).await.unwrap(), 0);
}

#[tokio::test]
async fn delete_removes_dead_letters_for_good() {
    let server = server();
    let queue = queue(&server, "dead-delete").await;
    let ids = kill_jobs(&queue, "q", 3).await;
    let report = queue
        .delete_dead("q", &[ids[1].clone(), "01JNOPE0000000000000000000".into()])
        .await
        .unwrap();
    assert_eq!(
        report,
        DeadLetterReport {
            done: 1,
            not_found: 1,
            dead_left: 2
        }
    );
    assert_eq!(queue.inspect(&ids[1]).await.unwrap(), None);
    assert_eq!(hlen(&server, &queue, "jobs").await, 2);
    assert_eq!(stored_payloads(&server, &queue).await, 2);
    // A deleted dead letter cannot be requeued.
    let requeue = queue
        .requeue_dead("q", std::slice::from_ref(&ids[1]))
        .await
        .unwrap();
    assert_eq!((requeue.done, requeue.not_found), (0, 1));
}

#[tokio::test]
async fn purge_deletes_every_dead_letter_of_the_queue_only() {
    let server = server();
    let queue = queue(&server, "dead-purge").await;
    kill_many(&queue, "q", redq::limits::DEAD_BATCH + 10).await;
    let kept = kill_jobs(&queue, "other", 2).await;
    queue.add("q", NewJob::new(json!("alive"))).await.unwrap();
    let mut calls = 0;
    let purged = queue.purge_dead("q", |_, _| calls += 1).await.unwrap();
    assert_eq!(purged, redq::limits::DEAD_BATCH as u64 + 10);
    assert_eq!(calls, 2);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.dead, counts.waiting), (0, 1));
    assert_eq!(queue.counts("other").await.unwrap().dead, 2);
    // Only the live job and the other queue's dead letters remain stored.
    assert_eq!(hlen(&server, &queue, "jobs").await, 3);
    assert_eq!(stored_payloads(&server, &queue).await, 3);
    assert!(queue.inspect(&kept[0]).await.unwrap().is_some());
    assert_eq!(queue.purge_dead("q", |_, _| {}).await.unwrap(), 0);
}

#[tokio::test]
async fn events_show_dead_letters_newest_first() {
    let server = server();
    let queue = queue(&server, "dead-events").await;
    assert!(queue.events(10).await.unwrap().is_empty());
    queue
        .add("a", NewJob::new(json!(1)).name("first"))
        .await
        .unwrap();
    queue.add("b", NewJob::new(json!(2))).await.unwrap();
    let a = claim_n(&queue, "a", 1).await.remove(0);
    let b = claim_n(&queue, "b", 1).await.remove(0);
    // Dying is a `dead` event (the retry is a `retried` one, the enqueues
    // `enqueued`: tests/tests/event_kinds.rs).
    queue
        .nack(&a.lease(), Duration::ZERO, "retry me")
        .await
        .unwrap();
    let a = claim_n(&queue, "a", 1).await.remove(0);
    let started = SystemTime::now() - Duration::from_secs(1);
    queue.dead_letter(&a.lease(), "gave up").await.unwrap();
    queue.dead_letter(&b.lease(), "bad input").await.unwrap();

    let events = queue
        .events(10)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "dead")
        .collect::<Vec<_>>();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].job_id, b.id);
    assert_eq!(events[0].queue, "b");
    assert_eq!(events[0].error, "bad input");
    assert_eq!(events[0].name, None);
    assert_eq!(events[0].attempts, 1);
    assert_eq!(events[1].job_id, a.id);
    assert_eq!(events[1].queue, "a");
    assert_eq!(events[1].kind, "dead");
    assert_eq!(events[1].name.as_deref(), Some("first"));
    assert_eq!(events[1].error, "gave up");
    assert_eq!(events[1].attempts, 2);
    assert!(events[1].at >= started && events[1].at <= SystemTime::now());
    assert!(events[0].event_id > events[1].event_id);
    assert_eq!(queue.events(1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn long_errors_are_cut_on_a_character_boundary() {
    let server = server();
    let queue = queue(&server, "dead-long-error").await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    let error = "é".repeat(5000);
    queue.dead_letter(&job.lease(), &error).await.unwrap();
    let record = queue.inspect(&job.id).await.unwrap().unwrap();
    let recorded = record.last_error.unwrap();
    assert!(recorded.len() <= redq::limits::MAX_ERROR_LEN);
    assert!(error.starts_with(&recorded));
    assert!(recorded.len() >= redq::limits::MAX_ERROR_LEN - 1);
}
