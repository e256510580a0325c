//! Putting jobs into a real Redis through the driver, and running the real
//! `redq` binary against it.

use std::process::{Command, Output};
use std::time::Duration;

use redq::{NewJob, RedisQueue};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_redq");

/// Connect the driver to a test server.
pub async fn connect(url: &str, namespace: &str) -> RedisQueue {
    RedisQueue::builder(url)
        .namespace(namespace)
        .connect()
        .await
        .expect("connecting to the test redis")
}

/// Enqueue `n` jobs and fail each once with max_attempts 1: `n` dead letters.
pub async fn dead_letters(queue: &RedisQueue, name: &str, n: usize, error: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let job = NewJob::new(serde_json::json!({"n": i, "to": format!("user{i}@example.com")}))
            .name("deliver_webhook")
            .max_attempts(1);
        ids.push(queue.add(name, job).await.unwrap().id().to_owned());
    }
    let claimed = queue.claim(name, n, Duration::from_secs(60)).await.unwrap();
    assert_eq!(claimed.len(), n);
    for job in claimed {
        queue
            .nack(&job.lease(), Duration::ZERO, error)
            .await
            .unwrap();
    }
    assert_eq!(queue.counts(name).await.unwrap().dead, n as u64);
    ids
}

/// Run `redq ARGS` with the URL and namespace in the environment.
pub fn redq(url: &str, namespace: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("REDIS_URL", url)
        .env("REDQ_NAMESPACE", namespace)
        .env_remove("REDQ_LOG")
        .output()
        .expect("running redq")
}

/// A run's stdout, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A run's stderr, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// stdout as JSON, with the run's stderr in the panic message.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The exit code, with output in the message when it is not `want`.
pub fn assert_exit(output: &Output, want: i32) {
    assert_eq!(
        output.status.code(),
        Some(want),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

pub mod tmux;

/// A worker "77-1" on host web-9 serving `queues` that beat 20 s ago and
/// then died (past the driver's 15 s TTL): its registry entry as its
/// heartbeats left it, with `extra` fields added to its record.
pub async fn vanished_worker(
    server: &redq_tests::RedisServer,
    ns: &str,
    queues: &[&str],
    extra: serde_json::Value,
) {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut record = serde_json::json!({
        "node": "77", "instance": 1, "host": "web-9", "pid": 99,
        "started_at_ms": now_ms - 600_000, "queues": queues,
        "concurrency": 4, "in_flight": 2, "processed": 31, "failed": 1,
    });
    if let (Some(record), Some(extra)) = (record.as_object_mut(), extra.as_object()) {
        record.extend(extra.clone());
    }
    let beat = (now_ms - 20_000).to_string();
    server
        .cmd(&["ZADD", &format!("{{{ns}}}:workers"), &beat, "77-1"])
        .await;
    server
        .cmd(&[
            "HSET",
            &format!("{{{ns}}}:workers:info"),
            "77-1",
            &record.to_string(),
        ])
        .await;
}
