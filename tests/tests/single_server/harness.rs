//! Tests for the real-redis harness itself: if these fail, every other
//! integration test's result is meaningless.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};
use redq_tests::{connect, unique_namespace, wait_until, RedisServer};

fn text(value: Value) -> String {
    value.convert().expect("reply is a string")
}

/// `CONFIG GET key` -> value.
async fn config_get(server: &RedisServer, key: &str) -> String {
    let pair: Vec<String> = server
        .cmd(&["CONFIG", "GET", key])
        .await
        .convert()
        .expect("CONFIG GET returns a pair");
    assert_eq!(pair.len(), 2, "CONFIG GET {key} -> {pair:?}");
    pair[1].clone()
}

/// A process that exited *and was reaped* has no /proc entry (a zombie would).
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn start_answers_ping_with_test_defaults() {
    let server = RedisServer::start();

    assert_eq!(text(server.cmd(&["PING"]).await), "PONG");
    assert!(server.dir().is_dir());
    assert!(process_exists(server.pid()));
    assert!(server.log().contains("Ready to accept connections"));
    assert!(server.password().is_none());
    assert_eq!(server.url(), format!("redis://127.0.0.1:{}", server.port()));
    // No persistence unless asked for, and nothing reachable from outside.
    assert_eq!(config_get(&server, "save").await, "");
    assert_eq!(config_get(&server, "appendonly").await, "no");
    assert_eq!(config_get(&server, "bind").await, "127.0.0.1");
    assert_eq!(config_get(&server, "port").await, server.port().to_string());
}

#[tokio::test]
async fn client_is_connected_and_usable() {
    let server = RedisServer::start();
    let client = server.client().await;
    assert!(client.is_connected());
    let reply: String = client
        .custom(
            CustomCommand::new_static("ECHO", ClusterHash::FirstKey, false),
            vec!["hi"],
        )
        .await
        .unwrap();
    assert_eq!(reply, "hi");
    client.quit().await.unwrap();
}

#[test]
fn drop_kills_and_reaps_the_process_and_removes_the_dir() {
    let server = RedisServer::start();
    let pid = server.pid();
    let dir = server.dir().to_owned();
    assert!(process_exists(pid));

    drop(server);

    assert!(!process_exists(pid), "redis-server {pid} survived drop");
    assert!(!dir.exists(), "{} survived drop", dir.display());
}

#[tokio::test]
async fn kill9_stops_the_server_but_keeps_its_dir() {
    let mut server = RedisServer::start();
    let pid = server.pid();

    server.kill9();
    assert!(!process_exists(pid), "redis-server {pid} survived kill9");
    assert!(server.dir().is_dir());
    assert!(server.try_cmd(&["PING"]).await.is_err());
    // Idempotent, so tests need not track whether they already killed it.
    server.kill9();
}

#[tokio::test]
async fn restart_with_appendonly_always_recovers_acknowledged_writes() {
    let mut server = RedisServer::builder().appendonly_always().start();
    let port = server.port();
    let old_pid = server.pid();
    assert_eq!(config_get(&server, "appendfsync").await, "always");
    server.cmd(&["SET", "survivor", "yes"]).await;

    server.kill9();
    server.restart();

    assert_eq!(server.port(), port);
    assert_ne!(server.pid(), old_pid);
    assert!(server.dir().join("appendonlydir").is_dir());
    assert_eq!(text(server.cmd(&["GET", "survivor"]).await), "yes");
    // Both runs' logs are kept, for post-mortems.
    assert_eq!(
        server.log().matches("Ready to accept connections").count(),
        2
    );
}

#[tokio::test]
async fn restart_of_a_running_server_kills_it_first() {
    let mut server = RedisServer::start();
    let old_pid = server.pid();
    server.cmd(&["SET", "lost", "1"]).await;

    server.restart();

    assert!(!process_exists(old_pid));
    assert!(process_exists(server.pid()));
    // Default config persists nothing, so the new process starts empty.
    assert_eq!(server.cmd(&["EXISTS", "lost"]).await, Value::Integer(0));
}

#[tokio::test]
async fn unix_socket_accepts_connections() {
    let server = RedisServer::start();
    let url = server.unix_url();
    assert_eq!(
        url,
        format!("redis+unix://{}", server.socket_path().display())
    );
    assert!(url.starts_with("redis+unix:///"));

    let client = connect(&url)
        .await
        .expect("connecting over the unix socket");
    let reply: String = client
        .custom(
            CustomCommand::new_static("PING", ClusterHash::FirstKey, false),
            Vec::<String>::new(),
        )
        .await
        .unwrap();
    assert_eq!(reply, "PONG");
    client.quit().await.unwrap();
}

