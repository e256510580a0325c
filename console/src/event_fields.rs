//! What an event's fields name, by its kind: one reading for `redq events`
//! (text and JSON) and the Events screen.
//!
//! The stream's `id` field is a job's id for most kinds, but a schedule's
//! name for a schedule's changes and a gate's id for a gate's kinds; and
//! only a failed attempt (`retried`, `dead`) or a requeue carries an
//! attempt count (the driver reads a missing one as 0).

use redq::events::EventKind;
use redq::QueueEvent;

/// What an event's `id` field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject<'a> {
    /// A job.
    Job(&'a str),
    /// A schedule, by name (`schedule_created`, `_changed`, `_paused`,
    /// `_resumed`, `_deleted`, `_skipped`).
    Schedule(&'a str),
    /// A workflow's gate (`gate_done`, `gate_cancelled`).
    Gate(&'a str),
    /// Nothing: a batch's event, or a kind about no job.
    None,
}

/// What `event.job_id` names.
pub fn subject(event: &QueueEvent) -> Subject<'_> {
    let id = event.job_id.as_str();
    if id.is_empty() {
        return Subject::None;
    }
    match EventKind::of(&event.kind) {
        Some(
            EventKind::ScheduleCreated
            | EventKind::ScheduleChanged
            | EventKind::SchedulePaused
            | EventKind::ScheduleResumed
            | EventKind::ScheduleDeleted
            | EventKind::ScheduleSkipped,
        ) => Subject::Schedule(id),
        Some(EventKind::GateDone | EventKind::GateCancelled) => Subject::Gate(id),
        _ => Subject::Job(id),
    }
}

/// The schedule an event is about: the one its id names, or the one that
/// fired (`schedule_fired`'s detail, `NAME` or `NAME (triggered)`).
pub fn schedule(event: &QueueEvent) -> Option<&str> {
    if let Subject::Schedule(name) = subject(event) {
        return Some(name);
    }
    if EventKind::of(&event.kind) != Some(EventKind::ScheduleFired) {
        return None;
    }
    let detail = event.detail.as_deref()?;
    Some(detail.strip_suffix(" (triggered)").unwrap_or(detail))
}

/// The gate an event is about: the one its id names, or the one that
/// released a job (`released`'s detail).
pub fn gate(event: &QueueEvent) -> Option<&str> {
    if let Subject::Gate(id) = subject(event) {
        return Some(id);
    }
    if EventKind::of(&event.kind) != Some(EventKind::Released) {
        return None;
    }
    event.detail.as_deref()
}

/// The event's attempt count, for the kinds that carry one: a failed
/// attempt's (`retried`, `dead`: the attempts made) or a requeue's (the
/// counter its jobs restart at). `None` for every other kind, whose 0 is
/// only the driver's default.
pub fn attempts(event: &QueueEvent) -> Option<u32> {
    matches!(
        EventKind::of(&event.kind),
        Some(EventKind::Retried | EventKind::Dead | EventKind::Requeued)
    )
    .then_some(event.attempts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, id: &str, detail: Option<&str>) -> QueueEvent {
        QueueEvent {
            event_id: "1-0".into(),
            kind: kind.into(),
            queue: "q".into(),
            job_id: id.into(),
            name: None,
            error: String::new(),
            attempts: 0,
            count: None,
            by: None,
            detail: detail.map(Into::into),
            at: std::time::UNIX_EPOCH,
            namespace: "ns".into(),
        }
    }

    #[test]
    fn the_id_names_a_job_a_schedule_or_a_gate_by_kind() {
        assert_eq!(subject(&event("dead", "j1", None)), Subject::Job("j1"));
        assert_eq!(
            subject(&event("schedule_created", "nightly", None)),
            Subject::Schedule("nightly")
        );
        assert_eq!(
            subject(&event("gate_done", "g1", None)),
            Subject::Gate("g1")
        );
        assert_eq!(subject(&event("paused", "", None)), Subject::None);
        let fired = event("schedule_fired", "j2", Some("nightly (triggered)"));
        assert_eq!(
            (subject(&fired), schedule(&fired)),
            (Subject::Job("j2"), Some("nightly"))
        );
        let released = event("released", "j3", Some("g7"));
        assert_eq!(gate(&released), Some("g7"));
        assert_eq!(gate(&event("dead", "j1", Some("x"))), None);
    }

    #[test]
    fn only_failed_attempts_and_requeues_carry_attempts() {
        assert_eq!(attempts(&event("requeued", "", None)), Some(0));
        assert_eq!(attempts(&event("dead", "j", None)), Some(0));
        for kind in [
            "enqueued",
            "paused",
            "worker_joined",
            "claim_lost",
            "gate_done",
        ] {
            assert_eq!(attempts(&event(kind, "j", None)), None, "{kind}");
        }
    }
}
