//! The list of scripts and of the helper modules they include: the one place
//! either is written down (the tests crate reads it through `redq::lua`).

/// Declares [`Op`] and [`SCRIPTS`] from one list, so the two cannot drift.
macro_rules! scripts {
    ($($op:ident => $name:literal,)*) => {
        /// One transition script, named for its file in `lua/`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Op {
            $(#[doc = concat!("`lua/", $name, ".lua`")] $op,)*
        }

        /// Every script in `Op` order: its name (the file `lua/<name>.lua`)
        /// and its text.
        pub const SCRIPTS: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../lua/", $name, ".lua"))),)*
        ];
    };
}

scripts! {
    Enqueue => "enqueue",
    Claim => "claim",
    Ack => "ack",
    Nack => "nack",
    Extend => "extend",
    Release => "release",
    Reclaim => "reclaim",
    RequeueDead => "requeue_dead",
    DeleteDead => "delete_dead",
    NextDue => "next_due",
    Counts => "counts",
    Inspect => "inspect",
    ListJobs => "list_jobs",
    WorkerBeat => "worker_beat",
    WorkersList => "workers_list",
    ScheduleUpsert => "schedule_upsert",
    ScheduleFire => "schedule_fire",
    ScheduleTrigger => "schedule_trigger",
    SchedulePause => "schedule_pause",
    ScheduleDelete => "schedule_delete",
    ScheduleDue => "schedule_due",
    ScheduleList => "schedule_list",
    ScheduleGet => "schedule_get",
    Park => "park",
    Unpark => "unpark",
    PromoteJob => "promote_job",
    DeleteJob => "delete_job",
    EditJob => "edit_job",
    Pause => "pause",
    Note => "note",
    Cancel => "cancel",
    Retention => "retention",
    KeptGet => "kept_get",
    KeptList => "kept_list",
    LimitsSet => "limits_set",
    LimitsWake => "limits_wake",
    LimitsGet => "limits_get",
    SearchJobs => "search_jobs",
    GateSeal => "gate_seal",
    GateGet => "gate_get",
    GateMembers => "gate_members",
    GateList => "gate_list",
    GateCancel => "gate_cancel",
    GateDecide => "gate_decide",
    MetricsSwitch => "metrics_switch",
}

/// Declares [`MODULES`] from the module names.
macro_rules! modules {
    ($($name:ident),* $(,)?) => {
        /// Every helper module: its name (the file `lua/lib/<name>.lua`) and
        /// its text.
        pub const MODULES: &[(&str, &str)] = &[
            $((stringify!($name), include_str!(concat!("../../lua/lib/", stringify!($name), ".lua"))),)*
        ];
    };
}

modules![
    check,
    clock,
    keys,
    job_record,
    job_store,
    schedule_record,
    waiting,
    ordering,
    stats,
    lease,
    retry,
    promote,
    due,
    parked,
    handoff,
    notes,
    kept_record,
    retention_spec,
    kept,
    job_state,
    flow_spec,
    flow,
    flow_claim,
    events,
    metrics_fold,
    metrics,
    gate_record,
    gate,
    gate_decide,
    job_new,
];

impl Op {
    /// Its position in [`SCRIPTS`].
    pub fn index(self) -> usize {
        self as usize
    }
}
