//! The default way of calling the scripts (`ScriptCalls::Auto`): the
//! scripts that write run as Redis Functions where the server and the user
//! allow them, by `EVALSHA` elsewhere; a refusal of functions, at connect or
//! at a script's first call, never fails a call.

use redq::{Acked, NewJob, RedisQueue, ScriptCalls};
use redq_tests::acl::{acl_log, functions_worker_acl, set_user, user_url, worker_acl};
use redq_tests::fixtures::*;
use redq_tests::memory::{cap_memory, capped_server, fill_until_out_of_memory, hold_out_of_memory};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

/// The names of the function libraries the server holds.
async fn libraries(server: &RedisServer) -> Vec<String> {
    let listed = server.cmd(&["FUNCTION", "LIST"]).await;
    let fred::types::Value::Array(libraries) = listed else {
        panic!("FUNCTION LIST: {listed:?}")
    };
    libraries
        .into_iter()
        .map(|library| {
            let fields: Vec<fred::types::Value> = library.convert().unwrap();
            let at = fields
                .iter()
                .position(|f| f.as_str().as_deref() == Some("library_name"))
                .unwrap();
            fields[at + 1].as_string().unwrap()
        })
        .collect()
}

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
    let queue = default_handle(&server.url(), &unique_namespace("auto")).await;
    assert_eq!(queue.script_calls(), ScriptCalls::Functions);
    server.reset_stats().await;
    lifecycle(&queue).await;
    let seen = server.seen_since_reset().await;
    // enqueue, claim and ack by FCALL, each first finding no library,
    // loading it and calling again; counts, a read, by EVALSHA.
    assert_eq!(seen.calls("fcall"), 6, "{:?}", seen.commands);
    assert_eq!(seen.calls("function|load"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 1, "{:?}", seen.commands);
    // Only the libraries of the scripts called are loaded.
    let mut loaded = libraries(&server).await;
    loaded.sort();
    let mut called = vec![library("ack"), library("claim"), library("enqueue")];
    called.sort();
    assert_eq!(loaded, called);
    // Loaded, they are called at once.
    lifecycle(&queue).await;
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("fcall"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("function|load"), 0, "{:?}", seen.commands);
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
    assert_eq!(libraries(&server).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_user_refused_function_load_calls_each_script_by_evalsha_from_its_first_call() {
    let server = server();
    let ns = unique_namespace("auto-acl-no-load");
    // FCALL and FUNCTION LIST allowed, FUNCTION LOAD not (it is in @write,
    // which the scripts' own commands need): the probe at connect passes,
    // the first call of each script finds no library and may not load one.
    let rules: Vec<String> = functions_worker_acl(&ns, "no-load-secret")
        .into_iter()
        .chain(["+evalsha", "+script|load", "-function|load"].map(String::from))
        .collect();
    set_user(&server, &rules).await;
    let url = user_url(&server, "worker", "no-load-secret");
    let queue = default_handle(&url, &ns).await;
    assert_eq!(queue.script_calls(), ScriptCalls::Functions);
    server.reset_stats().await;
    lifecycle(&queue).await;
    // Each writing script met the refusal once and ran by EVALSHA (after
    // a NOSCRIPT and SCRIPT LOAD: only the reads are loaded at connect).
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("fcall"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("script|load"), 3, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 3 * 2 + 1, "{:?}", seen.commands);
    assert_eq!(libraries(&server).await, Vec::<String>::new());
    // Remembered: the next lifecycle tries no FCALL at all.
    lifecycle(&queue).await;
    let seen = server.seen_since_reset().await;
    assert_eq!(seen.calls("fcall"), 0, "{:?}", seen.commands);
    assert_eq!(seen.calls("evalsha"), 4, "{:?}", seen.commands);
}

#[tokio::test]
async fn a_script_first_called_while_redis_is_out_of_memory_still_runs() {
    let server = capped_server();
    let queue = default_handle(&server.url(), &unique_namespace("auto-oom")).await;
    cap_memory(&server, 3 << 20).await;
    let created = fill_until_out_of_memory(&queue, "q").await;
    assert!(created >= 2);
    hold_out_of_memory(&server, 1 << 20).await;
    // Neither claim's nor ack's library is loaded yet, and Redis refuses
    // to load one (FUNCTION LOAD is a write that may grow memory); both
    // run all the same, by EVALSHA.
    server.reset_stats().await;
    let jobs = queue.claim("q", 2, LONG).await.unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(queue.ack(&jobs[0].lease()).await.unwrap(), Acked::Completed);
    let seen = server.seen_since_reset().await;
    assert!(seen.calls("evalsha") >= 2, "{:?}", seen.commands);
    let loaded = libraries(&server).await;
    assert!(!loaded.contains(&library("claim")), "{loaded:?}");
    assert!(!loaded.contains(&library("ack")), "{loaded:?}");
}
