//! Connecting: URL forms, passwords that never leak, TLS without a
//! plaintext fallback, clear errors, and namespaces that isolate queues.

use std::time::{Duration, Instant};

use fred::types::Value;
use redq::{NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::logs::LogCapture;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

const CANARY: &str = "canary-Pa55w0rd-7f3e";
const WRONG: &str = "wrong-Secret-91c2";

/// Neither the message nor the debug form of `err` contains `secret`.
#[track_caller]
fn assert_no_secret(err: &QueueError, secret: &str) {
    let shown = err.to_string();
    let debug = format!("{err:?}");
    let source = std::error::Error::source(err)
        .map(|s| format!("{s} {s:?}"))
        .unwrap_or_default();
    for text in [&shown, &debug, &source] {
        assert!(!text.contains(secret), "secret leaked: {text}");
    }
}

/// Enqueue, claim and ack one job: the handle's scripts run.
pub(crate) async fn roundtrip(queue: &RedisQueue) {
    queue.add("q", NewJob::new(json!("hi"))).await.unwrap();
    let jobs = claim_n(queue, "q", 1).await;
    queue.ack(&jobs[0].lease()).await.unwrap();
}

#[tokio::test]
async fn a_unix_socket_url_works() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&server.unix_url())
        .namespace(unique_namespace("unix"))
        .connect()
        .await
        .unwrap();
    roundtrip(&queue).await;
    assert!(queue.redacted_url().starts_with("redis+unix://"));
}

#[tokio::test]
async fn the_default_namespace_is_redq() {
    let server = RedisServer::start();
    let queue = RedisQueue::connect(&server.url()).await.unwrap();
    assert_eq!(queue.namespace(), redq::DEFAULT_NAMESPACE);
    assert_eq!(queue.namespace(), "redq");
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let keys: Vec<String> = server.cmd(&["KEYS", "*"]).await.convert().unwrap();
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|k| k.starts_with("{redq}:")), "{keys:?}");
    assert_eq!(queue.wake_channel(), "{redq}:wake");
}

#[tokio::test]
async fn a_password_url_works_and_the_password_never_shows() {
    let server = RedisServer::builder().password(CANARY).start();
    let url = server.url_with_password();
    assert!(url.contains(CANARY));
    let builder = RedisQueue::builder(&url).namespace(unique_namespace("auth"));
    assert!(!format!("{builder:?}").contains(CANARY));
    let queue = builder.connect().await.unwrap();
    roundtrip(&queue).await;
    assert!(!format!("{queue:?}").contains(CANARY), "{queue:?}");
    assert!(!format!("{queue:#?}").contains(CANARY));
    assert!(!queue.redacted_url().contains(CANARY));
    assert!(queue.redacted_url().contains(&server.port().to_string()));
    // Errors from a working connection do not carry it either.
    let err = queue
        .add("bad:name", NewJob::new(json!(1)))
        .await
        .unwrap_err();
    assert_no_secret(&err, CANARY);
}

#[tokio::test]
async fn a_password_with_url_special_characters_works() {
    let password = "p@ss:w/rd?#%";
    let server = RedisServer::builder().password(password).start();
    let queue = RedisQueue::builder(&server.url_with_password())
        .namespace(unique_namespace("auth-special"))
        .connect()
        .await
        .unwrap();
    roundtrip(&queue).await;
    assert!(!format!("{queue:?}").contains("w/rd"));
}

#[tokio::test]
async fn a_wrong_or_missing_password_fails_without_showing_either_password() {
    let server = RedisServer::builder().password(CANARY).start();
    let wrong = format!("redis://:{WRONG}@127.0.0.1:{}", server.port());
    let started = Instant::now();
    let err = RedisQueue::builder(&wrong)
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(15), "gave up late");
    assert_no_secret(&err, WRONG);
    assert_no_secret(&err, CANARY);

    let user = format!("redis://ops:{WRONG}@127.0.0.1:{}", server.port());
    let err = RedisQueue::builder(&user)
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap_err();
    assert_no_secret(&err, WRONG);

    let missing = RedisQueue::builder(&server.url())
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await;
    let err = missing.unwrap_err();
    assert_no_secret(&err, CANARY);
}

