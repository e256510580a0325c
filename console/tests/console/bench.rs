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

/// The JSON line of a bench run that must succeed.
fn line_of(server: &RedisServer, args: &[&str]) -> serde_json::Value {
    let out = bench(server, args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_case_prints_one_json_line_whose_figures_hold() {
    let server = RedisServer::start();
    let cases: [(&str, &[&str]); 7] = [
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
        (
            "batch",
            &[
                "jobs_per_s",
                "plain_jobs_per_s",
                "redis_cpu_us_per_job",
                "plain_redis_cpu_us_per_job",
                "batch_redis_cpu_us_per_job_added",
            ],
        ),
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
        assert_figures_hold(case, &line);
    }
}

/// What each figure must satisfy for the run to have measured anything:
/// work was done, so throughput, Redis's memory and CPU grew; percentiles
/// are ordered; the flags given are the ones reported; a CPU time is never
/// negative nor more than the cores could spend in the time it took.
fn assert_figures_hold(case: &str, line: &serde_json::Value) {
    let figure = |name: &str| {
        line[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{case}: {name} is not a number in {line}"))
    };
    let positive =
        |name: &str| assert!(figure(name) > 0.0, "{case}: {name} is not positive: {line}");
    if line.get("jobs_per_s").is_some() {
        positive("jobs_per_s");
    }
    match case {
        "enqueue_bulk" => {
            positive("redis_mem_bytes_per_job");
            positive("redis_cpu_us_per_job");
            assert_eq!(line["batch"], 1000, "{line}");
        }
        "enqueue_window" => {
            assert_eq!(line["window"], 100, "{line}");
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
            let cpu = figure("client_cpu_s");
            // One clock tick (1/100 s) of slack: /proc counts whole ticks.
            assert!(
                (0.0..=figure("elapsed_s") * cores + 0.01).contains(&cpu),
                "{case}: client_cpu_s {cpu} outside what {cores} cores could spend: {line}"
            );
        }
        "process" => {
            positive("redis_cpu_s");
            assert_eq!(line["concurrency"], 4, "{line}");
        }
        "process_keep" => assert_eq!(line["concurrency"], 4, "{line}"),
        "batch" => {
            positive("plain_jobs_per_s");
            positive("redis_cpu_us_per_job");
            positive("plain_redis_cpu_us_per_job");
            assert_eq!(line["concurrency"], 4, "{line}");
        }
        _ => {}
    }
    if line.get("p50_ms").is_some() {
        positive("p50_ms");
        let order = ["p50_ms", "p90_ms", "p99_ms", "max_ms"];
        let present: Vec<f64> = order
            .iter()
            .filter(|name| line.get(**name).is_some())
            .map(|name| figure(name))
            .collect();
        assert!(
            present.windows(2).all(|w| w[0] <= w[1]),
            "{case}: percentiles out of order: {line}"
        );
    }
}

/// `--threads` sets the runtime's worker threads, and the line reports
/// how many ran: one a core without it.
#[test]
fn threads_sets_the_runtime_and_the_line_says_how_many_ran() {
    let server = RedisServer::start();
    let cores = std::thread::available_parallelism().unwrap().get();
    for (flags, threads) in [
        (&["--threads", "1"][..], 1),
        (&["--threads", "3"][..], 3),
        (&[][..], cores),
    ] {
        let out = bench(
            &server,
            &[&["--case", "latency", "--lat-n", "5"][..], flags].concat(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["threads"], threads, "{flags:?}: {line}");
    }
    let out = bench(&server, &["--case", "latency", "--threads", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads must be at least 1"));
}

/// `--pad-bytes P` gives every job a payload P bytes longer, which Redis
/// holds (a waiting job costs at least P bytes more) and the worker runs;
/// the line says which payload it measured.
#[test]
fn pad_bytes_makes_every_payload_that_much_longer_and_the_line_says_so() {
    let server = RedisServer::start();
    let bulk = |flags: &[&str]| {
        line_of(
            &server,
            &[&["--case", "enqueue_bulk", "--n", "500"][..], flags].concat(),
        )
    };
    // The first run on a server also loads the scripts, whose memory it
    // counts: measured here, it is not measured against.
    bulk(&[]);
    let plain = bulk(&[]);
    let padded = bulk(&["--pad-bytes", "1000"]);
    assert_eq!(plain["pad_bytes"], 0, "{plain}");
    assert_eq!(padded["pad_bytes"], 1000, "{padded}");
    let per_job = |line: &serde_json::Value| line["redis_mem_bytes_per_job"].as_u64().unwrap();
    assert!(
        per_job(&padded) >= per_job(&plain) + 1000,
        "a 1000-byte pad must cost a waiting job at least 1000 bytes: {plain} against {padded}"
    );
    let processed = line_of(
        &server,
        &[
            "--case",
            "process",
            "--n",
            "200",
            "--c",
            "4",
            "--pad-bytes",
            "4096",
        ],
    );
    assert_eq!(processed["pad_bytes"], 4096, "{processed}");
    assert_figures_hold("process", &processed);
    let out = bench(&server, &["--case", "process", "--pad-bytes", "1k"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pad-bytes must be a whole number"));
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
        // Three namespaces on one server: its CPU, counted once.
        assert_eq!(line["redis_servers"], 1, "{line}");
        let cpu = line["redis_cpu_s"].as_f64().unwrap_or(0.0);
        let per_job = line["redis_cpu_us_per_job"].as_f64().unwrap_or(0.0);
        assert!(cpu > 0.0, "{line}");
        // The same figure a job (redis_cpu_s is rounded to the millisecond).
        assert!((per_job * 300.0 / 1e6 - cpu).abs() <= 0.0006, "{line}");
    }
    let out = bench(&server, &["--case", "latency", "--shards", "3"]);
    assert_eq!(out.status.code(), Some(1), "latency has no sharded form");
}

/// On a cluster a sharded run's Redis CPU is the primaries' that serve its
/// shards, each counted once.
#[test]
fn on_a_cluster_shards_sum_the_primaries_that_serve_them() {
    let cluster = redq_tests::cluster::RedisCluster::shared();
    let out = Command::new(env!("CARGO_BIN_EXE_redq"))
        .arg("bench")
        .args(["--redis", &cluster.url(), "--queue", "b"])
        .args(["--case", "enqueue_bulk", "--n", "3000", "--shards", "3"])
        .output()
        .expect("run redq bench");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut primaries: Vec<usize> = line["placement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|shard| {
            let slot = shard[1].as_u64().unwrap() as u16;
            cluster
                .primary_of_slot(slot)
                .expect("a primary serves the slot")
        })
        .collect();
    primaries.sort_unstable();
    primaries.dedup();
    assert_eq!(line["redis_servers"], primaries.len(), "{line}");
    assert!(line["redis_cpu_s"].as_f64().unwrap_or(0.0) > 0.0, "{line}");
}

/// Jobs of queue `b` processed in each namespace a bench run left, by the
/// processed counts of its stats hash (`{ns}:q:b:stats`, fields `p<bucket>`).
async fn processed_by_namespace(server: &RedisServer) -> Vec<u64> {
    let mut keys: Vec<String> = server
        .cmd(&["KEYS", "*:q:b:stats"])
        .await
        .convert()
        .unwrap();
    keys.sort();
    let mut counts = Vec::new();
    for key in keys {
        let fields: std::collections::HashMap<String, u64> =
            server.cmd(&["HGETALL", &key]).await.convert().unwrap();
        counts.push(
            fields
                .iter()
                .filter(|(field, _)| field.starts_with('p'))
                .map(|(_, n)| n)
                .sum(),
        );
    }
    counts
}

#[tokio::test]
async fn workers_one_processes_every_shard_with_one_worker_and_the_line_says_so() {
    for (flags, said) in [(&["--workers", "one"][..], "one"), (&[][..], "per-shard")] {
        let server = RedisServer::start();
        // Three batches of 1000 (the bench adds in 1000s): one on each shard.
        let args = [
            &[
                "--case", "process", "--n", "3000", "--c", "6", "--shards", "3",
            ][..],
            flags,
        ]
        .concat();
        let line = line_of(&server, &args);
        assert_eq!(line["workers"], said, "{line}");
        assert_eq!(
            processed_by_namespace(&server).await,
            [1000, 1000, 1000],
            "{said}: every shard's jobs processed"
        );
    }
    let server = RedisServer::start();
    let out = bench(&server, &["--case", "process", "--workers", "all"]);
    assert_eq!(out.status.code(), Some(2), "a bad value is a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--workers is per-shard or one"));
}

/// The fields of the metrics hash of queue `b` of the one namespace a bench
/// run left (`{bench-…}:q:b:metrics`).
async fn bench_metrics_fields(server: &RedisServer) -> Vec<String> {
    let keys: Vec<String> = server
        .cmd(&["KEYS", "*:q:b:metrics"])
        .await
        .convert()
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    server.cmd(&["HKEYS", &keys[0]]).await.convert().unwrap()
}

#[tokio::test]
async fn metrics_off_runs_with_the_queues_metrics_off_and_the_line_says_so() {
    for (flags, said, recorded) in [
        (&["--metrics", "off"][..], "off", false),
        (&[][..], "on", true),
    ] {
        let server = RedisServer::start();
        let args = [&["--case", "process", "--n", "50", "--c", "5"][..], flags].concat();
        let line = line_of(&server, &args);
        assert_eq!(line["metrics"], said, "{line}");
        let fields = bench_metrics_fields(&server).await;
        if recorded {
            assert!(
                fields
                    .iter()
                    .any(|f| f.starts_with("t|") || f.starts_with("w|")),
                "{fields:?}"
            );
        } else {
            assert_eq!(fields, ["off"], "only the switch: nothing recorded");
        }
    }
}
