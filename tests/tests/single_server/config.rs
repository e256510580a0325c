//! `from_config`: every setting read from the environment and from a file,
//! the environment beating the file, each kind of bad value refused with a
//! sentence naming key, value, origin and what is accepted, passwords never
//! shown, and a real connect from settings alone.
//!
//! The environment is a map handed to `Config::load_from`, never the
//! process's own, so these tests cannot leak variables into each other.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use redq::config::{Config, Mode};
use redq::worker::{
    CancellationToken, JobCx, JobError, JobQueue, Registry, TypedJob, WorkOptions, Worker,
};
use redq::{ConfiguredQueue, Queue, QueueError};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

const PASSWORD: &str = "canary-Pa55w0rd-c0nf";
const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn load(vars: &[(&str, &str)]) -> Result<Config, QueueError> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::load_from(|name| vars.get(name).cloned())
}

/// A config file holding `text`, deleted when dropped.
fn file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

fn path(file: &tempfile::NamedTempFile) -> String {
    file.path().to_str().unwrap().to_owned()
}

/// The error's message, checked to contain no password in any form.
#[track_caller]
fn refused(result: Result<Config, QueueError>) -> String {
    let err = result.expect_err("the settings should be refused");
    assert!(
        matches!(err, QueueError::InvalidSetting { .. }),
        "not a setting error: {err:?}"
    );
    let shown = err.to_string();
    let debug = format!("{err:?}");
    assert!(!shown.contains(PASSWORD), "password shown: {shown}");
    assert!(!debug.contains(PASSWORD), "password in Debug: {debug}");
    shown
}

#[test]
fn nothing_set_gives_every_default() {
    let config = load(&[]).unwrap();
    assert_eq!(config.redacted_url(), "redis://127.0.0.1:6379");
    assert_eq!(config.namespace(), "redq");
    assert_eq!(config.shards(), 1);
    assert_eq!(config.mode(), Mode::Redis);
    assert_eq!(config.pool_size(), redq::DEFAULT_POOL_SIZE);
    assert_eq!(config.payload_limit(), redq::DEFAULT_PAYLOAD_LIMIT);
    assert_eq!(config.command_timeout(), redq::DEFAULT_COMMAND_TIMEOUT);
    assert_eq!(config.tls_ca_file(), None);
    assert_eq!(config.script_calls(), redq::ScriptCalls::Auto);
}

#[test]
fn every_key_is_read_from_the_environment() {
    let ca = file(PEM);
    let config = load(&[
        ("REDIS_URL", "redis://cache.internal:6390/2"),
        ("REDQ_NAMESPACE", "acme"),
        ("REDQ_SHARDS", "3"),
        ("REDQ_MODE", "inline"),
        ("REDQ_POOL_SIZE", "7"),
        ("REDQ_PAYLOAD_LIMIT", "2048"),
        ("REDQ_COMMAND_TIMEOUT", "1500ms"),
        ("REDQ_TLS_CA_FILE", &path(&ca)),
        ("REDQ_SCRIPT_CALLS", "functions"),
    ])
    .unwrap();
    assert_eq!(
        every_setting(&config),
        expected_with_timeout(&ca, Duration::from_millis(1500))
    );
}

#[test]
fn every_key_is_read_from_the_file_redq_config_names() {
    let ca = file(PEM);
    let settings = file(&format!(
        "# shared by every service of the deployment\n\
         url = \"redis://cache.internal:6390/2\"\n\
         namespace = \"acme\"  # the hash tag\n\
         \n\
         shards = 3\n\
         mode = \"inline\"\n\
         pool_size = 7\n\
         payload_limit = 2048\n\
         command_timeout = \"2m\"\n\
         tls_ca_file = \"{}\"\n\
         script_calls = \"functions\"\n",
        path(&ca)
    ));
    let config = load(&[("REDQ_CONFIG", &path(&settings))]).unwrap();
    assert_eq!(
        every_setting(&config),
        expected_with_timeout(&ca, Duration::from_secs(120))
    );
}

/// Every setting of `config`, in the order of the docs' table.
type Settings = (
    String,
    String,
    usize,
    Mode,
    usize,
    usize,
    Duration,
    Option<PathBuf>,
    redq::ScriptCalls,
);

fn every_setting(config: &Config) -> Settings {
    (
        config.redacted_url(),
        config.namespace().to_owned(),
        config.shards(),
        config.mode(),
        config.pool_size(),
        config.payload_limit(),
        config.command_timeout(),
        config.tls_ca_file().map(Path::to_path_buf),
        config.script_calls(),
    )
}

