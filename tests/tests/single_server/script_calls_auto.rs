//! The default way of calling the scripts (`ScriptCalls::Auto`): the
//! scripts that write run as Redis Functions where the server and the user
//! allow them, their libraries loaded at connect when missing, by `EVALSHA`
//! elsewhere; a refusal of functions, at connect or at a call that finds a
//! library gone, never fails a call; and the calls in flight when a library
//! goes missing load it once.

use redq::{Acked, NewJob, RedisQueue, ScriptCalls};
use redq_tests::acl::{acl_log, functions_worker_acl, set_user, user_url, worker_acl};
use redq_tests::fixtures::*;
use redq_tests::memory::{cap_memory, capped_server, fill_until_out_of_memory, hold_out_of_memory};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

fn library(script: &str) -> String {
    redq::lua::function_name(script).unwrap().to_owned()
}

async fn default_handle(url: &str, namespace: &str) -> RedisQueue {
    RedisQueue::builder(url)
        .namespace(namespace)
        .connect()
        .await
        .expect("connecting with the default script calls")
}

/// Enqueue, claim, ack and count on `queue`: what every handle does.
async fn lifecycle(queue: &RedisQueue) {
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let jobs = queue.claim("q", 1, LONG).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 0));
}

#[tokio::test]
async fn by_default_the_writing_scripts_run_as_functions_and_the_reads_by_evalsha() {
    let server = server();
    let ns = unique_namespace("auto");
    server.reset_stats().await;
    let queue = default_handle(&server.url(), &ns).await;
    assert_eq!(queue.script_calls(), ScriptCalls::Functions);
    // The connect loaded the library of every script that writes, and
    // nothing else.
    let writing = redq_tests::lua::writing_libraries();
    assert!(writing.contains(&library("enqueue")) && !writing.contains(&library("counts")));
    assert_eq!(server.function_libraries().await, writing);
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("function|load"), writing.len() as i64);
    lifecycle(&queue).await;
    let seen = server.seen_since_reset().await;
    // enqueue, claim and ack by FCALL at once; counts, a read, by EVALSHA.
    assert_eq!(seen.calls("fcall"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 1, "{:?}", seen.commands);
    assert_eq!(seen.calls("function|load"), 0, "{:?}", seen.commands);
    // Another handle finds them loaded: it only lists them.
    let other = default_handle(&server.url(), &ns).await;
    lifecycle(&other).await;
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("function|load"), 0, "{:?}", seen.commands);
    assert_eq!(seen.calls("function|list"), 1, "{:?}", seen.commands);
}

#[tokio::test]
async fn a_server_without_functions_is_called_by_evalsha() {
    // What Redis 6 answers: no FUNCTION or FCALL command.
    let server = RedisServer::builder()
        .without_command("FUNCTION")
        .without_command("FCALL")
        .start();
    let queue = default_handle(&server.url(), &unique_namespace("auto-no-fn")).await;
    assert_eq!(queue.script_calls(), ScriptCalls::Eval);
    server.reset_stats().await;
    lifecycle(&queue).await;
    assert_eq!(server.command_calls("evalsha").await, 4);
}

#[tokio::test]
async fn a_user_allowed_only_evalsha_is_called_by_evalsha() {
    let server = server();
    let ns = unique_namespace("auto-acl-eval");
    // The worker ACL of docs/reliability.md: no FUNCTION, no FCALL.
    set_user(&server, &worker_acl(&ns, "eval-secret")).await;
    let url = user_url(&server, "worker", "eval-secret");
    let queue = default_handle(&url, &ns).await;
    assert_eq!(queue.script_calls(), ScriptCalls::Eval);
    server.reset_stats().await;
    lifecycle(&queue).await;
    assert_eq!(
        server.command_calls("evalsha").await,
        4,
        "{}",
        acl_log(&server).await
    );
    assert_eq!(server.function_libraries().await, Vec::<String>::new());
}

