//! Fixtures the driver tests share: lease lengths, a debug-enabled server,
//! queue handles, dataset probes and assertions on typed errors.

use std::time::Duration;

use crate::history::meta::Meta;
use crate::{unique_namespace, RedisServer};
use fred::types::Value;
use redq::{Job, NewJob, QueueError, RedisQueue};
use serde_json::json;

/// A long lease: nothing lapses during a test that does not want it to.
pub const LONG: Duration = Duration::from_secs(60);
/// A short lease, for tests that wait (with `wait_until`) for it to lapse.
pub const SHORT: Duration = Duration::from_millis(200);
/// How long any awaited condition may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// A server that allows `DEBUG DIGEST`, so tests can prove that a rejected
/// call changed nothing at all.
pub fn server() -> RedisServer {
    RedisServer::builder().enable_debug().start()
}

/// A queue handle on `server` in a namespace of its own.
pub async fn queue(server: &RedisServer, test: &str) -> RedisQueue {
    handle(server, &unique_namespace(test)).await
}

/// [`queue`] in a namespace whose record format is `format`
/// (`redq::RecordFormat`), whatever `REDQ_TEST_RECORD_FORMAT` says.
pub async fn queue_in_format(
    server: &RedisServer,
    test: &str,
    format: redq::RecordFormat,
) -> RedisQueue {
    let queue = queue(server, test).await;
    queue
        .set_record_format(format)
        .await
        .expect("setting the record format");
    queue
}

/// Another handle on the same namespace, with its own worker identity.
///
/// Unset (or `auto`), `REDQ_TEST_SCRIPT_CALLS` leaves these handles at the
/// driver's default ([`redq::ScriptCalls::Auto`]: Redis Functions on every
/// server the suite runs on); `eval` or `functions` makes them call the
/// scripts that way, to run the tests built on them so
/// (`REDQ_TEST_SCRIPT_CALLS=eval cargo test -p redq-tests --test
/// single_server`).
///
/// `REDQ_TEST_RECORD_FORMAT=compact` makes each of them set its namespace's
/// record format to compact first (`redq::RecordFormat`), to run the tests
/// with producers storing compact records. The tests that look at stored
/// bytes or count keys then see what that format stores.
pub async fn handle(server: &RedisServer, namespace: &str) -> RedisQueue {
    let queue = RedisQueue::builder(&server.url())
        .namespace(namespace)
        .script_calls(script_calls())
        .connect()
        .await
        .expect("connecting to the test redis");
    record_format_from_env(&queue, "REDQ_TEST_RECORD_FORMAT").await;
    queue
}

/// A handle on `namespace` that calls the scripts as Redis Functions and
/// loads each library at its first call, so the server's libraries show
/// which scripts (and which variants) its calls ran.
pub async fn lazy_functions(server: &RedisServer, namespace: &str) -> RedisQueue {
    RedisQueue::builder(&server.url())
        .namespace(namespace)
        .script_calls(redq::ScriptCalls::Functions)
        .preload_scripts(false)
        .connect()
        .await
        .expect("connecting to the test redis")
}

/// Sets `queue`'s namespace to the record format environment variable
/// `var` names (`standard` or `compact`; unset or empty: left as it is),
/// so a test run or a chaos run can have its producers store compact
/// records.
pub async fn record_format_from_env(queue: &RedisQueue, var: &str) {
    let name = std::env::var(var).unwrap_or_default();
    if name.is_empty() {
        return;
    }
    let format = redq::RecordFormat::parse(&name).unwrap_or_else(|e| panic!("{var}: {e}"));
    queue
        .set_record_format(format)
        .await
        .unwrap_or_else(|e| panic!("setting the record format from {var} failed: {e}"));
}

/// The script calls `REDQ_TEST_SCRIPT_CALLS` asks for (see [`handle`]).
pub fn script_calls() -> redq::ScriptCalls {
    match std::env::var("REDQ_TEST_SCRIPT_CALLS").as_deref() {
        Ok("functions") => redq::ScriptCalls::Functions,
        Ok("eval") => redq::ScriptCalls::Eval,
        Ok("auto") | Ok("") | Err(_) => redq::ScriptCalls::Auto,
        Ok(other) => panic!("REDQ_TEST_SCRIPT_CALLS is auto, eval or functions, not {other:?}"),
    }
}

