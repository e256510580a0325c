//! The arguments of a gate_seal call, built once: the waiters validated into
//! one shared buffer as enqueue's jobs are (`crate::enqueue_args`), then
//! written straight into the command.

use fred::bytes::Bytes;
use fred::types::Value;

use super::plan::WaiterPlan;
use super::GateKind;
use crate::enqueue_args::{encode_into, Encoded};
use crate::scripts::{self, Arg};
use crate::{QueueError, RecordFormat};

/// ARGV entries of a waiter before its job's: queue, condition, on_failure.
const WAITER_POLICY: usize = 3;

/// What one gate_seal call does, before it is encoded.
#[derive(Clone, Copy)]
pub(crate) struct SealPlan<'a> {
    /// The gate; `None`: the first waiter's own id (a dependent's or a tree
    /// parent's gate).
    pub gate: Option<&'a str>,
    pub kind: GateKind,
    pub label: Option<&'a str>,
    /// Existing jobs to count (checked by the caller).
    pub dependencies: &'a [String],
    pub waiters: &'a [WaiterPlan],
    /// The tree gate the waiters join as members at their creation.
    pub parent: Option<&'a str>,
}

impl<'a> SealPlan<'a> {
    /// A plan for `waiters` of a `kind` gate, without label, dependencies
    /// or parent.
    pub(crate) fn new(kind: GateKind, waiters: &'a [WaiterPlan]) -> SealPlan<'a> {
        SealPlan {
            gate: None,
            kind,
            label: None,
            dependencies: &[],
            waiters,
            parent: None,
        }
    }
}

/// One waiter, encoded: its policy and where its fields lie in the buffer.
struct EncodedWaiter {
    queue: Value,
    condition: Value,
    on_failure: Value,
    fields: Encoded,
}

/// The ARGV of gate_seal.lua after the queue and the wake channel: the
/// gate, its kind, the payload limit, its label, the existing jobs it
/// counts, its waiters, then the gate its waiters join as members (a
/// subtree's parent joins its own parent's gate), that gate's kind, and
/// the record format the waiters are stored in (`crate::record_format`).
pub(crate) struct SealArgs {
    head: [Value; 2],
    gate: Value,
    kind: Value,
    payload_limit: u64,
    label: Value,
    dependencies: Vec<Value>,
    waiters: Vec<EncodedWaiter>,
    buf: Bytes,
    parent: [Value; 2],
    format: Value,
}

impl SealArgs {
    /// Validate every waiter (the checks of an enqueue) and lay out the call.
    pub(crate) fn new(
        head: [Value; 2],
        plan: &SealPlan<'_>,
        payload_limit: usize,
        format: RecordFormat,
    ) -> Result<SealArgs, QueueError> {
        let SealPlan {
            gate,
            kind,
            label,
            dependencies,
            waiters,
            parent,
        } = *plan;
        let mut buf = Vec::with_capacity(waiters.len() * 128);
        let mut encoded = Vec::with_capacity(waiters.len());
        for waiter in waiters {
            encoded.push(EncodedWaiter {
                queue: scripts::text(waiter.queue.as_str()),
                condition: scripts::text(waiter.condition.wire()),
                on_failure: scripts::text(waiter.on_failure.wire()),
                fields: encode_into(&waiter.job, payload_limit, &mut buf)?,
            });
        }
        let gate = match (gate, encoded.first()) {
            (Some(gate), _) => gate.to_owned(),
            (None, Some(first)) => first.fields.id_text(&buf),
            (None, None) => {
                return Err(QueueError::Protocol(
                    "a gate named by its waiter needs a waiter".into(),
                ))
            }
        };
        let buf = Bytes::from(buf);
        Ok(SealArgs {
            head,
            gate: scripts::text(gate),
            kind: scripts::text(kind.wire()),
            payload_limit: payload_limit as u64,
            label: scripts::text(label.unwrap_or("")),
            dependencies: dependencies
                .iter()
                .map(|id| scripts::text(id.as_str()))
                .collect(),
            waiters: encoded,
            buf,
            parent: match parent {
                Some(gate) => [scripts::text(gate), scripts::text(GateKind::Tree.wire())],
                None => [scripts::text(""), scripts::text("")],
            },
            format: format.wire(),
        })
    }

    /// The gate's id.
    pub(crate) fn gate(&self) -> String {
        match &self.gate {
            Value::String(s) => s.to_string(),
            _ => String::new(),
        }
    }

