//! `redq batches list|show|cancel`.

use std::time::SystemTime;

use serde_json::Value;

use super::print::{gate_json, members_json, print_gate, print_members};
use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json, Table};
use crate::text::inert;
use crate::workflow::{
    act, decisions_text, done_text, kind_word, last_change, read, Gate, GateKind, GateState,
    WaiterDecision,
};

pub async fn list(queue: &Target, offset: u64, limit: u64, json: bool) -> Result<(), Failure> {
    let gates = read::gates(queue, offset, limit as usize).await?;
    if json {
        print_json(&Value::Array(gates.iter().map(gate_json).collect()));
        return Ok(());
    }
    if gates.is_empty() {
        let more = if offset > 0 { " past this offset" } else { "" };
        outln!(
            "no batch, dependencies or tree in namespace {}{more}",
            inert(queue.namespace())
        );
        return Ok(());
    }
    let mut table = Table::new(&[
        "ID", "KIND", "STATE", ">DONE", ">FAILED", ">PENDING", "WAITERS", "LABEL", ">IDLE",
    ]);
    let now = SystemTime::now();
    for g in &gates {
        table.row(vec![
            g.id.clone(),
            kind_word(g.kind).to_owned(),
            g.state.as_str().to_owned(),
            done_text(g),
            g.failed.to_string(),
            g.pending.to_string(),
            decisions_text(g),
            g.label.clone().unwrap_or_default(),
            crate::clock::compact(crate::clock::age(last_change(g), now)),
        ]);
    }
    table.print();
    Ok(())
}

pub async fn show(
    queue: &Target,
    id: &str,
    cursor: &str,
    limit: usize,
    json: bool,
) -> Result<(), Failure> {
    let gate = find(queue, id).await?;
    if gate.id != id {
        outln!(
            "job {} waits on {} {}",
            inert(id),
            kind_word(gate.kind),
            inert(&gate.id)
        );
    }
    let id = gate.id.clone();
    let id = id.as_str();
    let members = read::members(queue, id, cursor, limit).await?;
    if json {
        let mut value = gate_json(&gate);
        value["members"] = members_json(&members);
        print_json(&value);
        return Ok(());
    }
    let now = SystemTime::now();
    print_gate(&gate, now);
    outln!();
    print_members(&members, |next| {
        format!("redq batches show {} --cursor {}", inert(id), inert(next))
    });
    Ok(())
}

pub async fn cancel(queue: &Target, id: &str, yes: bool, json: bool) -> Result<(), Failure> {
    let gate = find(queue, id).await?;
    let named = match gate.id == id {
        true => format!("{} {}", kind_word(gate.kind), inert(id)),
        false => format!(
            "{} {} (the one job {} waits on)",
            kind_word(gate.kind),
            inert(&gate.id),
            inert(id)
        ),
    };
    let held = gate
        .waiters
        .iter()
        .filter(|w| w.decision == WaiterDecision::Held)
        .count() as u64;
    if gate.state == GateState::Done && held == 0 {
        return Err(Failure::Failed(format!(
            "{named} is done already, with no job held waiting on it: nothing to cancel"
        )));
    }
    if !yes {
        let what = match gate.state {
            GateState::Done => format!(
                "cancel cancels the {} held for an operator waiting on {named}, which is done",
                crate::output::count(held, "job", "jobs")
            ),
            GateState::Cancelled => format!(
                "{named} is cancelled; cancel again cancels what is left of it ({} pending{})",
                crate::output::count(gate.pending, "job", "jobs"),
                subtrees_note(gate.kind)
            ),
            GateState::Open | GateState::Sealed => format!(
                "cancel stops {named} as a whole ({} pending, {} waiting on it{})",
                crate::output::count(gate.pending, "job", "jobs"),
                crate::output::count(gate.waiter_count as u64, "job", "jobs"),
                subtrees_note(gate.kind)
            ),
        };
        return Err(Failure::Usage(format!("{what}; add --yes to do it")));
    }
    let outcome = act::cancel(queue, &gate.id, CANCELLED_BY, |_, _| {}).await?;
    outcome.print(&gate.id, json)
}

/// What a tree's cancel also stops.
fn subtrees_note(kind: GateKind) -> &'static str {
    match kind {
        GateKind::Tree => ", and its subtrees' jobs at every level",
        GateKind::Batch | GateKind::Dependencies => "",
    }
}

/// Gate `id`, or the gate job `id` waits on (a batch's callback is no
/// gate's id: it waits on its batch).
async fn find(queue: &Target, id: &str) -> Result<Gate, Failure> {
    if let Some(gate) = read::gate(queue, id).await? {
        return Ok(gate);
    }
    let links = read::links(queue, id).await?;
    if let Some(awaits) = &links.awaits {
        if let Some(gate) = read::gate(queue, awaits).await? {
            return Ok(gate);
        }
    }
    Err(not_a_gate(id))
}

/// Who a CLI cancel is kept as having come from.
pub(super) const CANCELLED_BY: &str = "cli";

/// The error for an id with no gate.
pub(super) fn not_a_gate(id: &str) -> Failure {
    Failure::Failed(format!(
        "no batch, dependencies or tree {} in this namespace, and no job by that id waits on \
         one (never created, or its data expired 24 h after it finished); redq batches list \
         shows the newest, redq deps show ID what a job waits on",
        inert(id)
    ))
}