/// What the two "every key" tests set, but for the timeout's spelling.
fn expected_with_timeout(ca: &tempfile::NamedTempFile, timeout: Duration) -> Settings {
    let url = "redis://cache.internal:6390/2".to_owned();
    let ca = Some(ca.path().to_path_buf());
    (
        url,
        "acme".to_owned(),
        3,
        Mode::Inline,
        7,
        2048,
        timeout,
        ca,
        redq::ScriptCalls::Functions,
    )
}

#[test]
fn the_environment_beats_the_file_key_by_key() {
    let settings = file("namespace = \"from-file\"\npool_size = 5\n");
    let config = load(&[
        ("REDQ_CONFIG", &path(&settings)),
        ("REDQ_NAMESPACE", "from-env"),
        // Empty counts as unset, so the file's value stands.
        ("REDQ_POOL_SIZE", ""),
    ])
    .unwrap();
    assert_eq!(config.namespace(), "from-env");
    assert_eq!(config.pool_size(), 5);
}

#[test]
fn a_bad_value_names_key_value_origin_and_what_is_accepted() {
    let cases: [(&str, &str, &str); 14] = [
        (
            "REDQ_POOL_SIZE",
            "0",
            r#"invalid pool_size "0" from REDQ_POOL_SIZE: 1 to 64"#,
        ),
        (
            "REDQ_POOL_SIZE",
            "65",
            r#"invalid pool_size "65" from REDQ_POOL_SIZE: 1 to 64"#,
        ),
        (
            "REDQ_POOL_SIZE",
            "four",
            r#"invalid pool_size "four" from REDQ_POOL_SIZE: a whole number, 1 to 64"#,
        ),
        (
            "REDQ_SHARDS",
            "65",
            r#"invalid shards "65" from REDQ_SHARDS: 1 (one namespace) to 64 (a ShardedQueue over that many namespaces)"#,
        ),
        (
            "REDQ_MODE",
            "fast",
            r#"invalid mode "fast" from REDQ_MODE: redis or inline"#,
        ),
        (
            "REDQ_NAMESPACE",
            "a:b",
            r#"invalid namespace "a:b" from REDQ_NAMESPACE: a namespace is 1 to 128 bytes without control characters or '{', '}', ':'"#,
        ),
        (
            "REDQ_PAYLOAD_LIMIT",
            "0",
            r#"invalid payload_limit "0" from REDQ_PAYLOAD_LIMIT: 1 byte to 512 MiB"#,
        ),
        (
            "REDQ_PAYLOAD_LIMIT",
            "1MiB",
            r#"invalid payload_limit "1MiB" from REDQ_PAYLOAD_LIMIT: a whole number, bytes from 1 to 536870912 (512 MiB)"#,
        ),
        (
            "REDQ_COMMAND_TIMEOUT",
            "10",
            r#"invalid command_timeout "10" from REDQ_COMMAND_TIMEOUT: a whole number with a unit, ms, s, m or h (500ms, 30s), at least 1 ms"#,
        ),
        (
            "REDQ_COMMAND_TIMEOUT",
            "0s",
            r#"invalid command_timeout "0s" from REDQ_COMMAND_TIMEOUT: a whole number with a unit, ms, s, m or h (500ms, 30s), at least 1 ms"#,
        ),
        (
            "REDQ_COMMAND_TIMEOUT",
            "87660h1",
            r#"invalid command_timeout "87660h1" from REDQ_COMMAND_TIMEOUT: a whole number with a unit, ms, s, m or h (500ms, 30s), at least 1 ms"#,
        ),
        (
            "REDQ_COMMAND_TIMEOUT",
            "99999h",
            r#"invalid command_timeout "99999h" from REDQ_COMMAND_TIMEOUT: at most ten years"#,
        ),
        (
            "REDQ_SCRIPT_CALLS",
            "fcall",
            r#"invalid script_calls "fcall" from REDQ_SCRIPT_CALLS: auto, eval or functions"#,
        ),
        (
            "REDIS_URL",
            "ftp://cache/queue",
            r#"invalid url "ftp://cache/queue" from REDIS_URL: unsupported scheme; accepted: redis://, rediss:// (TLS), redis+unix://, redis-cluster://, rediss-cluster://, redis-sentinel://, rediss-sentinel://"#,
        ),
    ];
    for (var, value, message) in cases {
        assert_eq!(refused(load(&[(var, value)])), message, "{var}={value}");
    }
}