/// A user allowed `FCALL` and `FUNCTION LIST` but not `FUNCTION LOAD` (it is
/// in @write, which the scripts' own commands need, so it is taken away
/// by name).
async fn user_refused_function_load(server: &RedisServer, ns: &str) -> String {
    let rules: Vec<String> = functions_worker_acl(ns, "no-load-secret")
        .into_iter()
        .chain(["+evalsha", "+script|load", "-function|load"].map(String::from))
        .collect();
    set_user(server, &rules).await;
    user_url(server, "worker", "no-load-secret")
}

#[tokio::test]
async fn a_user_refused_function_load_calls_the_scripts_by_evalsha() {
    let server = server();
    let ns = unique_namespace("auto-acl-no-load");
    let url = user_refused_function_load(&server, &ns).await;
    // The connect's loads are refused: every writing script is called by
    // EVALSHA, loaded at its first call.
    let queue = default_handle(&url, &ns).await;
    assert_eq!(queue.script_calls(), ScriptCalls::Functions);
    assert_eq!(server.function_libraries().await, Vec::<String>::new());
    server.reset_stats().await;
    lifecycle(&queue).await;
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("fcall"), 0, "{:?}", seen.commands);
    assert_eq!(seen.calls("script|load"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 3 * 2 + 1, "{:?}", seen.commands);
}

#[tokio::test]
async fn a_library_gone_and_refused_again_makes_that_script_evalsha_from_its_next_call() {
    let server = server();
    let ns = unique_namespace("auto-acl-flushed");
    // Loaded by a service allowed to; this user's connect finds them.
    default_handle(&server.url(), &ns).await;
    let url = user_refused_function_load(&server, &ns).await;
    let queue = default_handle(&url, &ns).await;
    server.cmd(&["FUNCTION", "FLUSH"]).await;
    server.reset_stats().await;
    lifecycle(&queue).await;
    // Each writing script found no library, met the refusal and ran by
    // EVALSHA (after a NOSCRIPT and SCRIPT LOAD).
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("fcall"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("script|load"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 3 * 2 + 1, "{:?}", seen.commands);
    assert_eq!(server.function_libraries().await, Vec::<String>::new());
    // Remembered: the next lifecycle tries no FCALL at all.
    lifecycle(&queue).await;
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("fcall"), 0, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 4, "{:?}", seen.commands);
}

#[tokio::test]
async fn the_calls_in_flight_when_a_library_goes_missing_load_it_once() {
    let server = server();
    let queue = default_handle(&server.url(), &unique_namespace("auto-herd")).await;
    // A job counts toward at most 100 dependents: four of them.
    let deps = queue.add_batch("deps", numbered(4)).await.unwrap();
    server.cmd(&["FUNCTION", "FLUSH"]).await;
    server.reset_stats().await;
    // A job with a dependency is enqueued alone: 200 enqueue calls at once,
    // each finding no library.
    let adds = (0..200).map(|i| {
        let dep = deps[i % deps.len()].id();
        queue.add("dependents", NewJob::new(json!(i)).after([dep]))
    });
    futures::future::try_join_all(adds).await.unwrap();
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("function|load"), 1, "{:?}", seen.commands);
    assert!(seen.calls("fcall") >= 200, "{:?}", seen.commands);
    assert_eq!(queue.counts("dependents").await.unwrap().awaiting, 200);
}

#[tokio::test]
async fn a_library_gone_while_redis_is_out_of_memory_still_runs_its_script() {
    let server = capped_server();
    let queue = default_handle(&server.url(), &unique_namespace("auto-oom")).await;
    cap_memory(&server, 3 << 20).await;
    let created = fill_until_out_of_memory(&queue, "q").await;
    assert!(created >= 2);
    // The libraries gone (a flush), and Redis full: it refuses to load one
    // again (FUNCTION LOAD is a write that may grow memory).
    server.cmd(&["FUNCTION", "FLUSH"]).await;
    hold_out_of_memory(&server, 1 << 20).await;
    server.reset_stats().await;
    let jobs = queue.claim("q", 2, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    // Both ran by EVALSHA.
    let seen = server.seen_since_reset().await;
    assert!(seen.calls("evalsha") >= 2, "{:?}", seen.commands);
    assert_eq!(server.function_libraries().await, Vec::<String>::new());
}
