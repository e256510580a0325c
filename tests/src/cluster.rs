//! A private Redis Cluster on loopback: 3 primaries with 1 replica each.
//!
//! Six `redis-server --cluster-enabled yes` processes, each on its own free
//! port (and cluster-bus port) with its own temporary directory, joined with
//! `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`. `start`
//! returns once every node reports `cluster_state:ok` and every replica's
//! link to its primary is up (polled against a deadline, no fixed sleeps).
//! Every process is SIGKILLed and reaped on drop.
//!
//! [`RedisCluster::shared`] hands the tests of one test binary the same
//! cluster while any of them still holds it, so a binary of many cluster
//! tests starts a cluster once rather than once per test; tests keep apart
//! by namespace, as they do on a shared server. Tests that kill nodes start
//! their own with [`RedisCluster::start`].
//!
//! ```no_run
//! use redq_tests::cluster::RedisCluster;
//! let cluster = RedisCluster::start();
//! let url = cluster.url(); // redis-cluster://127.0.0.1:p0?node=127.0.0.1:p1&…
//! # drop(url);
//! ```

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::thread::sleep;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::port::free_port;
use crate::probe::probe;

/// How long the whole cluster may take to come up.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Pause between polls of the nodes.
const POLL: Duration = Duration::from_millis(20);
/// Primaries, and replicas per primary.
const PRIMARIES: usize = 3;
const REPLICAS: usize = 1;
/// How long a node may be unreachable before it is considered failed (and
/// its replica promoted). Short, so failover tests are quick; long enough
/// that a busy 2-core CI machine does not trigger spurious failovers.
pub const DEFAULT_NODE_TIMEOUT: Duration = Duration::from_millis(2000);

/// A node stopped by [`RedisCluster::freeze`]; resumed on drop.
#[derive(Debug)]
pub struct Frozen {
    pid: u32,
}

impl Drop for Frozen {
    fn drop(&mut self) {
        // Never a panic here: this may run while a failing test unwinds.
        let _ = signal(self.pid, "-CONT");
    }
}

/// `kill <sig> <pid>`; whether it succeeded.
fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|status| status.success())
}

/// One `redis-server` of the cluster.
#[derive(Debug)]
pub struct ClusterNode {
    port: u16,
    child: Mutex<Option<Child>>,
    // Dropped after the process is killed (see `Drop for RedisCluster`).
    dir: TempDir,
}

impl ClusterNode {
    /// The client port (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port` as cluster redirections name it.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Everything the node logged.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }

    fn kill9(&self) {
        if let Some(mut child) = self.child.lock().expect("node lock").take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn is_running(&self) -> bool {
        self.child.lock().expect("node lock").is_some()
    }
}

/// A local Redis Cluster; see the module docs.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<ClusterNode>,
}

impl RedisCluster {
    /// Start 3 primaries with 1 replica each and wait until the cluster is
    /// ok; panics (with the nodes' logs) if it does not come up.
    pub fn start() -> RedisCluster {
        Self::start_with(DEFAULT_NODE_TIMEOUT)
    }

    /// Like [`start`](Self::start) with another `cluster-node-timeout`.
    pub fn start_with(node_timeout: Duration) -> RedisCluster {
        let nodes: Vec<ClusterNode> = (0..PRIMARIES * (1 + REPLICAS))
            .map(|_| launch(node_timeout))
            .collect();
        let cluster = RedisCluster { nodes };
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &cluster.nodes {
            create.arg(node.addr());
        }
        create
            .args(["--cluster-replicas", &REPLICAS.to_string(), "--cluster-yes"])
            .stdin(Stdio::null());
        let out = create.output().expect("running redis-cli --cluster create");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster.wait_healthy(READY_TIMEOUT);
        cluster
    }