#[test]
fn a_bad_value_in_the_file_names_the_file_and_line() {
    let settings = file("namespace = \"acme\"\n\nmode = \"fast\"\n");
    let at = path(&settings);
    assert_eq!(
        refused(load(&[("REDQ_CONFIG", &at)])),
        format!(r#"invalid mode "fast" from {at} line 3: redis or inline"#)
    );
}

/// `message` with `{}` standing for the file's path, for the file `text`.
#[track_caller]
fn assert_file_refused(text: &str, message: &str) {
    let settings = file(text);
    let at = path(&settings);
    assert_eq!(
        refused(load(&[("REDQ_CONFIG", &at)])),
        message.replace("{}", &at),
        "{text}"
    );
}

#[test]
fn a_file_that_is_not_toml_is_refused_at_the_line_and_column() {
    let cases: [(&str, &str); 6] = [
        (
            "mode = inline",
            "invalid mode (not shown: it may hold a password) from {} line 1 column 8: text in double quotes, or a whole number, then at most a # comment; this is not TOML (invalid float, expected `inf`)",
        ),
        (
            "mode = \"inline",
            "invalid mode (not shown: it may hold a password) from {} line 1 column 15: text in double quotes, or a whole number, then at most a # comment; this is not TOML (invalid basic string, expected `\"`)",
        ),
        (
            "just words",
            "invalid line (not shown: it may hold a password) from {} line 1 column 6: key = value lines and # comments, the flat part of TOML; this is not TOML (key with no value, expected `=`)",
        ),
        (
            "shards = 2\nshards = 3",
            r#"invalid shards "3" from {} line 2: each key once (it is also set on {} line 1)"#,
        ),
        (
            "pool_size = 4 5",
            "invalid pool_size (not shown: it may hold a password) from {} line 1 column 13: text in double quotes, or a whole number, then at most a # comment; this is not TOML (string values must be quoted, expected literal string)",
        ),
        (
            // Leading zeros were read before; TOML has none.
            "shards = 007",
            "invalid shards (not shown: it may hold a password) from {} line 1 column 10: text in double quotes, or a whole number, then at most a # comment; this is not TOML (unexpected leading zero, expected nothing)",
        ),
    ];
    for (text, message) in cases {
        assert_file_refused(text, message);
    }
}

#[test]
fn a_file_that_is_not_flat_is_refused_naming_the_table() {
    let tables = "top-level key = value lines (the file has no [tables], [[arrays of tables]], dotted keys or inline tables)";
    let cases: [(&str, &str); 6] = [
        (
            "[redq]\nshards = 2",
            "invalid table \"redq\" from {} line 1",
        ),
        (
            "[[queues]]\nname = \"a\"",
            "invalid table \"queues\" from {} line 1",
        ),
        (
            "shards = 2\nredq.url = \"x\"",
            "invalid table \"redq\" from {} line 2",
        ),
        (
            "url = { host = \"cache\" }",
            "invalid table \"url\" from {} line 1",
        ),
        // A table is refused as one even when a setting has its name.
        (
            "\n[pool_size]\n",
            "invalid table \"pool_size\" from {} line 2",
        ),
        // The first problem in the file is the one reported.
        (
            "a.b = 1\npoolsize = 4",
            "invalid table \"a\" from {} line 1",
        ),
    ];
    for (text, origin) in cases {
        assert_file_refused(text, &format!("{origin}: {tables}"));
    }
}

#[test]
fn an_unknown_key_or_a_value_of_another_type_is_refused_at_its_line() {
    assert_file_refused(
        "shards = 2\n\npoolsize = 4",
        r#"invalid setting name "poolsize" from {} line 3: one of url, namespace, shards, mode, pool_size, payload_limit, command_timeout, tls_ca_file, script_calls"#,
    );
    assert_file_refused(
        "mode = \"redis\"\ncommand_timeout = 1.5",
        r#"invalid command_timeout "1.5" from {} line 2: text in double quotes, or a whole number, not a TOML float"#,
    );
    assert_file_refused(
        "shards = true",
        r#"invalid shards "true" from {} line 1: text in double quotes, or a whole number, not a TOML boolean"#,
    );
    // Every TOML string and integer form is read, and checked as before.
    let settings = file(
        "namespace = 'lit\\eral'\npayload_limit = 1_024\npool_size = 0x8\nmode = \"\"\"\ninline\"\"\"\n",
    );
    let config = load(&[("REDQ_CONFIG", &path(&settings))]).unwrap();
    assert_eq!(config.namespace(), "lit\\eral");
    assert_eq!(config.payload_limit(), 1024);
    assert_eq!(config.pool_size(), 8);
    assert_eq!(config.mode(), Mode::Inline);
}

#[test]
fn a_toml_syntax_error_never_shows_the_line() {
    // Each file holds the password on the line the parser stops at.
    let cases = [
        format!("shards = 2\nurl = \"redis://:{PASSWORD}@cache\n"),
        format!("url = \"redis://:{PASSWORD}@cache\" {PASSWORD}\n"),
        format!("namespace = \"acme\"\n{PASSWORD}\n"),
        format!("namespace = {PASSWORD}\n"),
        format!("[{PASSWORD}\n"),
        format!("url = \"redis://:{PASSWORD}\\q@cache\"\n"),
    ];
    let lines = [2, 1, 2, 1, 1, 1];
    for (text, line) in cases.iter().zip(lines) {
        let settings = file(text);
        let at = path(&settings);
        // `refused` checks that neither Display nor Debug holds the password.
        let message = refused(load(&[("REDQ_CONFIG", &at)]));
        assert!(
            message.contains(&format!(
                "(not shown: it may hold a password) from {at} line {line} column "
            )),
            "{text}: {message}"
        );
        assert!(message.contains("this is not TOML ("), "{text}: {message}");
    }
}

#[test]
fn a_missing_file_is_refused_naming_it() {
    let message = refused(load(&[("REDQ_CONFIG", "/nonexistent/redq.toml")]));
    assert_eq!(
        message,
        r#"invalid config file "/nonexistent/redq.toml" from REDQ_CONFIG: a readable UTF-8 file (No such file or directory (os error 2))"#
    );
}

#[test]
fn a_ca_file_must_hold_a_certificate() {
    let missing = refused(load(&[("REDQ_TLS_CA_FILE", "/nonexistent/ca.pem")]));
    assert_eq!(
        missing,
        r#"invalid tls_ca_file "/nonexistent/ca.pem" from REDQ_TLS_CA_FILE: a readable file of PEM certificates (No such file or directory (os error 2))"#
    );
    let empty = file("not a certificate");
    let at = path(&empty);
    assert_eq!(
        refused(load(&[("REDQ_TLS_CA_FILE", &at)])),
        format!(
            r#"invalid tls_ca_file "{at}" from REDQ_TLS_CA_FILE: a PEM file with at least one -----BEGIN CERTIFICATE----- block"#
        )
    );
}

#[test]
fn a_password_in_the_url_is_never_shown() {
    // A refused URL is shown without its password.
    let bad = format!("redis://ops:{PASSWORD}@cache:notaport");
    let message = refused(load(&[("REDIS_URL", &bad)]));
    assert!(message.starts_with("invalid url "), "{message}");
    assert!(message.contains("from REDIS_URL"), "{message}");
    // One that does not parse at all is not echoed.
    let garbage = format!("{PASSWORD} pasted here");
    assert_eq!(
        refused(load(&[("REDIS_URL", &garbage)])),
        "invalid url (not shown: it may hold a password) from REDIS_URL: unsupported scheme; \
         accepted: redis://, rediss:// (TLS), redis+unix://, redis-cluster://, rediss-cluster://, \
         redis-sentinel://, rediss-sentinel://"
    );
    // Nor in a file line that cannot be read, or a repeated url.
    let settings = file(&format!("url = \"redis://:{PASSWORD}@cache\" trailing\n"));
    let message = refused(load(&[("REDQ_CONFIG", &path(&settings))]));
    assert!(
        message.contains("(not shown: it may hold a password)"),
        "{message}"
    );
    // An accepted one is kept, but Debug shows it without the password.
    let good = format!("redis://ops:{PASSWORD}@cache:6379");
    let config = load(&[("REDIS_URL", &good)]).unwrap();
    let debug = format!("{config:?}");
    assert!(!debug.contains(PASSWORD), "{debug}");
    assert!(debug.contains("redis://ops@cache:6379"), "{debug}");
    assert_eq!(config.redacted_url(), "redis://ops@cache:6379");
}

#[tokio::test]
async fn the_configured_redis_is_connected_and_used() {
    let server = RedisServer::builder().password(PASSWORD).start();
    let namespace = unique_namespace("config");
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{}", server.port());
    let config = load(&[
        ("REDIS_URL", &url),
        ("REDQ_NAMESPACE", &namespace),
        ("REDQ_POOL_SIZE", "1"),
        ("REDQ_PAYLOAD_LIMIT", "64"),
    ])
    .unwrap();
    let queue = config.connect().await.unwrap();
    let ConfiguredQueue::Redis(redis) = &queue else {
        panic!("one namespace should be a RedisQueue: {queue:?}");
    };
    assert_eq!(redis.namespace(), namespace);
    assert!(!format!("{queue:?}").contains(PASSWORD));

    queue.enqueue("q", vec![json!("hi")]).await.unwrap();
    let jobs = queue.claim("q", 10, Duration::from_secs(30)).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].payload, json!("hi"));
    queue.complete(&jobs[0].id).await.unwrap();
    // The payload limit came from the settings.
    let big = json!("x".repeat(100));
    assert!(matches!(
        queue.enqueue("q", vec![big]).await,
        Err(QueueError::PayloadTooLarge { limit: 64, .. })
    ));
    let counts = queue.operator().unwrap().counts("q").await.unwrap();
    assert_eq!(counts.waiting, 0);
}

