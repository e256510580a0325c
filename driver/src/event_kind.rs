//! The kinds of event the scripts write to `{ns}:events`, named once: a
//! module of its own, which depends on nothing, so that a module `events`
//! itself depends on may name a kind too (`park` sends one to `release.lua`).
//! Public as [`crate::events::EventKind`].

/// What an event on `{ns}:events` records. [`QueueEvent::kind`] keeps the
/// stream's text, so an event of a kind this driver does not know (written
/// by a newer one) still reads; [`EventKind::of`] names the known ones.
///
/// [`QueueEvent::kind`]: crate::QueueEvent::kind
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// An enqueue call created jobs: `count` of them (`job_id` when one).
    Enqueued,
    /// An acknowledgement call finished jobs: `count` (`job_id` when one).
    Completed,
    /// A failed attempt that goes back to the queue (`job_id`, `attempts`,
    /// `error`).
    Retried,
    /// A failed attempt that dead-lettered its job, or an operator's
    /// dead-letter of a job that waited its turn (`by`; `detail` `from
    /// STATE`, the state it left).
    Dead,
    /// Lapsed leases returned: `count`, `detail` how many requeued and dead.
    Reclaimed,
    /// An operator cancelled jobs (`by`).
    Cancelled,
    /// Dead letters sent back to their queue: `count` (`job_id` when one),
    /// `attempts` the counter they restart at (`by`).
    Requeued,
    /// Listed jobs deleted (`detail`: `dead` for dead letters, else the
    /// state or `by id`) (`by`).
    Deleted,
    /// The oldest dead letters deleted, without listing them (`by`): by an
    /// operator's purge (`detail` `dead`), or past the queue's dead-letter
    /// bound when a job died, the bound was set or trimmed
    /// ([`crate::kept::dead_bound`]; `detail` names the bound, `by` the
    /// actor of an operator's call).
    Purged,
    /// A queue paused (`by`).
    Paused,
    /// A queue resumed (`by`).
    Resumed,
    /// A schedule enqueued its job (`detail` the schedule, `count` 0 when
    /// the job already existed); a trigger by an operator says so (`by`).
    ScheduleFired,
    /// A schedule's tick skipped by its misfire policy
    /// ([`crate::schedule::Misfire::Skip`]): no job was enqueued for it
    /// (`job_id` the schedule's name, `name` its jobs' type name, `detail`
    /// `tick YYYY-MM-DD HH:MM:SS UTC skipped N min late (misfire policy
    /// skip)`).
    ScheduleSkipped,
    /// A worker entered the registry (`detail` its id; no queue).
    WorkerJoined,
    /// A worker left the registry as it stopped.
    WorkerLeft,
    /// A worker's heartbeat lapsed, noticed by another worker's beat
    /// (`detail`: its id, then when it was last seen: `ID, last seen
    /// 2026-12-07 22:20:21 UTC, 54 s before this was noticed`).
    WorkerLost,
    /// An operator quieted a worker, which heard it: it claims nothing more
    /// (`detail` its id) (`by`).
    WorkerQuieted,
    /// An operator asked a worker to stop once idle, which heard it
    /// (`detail` its id) (`by`).
    WorkerStopping,
    /// A limit set (`detail`: scope and figures) (`by`).
    LimitSet,
    /// A limit cleared (`detail`: its scope) (`by`).
    LimitCleared,
    /// A workflow's gate finished: every member counted (`job_id` the gate,
    /// `name` its kind, `count` its members; [`crate::workflow`]).
    GateDone,
    /// A waiting job released into its queue by its gate (`job_id` the job,
    /// `detail` the gate).
    Released,
    /// A workflow's gate cancelled as a whole (`job_id` the gate, `name`
    /// its kind).
    GateCancelled,
    /// A schedule created (`job_id` the schedule's name, `detail` its
    /// expression and time zone) (`by`).
    ScheduleCreated,
    /// A schedule's definition changed (`job_id` its name, `detail` the
    /// fields that changed, by name) (`by`). An upsert of the definition
    /// already stored writes none.
    ScheduleChanged,
    /// A schedule paused (`job_id` its name) (`by`).
    SchedulePaused,
    /// A schedule resumed (`job_id` its name) (`by`).
    ScheduleResumed,
    /// A schedule deleted (`job_id` its name) (`by`).
    ScheduleDeleted,
    /// Scheduled jobs made due now: `count` (`job_id` when one), `detail`
    /// `run now` or `retry now` (`by`).
    Promoted,
    /// A job's payload replaced (`job_id`, `detail` the sizes before and
    /// after, never the bytes) (`by`).
    Edited,
    /// A queue's retention policy set (`detail` its bounds), or its
    /// dead-letter bound (`detail` `dead letters: ` and its bounds) (`by`).
    RetentionSet,
    /// A queue's retention policy cleared (`detail` the bounds it had), or
    /// its dead-letter bound (`detail` `dead letters: ` and its bounds)
    /// (`by`).
    RetentionCleared,
    /// A queue's metrics turned off: nothing more is recorded in them
    /// until they are turned on ([`crate::metrics`]) (`by`).
    MetricsOff,
    /// A queue's metrics turned back on (`by`).
    MetricsOn,
    /// A job handed to a parked worker whose message never reached it
    /// (its subscription broke or lagged), given back by that worker unrun:
    /// due again at once, no attempt counted (`job_id`, `name`, `detail`
    /// the worker as `redq workers` lists it).
    HandoffLost,
    /// A job a worker's claim leased whose reply never reached it (the
    /// connection broke or the call timed out), given back by that worker
    /// unrun: due again at once, no attempt counted (`job_id`, `name`,
    /// `detail` the worker as `redq workers` lists it).
    ClaimLost,
    /// A job a worker was running given back as the worker shut down, due
    /// again at once, no attempt counted (`job_id`, `name`, `detail`: why,
    /// `interrupted at the end of its worker's shutdown grace period` (its
    /// handler was stopped mid-run, so it runs again from its start) or
    /// `stopped by its handler for its worker's shutdown`
    /// ([`crate::worker::JobError::stopped`]), then `worker W` as
    /// `redq workers` lists it).
    GivenBack,
    /// A handler's push-back ([`crate::worker::JobError::rate_limited`]):
    /// a leased job given back unrun, no attempt counted, and its limiter
    /// starts nothing for a while (`job_id`, `name`, `detail`: `key K` or
    /// `queue`, then `for N ms until HH:MM:SS.mmm UTC` on the Redis clock,
    /// then the worker as `redq workers` lists it). On the traffic stream:
    /// a storm of 429s is as busy as the traffic.
    PushedBack,
    /// The namespace's record format set ([`crate::RecordFormat`]; no
    /// queue; `detail` the new format and the one it replaced) (`by`).
    RecordFormatSet,
    /// A rewrite of the namespace's records in the standard layout
    /// ([`crate::RedisQueue::rewrite_records`]; no queue; `count` the
    /// records rewritten, `detail` them by kind), when it rewrote or left
    /// any (`by`).
    RecordsRewritten,
}