    /// A cluster shared by the tests of this process while any of them
    /// holds it; started on first use (and again if every holder dropped it).
    pub fn shared() -> Arc<RedisCluster> {
        static SHARED: Mutex<Weak<RedisCluster>> = Mutex::new(Weak::new());
        let mut slot = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cluster) = slot.upgrade() {
            return cluster;
        }
        let cluster = Arc::new(RedisCluster::start());
        *slot = Arc::downgrade(&cluster);
        cluster
    }

    /// `redis-cluster://127.0.0.1:P0?node=127.0.0.1:P1&…`, every node a seed.
    pub fn url(&self) -> String {
        let mut url = format!("redis-cluster://{}", self.nodes[0].addr());
        for (i, node) in self.nodes.iter().enumerate().skip(1) {
            url.push(if i == 1 { '?' } else { '&' });
            url.push_str(&format!("node={}", node.addr()));
        }
        url
    }

    /// The nodes, in start order (the first three were created primaries).
    pub fn nodes(&self) -> &[ClusterNode] {
        &self.nodes
    }

    /// SIGKILL node `index` and reap it; its replica takes over once the
    /// other primaries agree it failed (about `cluster-node-timeout` later).
    pub fn kill9(&self, index: usize) {
        self.nodes[index].kill9();
    }

    /// SIGSTOP node `index`: its connections stay open and nothing is
    /// answered, as with a hung server (with a node timeout longer than the
    /// test, it is not failed over). It runs again (SIGCONT) when the guard
    /// is dropped, a failing test's included.
    pub fn freeze(&self, index: usize) -> Frozen {
        let pid = self.nodes[index]
            .child
            .lock()
            .expect("node lock")
            .as_ref()
            .map(Child::id)
            .unwrap_or_else(|| panic!("node {index} is not running"));
        assert!(signal(pid, "-STOP"), "kill -STOP {pid} failed");
        Frozen { pid }
    }

    /// Runs `redis-cli -p <port> args…` against node `index`; its stdout.
    pub fn cli(&self, index: usize, args: &[&str]) -> String {
        let out = cli(self.nodes[index].port, args);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// How many clients are subscribed to `channel` over the whole cluster:
    /// `PUBSUB NUMSUB` is per node (a subscriber sits on whichever node its
    /// connection reached, and PUBLISH reaches every node), so this sums it
    /// over the running nodes.
    pub fn subscribers(&self, channel: &str) -> i64 {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_running())
            .map(|i| self.subscribers_on(i, channel))
            .sum()
    }

    /// How many clients are subscribed to `channel` on node `index` alone.
    pub fn subscribers_on(&self, index: usize, channel: &str) -> i64 {
        self.pubsub_count(index, "NUMSUB", channel)
    }

    /// How many clients are subscribed to shard channel `channel` on node
    /// `index` (`PUBSUB SHARDNUMSUB`).
    pub fn shard_subscribers_on(&self, index: usize, channel: &str) -> i64 {
        self.pubsub_count(index, "SHARDNUMSUB", channel)
    }

    /// `PUBSUB <which> channel`'s count on node `index`.
    fn pubsub_count(&self, index: usize, which: &str, channel: &str) -> i64 {
        let reply = self.cli(index, &["PUBSUB", which, channel]);
        reply
            .lines()
            .last()
            .and_then(|n| n.trim().parse::<i64>().ok())
            .unwrap_or_else(|| panic!("PUBSUB {which} {channel} answered {reply:?}"))
    }

    /// How many cluster bus messages of `kind` (`publish`: a PUBLISH sent
    /// to every other node; `publishshard`: an SPUBLISH sent to the
    /// shard's replicas) node `index` has sent (`CLUSTER INFO`, which leaves
    /// out a kind never sent).
    pub fn bus_messages_sent(&self, index: usize, kind: &str) -> u64 {
        let info = self.cli(index, &["CLUSTER", "INFO"]);
        info.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(&format!("cluster_stats_messages_{kind}_sent:"))
            })
            .map_or(0, |n| n.parse().expect("a message count"))
    }

    /// Index of a replica of node `primary`, as that node sees it
    /// (`CLUSTER NODES`: a replica's line names its primary's id); `None`
    /// until it has learnt of one (a fresh cluster's replicas take a moment
    /// to show there).
    pub fn replica_of(&self, primary: usize) -> Option<usize> {
        let nodes = self.cli(primary, &["CLUSTER", "NODES"]);
        let lines: Vec<Vec<&str>> = nodes
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        let own_id = lines
            .iter()
            .find(|f| f.len() > 2 && f[2].contains("myself"))
            .map(|f| f[0])
            .unwrap_or_else(|| panic!("CLUSTER NODES without myself: {nodes}"));
        lines
            .iter()
            .filter(|f| f.len() > 3 && f[2].contains("slave") && f[3] == own_id)
            .find_map(|f| {
                let addr = f[1].split('@').next().unwrap_or_default();
                self.nodes.iter().position(|n| n.addr() == addr)
            })
    }

    /// Index of the node currently serving `slot` as primary, as a running
    /// node sees it (`CLUSTER NODES`).
    pub fn primary_of_slot(&self, slot: u16) -> Option<usize> {
        let index = self.nodes.iter().position(ClusterNode::is_running)?;
        let nodes = self.cli(index, &["CLUSTER", "NODES"]);
        for line in nodes.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 || !fields[2].contains("master") || fields[2].contains("fail") {
                continue;
            }
            let serves = fields[8..].iter().any(|range| {
                let mut bounds = range.split('-').map(|b| b.parse::<u16>());
                match (bounds.next(), bounds.next()) {
                    (Some(Ok(lo)), Some(Ok(hi))) => (lo..=hi).contains(&slot),
                    (Some(Ok(one)), None) => one == slot,
                    _ => false,
                }
            });
            if serves {
                let addr = fields[1].split('@').next().unwrap_or_default();
                return self.nodes.iter().position(|n| n.addr() == addr);
            }
        }
        None
    }

    /// Polls until every running node reports `cluster_state:ok`, knows a
    /// primary for every slot, and every running replica's link to its
    /// primary is up; panics after `deadline` with the nodes' logs.
    pub fn wait_healthy(&self, deadline: Duration) {
        let started = Instant::now();
        loop {
            let last = self.unhealthy();
            let Some(why) = last else { return };
            if started.elapsed() > deadline {
                let logs: Vec<String> = self
                    .nodes
                    .iter()
                    .map(|n| format!("--- node {} ---\n{}", n.addr(), n.log()))
                    .collect();
                panic!(
                    "cluster not healthy after {deadline:?}: {why}\n{}",
                    logs.join("\n")
                );
            }
            sleep(POLL);
        }
    }

    /// Why the cluster is not healthy yet, or `None` when it is.
    fn unhealthy(&self) -> Option<String> {
        for (i, node) in self.nodes.iter().enumerate() {
            if !node.is_running() {
                continue;
            }
            let info = self.cli(i, &["CLUSTER", "INFO"]);
            if !info.contains("cluster_state:ok") {
                return Some(format!("node {} is not ok", node.addr()));
            }
            let replication = self.cli(i, &["INFO", "replication"]);
            if replication.contains("role:slave") && !replication.contains("master_link_status:up")
            {
                return Some(format!("replica {} is not in sync", node.addr()));
            }
        }
        None
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &self.nodes {
            node.kill9();
        }
    }
}