#[tokio::test]
async fn script_calls_functions_makes_the_configured_queue_call_fcall() {
    let server = RedisServer::start();
    let config = load(&[
        ("REDIS_URL", &server.url()),
        ("REDQ_NAMESPACE", &unique_namespace("config-fn")),
        ("REDQ_SCRIPT_CALLS", "functions"),
    ])
    .unwrap();
    let queue = config.connect().await.unwrap();
    server.cmd(&["CONFIG", "RESETSTAT"]).await;
    queue.enqueue("q", vec![json!("hi")]).await.unwrap();
    let jobs = queue.claim("q", 10, Duration::from_secs(30)).await.unwrap();
    queue.complete(&jobs[0].id).await.unwrap();
    assert!(server.command_calls("fcall").await > 0);
    assert_eq!(server.command_calls("evalsha").await, 0);
}

#[tokio::test]
async fn shards_above_one_connect_a_sharded_queue() {
    let server = RedisServer::start();
    let base = unique_namespace("config-shards");
    let config = load(&[
        ("REDIS_URL", &server.url()),
        ("REDQ_NAMESPACE", &base),
        ("REDQ_SHARDS", "3"),
    ])
    .unwrap();
    let ConfiguredQueue::Sharded(sharded) = config.connect().await.unwrap() else {
        panic!("three shards should be a ShardedQueue");
    };
    assert_eq!(sharded.base(), base);
    assert_eq!(sharded.shards().len(), 3);
}

