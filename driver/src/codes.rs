//! The reply codes of the scripts, named once, and the one place they become
//! the caller's outcomes and errors.
//!
//! Each script that answers with a code declares its codes in its header,
//! under its `-- Reply:` text, one line each:
//! `-- code <integer> <snake_name>: <meaning>`. Each such script has one enum
//! here, written with `codes!`, whose variants carry the same numbers and
//! names; a unit test reads every `lua/*.lua` header and fails when a script
//! declares a code no enum handles, or an enum handles one no script
//! declares. The functions below turn a reply into the public outcome types
//! and [`QueueError`]s, matching the enums exhaustively, so a new variant
//! does not compile until it is decoded. Call sites never see the integers.
//!
//! A code the script does not declare (a script from another version of the
//! driver, say) is a protocol error naming the script and the number.

use std::time::SystemTime;

use fred::types::Value;

use crate::job::ms_to_time;
use crate::outcome::cancel::CancelOutcome;
use crate::outcome::schedule::{FireOutcome, ScheduleChange, Triggered, Upserted};
use crate::scripts::reply;
use crate::{Acked, Enqueued, JobState, Lease, Nacked, QueueError};

/// One enum per script, its variants with the code and name the script's
/// header declares for them.
macro_rules! codes {
    ($(
        $(#[$doc:meta])*
        $name:ident for $script:literal {
            $($(#[$variant_doc:meta])* $variant:ident = $code:literal $snake:literal,)+
        }
    )+) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub(crate) enum $name {
                $($(#[$variant_doc])* $variant,)+
            }

            impl $name {
                /// The code at `value` (an absent entry is an unknown code).
                fn from_reply(value: Option<&Value>) -> Result<$name, QueueError> {
                    match value.map(reply::int).transpose()? {
                        $(Some($code) => Ok($name::$variant),)+
                        other => Err(unknown($script, other)),
                    }
                }
            }
        )+

        /// Every script's handled codes, `(script file stem, code, name)`:
        /// what the header test compares with the scripts' declarations.
        #[cfg(test)]
        const HANDLED: &[(&str, i64, &str)] = &[$($(($script, $code, $snake),)+)+];
    };
}

codes! {
    /// `lua/enqueue.lua`, one code per job.
    EnqueueCode for "enqueue" {
        Created = 1 "created",
        Duplicate = 0 "duplicate",
        /// A resent call whose first send applied: still the caller's job.
        CreatedEarlier = 2 "created_earlier",
        /// The gate the jobs were to join no longer takes members
        /// (`crate::workflow`); nothing was created.
        GateClosed = -3 "gate_closed",
    }
    /// `lua/gate_seal.lua`: one code per waiter, or one refusal.
    GateSealCode for "gate_seal" {
        Created = 1 "created",
        Duplicate = 0 "duplicate",
        CreatedEarlier = 2 "created_earlier",
        UnknownDependency = -1 "unknown_dependency",
        GateClosed = -2 "gate_closed",
        TooManyGates = -3 "too_many_gates",
    }
    /// `lua/gate_get.lua`.
    GateGetCode for "gate_get" {
        Found = 1 "found",
        NotFound = 0 "not_found",
    }
    /// `lua/gate_cancel.lua`.
    GateCancelCode for "gate_cancel" {
        Cancelled = 1 "cancelled",
        NotFound = 0 "not_found",
        AlreadyDone = 2 "already_done",
    }
    /// `lua/gate_decide.lua`.
    GateDecideCode for "gate_decide" {
        Decided = 1 "decided",
        NotFound = 0 "not_found",
        NotHeld = -1 "not_held",
        /// The job exists but waits on no gate.
        NotWaiting = 2 "not_waiting",
    }
    /// `lua/ack.lua`, one code per job.
    AckCode for "ack" {
        Acknowledged = 1 "acknowledged",
        /// Acknowledged; its result is kept nowhere (the queue keeps no
        /// finished jobs).
        AcknowledgedUnkept = 3 "acknowledged_unkept",
        AlreadyGone = 0 "already_gone",
        LeaseLost = -1 "lease_lost",
        Cancelled = -2 "cancelled",
    }
    /// `lua/nack.lua`.
    NackCode for "nack" {
        Applied = 1 "applied",
        AlreadyRecorded = 2 "already_recorded",
        LeaseLost = -1 "lease_lost",
        Cancelled = -2 "cancelled",
    }
    /// `lua/note.lua`.
    NoteCode for "note" {
        Noted = 1 "noted",
        LeaseLost = -1 "lease_lost",
        Cancelled = -2 "cancelled",
    }
    /// `lua/extend.lua`.
    ExtendCode for "extend" {
        Extended = 1 "extended",
        LeaseLost = -1 "lease_lost",
        Cancelled = -2 "cancelled",
    }
    /// `lua/cancel.lua`, by id.
    CancelCode for "cancel" {
        Cancelled = 1 "cancelled",
        NotFound = 0 "not_found",
        AlreadyCancelled = 2 "already_cancelled",
        AlreadyCompleted = 3 "already_completed",
    }
    /// `lua/release.lua`.
    ReleaseCode for "release" {
        Released = 1 "released",
        AlreadyReleased = 2 "already_released",
        LeaseLost = -1 "lease_lost",
    }
    /// `lua/pause.lua` (pause and resume).
    PauseCode for "pause" {
        Done = 1 "done",
        Unchanged = 0 "unchanged",
    }
    /// `lua/schedule_upsert.lua`.
    UpsertCode for "schedule_upsert" {
        Created = 1 "created",
        Updated = 2 "updated",
    }
    /// `lua/schedule_pause.lua` (pause and resume).
    SchedulePauseCode for "schedule_pause" {
        Done = 1 "done",
        Unchanged = 2 "unchanged",
        Missing = 0 "missing",
        Changed = 4 "changed",
    }
    /// `lua/schedule_delete.lua`.
    ScheduleDeleteCode for "schedule_delete" {
        Deleted = 1 "deleted",
        Missing = 0 "missing",
    }
    /// `lua/schedule_trigger.lua`.
    TriggerCode for "schedule_trigger" {
        Enqueued = 1 "enqueued",
        Missing = 0 "missing",
        Moved = 4 "moved",
    }
    /// `lua/schedule_fire.lua`.
    FireCode for "schedule_fire" {
        Fired = 1 "fired",
        Skipped = 2 "skipped",
        Missing = 0 "missing",
        Lost = 3 "lost",
        Changed = 4 "changed",
        NotDue = 5 "not_due",
        AlreadyFired = 6 "already_fired",
    }
    /// `lua/kept_get.lua`.
    KeptGetCode for "kept_get" {
        Live = 1 "live",
        Kept = 2 "kept",
        Tombstone = 3 "tombstone",
        Unknown = 0 "unknown",
    }
    /// `lua/promote_job.lua`, one code per listed job.
    PromoteCode for "promote_job" {
        Promoted = 1 "promoted",
        NotFound = 0 "not_found",
        Waiting = 2 "waiting",
        Leased = 3 "leased",
        Dead = 4 "dead",
        Blocked = 5 "blocked",
        NotBackingOff = 6 "not_backing_off",
        Held = 7 "held",
        Awaiting = 8 "awaiting",
    }
    /// `lua/delete_job.lua`, one code per listed job.
    DeleteCode for "delete_job" {
        Deleted = 1 "deleted",
        /// What was kept of a completed job (its kept record or tombstone).
        DeletedCompleted = 2 "deleted_completed",
        /// What was kept of a cancelled job.
        DeletedCancelled = 3 "deleted_cancelled",
        NotFound = 0 "not_found",
        Leased = -1 "leased",
    }
    /// `lua/edit_job.lua`.
    EditCode for "edit_job" {
        Edited = 1 "edited",
        NotFound = 0 "not_found",
        Leased = -1 "leased",
    }
    /// `lua/dead_letter_job.lua`.
    DeadLetterCode for "dead_letter_job" {
        DeadLettered = 1 "dead_lettered",
        NotFound = 0 "not_found",
        Leased = 3 "leased",
        Dead = 4 "dead",
        Awaiting = 8 "awaiting",
    }
    /// `lua/limits_set.lua` (`crate::flow`).
    LimitsSetCode for "limits_set" {
        Set = 1 "set",
        Unchanged = 0 "unchanged",
    }
    /// `lua/metrics_switch.lua` (`crate::metrics`).
    MetricsSwitchCode for "metrics_switch" {
        Changed = 1 "changed",
        Unchanged = 0 "unchanged",
    }
    /// `lua/record_format.lua` (`crate::record_format`).
    RecordFormatCode for "record_format" {
        Changed = 1 "changed",
        Unchanged = 0 "unchanged",
    }
}

/// What kept_get found of a job: `crate::kept` decodes the record or
/// tombstone it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeptReply {
    Live,
    Kept(Vec<u8>),
    Tombstone(String),
    Unknown,
}

/// A kept_get reply.
pub(crate) fn kept_found(items: Vec<Value>) -> Result<KeptReply, QueueError> {
    let code = KeptGetCode::from_reply(items.first())?;
    let found = items.into_iter().nth(1);
    let missing = || QueueError::Protocol("kept_get.lua replied without what it found".into());
    Ok(match code {
        KeptGetCode::Live => KeptReply::Live,
        KeptGetCode::Kept => KeptReply::Kept(reply::bytes(found.ok_or_else(missing)?)?),
        KeptGetCode::Tombstone => KeptReply::Tombstone(reply::text(found.ok_or_else(missing)?)?),
        KeptGetCode::Unknown => KeptReply::Unknown,
    })
}

/// Why a change to one job by id (promote, retry now, delete, edit) did
/// not apply; `crate::surgery` words it for the change it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No such job.
    NotFound,
    /// The job is in a state the change does not apply to.
    InState(JobState),
    /// Scheduled by a delay, not backing off after a failure (retry now).
    NotBackingOff,
}

/// A by-id promote_job reply (`{ done, left, cursor, code }`).
pub(crate) fn promoted(items: &[Value]) -> Result<Result<(), Refusal>, QueueError> {
    Ok(match PromoteCode::from_reply(items.get(3))? {
        PromoteCode::Promoted => Ok(()),
        PromoteCode::NotFound => Err(Refusal::NotFound),
        PromoteCode::Waiting => Err(Refusal::InState(JobState::Waiting)),
        PromoteCode::Leased => Err(Refusal::InState(JobState::Leased)),
        PromoteCode::Dead => Err(Refusal::InState(JobState::Dead)),
        PromoteCode::Blocked => Err(Refusal::InState(JobState::Blocked)),
        PromoteCode::NotBackingOff => Err(Refusal::NotBackingOff),
        PromoteCode::Held => Err(Refusal::InState(JobState::Held)),
        PromoteCode::Awaiting => Err(Refusal::InState(JobState::Awaiting)),
    })
}

/// A by-id delete_job reply (`{ done, left, cursor, code }`): the state the
/// job was deleted in when it had finished (completed, cancelled), `None`
/// for a live job.
pub(crate) fn deleted(items: &[Value]) -> Result<Result<Option<JobState>, Refusal>, QueueError> {
    Ok(match DeleteCode::from_reply(items.get(3))? {
        DeleteCode::Deleted => Ok(None),
        DeleteCode::DeletedCompleted => Ok(Some(JobState::Completed)),
        DeleteCode::DeletedCancelled => Ok(Some(JobState::Cancelled)),
        DeleteCode::NotFound => Err(Refusal::NotFound),
        DeleteCode::Leased => Err(Refusal::InState(JobState::Leased)),
    })
}

/// An edit_job reply (`{ code, state }`): the state the edited job is in.
pub(crate) fn edited(items: &[Value]) -> Result<Result<JobState, Refusal>, QueueError> {
    Ok(match EditCode::from_reply(items.first())? {
        EditCode::Edited => {
            let state = items.get(1).cloned().map(reply::text).transpose()?;
            Ok(state.as_deref().and_then(JobState::parse).ok_or_else(|| {
                QueueError::Protocol("edit_job.lua replied without a state".into())
            })?)
        }
        EditCode::NotFound => Err(Refusal::NotFound),
        EditCode::Leased => Err(Refusal::InState(JobState::Leased)),
    })
}

/// A dead_letter_job reply (`{ code, state, bound_deleted }`): the state
/// the job was dead-lettered from, and how many older dead letters its
/// queue's dead-letter bound deleted in the same call.
pub(crate) fn dead_lettered(
    items: &[Value],
) -> Result<Result<(JobState, u64), Refusal>, QueueError> {
    Ok(match DeadLetterCode::from_reply(items.first())? {
        DeadLetterCode::DeadLettered => {
            let state = items.get(1).cloned().map(reply::text).transpose()?;
            let from = state.as_deref().and_then(JobState::parse).ok_or_else(|| {
                QueueError::Protocol("dead_letter_job.lua replied without a state".into())
            })?;
            Ok((from, reply::count_at(items, 2)?))
        }
        DeadLetterCode::NotFound => Err(Refusal::NotFound),
        DeadLetterCode::Leased => Err(Refusal::InState(JobState::Leased)),
        DeadLetterCode::Dead => Err(Refusal::InState(JobState::Dead)),
        DeadLetterCode::Awaiting => Err(Refusal::InState(JobState::Awaiting)),
    })
}

fn unknown(script: &str, code: Option<i64>) -> QueueError {
    match code {
        Some(code) => QueueError::Protocol(format!(
            "{script}.lua replied code {code}, which it does not declare"
        )),
        None => QueueError::Protocol(format!("{script}.lua replied without a code")),
    }
}

/// The lease-fenced scripts' "not held under this lease".
pub(crate) fn lease_lost(lease: &Lease) -> QueueError {
    QueueError::LeaseLost {
        id: lease.id.clone(),
        lease_id: lease.lease_id,
    }
}

/// The fenced scripts' "an operator cancelled this job".
pub(crate) fn job_cancelled(lease: &Lease) -> QueueError {
    QueueError::JobCancelled {
        id: lease.id.clone(),
    }
}

/// A cancel by id's reply: `{ code, state it was in, at }`.
pub(crate) fn cancelled(items: &[Value]) -> Result<CancelOutcome, QueueError> {
    let at = || -> Result<SystemTime, QueueError> { Ok(ms_to_time(reply::count_at(items, 2)?)) };
    Ok(match CancelCode::from_reply(items.first())? {
        CancelCode::Cancelled => {
            let state = items
                .get(1)
                .cloned()
                .map(reply::text)
                .transpose()?
                .unwrap_or_default();
            CancelOutcome::Cancelled {
                from: JobState::parse(&state).ok_or_else(|| {
                    QueueError::Protocol(format!("cancel.lua replied state {state:?}"))
                })?,
                at: at()?,
            }
        }
        CancelCode::AlreadyCancelled => CancelOutcome::AlreadyCancelled { at: at()? },
        CancelCode::AlreadyCompleted => CancelOutcome::AlreadyCompleted { at: at()? },
        CancelCode::NotFound => CancelOutcome::NotFound,
    })
}

/// One job's entry of an enqueue reply: its code and its id. An enqueue
/// into a gate that no longer takes members is an error the workflow
/// module words for its gate ([`GATE_CLOSED_ON_ENQUEUE`]).
pub(crate) fn enqueued(code: &Value, id: String) -> Result<Enqueued, QueueError> {
    Ok(match EnqueueCode::from_reply(Some(code))? {
        EnqueueCode::Created | EnqueueCode::CreatedEarlier => Enqueued::Created(id),
        EnqueueCode::Duplicate => Enqueued::Duplicate(id),
        EnqueueCode::GateClosed => return Err(QueueError::Protocol(GATE_CLOSED_ON_ENQUEUE.into())),
    })
}

/// The text of enqueue's gate_closed before `crate::workflow` names the gate.
pub(crate) const GATE_CLOSED_ON_ENQUEUE: &str =
    "enqueue.lua: the gate the jobs were to join no longer takes members";

/// Why gate_seal created nothing: the id or state its reply names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SealRefusal {
    UnknownDependency(String),
    GateClosed(String),
    TooManyGates(String),
}

