//! Scripts called as Redis Functions (`ScriptCalls::Functions`): the same
//! behaviour as by `EVALSHA`, each library loaded at its first call and
//! again after `FUNCTION FLUSH`, no state of one call kept into the next, and
//! errors traced to the Lua files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::FunctionInterface;
use redq::flow::{Limit, LimitScope};
use redq::workflow::Batch;
use redq::{Acked, JobState, NewJob, Queue, QueueError, RedisQueue, ScriptCalls};
use redq_tests::events::{events_after, newest_event_id};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

async fn functions_handle(server: &RedisServer, namespace: &str) -> RedisQueue {
    RedisQueue::builder(&server.url())
        .namespace(namespace)
        .script_calls(ScriptCalls::Functions)
        .connect()
        .await
        .expect("connecting with functions")
}

async fn flush_functions(server: &RedisServer) {
    server.cmd(&["FUNCTION", "FLUSH"]).await;
    assert_eq!(server.function_libraries().await, Vec::<String>::new());
}

#[tokio::test]
async fn every_operation_works_as_a_function_and_after_function_flush() {
    let server = server();
    let queue = functions_handle(&server, &unique_namespace("fn-flush")).await;
    server.cmd(&["CONFIG", "RESETSTAT"]).await;

    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let enqueue = redq::lua::function_name("enqueue").unwrap().to_owned();
    assert!(
        server.function_libraries().await.contains(&enqueue),
        "the first enqueue loaded its library"
    );
    flush_functions(&server).await;
    queue.add_batch("q", numbered(3)).await.unwrap();
    flush_functions(&server).await;
    let jobs = queue.claim("q", 2, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    flush_functions(&server).await;
    queue.extend(&jobs[0].lease(), LONG).await.unwrap();
    flush_functions(&server).await;
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    flush_functions(&server).await;
    queue
        .nack(&jobs[1].lease(), Duration::ZERO, "e")
        .await
        .unwrap();
    let more = queue.claim("q", 1, LONG).await.unwrap();
    flush_functions(&server).await;
    queue.release(&more[0].lease()).await.unwrap();
    let more = queue.claim("q", 1, LONG).await.unwrap();
    flush_functions(&server).await;
    queue.dead_letter(&more[0].lease(), "x").await.unwrap();
    flush_functions(&server).await;
    queue.reclaim("q", 10).await.unwrap();
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.dead), (2, 1));
    assert_eq!(
        queue.inspect(&more[0].id).await.unwrap().unwrap().state,
        JobState::Dead
    );
    flush_functions(&server).await;
    queue
        .requeue_dead("q", std::slice::from_ref(&more[0].id))
        .await
        .unwrap();
    assert_eq!(queue.counts("q").await.unwrap().waiting, 3);
    let seed = Queue::claim(&queue, "q", 10, LONG).await.unwrap();
    assert_eq!(seed.len(), 3);
    for job in seed {
        Queue::complete(&queue, &job.id).await.unwrap();
    }
    assert_eq!(Queue::next_due(&queue, "q").await.unwrap(), None);

    // Every call went as FCALL: none by SHA, none by body.
    assert!(server.command_calls("fcall").await > 0);
    assert_eq!(server.command_calls("evalsha").await, 0);
    assert_eq!(server.command_calls("eval").await, 0);
}

/// A library keeps what its first call built; what a call read of its own
/// (its queue, its actor, its queue's limits) must not carry into the next
/// call of the same function. Each pair below runs one function twice, the
/// second call different from the first in exactly that.
#[tokio::test]
async fn no_call_sees_what_an_earlier_call_of_its_function_read() {
    let server = server();
    let ns = unique_namespace("fn-state");
    let queue = functions_handle(&server, &ns).await;

    // The queue name (ARGV[1]) of each call.
    queue.add("first", NewJob::new(json!("a"))).await.unwrap();
    queue.add("second", NewJob::new(json!("b"))).await.unwrap();
    assert_eq!(queue.counts("first").await.unwrap().waiting, 1);
    assert_eq!(queue.counts("second").await.unwrap().waiting, 1);
    let claimed = queue.claim("second", 5, LONG).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].payload, json!("b"));

    // The actor (the last argument): a call with one, then one without.
    let alice = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .actor("alice")
        .script_calls(ScriptCalls::Functions)
        .connect()
        .await
        .unwrap();
    let before = newest_event_id(&queue).await;
    alice.pause("first").await.unwrap();
    queue.pause("second").await.unwrap();
    let pauses: Vec<_> = events_after(&queue, &before)
        .await
        .into_iter()
        .filter(|e| e.kind == "paused")
        .map(|e| (e.queue, e.by))
        .collect();
    assert_eq!(
        pauses,
        vec![
            ("first".to_owned(), Some("alice".to_owned())),
            ("second".to_owned(), None)
        ]
    );
    queue.resume("first").await.unwrap();
    queue.resume("second").await.unwrap();

    // A queue's limits, read once a call: a limited queue's claim, then an
    // unlimited one's.
    queue
        .set_limit("limited", LimitScope::Queue, Limit::concurrency(1))
        .await
        .unwrap();
    queue.add_batch("limited", numbered(3)).await.unwrap();
    queue.add_batch("free", numbered(3)).await.unwrap();
    assert_eq!(queue.claim("limited", 3, LONG).await.unwrap().len(), 1);
    assert_eq!(queue.claim("free", 3, LONG).await.unwrap().len(), 3);
    assert_eq!(queue.claim("limited", 3, LONG).await.unwrap().len(), 0);
}

