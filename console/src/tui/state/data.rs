//! What the I/O task sends the UI, and what the UI asks of it.
//!
//! Data travels as whole snapshots: the UI never holds a Redis handle and
//! never sees a key name. Snapshot fields that only one screen needs are
//! `Option`: the source fetches them only while that screen is in focus, and
//! `None` means "not read this time": the UI then drops its copy, so all it
//! shows is from one snapshot.

use std::time::{Duration, SystemTime};

use redq::{JobRecord, JobState, Page, QueueCounts, QueueEvent, StatsBucket};
use serde::Serialize;

use crate::flow::LimiterRow;

/// One queue's row on the Queues screen.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    /// Sizes by state (one atomic snapshot per queue).
    pub counts: QueueCounts,
    /// Throughput buckets of the last ~16 minutes, oldest first.
    pub stats: Vec<StatsBucket>,
}

/// A live worker, as the worker registry reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkerInfo {
    /// The worker's id (`node-instance` unless the registry says otherwise).
    pub id: String,
    /// The worker node id recorded on its leases.
    pub node: u64,
    /// The instance within the node.
    pub instance: u32,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// When it started.
    #[serde(serialize_with = "crate::output::ser_time")]
    pub started_at: SystemTime,
    /// Queues it claims from.
    pub queues: Vec<String>,
    /// Jobs running now.
    pub in_flight: u64,
    /// Jobs completed since it started.
    pub processed: u64,
    /// Attempts failed since it started.
    pub failed: u64,
    /// Its last heartbeat.
    #[serde(serialize_with = "crate::output::ser_time")]
    pub last_heartbeat: SystemTime,
    /// The shards whose registries list it, ascending (`--shards` above 1
    /// only): a worker over a `ShardedQueue` keeps a record in each, and
    /// is one row (`aggregate::workers`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<usize>,
    /// The shards of `shards` whose record is gone (silent past the TTL
    /// there): all of them when `gone`; some, while its heartbeats reach
    /// the others but not these.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gone_shards: Vec<usize>,
    /// Running, quiet (claims nothing) or stopping (exits once idle).
    pub state: redq::worker::WorkerState,
    /// Silent past the driver's worker TTL: lost, still listed for
    /// `redq::worker::GONE_KEPT` (its heartbeat says when it was last seen).
    pub gone: bool,
    /// How it hears that work is due; `None`: a worker of an earlier
    /// version, which does not say.
    pub wake_ups: Option<redq::worker::WakeUps>,
    /// The `redq` crate version it runs; `None`: an earlier version.
    pub version: Option<String>,
    /// Jobs handed to it whose messages never reached it, which it gave
    /// back (`redq::worker::WorkerInfo::handoffs_lost`): above 0, its
    /// subscription broke or lagged. `None`: an earlier version.
    pub handoffs_lost: Option<u64>,
    /// Jobs its claims leased whose replies never reached it, which it
    /// gave back (`redq::worker::WorkerInfo::claims_lost`): above 0, its
    /// connection to Redis broke or timed out mid-claim. `None`: an
    /// earlier version.
    pub claims_lost: Option<u64>,
}

impl WorkerInfo {
    /// `shard`, `plain` or `polls` (`redq::worker::WakeUps`); `?` from a
    /// worker of an earlier version.
    pub fn wake_ups_text(&self) -> &'static str {
        self.wake_ups.map_or("?", redq::worker::WakeUps::as_str)
    }

    /// The `redq` version it runs, `?` from an earlier one that does not say.
    pub fn version_text(&self) -> &str {
        self.version.as_deref().unwrap_or("?")
    }

    /// Whether it may start work late: it hears no shard channel, where the
    /// scripts publish wake-ups (or does not say).
    pub fn may_miss_wake_ups(&self) -> bool {
        self.wake_ups != Some(redq::worker::WakeUps::Shard)
    }

    /// Its lost hand-offs, `?` from an earlier version that does not say.
    pub fn handoffs_lost_text(&self) -> String {
        count_text(self.handoffs_lost)
    }

    /// Whether it lost a hand-off since it started.
    pub fn lost_handoffs(&self) -> bool {
        self.handoffs_lost.is_some_and(|n| n > 0)
    }

    /// Its lost claims' jobs, `?` from an earlier version that does not say.
    pub fn claims_lost_text(&self) -> String {
        count_text(self.claims_lost)
    }

    /// Whether it lost a claim's reply, and gave its jobs back, since it
    /// started.
    pub fn lost_claims(&self) -> bool {
        self.claims_lost.is_some_and(|n| n > 0)
    }

    /// `gone`, else what it does: `running`, `quiet` or `stopping`.
    pub fn state_text(&self) -> &'static str {
        if self.gone {
            "gone"
        } else {
            self.state.as_str()
        }
    }
}

