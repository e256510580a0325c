//! A gate, its waiters and its members as text and as JSON, for both
//! subcommands.

use std::time::SystemTime;

use serde_json::{json, Value};

use crate::clock;
use crate::output::{opt_time, outln, time, Table};
use crate::text::{inert, truncate};
use crate::workflow::why::{progress, waiter_why};
use crate::workflow::{
    condition_text, kind_word, member_detail, member_word, on_failure_text, Gate, Member,
    MemberPage, MemberState,
};

/// The most characters of a result or error a members table shows (`-o
/// json` has them whole).
const DETAIL_WIDTH: usize = 100;

/// A gate in JSON: its counts, times (RFC 3339) and waiters with why.
pub fn gate_json(gate: &Gate) -> Value {
    json!({
        "id": gate.id,
        "kind": kind_word(gate.kind),
        "state": gate.state.as_str(),
        "created_at": time(gate.created_at),
        "sealed_at": opt_time(gate.sealed_at),
        "done_at": opt_time(gate.done_at),
        "total": gate.total,
        "pending": gate.pending,
        "succeeded": gate.succeeded,
        "failed": gate.failed,
        "first_failure": gate.first_failure,
        "label": gate.label,
        "waiter_count": gate.waiter_count,
        "waiters": gate.waiters.iter().map(|w| json!({
            "id": w.id,
            "queue": w.queue,
            "condition": serde_json::to_value(w.condition).unwrap_or(Value::Null),
            "on_failure": serde_json::to_value(w.on_failure).unwrap_or(Value::Null),
            "decision": serde_json::to_value(w.decision).unwrap_or(Value::Null),
            "why": waiter_why(gate, w),
        })).collect::<Vec<_>>(),
    })
}

/// A member's queue, when the driver knows it: a member that finished in a
/// queue keeping nothing left no record to name it.
fn member_queue(member: &Member) -> Option<&str> {
    Some(member.queue.as_str()).filter(|q| !q.is_empty())
}

/// A member in JSON: `state` is its live state or its outcome; `result`
/// (completed) or `error` (dead) when it has one; `queue` null when not
/// known.
pub fn member_json(member: &Member) -> Value {
    let mut value = json!({
        "id": member.id,
        "queue": member_queue(member),
        "state": member_word(&member.state),
    });
    match &member.state {
        MemberState::Completed(result) => value["result"] = result.clone().unwrap_or(Value::Null),
        MemberState::Dead(error) => value["error"] = json!(error),
        _ => {}
    }
    value
}

/// A members page in JSON.
pub fn members_json(page: &MemberPage) -> Value {
    json!({
        "members": page.members.iter().map(member_json).collect::<Vec<_>>(),
        "next_cursor": page.next,
    })
}

/// The gate's facts, then its waiters as a table.
pub fn print_gate(gate: &Gate, now: SystemTime) {
    let mut head = format!("{} {}", gate.kind.as_str(), inert(&gate.id));
    if let Some(label) = &gate.label {
        head.push_str(&format!(" \"{}\"", inert(label)));
    }
    outln!("{head}: {}", gate.state.as_str());
    outln!("members        {}", progress(gate));
    if let Some(failure) = &gate.first_failure {
        outln!("first failure  {}", inert(failure));
    }
    let at = |t: SystemTime| {
        format!(
            "{} UTC ({} ago)",
            clock::datetime(t),
            clock::compact(clock::age(t, now))
        )
    };
    outln!("created        {}", at(gate.created_at));
    if let Some(t) = gate.sealed_at {
        outln!("sealed         {}", at(t));
    }
    if let Some(t) = gate.done_at {
        outln!("{:<15}{}", gate.state.as_str(), at(t));
    }
    outln!();
    if gate.waiters.is_empty() {
        outln!("no job waits on it yet: members may still join");
        return;
    }
    let mut table = Table::new(&["WAITING JOB", "QUEUE", "RELEASED IF", "ON FAILURE", "WHY"]);
    for w in &gate.waiters {
        table.row(vec![
            w.id.clone(),
            w.queue.clone(),
            condition_text(w.condition).to_owned(),
            on_failure_text(w).to_owned(),
            waiter_why(gate, w),
        ]);
    }
    table.print();
}

/// A page of members as a table, and how to get the next one.
pub fn print_members(page: &MemberPage, next_hint: impl Fn(&str) -> String) {
    if page.members.is_empty() {
        outln!("no members on this page");
        return;
    }
    let mut table = Table::new(&["MEMBER", "QUEUE", "STATE", "RESULT / ERROR"]);
    for m in &page.members {
        table.row(vec![
            m.id.clone(),
            member_queue(m).unwrap_or("-").to_owned(),
            member_word(&m.state).to_owned(),
            truncate(&member_detail(&m.state).unwrap_or_default(), DETAIL_WIDTH),
        ]);
    }
    table.print();
    if let Some(next) = &page.next {
        outln!("more: {}", next_hint(next));
    }
}