/// A gate_seal reply: `code, id` per waiter (created, duplicate,
/// created_earlier), or one refusal `{code, detail}`.
pub(crate) fn gate_sealed(
    items: Vec<Value>,
) -> Result<Result<Vec<Enqueued>, SealRefusal>, QueueError> {
    let mut outcomes = Vec::with_capacity(items.len() / 2);
    let mut items = items.into_iter();
    while let Some(code) = items.next() {
        let detail =
            items.next().map(reply::text).transpose()?.ok_or_else(|| {
                QueueError::Protocol("gate_seal.lua reply has an odd length".into())
            })?;
        let refused = match GateSealCode::from_reply(Some(&code))? {
            GateSealCode::Created | GateSealCode::CreatedEarlier => {
                outcomes.push(Enqueued::Created(detail));
                continue;
            }
            GateSealCode::Duplicate => {
                outcomes.push(Enqueued::Duplicate(detail));
                continue;
            }
            GateSealCode::UnknownDependency => SealRefusal::UnknownDependency(detail),
            GateSealCode::GateClosed => SealRefusal::GateClosed(detail),
            GateSealCode::TooManyGates => SealRefusal::TooManyGates(detail),
        };
        return Ok(Err(refused));
    }
    Ok(Ok(outcomes))
}

/// Whether gate_get found the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GateFound {
    Found,
    NotFound,
}

