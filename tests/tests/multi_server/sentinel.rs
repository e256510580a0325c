//! A primary behind Sentinel: one primary, one replica and one sentinel on
//! loopback; `kill -9` the primary, the sentinel promotes the replica, and
//! the driver handle opened through `redis-sentinel://` carries on.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redq::{NewJob, RedisQueue};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

/// `redis-server --sentinel` (the Debian package ships no separate
/// `redis-sentinel` binary here; the server binary runs in sentinel mode).
struct Sentinel {
    port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Sentinel {
    fn start(primary_port: u16) -> Sentinel {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf = dir.path().join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {}\n\
                 sentinel monitor redq 127.0.0.1 {primary_port} 1\n\
                 sentinel down-after-milliseconds redq 1000\n\
                 sentinel failover-timeout redq 5000\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("sentinel.log")).unwrap();
        let child = Command::new("redis-server")
            .arg(&conf)
            .arg("--sentinel")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("redis-server --sentinel");
        let sentinel = Sentinel {
            port,
            child,
            _dir: dir,
        };
        let started = Instant::now();
        while sentinel.cli(&["PING"]).trim() != "PONG" {
            assert!(started.elapsed() < Duration::from_secs(10), "sentinel up");
            std::thread::sleep(Duration::from_millis(10));
        }
        sentinel
    }

    fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn primary_port(&self) -> Option<u16> {
        let reply = self.cli(&["SENTINEL", "get-master-addr-by-name", "redq"]);
        reply.lines().nth(1)?.trim().parse().ok()
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_sentinel_failover_is_survived_by_the_same_handle() {
    let mut primary = RedisServer::builder()
        .arg("repl-diskless-sync-delay", "0")
        .start();
    let replica = RedisServer::builder()
        .arg("replicaof", format!("127.0.0.1 {}", primary.port()))
        .start();
    wait_until(Duration::from_secs(10), "the replica to sync", async || {
        let info = replica.cmd(&["INFO", "replication"]).await;
        format!("{info:?}").contains("master_link_status:up")
    })
    .await;
    let sentinel = Sentinel::start(primary.port());
    // The sentinel learns about the replica from the primary's INFO.
    wait_until(
        Duration::from_secs(15),
        "the sentinel to see the replica",
        async || {
            sentinel
                .cli(&["SENTINEL", "replicas", "redq"])
                .contains(&replica.port().to_string())
        },
    )
    .await;

    let url = format!(
        "redis-sentinel://127.0.0.1:{}?sentinelServiceName=redq",
        sentinel.port
    );
    let queue = RedisQueue::builder(&url)
        .namespace(unique_namespace("sentinel"))
        .connect()
        .await
        .expect("connect through the sentinel");
    let before = queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let durable = queue
        .add_durable("q", NewJob::new(json!(2)), 1, Duration::from_secs(2))
        .await
        .unwrap();
    assert!(durable.confirmed, "{durable:?}");

    let killed = Instant::now();
    primary.kill9();
    while sentinel.primary_port() != Some(replica.port()) {
        assert!(
            killed.elapsed() < Duration::from_secs(20),
            "sentinel promoted the replica"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let promoted = killed.elapsed();
    let after = queue.add("q", NewJob::new(json!(3))).await.unwrap();
    let carried_on = killed.elapsed();
    let jobs = queue.claim("q", 10, Duration::from_secs(30)).await.unwrap();
    let ids: Vec<&str> = jobs.iter().map(|job| job.id.as_str()).collect();
    assert!(
        ids.contains(&durable.enqueued.id()),
        "the confirmed job survived"
    );
    assert!(ids.contains(&after.id()));
    println!(
        "sentinel: replica promoted {promoted:?} after kill -9, same handle enqueued again \
         {carried_on:?} after it; job acknowledged before the kill without WAIT survived: {}",
        ids.contains(&before.id())
    );
}
