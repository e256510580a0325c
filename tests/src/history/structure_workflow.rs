//! The structural check's workflow part (lib/gate.lua's keys): a job
//! waiting on a gate is in `{ns}:wf:awaiting` (`queue\nid`), which is its
//! one state (a waiter whose gate fired is also in `ord:ready` until its
//! queue's claim decides it: still that one state); every gate record in
//! `{ns}:wf:gates` decodes.

use std::collections::{BTreeSet, HashMap};

use fred::types::Value;

use super::gate::Gate;
use super::structure::Dump;
use super::violation::{Violation, ViolationKind};

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.to_vec(),
        Value::String(s) => s.to_string().into_bytes(),
        Value::Integer(n) => n.to_string().into_bytes(),
        _ => Vec::new(),
    }
}

fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) => items,
        _ => &[],
    }
}

impl Dump {
    /// Reads `HGETALL wf:gates` and `ZRANGE wf:awaiting 0 -1`.
    pub(super) fn read_workflows(&mut self, gates: &Value, awaiting: &Value) {
        for pair in items(gates).chunks(2) {
            if let [id, raw] = pair {
                let id = String::from_utf8_lossy(&bytes(id)).into_owned();
                self.gates.insert(id, Gate::decode(&bytes(raw)));
            }
        }
        self.awaiting = items(awaiting)
            .iter()
            .map(|m| String::from_utf8_lossy(&bytes(m)).into_owned())
            .collect();
    }

    /// Places each awaiting job (state "awaiting" of the queue its member
    /// names) and returns their ids.
    pub(super) fn place_awaiting(
        &self,
        at: &mut HashMap<String, Vec<(String, String)>>,
    ) -> BTreeSet<String> {
        let mut ids = BTreeSet::new();
        for member in &self.awaiting {
            let (queue, id) = member.split_once('\n').unwrap_or(("", member));
            at.entry(id.to_owned())
                .or_default()
                .push((queue.to_owned(), "awaiting".into()));
            ids.insert(id.to_owned());
        }
        ids
    }

    pub(super) fn check_workflows(&self, out: &mut Vec<Violation>) {
        for (gate, record) in &self.gates {
            if record.is_none() {
                out.push(Violation::new(
                    ViolationKind::UndecodableRecord,
                    format!("gate {gate}: record does not decode"),
                ));
            }
        }
    }
}