/// A gate_get reply: whether found, and the fields after the code.
pub(crate) fn gate_found(items: Vec<Value>) -> Result<(GateFound, Vec<Value>), QueueError> {
    let found = match GateGetCode::from_reply(items.first())? {
        GateGetCode::Found => GateFound::Found,
        GateGetCode::NotFound => GateFound::NotFound,
    };
    Ok((found, items.into_iter().skip(1).collect()))
}

/// A gate_cancel reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GateCancelReply {
    Cancelled,
    NotFound,
    /// Finished already: its state's name.
    AlreadyDone(String),
}

/// A gate_cancel reply, `{ code, state }`.
pub(crate) fn gate_cancelled(items: &[Value]) -> Result<GateCancelReply, QueueError> {
    Ok(match GateCancelCode::from_reply(items.first())? {
        GateCancelCode::Cancelled => GateCancelReply::Cancelled,
        GateCancelCode::NotFound => GateCancelReply::NotFound,
        GateCancelCode::AlreadyDone => GateCancelReply::AlreadyDone(detail(items)?),
    })
}

/// The text after a reply's code (`{ code, detail }`), "" when there is none.
fn detail(items: &[Value]) -> Result<String, QueueError> {
    Ok(items
        .get(1)
        .cloned()
        .map(reply::text)
        .transpose()?
        .unwrap_or_default())
}

