//! What a connect sends: only the scripts the server's cache lacks, after
//! one `SCRIPT EXISTS` for them all. Loading all 45 in turn made every
//! connect (every `redq` command, every service start) 45 round trips and
//! 2.5 MB long, however often the same scripts had been loaded before.
//! With `preload_scripts(false)` (the `redq` commands), nothing at all: each
//! script is loaded at its first call, if the server lacks it.

use redq::{RedisQueue, ScriptCalls};
use redq_tests::acl::{set_user, user_url, worker_acl};
use redq_tests::{unique_namespace, RedisServer};

use crate::connect::roundtrip;

/// A handle calling the scripts as `how`, readying them at connect when
/// `preload`.
async fn handle(url: &str, namespace: &str, how: ScriptCalls, preload: bool) -> RedisQueue {
    RedisQueue::builder(url)
        .namespace(namespace)
        .script_calls(how)
        .preload_scripts(preload)
        .connect()
        .await
        .expect("connecting to the test redis")
}

/// A handle calling the scripts by `EVALSHA`, readying them at connect.
async fn eval_handle(url: &str, namespace: &str) -> RedisQueue {
    handle(url, namespace, ScriptCalls::Eval, true).await
}

/// The variants only a namespace that detaches payloads calls.
fn detached_variants() -> u64 {
    redq::lua::VARIANTS
        .iter()
        .filter(|v| v.only_when_detaching())
        .count() as u64
}

/// How many scripts a connect readies in a namespace that does not detach
/// payloads: all but the variants only a detaching one calls.
fn readied() -> u64 {
    (redq::lua::SCRIPTS.len() + redq::lua::VARIANTS.len()) as u64 - detached_variants()
}

#[tokio::test]
async fn a_connect_loads_only_the_scripts_the_server_lacks() {
    let server = RedisServer::start();
    let ns = unique_namespace("connect-loads");
    let every = readied();

    server.reset_stats().await;
    eval_handle(&server.url(), &ns).await;
    assert_eq!(server.command_calls("script|exists").await, 1);
    assert_eq!(
        server.command_calls("script|load").await,
        every,
        "a fresh server lacks them all"
    );

    server.reset_stats().await;
    let queue = eval_handle(&server.url(), &ns).await;
    assert_eq!(server.command_calls("script|exists").await, 1);
    assert_eq!(
        server.command_calls("script|load").await,
        0,
        "all were cached"
    );
    roundtrip(&queue).await;

    // Gone from the cache: the next connect loads them again.
    server.cmd(&["SCRIPT", "FLUSH"]).await;
    server.reset_stats().await;
    let queue = eval_handle(&server.url(), &ns).await;
    assert_eq!(server.command_calls("script|load").await, every);
    server.reset_stats().await;
    roundtrip(&queue).await;
    assert_eq!(
        server.command_calls("script|load").await,
        0,
        "the calls met no NOSCRIPT"
    );
}

#[tokio::test]
async fn a_user_refused_script_exists_still_connects_and_loads_every_script() {
    let server = RedisServer::start();
    let ns = unique_namespace("connect-no-exists");
    // An ACL written before the connect asked: the check is refused, so
    // every script is loaded, as before.
    let rules: Vec<String> = worker_acl(&ns, "no-exists-secret")
        .into_iter()
        .chain(["-script|exists".to_owned()])
        .collect();
    set_user(&server, &rules).await;
    eval_handle(&server.url(), &ns).await;
    server.reset_stats().await;
    let queue = eval_handle(&user_url(&server, "worker", "no-exists-secret"), &ns).await;
    assert_eq!(server.command_calls("script|load").await, readied());
    roundtrip(&queue).await;
}

/// A namespace that detaches payloads readies the variants its acks and
/// enqueues go to as well; one that does not leaves them off the server
/// (each library is Redis memory).
#[tokio::test]
async fn only_a_detaching_namespace_readies_the_detached_variants() {
    let server = RedisServer::start();
    let plain = unique_namespace("connect-plain");
    let url = server.url();
    handle(&url, &plain, ScriptCalls::Functions, true).await;
    let name = |script: &str| redq::lua::function_name(script).unwrap().to_owned();
    let loaded = server.function_libraries().await;
    assert_eq!(loaded.len() as u64, readied(), "{loaded:?}");
    assert!(!loaded.contains(&name("ack_detached")), "{loaded:?}");

    let detaching = unique_namespace("connect-detaching");
    handle(&url, &detaching, ScriptCalls::Functions, true)
        .await
        .set_record_format(redq::RecordFormat::CompactDetached { min_bytes: 64 })
        .await
        .unwrap();
    handle(&url, &detaching, ScriptCalls::Functions, true).await;
    let loaded = server.function_libraries().await;
    assert_eq!(
        loaded.len() as u64,
        readied() + detached_variants(),
        "{loaded:?}"
    );
    for script in ["ack_detached", "enqueue_detached"] {
        assert!(loaded.contains(&name(script)), "{script} in {loaded:?}");
    }
}

/// A handle that readies no script at connect, calling them as `how`.
async fn lazy_handle(server: &RedisServer, namespace: &str, how: ScriptCalls) -> RedisQueue {
    handle(&server.url(), namespace, how, false).await
}

#[tokio::test]
async fn without_preloading_each_script_is_loaded_at_its_first_call() {
    let server = RedisServer::start();
    let ns = unique_namespace("connect-lazy");
    server.reset_stats().await;
    let queue = lazy_handle(&server, &ns, ScriptCalls::Eval).await;
    assert_eq!(server.command_calls("script|exists").await, 0);
    assert_eq!(server.command_calls("script|load").await, 0);
    // Enqueue, claim and ack (a plain job on a plain queue: their
    // variants): three scripts, each met NOSCRIPT once.
    roundtrip(&queue).await;
    assert_eq!(server.command_calls("script|load").await, 3);
    server.reset_stats().await;
    roundtrip(&queue).await;
    assert_eq!(server.command_calls("script|load").await, 0);
    // Another handle finds them cached.
    roundtrip(&lazy_handle(&server, &ns, ScriptCalls::Eval).await).await;
    assert_eq!(server.command_calls("script|load").await, 0);
}

#[tokio::test]
async fn without_preloading_each_library_is_loaded_at_its_first_call() {
    let server = RedisServer::start();
    let ns = unique_namespace("connect-lazy-functions");
    let queue = lazy_handle(&server, &ns, ScriptCalls::Functions).await;
    assert_eq!(server.function_libraries().await, Vec::<String>::new());
    roundtrip(&queue).await;
    let loaded = server.function_libraries().await;
    // Plain jobs on a plain queue: the variants of enqueue, claim and ack.
    for script in ["enqueue_plain", "claim_plain", "ack_plain"] {
        let name = redq::lua::function_name(script).unwrap();
        assert!(loaded.iter().any(|l| l == name), "{name} in {loaded:?}");
    }
    assert_eq!(loaded.len(), 3, "{loaded:?}");
}