/// A count a worker's record may not carry: `?` from an earlier version
/// that does not say.
fn count_text(count: Option<u64>) -> String {
    count.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

/// A recurring schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScheduleInfo {
    /// The schedule's name.
    pub name: String,
    /// The queue it enqueues into.
    pub queue: String,
    /// Its cron expression.
    pub expression: String,
    /// The time zone the expression is read in.
    pub timezone: String,
    /// The next tick.
    #[serde(serialize_with = "crate::output::ser_opt_time")]
    pub next_run: Option<SystemTime>,
    /// The last tick it handled: fired, or (under the skip misfire policy)
    /// skipped. Never a manual trigger: "did last night's run happen?" is
    /// answered by the tick, and a trigger enqueues without ticking.
    #[serde(serialize_with = "crate::output::ser_opt_time")]
    pub last_run: Option<SystemTime>,
    /// Paused schedules do not fire.
    pub paused: bool,
    /// The shard that stores it (`--shards` above 1 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
}

/// A tick this late is overdue. Schedulers poll at most a second apart by
/// default (`redq::schedule::DEFAULT_SCHEDULER_MAX_IDLE`), but that is
/// configurable: the margin keeps a slower poll from reading as a dead one.
pub const TICK_OVERDUE_AFTER: Duration = Duration::from_secs(30);

impl ScheduleInfo {
    /// How late its next tick is at `now`, once that is
    /// `TICK_OVERDUE_AFTER` (30 s) or more: ticks fire through schedulers, so an
    /// overdue one means none is running (an outage). `None` while paused,
    /// ended, or on time. The one rule the console screen and `redq
    /// schedules` both mark overdue by.
    pub fn overdue_by(&self, now: SystemTime) -> Option<Duration> {
        let late = crate::clock::age(self.next_run?, now);
        (!self.paused && late >= TICK_OVERDUE_AFTER).then_some(late)
    }

    /// Ended: not paused and no tick to come, which the driver reports once
    /// its end has passed (or its expression names no later time).
    pub fn ended(&self) -> bool {
        !self.paused && self.next_run.is_none()
    }

    /// `paused`, `ended` or `active`.
    pub fn state_text(&self) -> &'static str {
        if self.paused {
            "paused"
        } else if self.ended() {
            "ended"
        } else {
            "active"
        }
    }
}

/// The newest dead letters of every queue, as far as the console loads them,
/// and every queue's dead letters counted by error signature.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeadWindow {
    /// Newest first across queues.
    pub items: Vec<JobRecord>,
    /// Some queue held more dead letters than were loaded.
    pub truncated: bool,
    /// Each queue with dead letters, its dead letters by error signature
    /// (over the whole queue, up to `dead_census::SCREEN_BOUND`).
    pub groups: Vec<crate::dead_census::QueueCensus>,
    /// The queues with dead letters that have a dead-letter bound
    /// (`redq dead bound`), by name, and their bounds.
    pub bounds: Vec<(String, redq::kept::DeadBound)>,
}

impl DeadWindow {
    /// A window of `items` that are every dead letter there is (the groups
    /// counted from them).
    pub fn whole(items: Vec<JobRecord>) -> DeadWindow {
        let groups = crate::dead_census::of_records(&items);
        DeadWindow {
            items,
            truncated: false,
            groups,
            bounds: Vec::new(),
        }
    }
}

/// Which page of which queue's jobs the jobs view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsQuery {
    /// The queue.
    pub queue: String,
    /// The state listed.
    pub state: JobState,
    /// Index of the first job on the page.
    pub offset: u64,
}

/// One page of the jobs view.
#[derive(Debug, Clone, PartialEq)]
pub struct JobsPage {
    /// What was asked for.
    pub query: JobsQuery,
    /// What came back.
    pub page: Page<JobRecord>,
}

