//! What the flow-control behaviour tests share: a server watched by
//! `MONITOR` from the start (so every lease any worker takes is on the
//! server's record, and the checker's flow-control rules judge the whole
//! run, not a sample), a queue handle, a typed job with a limit key, Worker
//! runtimes in this process and a worker in another one.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use redq::flow::{Limit, LimitScope};
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq::{QueueCounts, RedisQueue};
use redq_tests::chaos::workload::Behaviour;
use redq_tests::history::{self, read_history, Reply, Report, ServerLog};
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde::{Deserialize, Serialize};

/// The queue every flow test works on.
pub const Q: &str = "flow";

/// A job of queue [`Q`] that works `ms` milliseconds; `key` is its limit key.
#[derive(Serialize, Deserialize)]
pub struct Tenant {
    pub key: Option<String>,
    pub ms: u64,
}

impl TypedJob for Tenant {
    const NAME: &'static str = "flow.tenant";
    const QUEUE: &'static str = Q;
    fn limit_key(&self) -> Option<String> {
        self.key.clone()
    }
    async fn run(&self, _cx: &JobCx) -> Result<(), JobError> {
        tokio::time::sleep(Duration::from_millis(self.ms)).await;
        Ok(())
    }
}

/// A server, a namespace on it watched by `MONITOR`, and a handle.
pub struct Bench {
    pub server: RedisServer,
    pub ns: String,
    pub queue: RedisQueue,
    log: ServerLog,
}

impl Bench {
    pub async fn new(test: &str) -> Bench {
        let server = RedisServer::start();
        let ns = unique_namespace(test);
        let log = ServerLog::start(server.port(), None).await;
        let queue = RedisQueue::builder(&server.url())
            .namespace(ns.as_str())
            .connect()
            .await
            .expect("connect");
        Bench {
            server,
            ns,
            queue,
            log,
        }
    }

    /// Sets `scope`'s limit of [`Q`].
    pub async fn limit(&self, scope: LimitScope, limit: Limit) {
        self.queue
            .set_limit(Q, scope, limit)
            .await
            .expect("setting a limit");
    }

    pub async fn counts(&self) -> QueueCounts {
        self.queue.counts(Q).await.expect("counts")
    }

    /// Waits until [`Q`] has nothing waiting, held, scheduled or leased.
    pub async fn await_drained(&self, deadline: Duration) {
        wait_until(deadline, "the queue to drain", async || {
            let c = self.counts().await;
            c.waiting + c.held + c.scheduled + c.leased + c.blocked == 0
        })
        .await;
    }

    /// A Worker runtime on [`Q`] running `concurrency` [`Tenant`] jobs at once.
    pub fn worker(&self, concurrency: usize) -> RunningWorker {
        let mut registry = Registry::new();
        registry.add_job::<Tenant>();
        self.worker_with(registry, concurrency)
    }

    /// A Worker runtime on [`Q`] for the jobs of `registry`.
    pub fn worker_with(&self, registry: Registry, concurrency: usize) -> RunningWorker {
        let options = WorkOptions::new()
            .queues([Q])
            .concurrency(concurrency)
            .schedules(false);
        RunningWorker::spawn(Worker::new(self.queue.clone(), registry, options).expect("options"))
    }

    /// A worker in another process (`redq-chaos-worker`): claims batches of
    /// 5 from [`Q`] and acks each after 2–8 ms, until [`Process::end`].
    pub fn process(&self) -> Process {
        let dir = tempfile::tempdir().expect("temp dir");
        let history = dir.path().join("history.jsonl");
        let behaviour = Behaviour {
            work_ms: (2, 8),
            ..Behaviour::ack_only(Duration::from_secs(30))
        };
        let child = Command::new(env!("CARGO_BIN_EXE_redq-chaos-worker"))
            .args([
                self.server.url().as_str(),
                &self.ns,
                Q,
                &behaviour.to_arg(),
                &history.display().to_string(),
                "1",
                "7",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting redq-chaos-worker");
        Process {
            child,
            history,
            _dir: dir,
        }
    }

    /// The checker's verdict on the server's record of the whole run and
    /// the final keys (no client history: every rule it applies is the
    /// server's, flow control's among them).
    pub async fn check(self) -> Report {
        let report = history::finish_on(&self.server, &self.ns, self.log, &[], true, None).await;
        println!("{report}");
        report
    }
}

/// A worker process; it runs until ended.
pub struct Process {
    child: Child,
    history: PathBuf,
    _dir: tempfile::TempDir,
}

impl Process {
    /// Waits until the process has had a claim answered (it is up and
    /// claiming): on a loaded machine it can take longer to start than
    /// in-process workers take to drain a queue.
    pub async fn await_claiming(&self, deadline: Duration) {
        wait_until(deadline, "the worker process to claim", async || {
            read_history(&[&self.history])
                .iter()
                .any(|e| matches!(e.reply, Some(Reply::Claimed { .. })))
        })
        .await;
    }

    /// Kills the process; returns how many jobs its claims handed it.
    pub fn end(mut self) -> usize {
        assert!(
            self.child.try_wait().expect("try_wait").is_none(),
            "the worker process exited by itself"
        );
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
        read_history(&[&self.history])
            .iter()
            .filter_map(|e| match &e.reply {
                Some(Reply::Claimed { jobs }) => Some(jobs.len()),
                _ => None,
            })
            .sum()
    }
}