fn cli(port: u16, args: &[&str]) -> Output {
    Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running redis-cli (install redis-server): {e}"))
}

/// Start one cluster-enabled server on fresh ports, retrying when another
/// process takes a port between `free_port` and redis's bind.
fn launch(node_timeout: Duration) -> ClusterNode {
    for _ in 0..5 {
        let dir = tempfile::Builder::new()
            .prefix("redq-cluster-")
            .tempdir()
            .expect("creating a temporary directory for a cluster node");
        let port = free_port();
        let bus = free_port();
        if bus == port {
            continue;
        }
        let child = spawn(port, bus, node_timeout, dir.path());
        let node = ClusterNode {
            port,
            child: Mutex::new(Some(child)),
            dir,
        };
        match wait_ready(&node) {
            Ok(()) => return node,
            Err(log) if log.contains("Address already in use") => {
                node.kill9();
                continue;
            }
            Err(log) => {
                node.kill9();
                panic!("cluster node on port {port} did not start; log:\n{log}");
            }
        }
    }
    panic!("no free ports for a cluster node after 5 attempts");
}

fn spawn(port: u16, bus: u16, node_timeout: Duration, dir: &Path) -> Child {
    let log = fs::File::create(dir.join("redis.log")).expect("creating the node's log");
    let log_err = log.try_clone().expect("duplicating the log handle");
    Command::new("redis-server")
        .args(["--port", &port.to_string()])
        .args(["--cluster-port", &bus.to_string()])
        .args(["--bind", "127.0.0.1"])
        .args(["--protected-mode", "no"])
        .args(["--daemonize", "no"])
        .arg("--dir")
        .arg(dir)
        .args(["--save", ""])
        .args(["--appendonly", "no"])
        // Replicas sync at once (the default waits 5 s for more replicas to
        // share one diskless transfer).
        .args(["--repl-diskless-sync-delay", "0"])
        .args(["--cluster-enabled", "yes"])
        .args(["--cluster-config-file", "nodes.conf"])
        .args([
            "--cluster-node-timeout",
            &node_timeout.as_millis().to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .unwrap_or_else(|e| panic!("spawning redis-server (install redis-server): {e}"))
}

/// Waits until the node we spawned (checked by pid) answers PING; on exit or
/// timeout, its log.
fn wait_ready(node: &ClusterNode) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pid = {
            let mut child = node.child.lock().expect("node lock");
            let child = child.as_mut().expect("node just spawned");
            if child.try_wait().expect("polling redis-server").is_some() {
                return Err(node.log());
            }
            child.id()
        };
        if matches!(probe(node.port, None), Ok(ready) if ready.pid == pid) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("not ready after 10 s\n{}", node.log()));
        }
        sleep(Duration::from_millis(5));
    }
}