/// Everything one refresh read.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Redis's clock when the snapshot was taken.
    pub redis_now: SystemTime,
    /// Every queue, sorted by name.
    pub queues: Vec<QueueRow>,
    /// Every job each shard holds (every state, dead letters included), in
    /// shard order: what a restart of a shard's server takes away. Empty
    /// when not read shard by shard; the queues' sums then stand for all.
    pub shard_jobs: Vec<u64>,
    /// The latest events, newest first.
    pub events: Vec<QueueEvent>,
    /// How far back the main event stream reaches (`None` while it is
    /// empty): older events were trimmed by its cap.
    pub event_reach: Option<Duration>,
    /// Live workers; `None` while the driver has no worker registry.
    pub workers: Option<Vec<WorkerInfo>>,
    /// Schedules; `None` while the driver has no schedules.
    pub schedules: Option<Vec<ScheduleInfo>>,
    /// Held leases of every queue (Leases screen only).
    pub leases: Option<Vec<JobRecord>>,
    /// Dead letters (Dead letters screen only).
    pub dead: Option<DeadWindow>,
    /// The jobs view's page, when it is open.
    pub jobs: Option<JobsPage>,
    /// Every limiter of every flow-aware queue (Limits screen only).
    pub limits: Option<Vec<LimiterRow>>,
    /// The queues with flow control (a limit set, or a job with a limit
    /// key seen): their jobs views offer the `held` tab.
    pub limited: Vec<String>,
    /// The newest gates (Workflows screen only).
    pub gates: Option<Vec<crate::workflow::Gate>>,
    /// The gate view's gate and members page, when it is open.
    pub gate: Option<GatePage>,
}

/// The schedule the schedule detail shows, as last read.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRead {
    /// Its name.
    pub name: String,
    /// The shard read (0 without shards).
    pub shard: usize,
    /// Its record; `None` when no schedule has that name there (deleted,
    /// or never read before it was).
    pub record: Option<Box<redq::schedule::ScheduleInfo>>,
    /// Gone: the last read found no such schedule, after an earlier read
    /// found it; `record` is then what it last was.
    pub gone: bool,
}

/// What the gate view shows: the gate (`None`: no such gate, or its data
/// expired) and a page of its members.
#[derive(Debug, Clone, PartialEq)]
pub struct GatePage {
    /// What was asked for.
    pub query: super::mode::GateQuery,
    /// The gate's record.
    pub gate: Option<crate::workflow::Gate>,
    /// The page of members.
    pub members: crate::workflow::MemberPage,
}

/// A message from the I/O task.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// A fresh snapshot; `received_at` is the local clock when it arrived.
    Snapshot {
        /// The data.
        snapshot: Box<Snapshot>,
        /// Local clock at arrival, to keep countdowns in Redis time.
        received_at: SystemTime,
    },
    /// The `INFO` of each shard's server, read just before the snapshot
    /// sent before this (`None` where it could not be read).
    Server(Vec<Option<redq::ServerStats>>),
    /// The names in the queue index that redq refuses as queue names and
    /// every listing skips, as stored (`RedisQueue::refused_queue_names`),
    /// read with each refresh.
    RefusedQueueNames(Vec<String>),
    /// A refresh failed: Redis is unreachable (or refusing).
    Unreachable {
        /// What went wrong (never contains the URL's password).
        error: crate::failure::ReadFailure,
        /// When it was noticed (local clock).
        at: SystemTime,
    },
    /// The job the detail view shows, read again.
    Job {
        /// Its id.
        id: String,
        /// The job now; `None` when it no longer exists. Boxed like the
        /// snapshot: a record is large beside the other updates.
        record: Option<Box<JobRecord>>,
        /// Its progress and log lines.
        notes: redq::JobNotes,
        /// When `record` is `None`: how it finished, if its queue keeps it.
        finished: Option<Box<redq::KeptJob>>,
    },
    /// The schedule detail's schedule, read after each snapshot while it
    /// is open.
    Schedule(ScheduleRead),
    /// The gate the detail view's job awaits, read again with the job.
    JobAwaits {
        /// The job.
        id: String,
        /// Its gate now (`None`: gone).
        gate: Option<Box<crate::workflow::Gate>>,
    },
    /// Why the detail view's job is held or waits on a limit, read again
    /// with the job (empty: it is not).
    JobHeld {
        /// The job.
        id: String,
        /// `(label, text)` lines (`held by`, `waits on`).
        lines: Vec<(&'static str, String)>,
    },
    /// The Metrics view's figures, read for this view.
    Metrics {
        /// The queue and window read.
        view: super::mode::MetricsView,
        /// What came back (boxed: large beside the other updates).
        history: Box<redq::metrics::MetricsHistory>,
    },
    /// The Metrics view's figures could not be read (the view keeps what it
    /// showed; the next refresh tries again).
    MetricsUnread {
        /// The queue and window asked for.
        view: super::mode::MetricsView,
        /// Why, in words.
        error: String,
    },
    /// A step of the payload search.
    Search(super::SearchStep),
    /// A bulk operation advanced.
    Progress {
        /// What is running.
        label: String,
        /// Jobs done so far.
        done: u64,
        /// Jobs left.
        left: u64,
    },
    /// A mutation ended.
    Finished {
        /// What happened, for the status line.
        message: String,
        /// Whether it succeeded.
        ok: bool,
    },
}