impl EventKind {
    /// Every kind, in the order a list of them is shown.
    pub const ALL: [EventKind; 40] = [
        EventKind::Enqueued,
        EventKind::Completed,
        EventKind::Retried,
        EventKind::Dead,
        EventKind::Reclaimed,
        EventKind::Cancelled,
        EventKind::Requeued,
        EventKind::Deleted,
        EventKind::Purged,
        EventKind::Paused,
        EventKind::Resumed,
        EventKind::ScheduleFired,
        EventKind::ScheduleSkipped,
        EventKind::WorkerJoined,
        EventKind::WorkerLeft,
        EventKind::WorkerLost,
        EventKind::WorkerQuieted,
        EventKind::WorkerStopping,
        EventKind::LimitSet,
        EventKind::LimitCleared,
        EventKind::GateDone,
        EventKind::Released,
        EventKind::GateCancelled,
        EventKind::ScheduleCreated,
        EventKind::ScheduleChanged,
        EventKind::SchedulePaused,
        EventKind::ScheduleResumed,
        EventKind::ScheduleDeleted,
        EventKind::Promoted,
        EventKind::Edited,
        EventKind::RetentionSet,
        EventKind::RetentionCleared,
        EventKind::MetricsOff,
        EventKind::MetricsOn,
        EventKind::HandoffLost,
        EventKind::ClaimLost,
        EventKind::GivenBack,
        EventKind::PushedBack,
        EventKind::RecordFormatSet,
        EventKind::RecordsRewritten,
    ];

