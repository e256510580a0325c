//! Scripts called by `EVALSHA` (`ScriptCalls::Eval`) are reloaded
//! transparently: after `SCRIPT FLUSH`, and after a redis-server restart
//! (with the AOF keeping the data). The same for functions (the default):
//! functions.rs.

use std::time::Duration;

use redq::{Acked, JobState, NewJob, Queue, RedisQueue, ScriptCalls};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

/// A handle calling the scripts by `EVALSHA`, in a namespace of its own.
async fn eval_queue(server: &RedisServer, test: &str) -> RedisQueue {
    RedisQueue::builder(&server.url())
        .namespace(unique_namespace(test))
        .script_calls(ScriptCalls::Eval)
        .connect()
        .await
        .expect("connecting to the test redis")
}

async fn flush(server: &RedisServer) {
    server.cmd(&["SCRIPT", "FLUSH"]).await;
    assert!(is_int(
        &server
            .cmd(&[
                "SCRIPT",
                "EXISTS",
                "0000000000000000000000000000000000000000"
            ])
            .await
            .convert::<Vec<fred::types::Value>>()
            .unwrap()[0],
        0
    ));
}

#[tokio::test]
async fn every_operation_works_after_script_flush() {
    let server = server();
    let queue = eval_queue(&server, "flush").await;

    flush(&server).await;
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    flush(&server).await;
    queue.add_batch("q", numbered(3)).await.unwrap();
    flush(&server).await;
    let jobs = queue.claim("q", 2, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    flush(&server).await;
    queue.extend(&jobs[0].lease(), LONG).await.unwrap();
    flush(&server).await;
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    flush(&server).await;
    queue
        .nack(&jobs[1].lease(), Duration::ZERO, "e")
        .await
        .unwrap();
    flush(&server).await;
    let more = queue.claim("q", 1, LONG).await.unwrap();
    flush(&server).await;
    queue.release(&more[0].lease()).await.unwrap();
    let more = queue.claim("q", 1, LONG).await.unwrap();
    flush(&server).await;
    queue.dead_letter(&more[0].lease(), "x").await.unwrap();
    flush(&server).await;
    queue.reclaim("q", 10).await.unwrap();
    flush(&server).await;
    assert_eq!(queue.next_due("q").await.unwrap(), Some(Duration::ZERO));
    flush(&server).await;
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.dead), (2, 1));
    flush(&server).await;
    assert_eq!(
        queue.inspect(&more[0].id).await.unwrap().unwrap().state,
        JobState::Dead
    );
    flush(&server).await;
    assert_eq!(
        queue
            .list_jobs("q", JobState::Waiting, 0, 10)
            .await
            .unwrap()
            .total,
        2
    );
    flush(&server).await;
    assert_eq!(queue.dead_letters("q", 0, 10).await.unwrap().total, 1);
    flush(&server).await;
    queue
        .requeue_dead("q", std::slice::from_ref(&more[0].id))
        .await
        .unwrap();
    let doomed = queue.claim("q", 1, LONG).await.unwrap();
    queue.dead_letter(&doomed[0].lease(), "x").await.unwrap();
    flush(&server).await;
    assert_eq!(queue.requeue_all_dead("q", |_, _| {}).await.unwrap(), 1);
    let doomed = queue.claim("q", 1, LONG).await.unwrap();
    queue.dead_letter(&doomed[0].lease(), "x").await.unwrap();
    flush(&server).await;
    assert_eq!(queue.purge_dead("q", |_, _| {}).await.unwrap(), 1);
    flush(&server).await;
    Queue::enqueue(&queue, "q", vec![json!("seed")])
        .await
        .unwrap();
    flush(&server).await;
    let seed = Queue::claim(&queue, "q", 10, LONG).await.unwrap();
    flush(&server).await;
    for job in seed {
        Queue::complete(&queue, &job.id).await.unwrap();
    }
    flush(&server).await;
    assert_eq!(Queue::next_due(&queue, "q").await.unwrap(), None);
}

/// The calls in flight when the scripts are flushed all recover, and the
/// handle loads each script once, not once per call.
#[tokio::test]
async fn concurrent_calls_all_recover_after_script_flush() {
    let server = server();
    let queue = eval_queue(&server, "flush-concurrent").await;
    // A job counts toward at most 100 dependents: four of them.
    let deps = queue.add_batch("deps", numbered(4)).await.unwrap();
    flush(&server).await;
    server.reset_stats().await;
    // A job with a dependency is enqueued alone: 200 enqueue calls at once,
    // each meeting NOSCRIPT.
    let adds = (0..200).map(|i| {
        let dep = deps[i % deps.len()].id();
        queue.add("q", NewJob::new(json!({ "n": i })).after([dep]))
    });
    for result in futures::future::join_all(adds).await {
        result.unwrap();
    }
    assert_eq!(queue.counts("q").await.unwrap().awaiting, 200);
    assert_eq!(
        server.command_calls("script|load").await,
        2,
        "enqueue, and counts"
    );
}

