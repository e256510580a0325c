//! `redq deps show|release|fail ID`.

use std::time::SystemTime;

use serde_json::{json, Value};

use super::batches::CANCELLED_BY;
use super::print::{gate_json, members_json, print_gate, print_members};
use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;
use crate::workflow::{act, read, MEMBERS_PAGE};

/// What the job waits on (its `awaits` gate, with a first page of
/// members), then what waits on it: the batch or tree it was created into
/// and the gates of jobs that list it in `NewJob::after`, until it finishes.
pub async fn show(queue: &Target, id: &str, json: bool) -> Result<(), Failure> {
    let links = read::links(queue, id).await?;
    // A job gone without a trace may still name a gate: its own id is its
    // dependencies' gate, kept 24 h after they finished.
    let awaits = match &links.awaits {
        Some(gate) => read::gate(queue, gate).await?,
        None => read::gate(queue, id).await?,
    };
    if !links.found && awaits.is_none() {
        return Err(Failure::Failed(format!(
            "job {} is not in this namespace (never created, or finished without a kept \
             record) and no dependencies are kept under its id",
            inert(id)
        )));
    }
    let members = match &awaits {
        Some(gate) => Some(read::members(queue, &gate.id, "", MEMBERS_PAGE).await?),
        None => None,
    };
    let mut waited_by = Vec::new();
    for gate in &links.member_of {
        if let Some(gate) = read::gate(queue, gate).await? {
            waited_by.push(gate);
        }
    }
    if json {
        let awaits_json = match (&awaits, &members) {
            (Some(gate), Some(members)) => {
                let mut value = gate_json(gate);
                value["members"] = members_json(members);
                value
            }
            _ => Value::Null,
        };
        print_json(&json!({
            "id": id,
            "state": links.state,
            "awaits": awaits_json,
            "waited_on_by": waited_by.iter().map(gate_json).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    let now = SystemTime::now();
    let shown = inert(id);
    match links.state.as_deref() {
        Some(state) => outln!("job {shown}: {state}"),
        None => outln!("job {shown}: no longer in its queue"),
    }
    outln!();
    match (&awaits, &members) {
        (Some(gate), Some(members)) => {
            outln!("== what it waits on");
            print_gate(gate, now);
            outln!();
            print_members(members, |next| {
                format!(
                    "redq batches show {} --cursor {}",
                    inert(&gate.id),
                    inert(next)
                )
            });
        }
        _ => outln!("it waits on nothing"),
    }
    outln!();
    if waited_by.is_empty() {
        outln!("nothing waits on it");
    } else {
        outln!("== what waits on it");
        for gate in &waited_by {
            print_gate(gate, now);
            outln!();
        }
    }
    Ok(())
}

/// `release` (or `fail`) a held job.
pub async fn decide(queue: &Target, id: &str, release: bool, json: bool) -> Result<(), Failure> {
    let outcome = act::decide(queue, id, release, CANCELLED_BY).await?;
    outcome.print(id, json)
}