    /// Its text on the stream (and in `redq events`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Enqueued => "enqueued",
            EventKind::Completed => "completed",
            EventKind::Retried => "retried",
            EventKind::Dead => "dead",
            EventKind::Reclaimed => "reclaimed",
            EventKind::Cancelled => "cancelled",
            EventKind::Requeued => "requeued",
            EventKind::Deleted => "deleted",
            EventKind::Purged => "purged",
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::ScheduleFired => "schedule_fired",
            EventKind::ScheduleSkipped => "schedule_skipped",
            EventKind::WorkerJoined => "worker_joined",
            EventKind::WorkerLeft => "worker_left",
            EventKind::WorkerLost => "worker_lost",
            EventKind::WorkerQuieted => "worker_quieted",
            EventKind::WorkerStopping => "worker_stopping",
            EventKind::LimitSet => "limit_set",
            EventKind::LimitCleared => "limit_cleared",
            EventKind::GateDone => "gate_done",
            EventKind::Released => "released",
            EventKind::GateCancelled => "gate_cancelled",
            EventKind::ScheduleCreated => "schedule_created",
            EventKind::ScheduleChanged => "schedule_changed",
            EventKind::SchedulePaused => "schedule_paused",
            EventKind::ScheduleResumed => "schedule_resumed",
            EventKind::ScheduleDeleted => "schedule_deleted",
            EventKind::Promoted => "promoted",
            EventKind::Edited => "edited",
            EventKind::RetentionSet => "retention_set",
            EventKind::RetentionCleared => "retention_cleared",
            EventKind::MetricsOff => "metrics_off",
            EventKind::MetricsOn => "metrics_on",
            EventKind::HandoffLost => "handoff_lost",
            EventKind::ClaimLost => "claim_lost",
            EventKind::GivenBack => "given_back",
            EventKind::PushedBack => "pushed_back",
            EventKind::RecordFormatSet => "record_format_set",
            EventKind::RecordsRewritten => "records_rewritten",
        }
    }

    /// The kind a stream text names, if this driver knows it.
    pub fn of(text: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Whether an operator's action writes it (and so it has a `by` when
    /// the handle had an actor).
    pub fn is_operator_action(self) -> bool {
        matches!(
            self,
            EventKind::Cancelled
                | EventKind::Requeued
                | EventKind::Deleted
                | EventKind::Purged
                | EventKind::Paused
                | EventKind::Resumed
                | EventKind::LimitSet
                | EventKind::LimitCleared
                | EventKind::ScheduleCreated
                | EventKind::ScheduleChanged
                | EventKind::SchedulePaused
                | EventKind::ScheduleResumed
                | EventKind::ScheduleDeleted
                | EventKind::Promoted
                | EventKind::Edited
                | EventKind::RetentionSet
                | EventKind::RetentionCleared
                | EventKind::MetricsOff
                | EventKind::MetricsOn
                | EventKind::RecordFormatSet
                | EventKind::RecordsRewritten
                | EventKind::WorkerQuieted
                | EventKind::WorkerStopping
        )
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_text() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::of(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::of("later"), None);
    }

    /// Each kind the driver names is written by some script, and each kind
    /// a script writes is named here.
    #[test]
    fn the_kinds_are_the_ones_the_scripts_write() {
        let mut written = std::collections::BTreeSet::new();
        let sources = crate::scripts::catalogue::SCRIPTS
            .iter()
            .chain(crate::scripts::catalogue::MODULES.iter())
            .filter(|(name, _)| *name != "events");
        for (_, source) in sources {
            for part in source.split("emit(").skip(1) {
                let Some(kind) = part.split('\'').nth(1) else {
                    continue;
                };
                written.insert(kind.to_owned());
            }
        }
        // `resumed` is written by the driver (admin.rs), not a script.
        written.insert("resumed".to_owned());
        let named: std::collections::BTreeSet<String> = EventKind::ALL
            .iter()
            .map(|k| k.as_str().to_owned())
            .collect();
        assert_eq!(written, named);
    }
}
