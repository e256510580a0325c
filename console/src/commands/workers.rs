//! `redq workers`: the workers listed (`-o json` here, the table in
//! `listing`), and `redq workers quiet|stop ID`: tell one worker, on its
//! holder channel, to claim nothing more (and, for stop, to exit once
//! idle). The console's Workers screen sends the same, and says the same
//! (`told`).

use crate::aggregate::Target;
use crate::cli::WorkersCommand;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;
use crate::tui::state::WorkerInfo;

/// `redq workers`: the table, or with `-o json` each worker's record with
/// `state` as the table's STATE column says it: `gone` for a worker gone
/// silent (its `gone` field kept), else `running`, `quiet` or `stopping`.
/// A script counting `state == "running"` then counts live workers only,
/// and one summing `in_flight` sums running jobs only: a gone worker's is
/// `null` (the table's `-`), its last report kept as `last_in_flight`.
/// Over shards each worker is one object, however many shards list it
/// (`aggregate::workers`): `shards` says which, `gone_shards` which of
/// them lost its heartbeat, and its figures are its freshest record's.
pub async fn list(queue: &Target, json: bool) -> Result<(), Failure> {
    if !json {
        return super::listing::workers(queue, false).await;
    }
    let workers = queue.workers().await?.unwrap_or_default();
    print_json(&serde_json::Value::Array(
        workers.iter().map(worker_json).collect(),
    ));
    Ok(())
}

/// One worker in JSON: its record, with `state` as the table shows it.
fn worker_json(worker: &WorkerInfo) -> serde_json::Value {
    let mut value = serde_json::to_value(worker).unwrap_or_default();
    if let Some(fields) = value.as_object_mut() {
        fields.insert("state".into(), worker.state_text().into());
        if worker.gone {
            fields.insert("last_in_flight".into(), worker.in_flight.into());
            fields.insert("in_flight".into(), serde_json::Value::Null);
        }
    }
    value
}

/// What the command changes, for `--read-only`'s refusal.
pub fn mutates(command: &WorkersCommand) -> &'static str {
    match command {
        WorkersCommand::Quiet { .. } => "workers quiet",
        WorkersCommand::Stop { .. } => "workers stop",
    }
}

/// The sentence for a quiet or stop sent to `id`: what the worker does
/// now, or that no worker listens under that id.
pub fn told(id: &str, heard: bool, stop: bool) -> String {
    let shown = inert(id);
    match (heard, stop) {
        (true, false) => format!("quieted {shown}: it claims nothing more and finishes what it runs"),
        (true, true) => format!("stopping {shown}: it claims nothing more and exits once its running jobs are done"),
        (false, _) => format!(
            "no worker heard it: none listens as {shown} (gone, or its Redis user may not subscribe); `redq workers` lists the live ones"
        ),
    }
}

/// Run `quiet` or `stop`; exit 1 when no worker heard it.
pub async fn run(queue: &Target, command: WorkersCommand, json: bool) -> Result<(), Failure> {
    let (id, stop) = match &command {
        WorkersCommand::Quiet { id } => (id, false),
        WorkersCommand::Stop { id } => (id, true),
    };
    let heard = if stop {
        queue.stop_worker(id).await?
    } else {
        queue.quiet_worker(id).await?
    };
    let message = told(id, heard, stop);
    if !heard {
        return Err(Failure::Failed(message));
    }
    if json {
        print_json(&serde_json::json!({
            "worker": id,
            "action": if stop { "stop" } else { "quiet" },
            "heard": heard,
        }));
    } else {
        outln!("{message}");
    }
    Ok(())
}