/// A library keeps the last parse of a job's options and the last record
/// template between calls: a lone enqueue takes them only when its options
/// and shared fields are the same, never another call's.
#[tokio::test]
async fn each_lone_enqueue_stores_its_own_options_whatever_the_call_before_sent() {
    let server = server();
    let queue = functions_handle(&server, &unique_namespace("fn-memo")).await;
    // (queue, payload and name, priority, max attempts), in call order.
    let calls: [(&str, Option<&str>, u8, u32); 9] = [
        ("q", Some("a"), 0, 0),
        ("q", Some("a"), 0, 0),
        ("q", Some("b"), 3, 0),
        ("q", Some("b"), 0, 0),
        ("other", Some("b"), 0, 0),
        ("q", None, 0, 0),
        ("q", Some("a"), 0, 2),
        ("q", Some("a"), 0, 0),
        ("q", Some("c"), 0, 0),
    ];
    for (queue_name, name, priority, max_attempts) in calls {
        let mut job = NewJob::new(json!(name))
            .priority(priority)
            .max_attempts(max_attempts);
        if let Some(name) = name {
            job = job.name(name);
        }
        let id = queue.add(queue_name, job).await.unwrap().id().to_owned();
        let stored = queue.inspect(&id).await.unwrap().unwrap();
        assert_eq!(
            (
                stored.queue.as_str(),
                stored.payload,
                stored.name.as_deref(),
                stored.priority,
                stored.max_attempts
            ),
            (queue_name, json!(name), name, priority, max_attempts),
            "{id}"
        );
    }
    assert_eq!(queue.counts("q").await.unwrap().waiting, 8);
    assert_eq!(queue.counts("other").await.unwrap().waiting, 1);
}

/// The template a library keeps is the queue's, the gate's and the option
/// set's: a lone job with the same queue and options as a batch member
/// before it is stored without that batch's gate, and the next member with
/// it.
#[tokio::test]
async fn a_lone_enqueue_after_a_batch_member_is_stored_without_its_gate() {
    let server = server();
    let queue = functions_handle(&server, &unique_namespace("fn-memo-gate")).await;
    let job = || NewJob::new(json!(1)).name("a").max_attempts(3);
    let mut expected = Vec::new();
    for _ in 0..2 {
        let batch = queue
            .enqueue_batch(Batch::new().job("q", job()))
            .await
            .unwrap();
        expected.push((batch.jobs[0].id().to_owned(), Some(batch.id.to_string())));
        let lone = queue.add("q", job()).await.unwrap();
        expected.push((lone.id().to_owned(), None));
    }
    for (id, gate) in expected {
        let stored = queue.inspect(&id).await.unwrap().unwrap();
        assert_eq!(
            (stored.gate, stored.name.as_deref(), stored.max_attempts),
            (gate, Some("a"), 3),
            "{id}"
        );
    }
}

#[tokio::test]
async fn eval_and_function_handles_share_one_namespace() {
    let server = server();
    let ns = unique_namespace("fn-mixed");
    let by_eval = handle(&server, &ns).await;
    let by_function = functions_handle(&server, &ns).await;
    by_eval.add_batch("q", numbered(4)).await.unwrap();
    let jobs = by_function.claim("q", 4, LONG).await.unwrap();
    assert_eq!(numbers(&jobs), vec![0, 1, 2, 3]);
    for job in &jobs[..2] {
        assert_eq!(by_eval.ack(&job.lease()).await.unwrap(), Acked::Completed);
    }
    for job in &jobs[2..] {
        assert_eq!(
            by_function.ack(&job.lease()).await.unwrap(),
            Acked::Completed
        );
    }
    assert_eq!(by_eval.counts("q").await.unwrap().leased, 0);
}

