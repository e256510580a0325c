//! Workflows under faults: batches with an `on_complete` and an
//! `on_success` callback, and dependency chains (A, then B after A, then C
//! after B), worked by worker processes that nack, dead-letter and abandon
//! jobs, while, in turn, a worker is killed with `kill -9`, redis-server is
//! killed with `kill -9` and restarted on its append-only file (fsync
//! always), and the script cache is flushed. Abandoned and killed leases
//! are reclaimed.
//!
//! It counts as evidence only when every workflow the producer was told
//! about finished as its policy says (every gate done; an `on_complete`
//! callback released; an `on_success` callback released exactly when no
//! member failed, else cancelled; a dependent released when its
//! dependency completed, else dead-lettered), every released waiter ran
//! (a worker claimed it), no waiter was released twice, and the checker,
//! with its workflow rules ([`crate::history::workflows`]), found nothing.

use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redq::workflow::{Batch, BatchHandle, GateState, WaiterDecision};
use redq::{Enqueued, NewJob, RedisQueue};

use super::fleet::Fleet;
use super::harness::{self, structure_check, QUEUE};
use super::workload::Behaviour;
use super::{Outcome, Scale};
use crate::history::{Call, Entry, Recorder, Reply, ServerLog};
use crate::{unique_namespace, RedisServer};

/// Members of each batch.
pub const MEMBERS: usize = 6;
/// Every this many batches, the producer also makes a chain of three.
const CHAIN_EVERY: usize = 3;

/// A job of the workload, tagged for the history.
fn job(tag: &str) -> NewJob {
    NewJob::new(serde_json::json!({ "tag": tag, "pad": "x".repeat(16) })).max_attempts(4)
}

/// What the producer was told was made.
#[derive(Default)]
struct Made {
    batches: Vec<BatchHandle>,
    /// The dependents of the chains, each with the job it waits on.
    dependents: Vec<(String, String)>,
    /// Calls that failed (a fault explains them: the server was down).
    failed_calls: usize,
}

/// Records one enqueue call of `tags` and its outcome: the ids in tag
/// order, or, on any error, "maybe applied" (a batch may be half made).
fn record(recorder: &Recorder, tags: Vec<String>, result: Result<Vec<&Enqueued>, String>) {
    let seq = recorder.invoke(Call::Enqueue {
        queue: QUEUE.to_owned(),
        keys: vec![String::new(); tags.len()],
        tags,
    });
    recorder.complete(
        seq,
        match result {
            Ok(ids) => Reply::Enqueued {
                ids: ids
                    .into_iter()
                    .map(|o| (o.id().to_owned(), matches!(o, Enqueued::Created(_))))
                    .collect(),
            },
            Err(error) => Reply::Unknown { error },
        },
    );
}

async fn produce(queue: RedisQueue, recorder: Recorder, batches: usize, pause: Duration) -> Made {
    let mut made = Made::default();
    for b in 0..batches {
        let mut tags: Vec<String> = (0..MEMBERS).map(|m| format!("wf-{b}-m{m}")).collect();
        tags.push(format!("wf-{b}-on-complete"));
        tags.push(format!("wf-{b}-on-success"));
        let batch = Batch::new()
            .label(format!("chaos batch {b}"))
            .jobs(QUEUE, tags[..MEMBERS].iter().map(|t| job(t)).collect())
            .on_complete(QUEUE, job(&tags[MEMBERS]))
            .on_success(QUEUE, job(&tags[MEMBERS + 1]));
        match queue.enqueue_batch(batch).await {
            Ok(handle) => {
                record(
                    &recorder,
                    tags,
                    Ok(handle.jobs.iter().chain(&handle.callbacks).collect()),
                );
                made.batches.push(handle);
            }
            Err(e) => {
                record(&recorder, tags, Err(e.to_string()));
                made.failed_calls += 1;
            }
        }
        if b % CHAIN_EVERY == 0 {
            chain(&queue, &recorder, b, &mut made).await;
        }
        tokio::time::sleep(pause).await;
    }
    made
}

/// A, then B after A, then C after B; stops at the first call that fails.
async fn chain(queue: &RedisQueue, recorder: &Recorder, b: usize, made: &mut Made) {
    let mut before: Option<String> = None;
    for link in ["a", "b", "c"] {
        let tag = format!("wf-{b}-chain-{link}");
        let mut new = job(&tag);
        if let Some(id) = &before {
            new = new.after([id.as_str()]);
        }
        match queue.add(QUEUE, new).await {
            Ok(enqueued) => {
                record(recorder, vec![tag], Ok(vec![&enqueued]));
                let id = enqueued.id().to_owned();
                if let Some(dependency) = before.replace(id.clone()) {
                    made.dependents.push((id, dependency));
                }
            }
            Err(e) => {
                record(recorder, vec![tag], Err(e.to_string()));
                made.failed_calls += 1;
                return;
            }
        }
    }
}