/// A gate_decide reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecideReply {
    Decided,
    NotFound,
    /// Not held: its current decision's word.
    NotHeld(String),
    /// The job exists but waits on no gate.
    NotWaiting,
}

/// A gate_decide reply, `{ code, decision }`.
pub(crate) fn gate_decided(items: &[Value]) -> Result<DecideReply, QueueError> {
    Ok(match GateDecideCode::from_reply(items.first())? {
        GateDecideCode::Decided => DecideReply::Decided,
        GateDecideCode::NotFound => DecideReply::NotFound,
        GateDecideCode::NotHeld => DecideReply::NotHeld(detail(items)?),
        GateDecideCode::NotWaiting => DecideReply::NotWaiting,
    })
}

/// Whether one job's code of an ack reply says its result was kept nowhere.
pub(crate) fn result_unkept(code: &Value) -> bool {
    matches!(
        AckCode::from_reply(Some(code)),
        Ok(AckCode::AcknowledgedUnkept)
    )
}

/// One job's code of an ack reply.
pub(crate) fn acked(code: &Value, lease: &Lease) -> Result<Result<Acked, QueueError>, QueueError> {
    Ok(match AckCode::from_reply(Some(code))? {
        AckCode::Acknowledged | AckCode::AcknowledgedUnkept => Ok(Acked::Completed),
        AckCode::AlreadyGone => Ok(Acked::AlreadyGone),
        AckCode::LeaseLost => Err(lease_lost(lease)),
        AckCode::Cancelled => Err(job_cancelled(lease)),
    })
}

