//! Why a waiter waits, or how it was decided, in one sentence: the words
//! `redq batches show`, `redq deps show` and the Workflows screen share.

use super::{
    cancelled_sentence, finished, Condition, Gate, GateState, OnFailure, Waiter, WaiterDecision,
};
use crate::text::inert;

/// `waiting for 3 of 10`, `held: dependency 01J… dead: boom`, `released:
/// all 10 finished`, … for `waiter` of `gate`. Text from Redis is inert.
pub fn waiter_why(gate: &Gate, waiter: &Waiter) -> String {
    let failure = || {
        gate.first_failure
            .as_deref()
            .map(|f| format!("dependency {}", inert(f)))
            .unwrap_or_else(|| "a dependency failed".to_owned())
    };
    match waiter.decision {
        WaiterDecision::Pending => match gate.state {
            GateState::Open => "waiting: members may still join".to_owned(),
            GateState::Sealed => format!("waiting for {} of {}", gate.pending, gate.total),
            GateState::Done => "all finished: its queue's next claim decides it".to_owned(),
            GateState::Cancelled => format!(
                "{}: its queue's next claim cancels it",
                cancelled_sentence(gate.kind)
            ),
        },
        WaiterDecision::Released if gate.failed > 0 => format!(
            "released: all {} finished, {} failed",
            gate.total, gate.failed
        ),
        WaiterDecision::Released => format!("released: all {} finished", gate.total),
        WaiterDecision::DeadLettered => format!("dead-lettered: {}", failure()),
        WaiterDecision::Cancelled if gate.state == GateState::Cancelled => {
            format!("cancelled: {}", cancelled_sentence(gate.kind))
        }
        // Its policy cancelled it only when the gate finished with a
        // failure; any other cancel was an operator's.
        WaiterDecision::Cancelled if cancelled_by_policy(gate, waiter) => {
            format!("cancelled: {}", failure())
        }
        WaiterDecision::Cancelled => "cancelled by an operator".to_owned(),
        WaiterDecision::Deleted => "deleted by an operator before it was decided".to_owned(),
        WaiterDecision::Held => format!("held: {}", failure()),
        WaiterDecision::OperatorReleased => "released by an operator after being held".to_owned(),
        WaiterDecision::OperatorFailed => {
            "dead-lettered by an operator after being held".to_owned()
        }
    }
}

/// Whether `waiter`'s own policy cancelled it: its gate is done with a
/// failed member, it wanted all to succeed, and a failure cancels it.
fn cancelled_by_policy(gate: &Gate, waiter: &Waiter) -> bool {
    gate.state == GateState::Done
        && gate.failed > 0
        && waiter.condition == Condition::AllSucceeded
        && waiter.on_failure == OnFailure::Cancel
}

/// `7 of 10 finished (6 succeeded, 1 failed), 3 pending`.
pub fn progress(gate: &Gate) -> String {
    let mut text = format!(
        "{} of {} finished ({} succeeded, {} failed)",
        finished(gate),
        gate.total,
        gate.succeeded,
        gate.failed
    );
    if gate.pending > 0 {
        text.push_str(&format!(", {} pending", gate.pending));
    }
    text
}

/// What a job's detail says of the gate it awaits: `batch G (7 of 10
/// finished): waiting for 3 of 10`.
pub fn awaits_line(gate: &Gate, job_id: &str) -> String {
    let mut text = format!(
        "{} {} ({} of {} finished)",
        super::kind_word(gate.kind),
        inert(&gate.id),
        finished(gate),
        gate.total
    );
    if let Some(waiter) = gate.waiters.iter().find(|w| w.id == job_id) {
        text.push_str(&format!(": {}", waiter_why(gate, waiter)));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;
    use crate::workflow::{Condition, GateKind, OnFailure};

    fn gate(state: GateState, decision: WaiterDecision) -> (Gate, Waiter) {
        let waiter = Waiter {
            id: "J".into(),
            queue: "pdf".into(),
            condition: Condition::AllSucceeded,
            on_failure: OnFailure::Hold,
            decision,
        };
        let gate = Gate {
            id: "G".into(),
            kind: GateKind::Dependencies,
            state,
            created_at: UNIX_EPOCH,
            sealed_at: None,
            done_at: None,
            total: 10,
            pending: 3,
            succeeded: 6,
            failed: 1,
            first_failure: Some("X dead: boom".into()),
            label: None,
            waiters: vec![waiter.clone()],
            waiter_count: 1,
        };
        (gate, waiter)
    }

    #[test]
    fn a_waiter_says_what_it_waits_for_or_why_it_was_decided() {
        let (g, w) = gate(GateState::Sealed, WaiterDecision::Pending);
        assert_eq!(waiter_why(&g, &w), "waiting for 3 of 10");
        let (g, w) = gate(GateState::Done, WaiterDecision::Held);
        assert_eq!(waiter_why(&g, &w), "held: dependency X dead: boom");
        let (g, w) = gate(GateState::Done, WaiterDecision::DeadLettered);
        assert_eq!(waiter_why(&g, &w), "dead-lettered: dependency X dead: boom");
        let (mut g, w) = gate(GateState::Cancelled, WaiterDecision::Cancelled);
        g.kind = GateKind::Batch;
        assert_eq!(waiter_why(&g, &w), "cancelled: its batch was cancelled");
        // A held waiter an operator cancelled (redq jobs cancel) does not
        // read as cancelled by the failure.
        let (g, w) = gate(GateState::Done, WaiterDecision::Cancelled);
        assert_eq!(waiter_why(&g, &w), "cancelled by an operator");
        let (g, mut w) = gate(GateState::Done, WaiterDecision::Cancelled);
        w.on_failure = OnFailure::Cancel;
        assert_eq!(waiter_why(&g, &w), "cancelled: dependency X dead: boom");
        let (g, w) = gate(GateState::Done, WaiterDecision::Deleted);
        assert_eq!(
            waiter_why(&g, &w),
            "deleted by an operator before it was decided"
        );
        assert_eq!(
            progress(&g),
            "7 of 10 finished (6 succeeded, 1 failed), 3 pending"
        );
    }
}
