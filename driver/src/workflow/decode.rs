//! The gate scripts' replies as the workflow types: the words the scripts
//! spell (`lua/lib/gate_record.lua`) read in one place.

use std::time::SystemTime;

use fred::types::Value;

use super::{
    Condition, GateKind, GateState, GateStatus, Member, MemberState, OnFailure, Waiter,
    WaiterDecision,
};
use crate::job::ms_to_time;
use crate::scripts::reply;
use crate::{JobState, QueueError};

fn bad(what: &str, value: &str) -> QueueError {
    QueueError::Protocol(format!("a gate script replied {what} {value:?}"))
}

pub(crate) fn kind(text: &str) -> Result<GateKind, QueueError> {
    Ok(match text {
        "batch" => GateKind::Batch,
        "deps" => GateKind::Dependencies,
        "tree" => GateKind::Tree,
        other => return Err(bad("gate kind", other)),
    })
}

pub(crate) fn state(text: &str) -> Result<GateState, QueueError> {
    Ok(match text {
        "open" => GateState::Open,
        "sealed" => GateState::Sealed,
        "done" => GateState::Done,
        "cancelled" => GateState::Cancelled,
        other => return Err(bad("gate state", other)),
    })
}

fn condition(text: &str) -> Result<Condition, QueueError> {
    Ok(match text {
        "all" => Condition::AllFinished,
        "success" => Condition::AllSucceeded,
        other => return Err(bad("condition", other)),
    })
}

fn on_failure(text: &str) -> Result<OnFailure, QueueError> {
    Ok(match text {
        "dead" => OnFailure::DeadLetter,
        "cancel" => OnFailure::Cancel,
        "hold" => OnFailure::Hold,
        other => return Err(bad("on_failure", other)),
    })
}

pub(crate) fn decision(text: &str) -> Result<WaiterDecision, QueueError> {
    Ok(match text {
        "" => WaiterDecision::Pending,
        "released" => WaiterDecision::Released,
        "dead" => WaiterDecision::DeadLettered,
        "cancelled" => WaiterDecision::Cancelled,
        "held" => WaiterDecision::Held,
        "operator_released" => WaiterDecision::OperatorReleased,
        "operator_failed" => WaiterDecision::OperatorFailed,
        "deleted" => WaiterDecision::Deleted,
        other => return Err(bad("waiter decision", other)),
    })
}

/// Reads a flat reply in order.
pub(crate) struct Fields(std::vec::IntoIter<Value>);

impl Fields {
    pub(crate) fn new(items: Vec<Value>) -> Fields {
        Fields(items.into_iter())
    }

    fn next(&mut self) -> Result<Value, QueueError> {
        self.0
            .next()
            .ok_or_else(|| QueueError::Protocol("a gate script's reply ended early".into()))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.len() == 0
    }

    pub(crate) fn text(&mut self) -> Result<String, QueueError> {
        reply::text(self.next()?)
    }

    pub(crate) fn count(&mut self) -> Result<u64, QueueError> {
        Ok(reply::int(&self.next()?)?.max(0) as u64)
    }

    fn time(&mut self) -> Result<Option<SystemTime>, QueueError> {
        let ms = self.count()?;
        Ok((ms > 0).then(|| ms_to_time(ms)))
    }

    fn optional(&mut self) -> Result<Option<String>, QueueError> {
        let text = self.text()?;
        Ok((!text.is_empty()).then_some(text))
    }
}

/// A gate's fields from `kind` to `label` (gate_get's and gate_list's
/// shared part), then the waiter count; waiters are read by [`waiters`].
pub(crate) fn status(id: String, f: &mut Fields) -> Result<GateStatus, QueueError> {
    let kind = kind(&f.text()?)?;
    let state = state(&f.text()?)?;
    let created_at = f.time()?.unwrap_or(SystemTime::UNIX_EPOCH);
    Ok(GateStatus {
        id,
        kind,
        state,
        created_at,
        sealed_at: f.time()?,
        done_at: f.time()?,
        total: f.count()?,
        pending: f.count()?,
        succeeded: f.count()?,
        failed: f.count()?,
        first_failure: f.optional()?,
        label: f.optional()?,
        waiter_count: f.count()? as usize,
        waiters: Vec::new(),
    })
}