/// A nack reply, `{ code, attempts, dead (0/1), due_ms }`.
pub(crate) fn nacked(items: &[Value], lease: &Lease) -> Result<Nacked, QueueError> {
    let field = |i: usize| {
        items
            .get(i)
            .map(reply::int)
            .transpose()
            .map(|v| v.unwrap_or(0))
    };
    match NackCode::from_reply(items.first())? {
        NackCode::LeaseLost => Err(lease_lost(lease)),
        NackCode::Cancelled => Err(job_cancelled(lease)),
        NackCode::Applied | NackCode::AlreadyRecorded => {
            let (attempts, dead, due) = (field(1)? as u32, field(2)?, field(3)?);
            Ok(if dead == 1 {
                Nacked::DeadLettered { attempts }
            } else {
                Nacked::Retrying {
                    attempts,
                    due_at: if due > 0 {
                        ms_to_time(due as u64)
                    } else {
                        SystemTime::now()
                    },
                }
            })
        }
    }
}

/// An extend reply, `{ code, expiry_ms }`: the new expiry.
pub(crate) fn extended(items: &[Value], lease: &Lease) -> Result<SystemTime, QueueError> {
    match ExtendCode::from_reply(items.first())? {
        ExtendCode::Extended => {
            let expiry = items.get(1).map(reply::int).transpose()?.unwrap_or(0);
            Ok(ms_to_time(expiry.max(0) as u64))
        }
        ExtendCode::LeaseLost => Err(lease_lost(lease)),
        ExtendCode::Cancelled => Err(job_cancelled(lease)),
    }
}