#[tokio::test]
async fn rediss_against_a_plaintext_server_fails_instead_of_falling_back() {
    let server = RedisServer::start();
    let url = format!("rediss://:{WRONG}@127.0.0.1:{}", server.port());
    // What the harness alone costs the server: a reset, then the reads.
    server.reset_stats().await;
    let baseline = server.seen_since_reset().await;
    let started = Instant::now();
    let result = RedisQueue::builder(&url)
        .command_timeout(Duration::from_secs(1))
        .namespace(unique_namespace("tls"))
        .connect()
        .await;
    let err = result.expect_err("a TLS URL must never talk plaintext");
    assert!(started.elapsed() < Duration::from_secs(15), "gave up late");
    match &err {
        QueueError::ConnectFailed { target, detail, .. } => {
            assert!(target.starts_with("rediss://127.0.0.1"), "{target}");
            assert!(detail.contains("TLS"), "{detail}");
        }
        other => panic!("expected a connect failure naming TLS, got {other:?}"),
    }
    assert_no_secret(&err, WRONG);
    // What the server saw: the driver did connect (a TLS handshake is bytes
    // a plaintext server cannot parse), yet no command of its ran, not even
    // the HELLO/AUTH a plaintext fallback would start with.
    let seen = server.seen_since_reset().await;
    assert!(
        seen.connections > baseline.connections,
        "the driver never reached the plaintext port: {seen:?} against {baseline:?}"
    );
    assert_eq!(
        seen.commands, baseline.commands,
        "commands ran on the plaintext port besides the harness's own"
    );
}

#[tokio::test]
async fn an_unsupported_scheme_is_a_clear_config_error() {
    for url in [
        format!("http://:{WRONG}@127.0.0.1:6379"),
        "memcached://127.0.0.1:11211".to_owned(),
        "unix:///tmp/redis.sock".to_owned(),
        format!("127.0.0.1:6379 {WRONG}"),
        String::new(),
    ] {
        let err = RedisQueue::connect(&url).await.unwrap_err();
        match &err {
            QueueError::Config(message) => {
                assert!(message.contains("redis://"), "{message}");
                assert!(message.contains("rediss://"), "{message}");
            }
            other => panic!("{url}: expected a Config error, got {other:?}"),
        }
        assert_no_secret(&err, WRONG);
    }
}

#[tokio::test]
async fn an_unreachable_server_is_an_error_not_a_hang() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let err = RedisQueue::builder(&format!("redis://:{WRONG}@127.0.0.1:{port}"))
        .command_timeout(Duration::from_secs(1))
        .connect()
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_no_secret(&err, WRONG);
}

#[tokio::test]
async fn namespaces_isolate_queues() {
    let server = server();
    let a = queue(&server, "tenant-a").await;
    let b = queue(&server, "tenant-b").await;
    a.add("emails", NewJob::new(json!("a"))).await.unwrap();
    b.add("emails", NewJob::new(json!("b1"))).await.unwrap();
    b.add("sms", NewJob::new(json!("b2"))).await.unwrap();
    assert_eq!(a.queues().await.unwrap(), vec!["emails"]);
    assert_eq!(b.queues().await.unwrap(), vec!["emails", "sms"]);
    assert_eq!(a.counts("emails").await.unwrap().waiting, 1);
    let from_a = claim_n(&a, "emails", 1).await;
    assert_eq!(from_a[0].payload, json!("a"));
    assert!(a.claim("emails", 10, LONG).await.unwrap().is_empty());
    // B's job cannot be seen or touched through A.
    let from_b = claim_n(&b, "emails", 1).await;
    assert_eq!(a.inspect(&from_b[0].id).await.unwrap(), None);
    assert_eq!(
        a.ack(&from_b[0].lease()).await.unwrap(),
        redq::Acked::AlreadyGone
    );
    assert_eq!(b.counts("emails").await.unwrap().leased, 1);
    // Every key of a namespace carries its hash tag.
    let keys: Vec<String> = server.cmd(&["KEYS", "*"]).await.convert().unwrap();
    for key in keys {
        let a_key = key.starts_with(&format!("{{{}}}:", a.namespace()));
        let b_key = key.starts_with(&format!("{{{}}}:", b.namespace()));
        assert!(a_key ^ b_key, "{key}");
    }
}

/// A namespace written before payloads moved into the job record would be
/// misread (empty payloads), so it is refused with the way out, unchanged.
#[tokio::test]
async fn a_namespace_in_the_earlier_storage_layout_is_refused_untouched() {
    let server = server();
    let ns = unique_namespace("earlier-layout");
    let old_key = format!("{{{ns}}}:payloads");
    let _: Value = server
        .cmd(&["HSET", &old_key, "01J0000000000000000000000", "{\"n\":1}"])
        .await;
    let before = digest(&server).await;
    let err = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .connect()
        .await
        .expect_err("an earlier layout must be refused");
    let shown = err.to_string();
    assert!(matches!(err, QueueError::Config(_)), "{err:?}");
    assert!(shown.contains(&old_key), "{shown}");
    assert!(shown.contains("earlier"), "{shown}");
    assert_eq!(digest(&server).await, before, "nothing was written");
    // A refused connect closes the connections it opened: a caller that
    // retries it (a service restarting its connect in a loop) does not
    // pile them up on the server.
    let baseline = server.connected_clients().await;
    for _ in 0..5 {
        let refused = RedisQueue::builder(&server.url())
            .namespace(&ns)
            .connect()
            .await;
        assert!(refused.is_err());
    }
    redq_tests::wait_until(
        std::time::Duration::from_secs(5),
        "the refused connects' connections to close",
        async || server.connected_clients().await <= baseline,
    )
    .await;
    // Other namespaces on the same server are not affected.
    roundtrip(&queue(&server, "earlier-layout-neighbour").await).await;
}