/// What the source should load besides the always-on queue overview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// Only the overview.
    Overview,
    /// The Events screen with this filter (not empty): its events are read
    /// further back than the latest 200, until 200 match.
    Events(String),
    /// Held leases.
    Leases,
    /// Dead letters.
    Dead,
    /// Every limiter and its use.
    Limits,
    /// One page of a queue's jobs.
    Jobs(JobsQuery),
    /// The newest gates (Workflows screen).
    Workflows,
    /// One gate and a page of its members.
    Gate(super::mode::GateQuery),
    /// One schedule's whole record (the schedule detail).
    Schedule {
        /// Its name.
        name: String,
        /// The shard that stores it (0 without shards).
        shard: usize,
    },
    /// One queue's metrics over a window (read after the overview, see
    /// `source::METRICS_SLOW_EVERY`).
    Metrics(super::mode::MetricsView),
}

/// Dead letters of one queue, by id.
pub type DeadIds = Vec<(String, Vec<String>)>;

/// A change to Redis, always carried out by the driver's scripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Requeue these dead letters.
    RequeueDead {
        /// Which ones.
        ids: DeadIds,
        /// The attempt counter they restart at (0 unless typed).
        attempts: u32,
    },
    /// Delete these dead letters.
    DeleteDead(DeadIds),
    /// Requeue every dead letter of these queues, in bounded batches.
    RequeueAllDead {
        /// The queues.
        queues: Vec<String>,
        /// The attempt counter they restart at (0 unless typed).
        attempts: u32,
    },
    /// Delete every dead letter of these queues, in bounded batches.
    PurgeDead(Vec<String>),
    /// Requeue every dead letter of these queues whose error has this
    /// signature (read whole when carried out, as `redq dead requeue
    /// --group` reads it), in bounded batches.
    RequeueGroup {
        /// The queues the group died in.
        queues: Vec<String>,
        /// The error signature.
        signature: String,
        /// How many the question counted (the label's; the change takes
        /// the whole group as it is then).
        count: u64,
        /// The attempt counter they restart at (0 unless typed).
        attempts: u32,
    },
    /// Delete every dead letter of these queues whose error has this
    /// signature, in bounded batches.
    DeleteGroup {
        /// The queues the group died in.
        queues: Vec<String>,
        /// The error signature.
        signature: String,
        /// How many the question counted.
        count: u64,
    },
    /// Make a scheduled job due now.
    Promote(String),
    /// Run a job backing off after a failure now.
    RetryNow(String),
    /// Delete a job for good; `force` voids a running job's lease.
    DeleteJob {
        /// The job.
        id: String,
        /// Whether a leased job is deleted too.
        force: bool,
    },
    /// Promote every scheduled job of a queue, in bounded batches.
    PromoteAll(String),
    /// Retry now every job of a queue backing off, in bounded batches.
    RetryAllNow(String),
    /// Delete every job of a queue in a state, in bounded batches
    /// (leased ones with their leases voided).
    DeleteAll {
        /// The queue.
        queue: String,
        /// The state emptied.
        state: JobState,
    },
    /// Cancel a job in any state (its worker told when it runs).
    CancelJob(String),
    /// Set a job that waits its turn aside, unrun, in the dead-letter set.
    DeadLetterJob(String),
    /// Cancel every job of a queue in a state, in bounded batches.
    CancelAll {
        /// The queue.
        queue: String,
        /// The state emptied.
        state: JobState,
    },
    /// Lift one limit of a queue (flow control).
    ClearLimit {
        /// The queue.
        queue: String,
        /// Which of its limits.
        scope: redq::flow::LimitScope,
    },
    /// Pause a queue.
    Pause(String),
    /// Resume a queue.
    Resume(String),
    /// A schedule change, a reclaim or a canary requeue (`operate.rs`).
    Operate(super::Operate),
    /// Quiet a worker (by id): it claims nothing more.
    QuietWorker(String),
    /// Stop a worker (by id): quiet, then exit once idle.
    StopWorker(String),
    /// Cancel a gate (batch, dependencies, tree) and its pending members.
    CancelGate(String),
    /// Decide a held waiter: release it into its queue (`true`) or
    /// dead-letter it.
    DecideHeld {
        /// The waiter's job id.
        id: String,
        /// Release it (`r`), else dead-letter it (`d`).
        release: bool,
    },
    /// Cancel or delete every job a payload search found (`search.rs`).
    OnMatches {
        /// What to do to each.
        change: super::MatchChange,
        /// Their queue.
        queue: String,
        /// The matches' ids.
        ids: Vec<String>,
    },
}