/// One fault, in turn: a worker killed, redis-server killed, the scripts flushed.
#[derive(Clone, Copy)]
enum Fault {
    KillWorker,
    KillRedis,
    ScriptFlush,
}

const FAULTS: [Fault; 3] = [Fault::KillWorker, Fault::KillRedis, Fault::ScriptFlush];

/// Waits until every workflow made is decided (gate done, no waiter
/// pending): `Err` names one that is not, when `deadline` passed.
async fn settle(queue: &RedisQueue, made: &Made, deadline: Duration) -> Result<(), String> {
    let until = Instant::now() + deadline;
    let gates: Vec<String> = made
        .batches
        .iter()
        .map(|b| b.id.as_str().to_owned())
        .chain(made.dependents.iter().map(|(id, _)| id.clone()))
        .collect();
    let mut next = 0;
    while next < gates.len() {
        let gate = &gates[next];
        match queue.gate(gate).await {
            Ok(Some(status))
                if status.state == GateState::Done
                    && status
                        .waiters
                        .iter()
                        .all(|w| w.decision != WaiterDecision::Pending) =>
            {
                next += 1;
                continue;
            }
            Ok(status) if Instant::now() >= until => {
                return Err(format!(
                    "workflow {gate} was not decided within {deadline:?}: {}",
                    match status {
                        None => "its gate is gone".to_owned(),
                        Some(s) => format!(
                            "{}, {} of {} members pending, waiters {:?}",
                            s.state.as_str(),
                            s.pending,
                            s.total,
                            s.waiters
                                .iter()
                                .map(|w| w.decision.as_str())
                                .collect::<Vec<_>>()
                        ),
                    }
                ))
            }
            Err(e) if Instant::now() >= until => {
                return Err(format!("workflow {gate} could not be read: {e}"))
            }
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    Ok(())
}

/// Every workflow decided as its policy says; every released waiter
/// claimed by a worker. Returns (released waiters, problems).
async fn verify(queue: &RedisQueue, made: &Made, entries: &[Entry]) -> (usize, Vec<String>) {
    let claimed: std::collections::HashSet<&str> = entries
        .iter()
        .filter_map(|e| match &e.reply {
            Some(Reply::Claimed { jobs }) => Some(jobs.iter().map(|j| j.id.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    let mut problems = Vec::new();
    // (waiter, its workflow, the decision its policy says, the one seen)
    let mut decided: Vec<(String, String, WaiterDecision, WaiterDecision)> = Vec::new();
    for batch in &made.batches {
        let gate = batch.id.as_str();
        let Ok(Some(status)) = queue.gate(gate).await else {
            problems.push(format!("batch {gate} could not be read at the end"));
            continue;
        };
        if status.waiters.len() != 2 {
            problems.push(format!(
                "batch {gate} has {} callbacks, not 2",
                status.waiters.len()
            ));
        }
        // on_complete first, then on_success (cancelled when a member failed).
        for (i, w) in status.waiters.iter().enumerate() {
            let policy = if i == 0 || status.failed == 0 {
                WaiterDecision::Released
            } else {
                WaiterDecision::Cancelled
            };
            decided.push((w.id.clone(), gate.to_owned(), policy, w.decision));
        }
    }
    for (dependent, _dependency) in &made.dependents {
        let Ok(Some(status)) = queue.gate(dependent).await else {
            problems.push(format!(
                "dependent {dependent} could not be read at the end"
            ));
            continue;
        };
        let policy = if status.failed == 0 {
            WaiterDecision::Released
        } else {
            WaiterDecision::DeadLettered
        };
        for w in &status.waiters {
            decided.push((w.id.clone(), dependent.clone(), policy, w.decision));
        }
    }
    let mut released = 0;
    for (id, gate, policy, seen) in decided {
        if seen != policy {
            problems.push(format!(
                "waiter {id} of workflow {gate} was decided {}, its policy says {}",
                seen.as_str(),
                policy.as_str()
            ));
        } else if seen == WaiterDecision::Released {
            released += 1;
            if !claimed.contains(id.as_str()) {
                problems.push(format!(
                    "waiter {id} of workflow {gate} was released but never ran"
                ));
            }
        }
    }
    (released, problems)
}

pub async fn workflows(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    // No AOF rewrites: the incremental files then hold the whole history.
    let mut server = RedisServer::builder()
        .appendonly_always()
        .arg("auto-aof-rewrite-percentage", "0")
        .start();
    let ns = unique_namespace("chaos-workflows");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let mut rng = StdRng::seed_from_u64(scale.seed);
    let producer = harness::handle(&url, &ns, Duration::from_secs(3)).await;
    let recorder = Recorder::new(0);
    let behaviour = Behaviour {
        lease: Duration::from_millis(800),
        work_ms: (0, 3),
        nack: 0.05,
        dead: 0.03,
        release: 0.02,
        abandon: 0.02,
        ..Behaviour::default()
    };
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    fleet.spawn_team(&behaviour, 3, scale.seed);
    let batches = (scale.jobs / (MEMBERS + 3)).max(10);
    let window = scale.fault_window.max(Duration::from_secs(9));
    let feed = tokio::spawn(produce(
        producer.clone(),
        recorder.clone(),
        batches,
        window / batches as u32,
    ));
    let mut structure = Vec::new();
    let mut injected = [0usize; 3];
    let window_end = Instant::now() + window;
    let mut turn = 0;
    while Instant::now() < window_end || !feed.is_finished() {
        tokio::time::sleep(Duration::from_millis(rng.random_range(700..=1500))).await;
        let what = match FAULTS[turn % FAULTS.len()] {
            Fault::KillWorker => {
                fleet
                    .kill_and_replace(&mut rng, &behaviour, scale.seed)
                    .await;
                "worker kill -9"
            }
            Fault::KillRedis => {
                tokio::task::block_in_place(|| {
                    server.kill9();
                    std::thread::sleep(Duration::from_millis(rng.random_range(50..300)));
                    server.restart();
                });
                "redis-server kill -9"
            }
            Fault::ScriptFlush => {
                // A new connection: one made before a server kill would
                // first wait out its reconnection. Both caches: the
                // handles call functions (the default) and fall back to
                // EVALSHA, and a worker process may call either way.
                let admin = server.client().await;
                let _: () = fred::interfaces::LuaInterface::script_flush(&admin, false)
                    .await
                    .unwrap_or_else(|e| panic!("SCRIPT FLUSH failed: {e}"));
                let _: () = fred::interfaces::FunctionInterface::function_flush(&admin, false)
                    .await
                    .unwrap_or_else(|e| panic!("FUNCTION FLUSH failed: {e}"));
                let _ = fred::interfaces::ClientLike::quit(&admin).await;
                "SCRIPT FLUSH"
            }
        };
        injected[turn % FAULTS.len()] += 1;
        turn += 1;
        structure_check(&server, &ns, &format!("{what} #{turn}"), &mut structure).await;
        if started.elapsed() > window * 4 + Duration::from_secs(60) {
            break;
        }
    }
    let made = feed.await.expect("producer task");
    let settled = settle(&producer, &made, Duration::from_secs(90)).await;
    let drained = harness::drain(&producer, Duration::from_secs(60)).await;
    let (entries, ended) = harness::end_fleet(fleet, recorder.entries()).await;
    let (released, problems) = verify(&producer, &made, &entries).await;
    let (report, unread) = harness::check(&server, &ns, log, &entries, Some(server.dir())).await;
    let mut outcome = Outcome::new(
        "workflows (batches with callbacks, dependency chains) under kill -9 of workers and of \
         redis-server, SCRIPT FLUSH and reclaims",
        started,
        report,
        structure,
    );
    let r = &outcome.report;
    let figures = [
        (
            "batches made / tried",
            format!("{} / {batches}", made.batches.len()),
        ),
        ("dependents made", made.dependents.len().to_string()),
        ("waiters released (policy check)", released.to_string()),
        (
            "waiters released (server record) / most releases of one",
            format!(
                "{} / {}",
                r.get("workflow_waiters_released"),
                r.get("workflow_max_releases_of_a_waiter")
            ),
        ),
        (
            "members counted",
            r.get("workflow_members_counted").to_string(),
        ),
        ("server reclaims", r.get("server_reclaims").to_string()),
        ("dead letters", r.get("server_dead_letters").to_string()),
    ];
    for (name, value) in figures {
        outcome.figure(name, value);
    }
    outcome.figure("worker kill -9 / redis kill -9 / SCRIPT FLUSH", {
        format!("{} / {} / {}", injected[0], injected[1], injected[2])
    });
    outcome.figure("calls the faults failed", made.failed_calls);
    if let Err(why) = settled {
        outcome.unproven.push(why);
    }
    let created = made.batches.len() * (MEMBERS + 2) + made.dependents.len();
    harness::require_ran(
        &mut outcome,
        drained,
        created,
        Vec::new(),
        ("faults", injected.iter().sum()),
    );
    for (n, name) in injected
        .iter()
        .zip(["worker kill -9", "redis-server kill -9", "SCRIPT FLUSH"])
    {
        outcome.require(*n > 0, || format!("no {name} was injected"));
    }
    outcome.require(
        !made.batches.is_empty() && !made.dependents.is_empty(),
        || "no batch or no dependency chain was made, so workflows were not tested".into(),
    );
    outcome.require(released > 0, || "no waiter was released".into());
    let most = outcome.report.get("workflow_max_releases_of_a_waiter");
    outcome.require(most <= 1, || format!("a waiter was released {most} times"));
    outcome.require_none(problems);
    harness::close_fleet_run(&mut outcome, &entries, ended, unread, false);
    outcome
}