/// `status.waiter_count` waiters, 5 fields each: id, queue, condition,
/// on_failure, decision.
pub(crate) fn waiters(status: &mut GateStatus, f: &mut Fields) -> Result<(), QueueError> {
    for _ in 0..status.waiter_count {
        status.waiters.push(Waiter {
            id: f.text()?,
            queue: f.text()?,
            condition: condition(&f.text()?)?,
            on_failure: on_failure(&f.text()?)?,
            decision: decision(&f.text()?)?,
        });
    }
    Ok(())
}

/// One member of gate_members: id, queue, state or outcome, detail.
pub(crate) fn member(f: &mut Fields) -> Result<Member, QueueError> {
    let id = f.text()?;
    let queue = f.text()?;
    let word = f.text()?;
    let detail = f.text()?;
    let state = match word.as_str() {
        "completed" => MemberState::Completed(
            (!detail.is_empty()).then(|| crate::job::parse_payload(detail.as_bytes())),
        ),
        "dead" => MemberState::Dead(detail),
        "cancelled" => MemberState::Cancelled,
        "deleted" => MemberState::Deleted,
        live => {
            MemberState::Pending(JobState::parse(live).ok_or_else(|| bad("member state", live))?)
        }
    };
    Ok(Member { id, queue, state })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::String(s.into())
    }

    #[test]
    fn a_gate_reply_reads_as_its_status_and_waiters() {
        let items = vec![
            t("batch"),
            t("sealed"),
            Value::Integer(1_700_000_000_000),
            Value::Integer(1_700_000_000_500),
            Value::Integer(0),
            Value::Integer(3),
            Value::Integer(1),
            Value::Integer(1),
            Value::Integer(1),
            t("J2 dead: boom"),
            t("import"),
            Value::Integer(1),
            t("W1"),
            t("reports"),
            t("success"),
            t("cancel"),
            t(""),
        ];
        let mut f = Fields::new(items);
        let mut status = status("G".into(), &mut f).unwrap();
        waiters(&mut status, &mut f).unwrap();
        assert!(f.is_empty());
        assert_eq!(
            (status.kind, status.state),
            (GateKind::Batch, GateState::Sealed)
        );
        assert_eq!(
            (
                status.total,
                status.pending,
                status.succeeded,
                status.failed
            ),
            (3, 1, 1, 1)
        );
        assert_eq!(status.done_at, None);
        assert!(status.sealed_at.is_some());
        assert_eq!(status.first_failure.as_deref(), Some("J2 dead: boom"));
        assert_eq!(status.label.as_deref(), Some("import"));
        assert_eq!(
            status.waiters,
            [Waiter {
                id: "W1".into(),
                queue: "reports".into(),
                condition: Condition::AllSucceeded,
                on_failure: OnFailure::Cancel,
                decision: WaiterDecision::Pending,
            }]
        );
    }

    #[test]
    fn members_read_as_live_states_or_outcomes() {
        let mut f = Fields::new(vec![
            t("A"),
            t("q"),
            t("leased"),
            t(""),
            t("B"),
            t("q"),
            t("completed"),
            t("{\"pages\":3}"),
            t("C"),
            t("r"),
            t("dead"),
            t("boom"),
            t("D"),
            t("r"),
            t("awaiting"),
            t(""),
        ]);
        let states: Vec<MemberState> = (0..4).map(|_| member(&mut f).unwrap().state).collect();
        assert_eq!(
            states,
            [
                MemberState::Pending(JobState::Leased),
                MemberState::Completed(Some(serde_json::json!({"pages": 3}))),
                MemberState::Dead("boom".into()),
                MemberState::Pending(JobState::Awaiting),
            ]
        );
        let mut f = Fields::new(vec![t("E"), t("q"), t("lost"), t("")]);
        assert!(member(&mut f).is_err());
    }
}