/// `FUNCTION FLUSH` landing between a reload and its retry, again and
/// again: every call still succeeds, exactly once (an enqueue is never
/// applied twice), falling back to the script's body when flushed after
/// each reload.
#[tokio::test]
async fn calls_succeed_exactly_once_while_functions_are_flushed_back_to_back() {
    let server = server();
    let queue = functions_handle(&server, &unique_namespace("fn-storm")).await;
    let stop = Arc::new(AtomicBool::new(false));
    let flusher = server.client().await;
    let flushes = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut flushes = 0u64;
            while !stop.load(Ordering::Relaxed) {
                flusher.function_flush::<()>(false).await.unwrap();
                flushes += 1;
            }
            flushes
        })
    };
    for n in 0..200 {
        queue
            .add("q", NewJob::new(json!({ "n": n })))
            .await
            .unwrap();
        let jobs = queue.claim("q", 1, LONG).await.unwrap();
        assert_eq!(jobs.len(), 1, "claim {n} found the job it just added");
        assert_eq!(jobs[0].payload, json!({ "n": n }));
        assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    }
    stop.store(true, Ordering::Relaxed);
    let flushes = flushes.await.unwrap();
    assert!(flushes > 0);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 0));
    assert!(
        server.command_calls("function|load").await > 3,
        "the flushes made the calls reload their libraries"
    );
}

/// A script's error in a function names the Lua file and line, as by
/// `EVALSHA`, not the library's own line.
#[tokio::test]
async fn a_function_error_is_traced_to_its_lua_file() {
    let server = server();
    let ns = unique_namespace("fn-error");
    let queue = functions_handle(&server, &ns).await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    // Its first claim loads the claim's library.
    assert_eq!(queue.claim("q", 1, LONG).await.unwrap().len(), 1);
    let claim = redq::lua::function_name("claim").unwrap();
    let body = redq_tests::lua::compose(redq_tests::lua::source("claim"));
    let keys = redq_tests::lua::queue_keys_of(&body, &ns, "q");
    let client = server.client().await;
    let err = client
        .fcall::<fred::types::Value, _, _, _>(claim, keys, vec!["q", "", "not-a-number"])
        .await
        .expect_err("a claim with a bad limit is refused");
    assert!(err.details().contains("user_function:"), "{err:?}");
    match redq::lua::map_error(err, Duration::from_secs(1)) {
        QueueError::Protocol(text) => {
            assert!(text.contains("on @lua/lib/check.lua:"), "{text}");
            assert!(!text.contains("user_function"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

/// A worker ACL user with `FCALL` and `FUNCTION LOAD` in place of `EVALSHA`
/// and `SCRIPT LOAD` (docs/reliability.md) runs the job lifecycle by
/// functions, and is refused the scripts by `EVALSHA`.
#[tokio::test]
async fn a_worker_acl_user_with_fcall_runs_the_lifecycle_as_functions() {
    use redq_tests::acl::{acl_log, functions_worker_acl, set_user, user_url};
    let server = server();
    let ns = unique_namespace("fn-acl");
    set_user(&server, &functions_worker_acl(&ns, "fn-secret")).await;
    let url = user_url(&server, "worker", "fn-secret");
    let queue = RedisQueue::builder(&url)
        .namespace(&ns)
        .script_calls(ScriptCalls::Functions)
        .connect()
        .await
        .expect("the worker user connects with functions");
    queue.add_batch("q", numbered(3)).await.unwrap();
    let jobs = queue.claim("q", 3, LONG).await.unwrap();
    assert_eq!(numbers(&jobs), vec![0, 1, 2], "{}", acl_log(&server).await);
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    queue
        .nack(&jobs[1].lease(), Duration::ZERO, "again")
        .await
        .unwrap();
    queue.dead_letter(&jobs[2].lease(), "no").await.unwrap();
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.dead), (1, 1));
    // The same user cannot load the scripts for EVALSHA.
    let by_eval = RedisQueue::builder(&url)
        .namespace(&ns)
        .script_calls(ScriptCalls::Eval)
        .connect()
        .await;
    assert!(by_eval.is_err(), "EVALSHA's SCRIPT LOAD is not granted");
}
