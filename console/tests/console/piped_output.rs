//! What a subcommand prints goes to a reader that may stop reading
//! (`redq jobs show ID -o json | head -1`): the run ends quietly, status 0,
//! as ripgrep's does, rather than panicking on the broken pipe.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::{connect, BIN};

/// Far more than a pipe holds (64 KiB on Linux) once printed, so the
/// binary is still writing when the reader goes, whatever the timing.
fn long_payload() -> serde_json::Value {
    let lines: Vec<String> = (0..5000)
        .map(|i| format!("line {i} of a payload much longer than a pipe holds"))
        .collect();
    serde_json::json!({ "lines": lines })
}

#[tokio::test]
async fn a_reader_that_stops_early_ends_the_run_quietly_with_status_0() {
    let server = RedisServer::start();
    let ns = unique_namespace("piped_output");
    let q = connect(&server.url(), &ns).await;
    let job = q.add("emails", NewJob::new(long_payload())).await.unwrap();

    let mut child = Command::new(BIN)
        .args(["jobs", "show", job.id(), "-o", "json"])
        .env("REDIS_URL", server.url())
        .env("REDQ_NAMESPACE", &ns)
        .env("RUST_BACKTRACE", "1")
        .env_remove("REDQ_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running redq");
    // As `head -1` does: read one line, then close the pipe.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "{\n");
    let out = child.wait_with_output().unwrap();

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(stderr.is_empty(), "nothing to say on stderr:\n{stderr}");
}