/// A flush after every reload: the reliability run's flusher can land
/// between a reload and its retry more than once in a row. The call then
/// sends the script's body (EVAL) and succeeds, instead of failing with
/// NOSCRIPT.
#[tokio::test]
async fn calls_succeed_while_scripts_are_flushed_back_to_back() {
    let server = server();
    let queue = eval_queue(&server, "flush-storm").await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flusher = server.client().await;
    let flushes = {
        let stop = stop.clone();
        tokio::spawn(async move {
            use fred::interfaces::ClientLike;
            let flush = || {
                fred::types::CustomCommand::new_static(
                    "SCRIPT",
                    fred::types::ClusterHash::FirstKey,
                    false,
                )
            };
            let mut flushes = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _: fred::types::Value = flusher.custom(flush(), vec!["FLUSH"]).await.unwrap();
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
        assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let flushes = flushes.await.unwrap();
    let info = server
        .cmd(&["INFO", "commandstats"])
        .await
        .convert::<String>()
        .unwrap();
    let calls = |command: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:calls=")))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().unwrap())
    };
    // The fault was real: calls were flushed after each of their reloads,
    // and went by body (without the fallback each of those failed).
    assert!(flushes > 0);
    assert!(calls("eval") > 0, "no call fell back to EVAL:\n{info}");
    assert_eq!(queue.counts("q").await.unwrap().waiting, 0);
}

#[tokio::test]
async fn a_restarted_redis_with_aof_keeps_the_jobs_and_the_client_reconnects_by_itself() {
    let mut server = RedisServer::builder()
        .appendonly_always()
        .enable_debug()
        .start();
    let ns = unique_namespace("restart");
    let queue = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .command_timeout(Duration::from_secs(2))
        .script_calls(ScriptCalls::Eval)
        .connect()
        .await
        .unwrap();
    let ids = queue.add_batch("q", numbered(5)).await.unwrap();
    queue
        .add(
            "q",
            NewJob::new(json!("later")).delay(Duration::from_secs(3600)),
        )
        .await
        .unwrap();
    let held = queue.claim("q", 2, LONG).await.unwrap();
    let dead = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue.dead_letter(&dead.lease(), "poison").await.unwrap();
    let digest_before = digest(&server).await;

    server.kill9();
    server.restart();

    // The same handle works again without any help: reconnect + NOSCRIPT.
    let mut counts = None;
    wait_until(DEADLINE, "the handle to work again", async || {
        counts = queue.counts("q").await.ok();
        counts.is_some()
    })
    .await;
    assert_eq!(
        digest(&server).await,
        digest_before,
        "the AOF kept everything"
    );
    let counts = counts.unwrap();
    assert_eq!(
        (counts.waiting, counts.scheduled, counts.leased, counts.dead),
        (2, 1, 2, 1)
    );
    // Leases survive with their fencing tokens.
    for job in &held {
        assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
    }
    let rest = queue.claim("q", 10, LONG).await.unwrap();
    assert_eq!(numbers(&rest), vec![3, 4]);
    assert!(
        rest[0].lease_id > dead.lease_id,
        "lease ids keep increasing"
    );
    assert_eq!(rest[0].id, ids[3].id());
    assert_eq!(queue.requeue_all_dead("q", |_, _| {}).await.unwrap(), 1);
    let new = queue.add("q", NewJob::new(json!("after"))).await.unwrap();
    assert_eq!(queue.counts("q").await.unwrap().waiting, 2);
    assert!(queue.inspect(new.id()).await.unwrap().is_some());
}

#[tokio::test]
async fn a_handle_connected_after_a_flush_and_restart_loads_the_scripts_itself() {
    let mut server = RedisServer::builder().appendonly_always().start();
    let ns = unique_namespace("restart-new-handle");
    let before = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .script_calls(ScriptCalls::Eval)
        .connect()
        .await
        .unwrap();
    before.add("q", NewJob::new(json!(1))).await.unwrap();
    server.restart();
    let after = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .script_calls(ScriptCalls::Eval)
        .connect()
        .await
        .unwrap();
    assert_eq!(claim_n(&after, "q", 1).await[0].payload, json!(1));
}
