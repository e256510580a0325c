//! The list of scripts and of the helper modules they include: the one place
//! either is written down (the tests crate reads it through `redq::lua`).

/// Declares [`Op`], [`SCRIPTS`] and [`VARIANTS`] from one list, so they
/// cannot drift: the scripts, then the variants (a script composed again
/// with fewer keys, `lua/README.md` "Variants"), whose ops follow the
/// scripts' in the same numbering.
macro_rules! scripts {
    ($($op:ident => $name:literal,)* ; $($variant_op:ident => $script:literal variant $variant:literal,)*) => {
        /// One transition script, named for its file in `lua/`, or a
        /// variant of one ([`VARIANTS`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Op {
            $(#[doc = concat!("`lua/", $name, ".lua`")] $op,)*
            $(#[doc = concat!("`lua/", $script, ".lua`, its variant `", $variant, "`")] $variant_op,)*
        }

        /// Every script in `Op` order: its name (the file `lua/<name>.lua`)
        /// and its text.
        pub const SCRIPTS: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../lua/", $name, ".lua"))),)*
        ];

        /// Every variant, in `Op` order after the scripts.
        pub const VARIANTS: &[Variant] = &[
            $(Variant {
                name: concat!($script, "_", $variant),
                script: $script,
                variant: $variant,
                source: include_str!(concat!("../../lua/", $script, ".lua")),
            },)*
        ];
    };
}

/// A script composed again from the same file with only some of its keys
/// (the file's `-- variant <variant>: <keys>` header line): a call that
/// needs none of the others sends fewer keys, and each declared key costs
/// the server about 1 200 instructions a call (docs/performance.md, round
/// fifteen). The file refuses, before writing, a call its variant's keys
/// do not cover.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// Its name as a script (`<script>_<variant>`): its library's and its
    /// function's names start `redq_<name>_`.
    pub name: &'static str,
    /// The script it is composed from (`lua/<script>.lua`).
    pub script: &'static str,
    /// The variant's name on the file's header line.
    pub variant: &'static str,
    /// The file's text.
    pub source: &'static str,
}

impl Variant {
    /// Whether only the calls of a namespace that detaches payloads
    /// (`RecordFormat::detach_from`) go to it: the ack's and the enqueue's
    /// variants `detached`. A connect readies these only in such a
    /// namespace (each library is about 160 KB of Redis memory).
    pub fn only_when_detaching(&self) -> bool {
        only_when_detaching(self.variant)
    }
}

/// [`Variant::only_when_detaching`] by the variant's name alone.
pub(crate) fn only_when_detaching(variant: &str) -> bool {
    variant == "detached"
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
    DeadBound => "dead_bound",
    NextDue => "next_due",
    Counts => "counts",
    Inspect => "inspect",
    ListJobs => "list_jobs",
    WorkerBeat => "worker_beat",
    WorkersList => "workers_list",
    WorkerControl => "worker_control",
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
    HandedUnheard => "handed_unheard",
    PromoteJob => "promote_job",
    DeleteJob => "delete_job",
    EditJob => "edit_job",
    DeadLetterJob => "dead_letter_job",
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
    RewriteRecords => "rewrite_records",
    RecordFormat => "record_format",
    ListBlocked => "list_blocked",
    ;
    EnqueuePlain => "enqueue" variant "plain",
    EnqueueDetached => "enqueue" variant "detached",
    AckPlain => "ack" variant "plain",
    AckDetached => "ack" variant "detached",
    ClaimPlain => "claim" variant "plain",
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
    detached,
    listed_job,
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
    dead_bound,
    kept_record,
    retention_spec,
    kept,
    job_state,
    unplace,
    time_words,
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
    notify,
];

impl Op {
    /// Its position in [`SCRIPTS`], or for a variant [`SCRIPTS`]'
    /// length plus its position in [`VARIANTS`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The script it runs: its own, or for a variant the script it is
    /// composed from (`lua/<script>.lua`).
    pub fn script(self) -> &'static str {
        match SCRIPTS.get(self.index()) {
            Some((name, _)) => name,
            None => VARIANTS[self.index() - SCRIPTS.len()].script,
        }
    }
}