impl Mutation {
    /// A short description for progress and results ("requeue 3 dead letters").
    pub fn label(&self) -> String {
        let ids = |set: &DeadIds| set.iter().map(|(_, ids)| ids.len()).sum::<usize>();
        match self {
            Mutation::RequeueDead { ids: set, .. } => {
                format!("requeue {}", plural(ids(set), "dead letter"))
            }
            Mutation::DeleteDead(set) => format!("delete {}", plural(ids(set), "dead letter")),
            Mutation::RequeueAllDead { queues, .. } => {
                format!(
                    "requeue all dead letters of {}",
                    plural(queues.len(), "queue")
                )
            }
            Mutation::RequeueGroup { count, .. } => {
                format!(
                    "requeue a group of {}",
                    plural(*count as usize, "dead letter")
                )
            }
            Mutation::DeleteGroup { count, .. } => {
                format!(
                    "delete a group of {}",
                    plural(*count as usize, "dead letter")
                )
            }
            Mutation::PurgeDead(queues) => {
                format!(
                    "purge all dead letters of {}",
                    plural(queues.len(), "queue")
                )
            }
            Mutation::Promote(id) => format!("promote job {}", crate::text::inert(id)),
            Mutation::RetryNow(id) => format!("retry job {} now", crate::text::inert(id)),
            Mutation::DeleteJob { id, .. } => format!("delete job {}", crate::text::inert(id)),
            Mutation::PromoteAll(queue) => {
                format!(
                    "promote the scheduled jobs of {}",
                    crate::text::inert(queue)
                )
            }
            Mutation::RetryAllNow(queue) => {
                format!(
                    "retry now the jobs backing off in {}",
                    crate::text::inert(queue)
                )
            }
            Mutation::DeleteAll { queue, state } => format!(
                "delete the {} jobs of {}",
                state.as_str(),
                crate::text::inert(queue)
            ),
            Mutation::CancelJob(id) => format!("cancel job {}", crate::text::inert(id)),
            Mutation::DeadLetterJob(id) => format!("dead-letter job {}", crate::text::inert(id)),
            Mutation::CancelAll { queue, state } => format!(
                "cancel the {} jobs of {}",
                state.as_str(),
                crate::text::inert(queue)
            ),
            Mutation::ClearLimit { queue, scope } => format!(
                "clear the {} limit of {}",
                crate::flow::scope_text(scope),
                crate::text::inert(queue)
            ),
            Mutation::Pause(queue) => format!("pause {}", crate::text::inert(queue)),
            Mutation::Resume(queue) => format!("resume {}", crate::text::inert(queue)),
            Mutation::Operate(operate) => operate.label(),
            Mutation::QuietWorker(id) => format!("quiet worker {}", crate::text::inert(id)),
            Mutation::StopWorker(id) => format!("stop worker {}", crate::text::inert(id)),
            Mutation::CancelGate(id) => format!("cancel {}", crate::text::inert(id)),
            Mutation::DecideHeld { id, release: true } => {
                format!("release held job {}", crate::text::inert(id))
            }
            Mutation::DecideHeld { id, release: false } => {
                format!("dead-letter held job {}", crate::text::inert(id))
            }
            Mutation::OnMatches { change, ids, .. } => {
                format!("{} {}", change.verb(), plural(ids.len(), "matching job"))
            }
        }
    }

    /// The attempt counter a requeue restarts at; `None` for the other
    /// changes.
    pub fn attempts(&self) -> Option<u32> {
        match self {
            Mutation::RequeueDead { attempts, .. }
            | Mutation::RequeueAllDead { attempts, .. }
            | Mutation::RequeueGroup { attempts, .. } => Some(*attempts),
            _ => None,
        }
    }

    /// The attempt counter of a requeue, to edit it while it is asked.
    pub(super) fn attempts_mut(&mut self) -> Option<&mut u32> {
        match self {
            Mutation::RequeueDead { attempts, .. }
            | Mutation::RequeueAllDead { attempts, .. }
            | Mutation::RequeueGroup { attempts, .. } => Some(attempts),
            _ => None,
        }
    }
}

/// `1 job`, `3 jobs`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
