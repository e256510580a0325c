//! `redq bench` end to end: every case against a real redis-server prints
//! one JSON line with the fields the comparison script reads.

use std::process::Command;

use redq_tests::RedisServer;

fn bench(server: &RedisServer, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_redq"))
        .arg("bench")
        .args(["--redis", &server.url(), "--queue", "b"])
        .args(args)
        .output()
        .expect("run redq bench")
}

#[test]
fn every_case_prints_one_json_line_with_its_figures() {
    let server = RedisServer::start();
    let cases: [(&str, &[&str]); 6] = [
        (
            "enqueue_bulk",
            &[
                "jobs_per_s",
                "redis_mem_bytes_per_job",
                "redis_cpu_us_per_job",
                "batch",
            ],
        ),
        (
            "enqueue_serial",
            &["jobs_per_s", "p50_ms", "p99_ms", "max_ms"],
        ),
        ("enqueue_window", &["jobs_per_s", "window", "client_cpu_s"]),
        ("process", &["jobs_per_s", "concurrency", "redis_cpu_s"]),
        ("process_keep", &["jobs_per_s", "concurrency"]),
        ("latency", &["p50_ms", "p90_ms", "p99_ms", "max_ms"]),
    ];
    for (case, fields) in cases {
        // Unknown flags are ignored and the first occurrence of a flag wins.
        let out = bench(
            &server,
            &[
                "--case", case, "--n", "200", "--n", "9", "--c", "4", "--lat-n", "20", "--bogus",
                "1",
            ],
        );
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{case}: {stdout}");
        let line: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(line["system"], "redq");
        assert_eq!(line["case"], case);
        let jobs = if case == "latency" { 20 } else { 200 };
        assert_eq!(line["jobs"], jobs, "{case}: {line}");
        for field in fields {
            assert!(line[*field].is_number(), "{case}: no {field} in {line}");
        }
    }
}

#[test]
fn bad_flags_exit_2_and_failures_exit_1() {
    let server = RedisServer::start();
    let out = bench(&server, &["--case", "process", "--n", "ten"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--n must be a whole number"));
    let out = bench(&server, &["--case", "no_such_case", "--n", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown case"));
}

#[test]
fn shards_spread_one_queue_over_several_namespaces() {
    let server = RedisServer::start();
    for case in ["enqueue_bulk", "process"] {
        let out = bench(
            &server,
            &["--case", case, "--n", "300", "--c", "6", "--shards", "3"],
        );
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["shards"], 3, "{line}");
        assert_eq!(
            line["placement"].as_array().map(Vec::len),
            Some(3),
            "{line}"
        );
        assert!(line["jobs_per_s"].is_number(), "{line}");
    }
    let out = bench(&server, &["--case", "latency", "--shards", "3"]);
    assert_eq!(out.status.code(), Some(1), "latency has no sharded form");
}