#[tokio::test]
async fn an_acl_user_and_password_url_works_and_neither_password_shows() {
    let server = RedisServer::builder().password(CANARY).start();
    let user_secret = "user-Secret-5a5a";
    let admin = server.client().await;
    let _: Value = fred::interfaces::ClientLike::custom(
        &admin,
        fred::types::CustomCommand::new_static("ACL", fred::types::ClusterHash::Random, false),
        vec![
            "SETUSER",
            "worker",
            "on",
            &format!(">{user_secret}"),
            "~*",
            "&*",
            "+@all",
        ],
    )
    .await
    .unwrap();
    let url = format!("redis://worker:{user_secret}@127.0.0.1:{}", server.port());
    let queue = RedisQueue::builder(&url)
        .namespace(unique_namespace("acl"))
        .connect()
        .await
        .unwrap();
    roundtrip(&queue).await;
    let shown = format!("{queue:?}");
    assert!(
        shown.contains("worker") && !shown.contains(user_secret),
        "{shown}"
    );

    let wrong = format!("redis://worker:{WRONG}@127.0.0.1:{}", server.port());
    let err = RedisQueue::connect(&wrong).await.unwrap_err();
    assert_no_secret(&err, WRONG);
    assert_no_secret(&err, user_secret);
}

#[tokio::test]
async fn a_database_number_in_the_url_is_used() {
    let server = RedisServer::start();
    let queue = RedisQueue::builder(&format!("{}/3", server.url()))
        .namespace(unique_namespace("db3"))
        .connect()
        .await
        .unwrap();
    roundtrip(&queue).await;
    assert_eq!(dbsize(&server).await, 0, "nothing in database 0");
    let keyspace: String = server.cmd(&["INFO", "keyspace"]).await.convert().unwrap();
    assert!(keyspace.contains("db3:keys="), "{keyspace}");
}

/// The connect-time warning about an evicting `maxmemory-policy`, as
/// logged through `tracing` while `RedisQueue::connect` runs.
async fn warnings_at_connect(server: &RedisServer) -> String {
    let logs = LogCapture::new();
    let _guard = logs.set_default(tracing::Level::WARN);
    RedisQueue::builder(&server.url_with_password())
        .namespace(unique_namespace("policy"))
        .connect()
        .await
        .unwrap();
    logs.text()
}

const EVICTION_WARNING: &str = "maxmemory-policy is not noeviction";

#[tokio::test(flavor = "current_thread")]
async fn an_evicting_maxmemory_policy_is_warned_about_at_connect() {
    let server = RedisServer::builder()
        .password(CANARY)
        .arg("maxmemory-policy", "allkeys-lru")
        .start();
    let logs = warnings_at_connect(&server).await;
    let warnings: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains(EVICTION_WARNING))
        .collect();
    assert_eq!(warnings.len(), 1, "warned once per connect: {logs}");
    let warning = warnings[0];
    assert!(warning.contains("WARN"), "{warning}");
    assert!(warning.contains("policy=allkeys-lru"), "{warning}");
    assert!(
        warning.contains("may evict queue keys and lose jobs"),
        "{warning}"
    );
    assert!(
        warning.contains(&format!("127.0.0.1:{}", server.port())),
        "the warning names the server: {warning}"
    );
    assert!(!logs.contains(CANARY), "the password was logged: {logs}");
}

#[tokio::test(flavor = "current_thread")]
async fn noeviction_is_not_warned_about() {
    let explicit = RedisServer::builder()
        .password(CANARY)
        .arg("maxmemory-policy", "noeviction")
        .start();
    let logs = warnings_at_connect(&explicit).await;
    assert!(!logs.contains(EVICTION_WARNING), "{logs}");
    // The same server and capture do warn once the policy evicts.
    explicit
        .cmd(&["CONFIG", "SET", "maxmemory-policy", "volatile-lru"])
        .await;
    let logs = warnings_at_connect(&explicit).await;
    assert!(logs.contains("policy=volatile-lru"), "{logs}");
    // Redis's default policy is noeviction too.
    let default = RedisServer::builder().password(CANARY).start();
    let logs = warnings_at_connect(&default).await;
    assert!(!logs.contains(EVICTION_WARNING), "{logs}");
}