/// How many keys the server holds.
pub async fn dbsize(server: &RedisServer) -> i64 {
    server
        .cmd(&["DBSIZE"])
        .await
        .convert()
        .expect("DBSIZE is an integer")
}

/// A digest of the whole dataset (values and expiries): equal digests mean
/// nothing was written in between.
pub async fn digest(server: &RedisServer) -> String {
    server
        .cmd(&["DEBUG", "DIGEST"])
        .await
        .convert()
        .expect("DEBUG DIGEST is a string")
}

/// Length of a hash in the namespace, e.g. `hlen(&s, &q, "jobs")`.
pub async fn hlen(server: &RedisServer, queue: &RedisQueue, suffix: &str) -> i64 {
    let key = format!("{{{}}}:{suffix}", queue.namespace());
    server
        .cmd(&["HLEN", &key])
        .await
        .convert()
        .expect("HLEN is an integer")
}

/// How many payloads the namespace stores: the job records that carry one
/// after their msgpack meta (a job's payload lives in its `jobs` record),
/// and the payloads of detached records (`{ns}:detached`, a record format a
/// namespace opts into), so that next to `hlen(.., "jobs")` it says every
/// record has its payload.
pub async fn stored_payloads(server: &RedisServer, queue: &RedisQueue) -> i64 {
    let key = format!("{{{}}}:jobs", queue.namespace());
    let Value::Array(records) = server.cmd(&["HVALS", &key]).await else {
        panic!("HVALS is an array");
    };
    let carries_payload = |raw: &Value| {
        let raw = raw.as_bytes().expect("a job record is a string");
        Meta::split(raw).is_some_and(|(_, payload)| !payload.is_empty())
    };
    records.iter().filter(|r| carries_payload(r)).count() as i64
        + hlen(server, queue, "detached").await
}

/// Assert `result` is `QueueError::Invalid` about `what`, and that its
/// message names the rule.
#[track_caller]
pub fn assert_invalid<T: std::fmt::Debug>(result: Result<T, QueueError>, what: &str) {
    match result {
        Err(QueueError::Invalid {
            what: got, rule, ..
        }) => {
            assert_eq!(got, what, "wrong argument named (rule: {rule})");
            assert!(!rule.is_empty());
        }
        other => panic!("expected an invalid {what} error, got {other:?}"),
    }
}

/// Assert `result` is `QueueError::LeaseLost` for job `id`.
#[track_caller]
pub fn assert_lease_lost<T: std::fmt::Debug>(result: Result<T, QueueError>, id: &str) {
    match result {
        Err(QueueError::LeaseLost { id: got, .. }) => assert_eq!(got, id),
        other => panic!("expected LeaseLost for {id}, got {other:?}"),
    }
}

/// `n` jobs whose payloads are `{"n": 0}`, `{"n": 1}`, ...
pub fn numbered(n: usize) -> Vec<NewJob> {
    (0..n).map(|i| NewJob::new(json!({ "n": i }))).collect()
}

/// Add [`numbered`]`(n)` jobs to `name` in one batch; their ids, in order.
pub async fn add_numbered(queue: &RedisQueue, name: &str, n: usize) -> Vec<String> {
    let enqueued = queue.add_batch(name, numbered(n)).await.expect("add_batch");
    enqueued.iter().map(|e| e.id().to_owned()).collect()
}

/// The `n` field of each job's payload, in claim order.
pub fn numbers(jobs: &[Job]) -> Vec<i64> {
    jobs.iter()
        .map(|j| j.payload["n"].as_i64().expect("payload has n"))
        .collect()
}

/// Claim with a long lease, exactly `n` jobs expected.
pub async fn claim_n(queue: &RedisQueue, name: &str, n: usize) -> Vec<Job> {
    let jobs = queue.claim(name, 1000, LONG).await.expect("claim");
    assert_eq!(jobs.len(), n, "claimed {:?}", numbers_or_ids(&jobs));
    jobs
}

fn numbers_or_ids(jobs: &[Job]) -> Vec<String> {
    jobs.iter().map(|j| j.payload.to_string()).collect()
}

/// Whether a reply is the integer `n`.
pub fn is_int(value: &Value, n: i64) -> bool {
    *value == Value::Integer(n)
}
