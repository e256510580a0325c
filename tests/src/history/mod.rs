//! Recording a history and checking it, the way Jepsen checks a queue.
//!
//! - [`record`]: every client call (enqueue, claim, ack, nack, extend,
//!   release, reclaim) with its reply, or with none ("maybe applied");
//!   in memory, or as JSON lines written by worker processes.
//! - [`monitor`] and [`server`]: the server's own record of every
//!   transition, from `MONITOR`, with the Redis clock.
//! - [`structure`]: an atomic snapshot of a namespace's keys and the
//!   invariants between them (every job in exactly one state, indexes
//!   consistent), run after every fault.
//! - [`check`](mod@check): reads all three and lists every broken guarantee, with the
//!   run's figures; each names the rule it broke, a [`ViolationKind`];
//!   [`limits`] holds its flow-control rules (concurrency, rate, held jobs).
//!
//! The checker is shown not to be vacuous by `tests/tests/reliability/reliability_checker.rs`,
//! which feeds it histories made by deliberately broken variants of the
//! scripts (built in test code from `lua/` with patches, never shipped).

pub mod aof;
pub mod check;
pub mod gate;
pub mod limits;
pub mod meta;
pub mod monitor;
pub mod raw;
pub mod record;
pub mod server;
mod server_workflow;
pub mod structure;
mod structure_flow;
mod structure_workflow;
pub mod violation;
pub mod workflows;

pub use check::{check, Expect, Report};
pub use monitor::ServerLog;
pub use record::{read_history, Call, Entry, JobSpec, Recorder, RecordingQueue, Reply};
pub use structure::{check_namespace, Dump};
pub use violation::{Violation, ViolationKind};

use fred::clients::Client;

/// Every entry of a run: the producer's, then each worker's.
pub fn merged(producer: &Recorder, workers: &[Recorder]) -> Vec<Entry> {
    let mut entries = producer.entries();
    for r in workers {
        entries.extend(r.entries());
    }
    entries
}

/// [`finish_with_aof`] for a run on `server` (no password) with its
/// `MONITOR` record `log`, expecting no requeue; `drained` says whether
/// the run drained.
pub async fn finish_on(
    server: &crate::RedisServer,
    ns: &str,
    log: ServerLog,
    entries: &[Entry],
    drained: bool,
    aof_dir: Option<&std::path::Path>,
) -> Report {
    let client = server.client().await;
    let expect = Expect {
        drained,
        no_requeue: true,
    };
    finish_with_aof(
        &client,
        ns,
        server.port(),
        None,
        Some(log),
        entries,
        expect,
        aof_dir,
    )
    .await
}

/// Everything the checker reads, collected at the end of a run: the
/// server's record (stopped here), the final snapshot, and the report.
pub async fn finish(
    client: &Client,
    ns: &str,
    port: u16,
    password: Option<&str>,
    log: Option<ServerLog>,
    entries: &[Entry],
    expect: Expect,
) -> Report {
    finish_with_aof(client, ns, port, password, log, entries, expect, None).await
}

/// [`finish`], also reading the server's append-only file in `aof_dir` (its
/// data directory): the durable record that settles calls whose replies
/// were lost when the server was killed.
#[allow(clippy::too_many_arguments)]
pub async fn finish_with_aof(
    client: &Client,
    ns: &str,
    port: u16,
    password: Option<&str>,
    log: Option<ServerLog>,
    entries: &[Entry],
    expect: Expect,
    aof_dir: Option<&std::path::Path>,
) -> Report {
    let names = crate::lua::load_all(client).await;
    let dump = Dump::take(client, ns).await.expect("final snapshot");
    let mut server = match log {
        Some(log) => {
            let lines = log.stop(port, password).await;
            Some(server::parse(&lines, ns, &names))
        }
        None => None,
    };
    if let (Some(server), Some(dir)) = (server.as_mut(), aof_dir) {
        server.durable_deletes = Some(aof::deleted_jobs(dir, ns));
        server.durable_leases = Some(aof::leases(dir, ns));
    }
    let mut report = check(entries, server.as_ref(), &dump, expect);
    for v in dump.findings() {
        report
            .violations
            .push(Violation::new(v.kind, format!("final state: {v}")));
    }
    report
}
