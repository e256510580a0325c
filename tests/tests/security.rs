//! Security: TLS with a private CA, ACL users with least privilege, and a
//! canary password that must never show up in any output or log.
//!
//! - TLS: a local redis-server with `--tls-port`, its certificate signed by
//!   a CA generated here with the openssl CLI. The driver verifies against
//!   that CA (`RedisQueueBuilder::tls_ca_pem`), runs a recorded workload
//!   the history checker accepts, refuses the server without the CA (system
//!   roots only), and fails clearly when `rediss://` reaches a plaintext
//!   port.
//! - ACLs: a `worker` user allowed only what producers and workers need
//!   (EVALSHA, SCRIPT LOAD, the namespace's keys and wake-up channel) runs
//!   the whole workload, the Worker runtime included; a `viewer` user that
//!   may not run write commands reads everything the console shows, and
//!   every mutation is refused with nothing written.
//! - A canary password is searched for in every error, `Debug` output,
//!   URL the driver prints, and everything logged through `tracing`.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use redq::worker::{
    CancellationToken, JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker,
};
use redq::{NewJob, QueueError, RedisQueue};
use redq_tests::acl::{acl_log, set_user, user_url, viewer_acl, worker_acl};
use redq_tests::chaos::workload::{produce, spawn_workers, specs, Behaviour};
use redq_tests::history::{self, Recorder, RecordingQueue, ServerLog};
use redq_tests::logs::LogCapture;
use redq_tests::tls::{free_port, make_ca, make_server_cert};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

const DEADLINE: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------- logs

/// Everything logged through `tracing` by this test binary, at every level.
/// The subscriber is process-wide, which is why these tests are a binary
/// of their own: sharing a process, it would buffer every other test's logs.
fn log_buffer() -> &'static LogCapture {
    static CAPTURE: OnceLock<LogCapture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = LogCapture::new();
        // try_init also routes the `log` crate (fred logs through it) here.
        capture.try_init_global(tracing::Level::TRACE);
        capture
    })
}

fn logged() -> String {
    log_buffer().text()
}

fn canary() -> String {
    format!("canary-{:016x}", rand::random::<u64>())
}

// ---------------------------------------------------------------- TLS

/// A redis-server with a plaintext port (for the harness and MONITOR) and
/// a TLS port; returns it, the TLS port and the CA's PEM.
fn tls_server() -> (RedisServer, u16, Vec<u8>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    make_ca(dir.path());
    make_server_cert(dir.path(), "server", "DNS:localhost,IP:127.0.0.1", "2");
    let tls_port = free_port();
    let file = |name: &str| dir.path().join(name).display().to_string();
    let server = RedisServer::builder()
        .arg("tls-port", tls_port.to_string())
        .arg("tls-cert-file", file("server.crt"))
        .arg("tls-key-file", file("server.key"))
        .arg("tls-ca-cert-file", file("ca.crt"))
        .arg("tls-auth-clients", "no")
        .start();
    let ca = std::fs::read(dir.path().join("ca.crt")).unwrap();
    (server, tls_port, ca, dir)
}

#[test]
fn debians_redis_server_is_built_with_tls() {
    // `--tls-port` on a build without TLS fails with "not compiled with
    // TLS"; with TLS and no certificate it asks for the certificate.
    let out = Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--tls-port",
            &free_port().to_string(),
            "--save",
            "",
        ])
        .output()
        .expect("redis-server runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("No tls-cert-file configured"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_workload_over_tls_with_a_private_ca_passes_the_checker() {
    log_buffer();
    let (server, tls_port, ca, _dir) = tls_server();
    let ns = unique_namespace("tls");
    let url = format!("rediss://127.0.0.1:{tls_port}");
    let log = ServerLog::start(server.port(), None).await;
    let connect = || {
        RedisQueue::builder(&url)
            .namespace(&ns)
            .tls_ca_pem(ca.clone())
            .connect()
    };
    let producer = RecordingQueue::new(connect().await.expect("TLS connect"), Recorder::new(0));
    let workers = vec![
        RecordingQueue::new(connect().await.unwrap(), Recorder::new(1)),
        RecordingQueue::new(connect().await.unwrap(), Recorder::new(2)),
    ];
    let recorders: Vec<Recorder> = workers.iter().map(|w| w.recorder.clone()).collect();
    let (stop, tasks) = spawn_workers(workers, "work", Behaviour::default(), 7);
    produce(
        &producer,
        "work",
        &specs("tls", 0, 300, 5, 4),
        20,
        Duration::ZERO,
    )
    .await;
    wait_until(DEADLINE, "the queue to drain over TLS", async || {
        let c = producer.queue.counts("work").await.unwrap();
        c.waiting + c.scheduled + c.leased + c.blocked == 0
    })
    .await;
    // The connections really are TLS, asked while all three handles are
    // still open: each reached the server on its TLS port, and the plaintext
    // port holds only the harness's own (MONITOR and this CLIENT LIST).
    let clients = server.clients().await;
    let on_tls = clients
        .iter()
        .filter(|c| c.local_port() == Some(tls_port))
        .count();
    assert!(
        on_tls >= 3,
        "{on_tls} clients on the TLS port: {clients:#?}"
    );
    for client in &clients {
        let harness = client.field("flags").is_some_and(|f| f.contains('O'))
            || client.field("cmd") == Some("client|list");
        assert!(
            harness || client.local_port() == Some(tls_port),
            "a queue connection on a port other than TLS {tls_port}: {client:?}"
        );
    }
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }
    let entries = history::merged(&producer.recorder, &recorders);
    let report = history::finish_on(&server, &ns, log, &entries, true, None).await;
    println!("{report}");
    report.assert_ok();
    assert!(report.get("enqueued_acknowledged") == 300);
}

