//! `SCRIPT FLUSH` every second under load, and `FUNCTION FLUSH` under load
//! with the scripts called as functions: no error reaches a caller.

use std::time::{Duration, Instant};

use redq::ScriptCalls;

use super::harness::{self, recorded_team_calling, structure_check, Claims, QUEUE};
use super::workload::{produce, spawn_workers, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::{self, ServerLog};
use crate::{unique_namespace, RedisServer};

pub async fn script_flush(scale: Scale) -> Outcome {
    flush_under_load(scale, ScriptCalls::Eval).await
}

/// [`script_flush`] with every handle calling the scripts as Redis
/// Functions, and `FUNCTION FLUSH` as the fault.
pub async fn function_flush(scale: Scale) -> Outcome {
    flush_under_load(scale, ScriptCalls::Functions).await
}

async fn flush_under_load(scale: Scale, calls: ScriptCalls) -> Outcome {
    // The fault, the scenario and the fault's figure.
    // Eval or Functions: the flush that takes away what `calls` calls.
    let by_function = calls == ScriptCalls::Functions;
    let (fault, scenario, figure) = if by_function {
        (
            "FUNCTION FLUSH",
            "FUNCTION FLUSH every second under load (scripts called as functions)",
            "FUNCTION FLUSH (1/s)",
        )
    } else {
        (
            "SCRIPT FLUSH",
            "SCRIPT FLUSH every second under load",
            "SCRIPT FLUSH (1/s)",
        )
    };
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-flush");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let timeout = Duration::from_secs(10);
    let (producer, workers, recorders) = recorded_team_calling(&url, &ns, timeout, 3, calls).await;
    let behaviour = Behaviour {
        lease: Duration::from_secs(30),
        abandon: 0.0,
        ..Behaviour::default()
    };
    let (stop, tasks) = spawn_workers(workers, QUEUE, behaviour, scale.seed);
    let jobs = specs("flush", 0, scale.jobs * 2, 0, 0);
    let pause = scale.fault_window / (jobs.len() as u32 / 10).max(1);
    let feed = {
        let producer = producer.clone();
        tokio::spawn(async move { produce(&producer, QUEUE, &jobs, 10, pause).await })
    };
    let mut structure = Vec::new();
    let admin = server.client().await;
    let mut flushes = 0;
    while !feed.is_finished() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let flushed: Result<(), _> = if by_function {
            fred::interfaces::FunctionInterface::function_flush(&admin, false).await
        } else {
            fred::interfaces::LuaInterface::script_flush(&admin, false).await
        };
        flushed.unwrap_or_else(|e| panic!("{fault} failed: {e}"));
        flushes += 1;
        if flushes % 4 == 0 {
            structure_check(&server, &ns, fault, &mut structure).await;
        }
    }
    let produced = feed.await.expect("producer task");
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let panics = harness::stop_workers(stop, tasks).await;
    let entries = history::merged(&producer.recorder, &recorders);
    let errors: Vec<String> = entries
        .iter()
        .filter_map(|e| match e.outcome() {
            history::Reply::Unknown { error } | history::Reply::Failed { error } => Some(error),
            _ => None,
        })
        .collect();
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(scenario, started, report, structure);
    outcome.figure(figure, flushes);
    outcome.figure("calls", entries.len());
    outcome.figure("errors that reached callers", errors.len());
    outcome.figure("jobs enqueued", produced.created);
    for e in errors.iter().take(5) {
        outcome
            .structure
            .push(format!("an error reached a caller: {e}"));
    }
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        (fault, flushes),
    );
    Claims::of(&entries).require(&mut outcome, &[1, 2, 3], false);
    outcome.require_none(panics);
    outcome.require_none(unread);
    outcome
}