/// A note reply, `{ code }`.
pub(crate) fn noted(items: &[Value], lease: &Lease) -> Result<(), QueueError> {
    match NoteCode::from_reply(items.first())? {
        NoteCode::Noted => Ok(()),
        NoteCode::LeaseLost => Err(lease_lost(lease)),
        NoteCode::Cancelled => Err(job_cancelled(lease)),
    }
}

/// A release reply.
pub(crate) fn released(code: &Value, lease: &Lease) -> Result<(), QueueError> {
    match ReleaseCode::from_reply(Some(code))? {
        ReleaseCode::Released | ReleaseCode::AlreadyReleased => Ok(()),
        ReleaseCode::LeaseLost => Err(lease_lost(lease)),
    }
}

/// A limits_set reply's code: whether the limit changed.
pub(crate) fn limits_set(code: Option<&Value>) -> Result<bool, QueueError> {
    Ok(match LimitsSetCode::from_reply(code)? {
        LimitsSetCode::Set => true,
        LimitsSetCode::Unchanged => false,
    })
}

/// A metrics_switch reply's code: whether the switch changed.
pub(crate) fn metrics_switched(code: Option<&Value>) -> Result<bool, QueueError> {
    Ok(match MetricsSwitchCode::from_reply(code)? {
        MetricsSwitchCode::Changed => true,
        MetricsSwitchCode::Unchanged => false,
    })
}

/// A record_format reply's code: whether the marker changed (or the
/// rewrite's event was written).
pub(crate) fn record_format_changed(code: &Value) -> Result<bool, QueueError> {
    Ok(match RecordFormatCode::from_reply(Some(code))? {
        RecordFormatCode::Changed => true,
        RecordFormatCode::Unchanged => false,
    })
}

/// A pause or resume reply: whether this call changed the queue.
pub(crate) fn pause_changed(code: &Value) -> Result<bool, QueueError> {
    Ok(match PauseCode::from_reply(Some(code))? {
        PauseCode::Done => true,
        PauseCode::Unchanged => false,
    })
}

/// An upsert reply, `{ code, revision, next_run_ms (0 = none), paused }`.
pub(crate) fn upserted(items: &[Value]) -> Result<Upserted, QueueError> {
    let next_ms = items.get(2).map(reply::int).transpose()?.unwrap_or(0);
    let next_run = (next_ms > 0).then(|| ms_to_time(next_ms as u64));
    Ok(match UpsertCode::from_reply(items.first())? {
        UpsertCode::Created => Upserted::Created { next_run },
        UpsertCode::Updated => Upserted::Updated { next_run },
    })
}

/// A schedule pause or resume reply; `None` when the record moved to
/// another revision since the caller read it (re-read and retry).
pub(crate) fn schedule_changed(code: &Value) -> Result<Option<ScheduleChange>, QueueError> {
    Ok(match SchedulePauseCode::from_reply(Some(code))? {
        SchedulePauseCode::Done => Some(ScheduleChange::Done),
        SchedulePauseCode::Unchanged => Some(ScheduleChange::Unchanged),
        SchedulePauseCode::Missing => Some(ScheduleChange::NotFound),
        SchedulePauseCode::Changed => None,
    })
}

/// A schedule delete reply.
pub(crate) fn schedule_deleted(code: &Value) -> Result<ScheduleChange, QueueError> {
    Ok(match ScheduleDeleteCode::from_reply(Some(code))? {
        ScheduleDeleteCode::Deleted => ScheduleChange::Done,
        ScheduleDeleteCode::Missing => ScheduleChange::NotFound,
    })
}