#[tokio::test]
async fn tls_refuses_a_server_whose_ca_is_not_trusted() {
    let (_server, tls_port, _ca, _dir) = tls_server();
    let err = RedisQueue::builder(&format!("rediss://127.0.0.1:{tls_port}"))
        .command_timeout(Duration::from_secs(3))
        .connect()
        .await
        .expect_err("system roots do not trust the test CA");
    let text = err.to_string();
    assert!(matches!(err, QueueError::ConnectFailed { .. }), "{err:?}");
    assert!(
        err.connection_fault()
            .is_none_or(|fault| !fault.is_transient()),
        "an untrusted certificate is not cured by waiting: {err:?}"
    );
    assert!(
        text.to_lowercase().contains("certificate") || text.contains("UnknownIssuer"),
        "{text}"
    );
}

#[tokio::test]
async fn rediss_to_a_plaintext_port_fails_clearly_and_never_falls_back() {
    let (server, _tls_port, ca, _dir) = tls_server();
    server.reset_stats().await;
    let baseline = server.seen_since_reset().await;
    let err = RedisQueue::builder(&format!("rediss://127.0.0.1:{}", server.port()))
        .tls_ca_pem(ca)
        .command_timeout(Duration::from_secs(2))
        .connect()
        .await
        .expect_err("a plaintext server cannot complete a TLS handshake");
    assert!(matches!(err, QueueError::ConnectFailed { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("cannot connect to rediss://127.0.0.1"),
        "{text}"
    );
    println!("rediss:// to a plaintext port: {text}");
    // The plaintext port was reached, yet ran no command of the driver's.
    let seen = server.seen_since_reset().await;
    assert!(seen.connections > baseline.connections, "{seen:?}");
    assert_eq!(seen.commands, baseline.commands, "a plaintext fallback ran");
}

#[tokio::test]
async fn a_ca_file_without_a_certificate_is_a_config_error() {
    let err = RedisQueue::builder("rediss://127.0.0.1:1")
        .tls_ca_pem(b"not a pem".to_vec())
        .connect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no CERTIFICATE block"), "{err}");
    let missing = RedisQueue::builder("rediss://127.0.0.1:1").tls_ca_file("/nonexistent/ca.pem");
    assert!(matches!(missing, Err(QueueError::Config(_))));
}

// ---------------------------------------------------------------- ACLs

#[derive(Serialize, Deserialize)]
struct Counted {
    n: u32,
}

impl TypedJob for Counted {
    const NAME: &'static str = "sec.counted";
    const QUEUE: &'static str = "typed";
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        cx.service::<Arc<AtomicU32>>()
            .expect("counter")
            .fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_workload_runs_as_a_least_privilege_worker_user() {
    log_buffer();
    let server = RedisServer::start();
    let ns = unique_namespace("acl-worker");
    let password = canary();
    set_user(&server, &worker_acl(&ns, &password)).await;
    let url = user_url(&server, "worker", &password);
    let log = ServerLog::start(server.port(), None).await;
    let connect = || RedisQueue::builder(&url).namespace(&ns).connect();
    let producer = RecordingQueue::new(
        connect().await.expect("worker user connects"),
        Recorder::new(0),
    );
    let workers = vec![RecordingQueue::new(
        connect().await.unwrap(),
        Recorder::new(1),
    )];
    let recorders: Vec<Recorder> = workers.iter().map(|w| w.recorder.clone()).collect();
    let (stop, tasks) = spawn_workers(workers, "work", Behaviour::default(), 11);
    produce(
        &producer,
        "work",
        &specs("acl", 0, 200, 4, 3),
        20,
        Duration::ZERO,
    )
    .await;
    wait_until(
        DEADLINE,
        "the queue to drain as the worker user",
        async || {
            let c = producer.queue.counts("work").await.unwrap();
            c.waiting + c.scheduled + c.leased + c.blocked == 0
        },
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }

    // The Worker runtime too: typed jobs, wake-ups, heartbeats, schedules.
    let queue = connect().await.unwrap();
    let counter = Arc::new(AtomicU32::new(0));
    let mut registry = Registry::new();
    registry.add_job::<Counted>();
    let worker = Worker::new(
        queue.clone(),
        registry,
        WorkOptions::new()
            .queues(["typed"])
            .lease(Duration::from_secs(5)),
    )
    .unwrap()
    .services(Services::new().with(counter.clone()));
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.run(shutdown.clone()));
    for n in 0..20 {
        queue
            .push(&Counted { n })
            .await
            .expect("push as the worker user");
    }
    wait_until(
        DEADLINE,
        "typed jobs to run as the worker user",
        async || counter.load(Ordering::SeqCst) == 20,
    )
    .await;
    shutdown.cancel();
    let report = running
        .await
        .unwrap()
        .expect("the worker ran without an ACL error");
    assert_eq!(report.processed, 20, "{}", acl_log(&server).await);

    // Outside its namespace and its commands, the worker user is refused.
    let other = RedisQueue::builder(&url)
        .namespace("someone-else")
        .connect()
        .await
        .unwrap();
    assert!(other
        .add("q", NewJob::new(serde_json::json!(1)))
        .await
        .is_err());
    let raw = redq_tests::connect(&url).await.unwrap();
    for forbidden in [
        vec!["FLUSHALL"],
        vec!["CONFIG", "SET", "maxmemory", "1"],
        vec!["KEYS", "*"],
    ] {
        let command = fred::types::CustomCommand::new(
            forbidden[0],
            fred::types::ClusterHash::FirstKey,
            false,
        );
        let result: Result<fred::types::Value, _> =
            fred::interfaces::ClientLike::custom(&raw, command, forbidden[1..].to_vec()).await;
        let err = result.expect_err("forbidden for the worker user");
        assert!(err.details().contains("NOPERM"), "{forbidden:?}: {err}");
    }

    let entries = history::merged(&producer.recorder, &recorders);
    let report = history::finish_on(&server, &ns, log, &entries, true, None).await;
    report.assert_ok();
    assert_canary_absent(
        &password,
        &[format!("{queue:?}"), queue.redacted_url().to_owned()],
    );
}

#[tokio::test]
async fn a_viewer_user_reads_everything_and_every_mutation_is_refused() {
    log_buffer();
    let server = RedisServer::builder().enable_debug().start();
    let ns = unique_namespace("acl-viewer");
    let password = canary();
    set_user(&server, &viewer_acl(&ns, &password)).await;
    // Content made by the default user: waiting, leased, dead, keyed jobs.
    let admin = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .connect()
        .await
        .unwrap();
    admin
        .add_batch(
            "q",
            vec![
                NewJob::new(serde_json::json!(1)),
                NewJob::new(serde_json::json!(2)).ordering_key("k"),
                NewJob::new(serde_json::json!(3)).ordering_key("k"),
                NewJob::new(serde_json::json!(4)),
            ],
        )
        .await
        .unwrap();
    let held = admin
        .claim("q", 2, Duration::from_millis(50))
        .await
        .unwrap();
    admin.dead_letter(&held[0].lease(), "poison").await.unwrap();
    wait_until(DEADLINE, "held[1]'s lease to lapse", async || {
        admin.counts("q").await.unwrap().lapsed == 1
    })
    .await;

    let url = user_url(&server, "viewer", &password);
    let viewer = RedisQueue::builder(&url)
        .namespace(&ns)
        .connect()
        .await
        .expect("the viewer connects");
    let counts = viewer.counts("q").await.expect("counts as viewer");
    assert_eq!((counts.dead, counts.leased, counts.lapsed), (1, 1, 1));
    assert_eq!(viewer.queues().await.unwrap(), vec!["q".to_owned()]);
    assert_eq!(viewer.dead_letters("q", 0, 10).await.unwrap().total, 1);
    assert!(viewer.inspect(&held[0].id).await.unwrap().is_some());
    assert!(viewer
        .list_jobs("q", redq::JobState::Waiting, 0, 10)
        .await
        .is_ok());
    let events = viewer.events(10).await.unwrap();
    assert_eq!(events.iter().filter(|e| e.kind == "dead").count(), 1);
    assert!(viewer.stats("q").await.is_ok());
    assert!(viewer.next_due("q").await.is_ok());

    let digest = || async { format!("{:?}", server.cmd(&["DEBUG", "DIGEST"]).await) };
    let before = digest().await;
    let refusals: Vec<(&str, Result<(), QueueError>)> = vec![
        (
            "add",
            viewer
                .add("q", NewJob::new(serde_json::json!(9)))
                .await
                .map(drop),
        ),
        (
            "claim (would reclaim the lapsed lease)",
            viewer.claim("q", 5, Duration::from_secs(5)).await.map(drop),
        ),
        ("ack", viewer.ack(&held[1].lease()).await.map(drop)),
        (
            "nack",
            viewer
                .nack(&held[1].lease(), Duration::ZERO, "x")
                .await
                .map(drop),
        ),
        (
            "extend",
            viewer
                .extend(&held[1].lease(), Duration::from_secs(5))
                .await
                .map(drop),
        ),
        ("release", viewer.release(&held[1].lease()).await.map(drop)),
        ("reclaim", viewer.reclaim("q", 10).await.map(drop)),
        (
            "requeue dead",
            viewer.requeue_all_dead("q", |_, _| {}).await.map(drop),
        ),
        (
            "purge dead",
            viewer.purge_dead("q", |_, _| {}).await.map(drop),
        ),
        ("pause", viewer.pause("q").await),
    ];
    for (what, result) in refusals {
        let err = result.expect_err(what);
        let text = err.to_string();
        // Redis 7.0 says NOPERM or "can't run this command"; Valkey 8 says
        // "ACL failure in script: User viewer has no permissions to run …".
        assert!(
            text.contains("can't run this command")
                || text.contains("NOPERM")
                || text.contains("no permissions to run"),
            "{what}: {text}"
        );
        assert!(!err.to_string().contains(&password));
    }
    assert_eq!(digest().await, before, "a refused mutation wrote something");
    assert_canary_absent(&password, &[format!("{viewer:?}")]);
}

// ---------------------------------------------------------------- canary

#[tokio::test]
async fn a_canary_password_never_appears_in_errors_debug_output_or_logs() {
    log_buffer();
    let password = canary();
    // An evicting policy makes the driver warn at connect, with the URL.
    let server = RedisServer::builder()
        .password(password.clone())
        .arg("maxmemory-policy", "allkeys-lru")
        .start();
    let good = format!("redis://:{password}@127.0.0.1:{}", server.port());
    let queue = RedisQueue::builder(&good)
        .namespace(unique_namespace("canary"))
        .connect()
        .await
        .unwrap();
    let mut outputs = vec![
        format!("{queue:?}"),
        queue.redacted_url().to_owned(),
        format!("{:?}", RedisQueue::builder(&good)),
        redq::redact_url(&good),
    ];
    // Failures that quote the URL: wrong password, nothing listening, a
    // malformed URL, an unsupported scheme, TLS to a plaintext port.
    let wrong = format!("redis://:{password}x@127.0.0.1:{}", server.port());
    let closed = format!("redis://:{password}@127.0.0.1:{}", free_port());
    let malformed = format!("redis://:{password}@127.0.0.1:notaport");
    let scheme = format!("http://:{password}@127.0.0.1:1");
    let tls = format!("rediss://:{password}@127.0.0.1:{}", server.port());
    for url in [&wrong, &closed, &malformed, &scheme, &tls] {
        let err = RedisQueue::builder(url)
            .command_timeout(Duration::from_secs(2))
            .connect()
            .await
            .expect_err("cannot connect");
        outputs.push(err.to_string());
        outputs.push(format!("{err:?}"));
    }
    // A worker's own logging while it runs and stops.
    let worker = Worker::new(
        queue.clone(),
        Registry::new(),
        WorkOptions::new().queues(["q"]),
    )
    .unwrap();
    outputs.push(format!("{worker:?}"));
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.run(shutdown.clone()));
    wait_until(DEADLINE, "the worker to register", async || {
        !queue.workers().await.unwrap().is_empty()
    })
    .await;
    shutdown.cancel();
    running.await.unwrap().unwrap();
    assert_canary_absent(&password, &outputs);
    let log = logged();
    assert!(
        log.contains("maxmemory-policy is not noeviction"),
        "the warning was captured"
    );
    assert!(log.contains("127.0.0.1"), "the URL was logged, redacted");
    // fred logs through the `log` crate; those records are captured too.
    assert!(
        log.contains("fred::"),
        "the client library's log was captured"
    );
}

#[track_caller]
fn assert_canary_absent(password: &str, outputs: &[String]) {
    for (i, out) in outputs.iter().enumerate() {
        assert!(
            !out.contains(password),
            "output {i} leaks the password: {out}"
        );
    }
    let log = logged();
    assert!(
        !log.contains(password),
        "the tracing log leaks the password"
    );
}