#[tokio::test]
async fn password_is_required_and_url_with_password_works() {
    // Characters that must be percent-encoded inside a URL.
    let password = "s3cr@t:/x";
    let server = RedisServer::builder().password(password).start();
    assert_eq!(server.password(), Some(password));
    assert_eq!(
        server.url_with_password(),
        format!("redis://:s3cr%40t%3A%2Fx@127.0.0.1:{}", server.port())
    );

    // Without credentials the server refuses to serve.
    let denied = match connect(&server.url()).await {
        Err(e) => e.to_string(),
        Ok(client) => client
            .custom::<Value, String>(
                CustomCommand::new_static("PING", ClusterHash::FirstKey, false),
                vec![],
            )
            .await
            .expect_err("PING without AUTH must fail")
            .to_string(),
    };
    assert!(denied.contains("NOAUTH"), "unexpected error: {denied}");

    // cmd()/client() authenticate automatically.
    assert_eq!(text(server.cmd(&["PING"]).await), "PONG");
    let client = connect(&server.url_with_password()).await.unwrap();
    client.quit().await.unwrap();
}

#[test]
#[should_panic(expected = "without .password")]
fn url_with_password_panics_without_a_password() {
    RedisServer::start().url_with_password();
}

#[tokio::test]
async fn maxmemory_rejects_writes_instead_of_evicting() {
    let limit: u64 = 4 * 1024 * 1024;
    let server = RedisServer::builder().maxmemory(limit).start();
    assert_eq!(config_get(&server, "maxmemory").await, limit.to_string());
    assert_eq!(config_get(&server, "maxmemory-policy").await, "noeviction");

    let big = "x".repeat(256 * 1024);
    let mut rejected = None;
    for i in 0..64 {
        if let Err(e) = server.try_cmd(&["SET", &format!("k{i}"), &big]).await {
            rejected = Some(e.to_string());
            break;
        }
    }
    let rejected = rejected.expect("writes past maxmemory must fail");
    assert!(rejected.contains("OOM"), "unexpected error: {rejected}");
    // Nothing was evicted to make room.
    assert_eq!(server.cmd(&["EXISTS", "k0"]).await, Value::Integer(1));
}

#[tokio::test]
async fn debug_command_needs_enable_debug() {
    let plain = RedisServer::start();
    let refused = plain.try_cmd(&["DEBUG", "SLEEP", "0"]).await.unwrap_err();
    assert!(
        refused.to_string().contains("not allowed"),
        "unexpected error: {refused}"
    );

    let debug = RedisServer::builder().enable_debug().start();
    assert_eq!(text(debug.cmd(&["DEBUG", "SLEEP", "0"]).await), "OK");
}

#[tokio::test]
async fn extra_args_are_passed_through_and_override_defaults() {
    let server = RedisServer::builder()
        .arg("hz", "42")
        .arg("--appendonly", "yes")
        .start();
    assert_eq!(config_get(&server, "hz").await, "42");
    assert_eq!(config_get(&server, "appendonly").await, "yes");
}

#[test]
#[should_panic(expected = "Bad directive")]
fn start_failure_reports_the_server_log() {
    RedisServer::builder().arg("no-such-directive", "1").start();
}

#[test]
fn parallel_servers_get_distinct_ports() {
    let servers: Vec<RedisServer> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(RedisServer::start)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ports: Vec<u16> = servers.iter().map(RedisServer::port).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), servers.len());
}

#[test]
#[should_panic(expected = "taken by another process")]
fn restart_reports_a_stolen_port() {
    let mut server = RedisServer::start();
    server.kill9();
    let _thief = TcpListener::bind((Ipv4Addr::LOCALHOST, server.port())).unwrap();
    server.restart();
}

#[test]
fn unique_namespace_is_unique_and_key_safe() {
    let a = unique_namespace("queue::fifo {x}");
    let b = unique_namespace("queue::fifo {x}");
    assert_ne!(a, b);
    assert!(a.starts_with("t-queue__fifo__x_-"), "{a}");
    for ns in [&a, &b] {
        assert!(!ns.contains(['{', '}', ':', ' ']), "{ns}");
    }
}

#[tokio::test]
async fn wait_until_returns_once_the_condition_holds() {
    let mut polls = 0;
    wait_until(Duration::from_secs(5), "the third poll", async || {
        polls += 1;
        polls >= 3
    })
    .await;
    assert_eq!(polls, 3);
}

#[tokio::test]
async fn wait_until_works_with_redis_and_inside_spawned_tasks() {
    let server = Arc::new(RedisServer::start());
    let polls = Arc::new(AtomicUsize::new(0));

    let (s, p) = (server.clone(), polls.clone());
    let waiter = tokio::spawn(async move {
        wait_until(Duration::from_secs(5), "key `flag` to appear", move || {
            let (s, p) = (s.clone(), p.clone());
            async move {
                p.fetch_add(1, Ordering::SeqCst);
                s.cmd(&["EXISTS", "flag"]).await == Value::Integer(1)
            }
        })
        .await;
    });
    wait_until(Duration::from_secs(5), "the waiter to poll", async || {
        polls.load(Ordering::SeqCst) > 0
    })
    .await;
    server.cmd(&["SET", "flag", "1"]).await;
    waiter.await.unwrap();
}

#[tokio::test]
#[should_panic(expected = "waiting for the impossible")]
async fn wait_until_panics_naming_what_after_the_deadline() {
    wait_until(Duration::from_millis(50), "the impossible", async || false).await;
}