/// A trigger reply for the job `id`; `None` when the schedule moved to
/// another queue since the caller read it (re-read and retry).
pub(crate) fn triggered(items: &[Value], id: &str) -> Result<Option<Triggered>, QueueError> {
    Ok(match TriggerCode::from_reply(items.first())? {
        TriggerCode::Enqueued => Some(Triggered::Enqueued(id.to_owned())),
        TriggerCode::Missing => Some(Triggered::NotFound),
        TriggerCode::Moved => None,
    })
}

/// A fire reply, `{ code, job id or "", created (1/0), stored next run }`.
pub(crate) fn fired(items: &[Value]) -> Result<FireOutcome, QueueError> {
    Ok(match FireCode::from_reply(items.first())? {
        FireCode::Fired => FireOutcome::Enqueued {
            created: items.get(2).map(reply::int).transpose()? == Some(1),
        },
        FireCode::Skipped => FireOutcome::Skipped,
        FireCode::Missing => FireOutcome::NotFound,
        FireCode::Lost => FireOutcome::Lost,
        FireCode::Changed => FireOutcome::Changed,
        FireCode::NotDue => FireOutcome::NotDue,
        FireCode::AlreadyFired => FireOutcome::AlreadyFired,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every `-- code N name: meaning` line of every script's header, as
    /// `(script file stem, code, name)`, read from the files at test time.
    fn declared() -> BTreeSet<(String, i64, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("lua");
        let mut out = BTreeSet::new();
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "lua"))
            .collect();
        files.sort();
        for path in files {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines() {
                let Some(rest) = line.strip_prefix("-- code ") else {
                    continue;
                };
                let parsed = rest.split_once(':').and_then(|(head, _meaning)| {
                    let (code, name) = head.split_once(' ')?;
                    Some((code.parse::<i64>().ok()?, name.to_owned()))
                });
                let (code, name) = parsed.unwrap_or_else(|| {
                    panic!(
                        "{stem}.lua: {line:?} is not `-- code <integer> <snake_name>: <meaning>`"
                    )
                });
                assert!(
                    out.insert((stem.clone(), code, name)),
                    "{stem}.lua declares code {code} twice"
                );
            }
        }
        out
    }

    #[test]
    fn every_code_a_script_declares_is_handled_and_no_other() {
        let declared = declared();
        let handled: BTreeSet<(String, i64, String)> = HANDLED
            .iter()
            .map(|(script, code, name)| (script.to_string(), *code, name.to_string()))
            .collect();
        let unhandled: Vec<_> = declared.difference(&handled).collect();
        let undeclared: Vec<_> = handled.difference(&declared).collect();
        assert!(
            unhandled.is_empty(),
            "scripts declare codes the driver does not handle (add them to codes.rs): {unhandled:?}"
        );
        assert!(
            undeclared.is_empty(),
            "the driver handles codes no script declares (declare them under the script's Reply, or drop them): {undeclared:?}"
        );
    }

    #[test]
    fn a_seal_reply_reads_as_outcomes_or_one_refusal() {
        let t = |s: &str| Value::String(s.into());
        let ok = gate_sealed(vec![Value::Integer(1), t("A"), Value::Integer(0), t("B")]).unwrap();
        assert_eq!(
            ok,
            Ok(vec![
                Enqueued::Created("A".into()),
                Enqueued::Duplicate("B".into())
            ])
        );
        let refused = gate_sealed(vec![Value::Integer(-1), t("X")]).unwrap();
        assert_eq!(refused, Err(SealRefusal::UnknownDependency("X".into())));
        assert!(gate_sealed(vec![Value::Integer(1)]).is_err());
        assert!(gate_sealed(vec![Value::Integer(9), t("A")]).is_err());
    }

    #[test]
    fn an_undeclared_code_is_a_protocol_error_naming_the_script() {
        let lease = Lease {
            id: "j".into(),
            queue: "q".into(),
            lease_id: 1,
        };
        let err = released(&Value::Integer(7), &lease).unwrap_err();
        assert_eq!(
            err.to_string(),
            QueueError::Protocol("release.lua replied code 7, which it does not declare".into())
                .to_string()
        );
        assert!(matches!(
            released(&Value::Integer(-1), &lease),
            Err(QueueError::LeaseLost { lease_id: 1, .. })
        ));
    }
}