#[tokio::test]
async fn inline_mode_needs_no_redis() {
    // Nothing listens on this port: inline mode never connects.
    let config = load(&[
        ("REDQ_MODE", "inline"),
        ("REDIS_URL", "redis://127.0.0.1:1"),
    ])
    .unwrap();
    let queue = config.connect().await.unwrap();
    assert!(matches!(queue, ConfiguredQueue::Inline(_)));
    assert!(queue.operator().is_none());
    queue.enqueue("q", vec![json!(1)]).await.unwrap();
    let jobs = queue.claim("q", 10, Duration::from_secs(30)).await.unwrap();
    assert_eq!(jobs.len(), 1);
    queue.complete(&jobs[0].id).await.unwrap();
}

/// Counts its runs, for the worker test below (only it uses this type).
#[derive(serde::Serialize, serde::Deserialize)]
struct Greet;

static GREETED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl TypedJob for Greet {
    const NAME: &'static str = "config.greet";
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        GREETED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn a_worker_and_typed_push_run_on_the_configured_queue() {
    let queue = load(&[("REDQ_MODE", "inline")])
        .unwrap()
        .connect()
        .await
        .unwrap();
    JobQueue::new(queue.clone()).push(&Greet).await.unwrap();
    let mut registry = Registry::new();
    registry.add_job::<Greet>();
    let options = WorkOptions::new().queues([Greet::QUEUE]).schedules(false);
    let worker = Worker::new(queue, registry, options).unwrap();
    let stop = CancellationToken::new();
    let running = tokio::spawn(worker.run(stop.clone()));
    wait_until(Duration::from_secs(10), "the pushed job ran", async || {
        GREETED.load(std::sync::atomic::Ordering::SeqCst) == 1
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
}