    /// The id each waiter is created under, in order.
    #[cfg(test)]
    pub(crate) fn waiter_ids(&self) -> Vec<String> {
        self.waiters
            .iter()
            .map(|w| w.fields.id_text(&self.buf))
            .collect()
    }
}

impl scripts::Args for SealArgs {
    fn count(&self) -> usize {
        let waiters: usize = self
            .waiters
            .iter()
            .map(|waiter| WAITER_POLICY + waiter.fields.arg_count())
            .sum();
        2 + 5 + self.dependencies.len() + 1 + waiters + 3
    }

    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>) {
        out.extend(self.head.iter().map(Arg::Value));
        out.push(Arg::Value(&self.gate));
        out.push(Arg::Value(&self.kind));
        out.push(Arg::Uint(self.payload_limit));
        out.push(Arg::Value(&self.label));
        out.push(Arg::Uint(self.dependencies.len() as u64));
        out.extend(self.dependencies.iter().map(Arg::Value));
        out.push(Arg::Uint(self.waiters.len() as u64));
        for waiter in &self.waiters {
            out.push(Arg::Value(&waiter.queue));
            out.push(Arg::Value(&waiter.condition));
            out.push(Arg::Value(&waiter.on_failure));
            waiter.fields.write(&self.buf, out);
        }
        out.extend(self.parent.iter().map(Arg::Value));
        out.push(Arg::Value(&self.format));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripts::Args;
    use crate::workflow::{Condition, OnFailure};
    use crate::NewJob;

    fn wire(arg: Arg<'_>) -> String {
        match Value::from(arg) {
            Value::Integer(n) => n.to_string(),
            Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
            Value::String(s) => s.to_string(),
            other => panic!("unexpected argument {other:?}"),
        }
    }

    #[test]
    fn the_seal_argv_is_gate_kind_limit_label_dependencies_then_waiters() {
        let waiter = WaiterPlan {
            queue: "mail".into(),
            job: NewJob::new(serde_json::json!({"to": "ada"})).name("receipt"),
            condition: Condition::AllSucceeded,
            on_failure: OnFailure::Hold,
        };
        let waiters = [waiter];
        let deps = ["a".to_owned(), "b".to_owned()];
        let plan = SealPlan {
            gate: Some("G1"),
            dependencies: &deps,
            parent: Some("P"),
            ..SealPlan::new(GateKind::Dependencies, &waiters)
        };
        let head = [scripts::text("mail"), scripts::text("chan")];
        let args = SealArgs::new(head, &plan, 4096, RecordFormat::Standard).unwrap();
        let mut out = Vec::new();
        args.write(&mut out);
        assert_eq!(out.len(), args.count());
        let argv: Vec<String> = out.into_iter().map(wire).collect();
        assert_eq!(
            argv[..13],
            [
                "mail", "chan", "G1", "deps", "4096", "", "2", "a", "b", "1", "mail", "success",
                "hold"
            ]
        );
        assert_eq!(
            argv[13],
            args.waiter_ids()[0],
            "the waiter's id leads its fields"
        );
        assert_eq!(
            argv[14..],
            [r#"{"to":"ada"}"#, "1", "9", "receipt", "P", "tree", ""]
        );
        assert_eq!(
            argv[argv.len() - 3..],
            ["P", "tree", ""],
            "the parent gate, then the record format, last"
        );
    }

    #[test]
    fn a_gate_named_by_its_waiter_has_the_waiters_id() {
        let waiter = WaiterPlan {
            queue: "q".into(),
            job: NewJob::new(serde_json::json!(1)),
            condition: Condition::AllSucceeded,
            on_failure: OnFailure::DeadLetter,
        };
        let head = [scripts::text("q"), scripts::text("c")];
        let waiters = [waiter];
        let args = SealArgs::new(
            head,
            &SealPlan::new(GateKind::Tree, &waiters),
            64,
            RecordFormat::Standard,
        )
        .unwrap();
        assert_eq!(args.gate(), args.waiter_ids()[0]);
        assert_eq!(args.gate().len(), ulid::ULID_LEN);
    }

    #[test]
    fn a_waiter_is_checked_as_an_enqueue_is() {
        let waiter = WaiterPlan {
            queue: "q".into(),
            job: NewJob::new(serde_json::json!("0123456789")),
            condition: Condition::AllFinished,
            on_failure: OnFailure::Cancel,
        };
        let head = [scripts::text("q"), scripts::text("c")];
        let waiters = [waiter];
        let plan = SealPlan {
            gate: Some("G"),
            ..SealPlan::new(GateKind::Batch, &waiters)
        };
        let result = SealArgs::new(head, &plan, 4, RecordFormat::Standard);
        assert!(matches!(result, Err(QueueError::PayloadTooLarge { .. })));
    }
}
