//! The console's state: plain data, changed only by [`State::apply`].
//!
//! `apply` takes an [`Action`] (a key the input table translated, or an
//! update from the I/O task) and returns a [`Command`] for the app loop to
//! carry out. It does no I/O and reads no clock, so every behaviour is a
//! table-driven unit test away.
//!
//! Where the console is, is two values (`mode`): a [`View`] (a screen, a
//! queue's jobs, or a job's detail that remembers the list it came from)
//! and an [`Overlay`] (help, a filter being typed, a confirmation). `apply`
//! routes each action by them; the handlers sit in one file per kind of
//! action (`navigate`, `dead_letters`, `pause`, `confirm` and `attempts`,
//! `receive`).

mod apply;
mod attempts;
mod confirm;
mod copy;
mod data;
mod dead_letters;
mod freeze;
mod help;
mod limits;
pub mod metrics;
mod metrics_view;
mod mode;
mod navigate;
mod operate;
mod pause;
mod receive;
pub mod rows;
mod search;
mod server;
pub mod sort;
mod surgery;
#[cfg(test)]
pub(crate) mod tests;
mod workers;
mod workflows;

use std::time::{Duration, SystemTime};

use redq::{JobRecord, JobState, QueueEvent};

pub use apply::{Action, Command};
pub use data::{
    plural, DeadIds, DeadWindow, Focus, GatePage, JobsPage, JobsQuery, Mutation, QueueRow,
    ScheduleInfo, ScheduleRead, Snapshot, Update, WorkerInfo,
};
pub use mode::{
    Confirm, Detail, GateQuery, GateView, JobsView, MetricsView, OpenedFrom, Overlay, ScheduleView,
    Screen, Tabs, View,
};
pub use operate::{Operate, OperateKey};
pub use rows::{event_matches, Badge, DeadGroup};
pub use search::{matches_text, MatchChange, SearchRun, SearchStep, SearchView};
pub use server::ServerWatch;
pub use surgery::Surgery;

/// Jobs per page in the jobs view.
pub const JOBS_PAGE: usize = 50;
/// How long a status message stays on screen. A message says what just
/// happened; kept longer it reads as what is happening now.
pub const STATUS_TTL: Duration = Duration::from_secs(10);

/// How the console was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The Redis URL without its password.
    pub url: String,
    /// The namespace watched (the base name when sharded).
    pub namespace: String,
    /// The shard namespaces watched as one, in shard order; empty with one
    /// namespace (`--shards 1`).
    pub shards: Vec<String>,
    /// Refuse every mutation.
    pub read_only: bool,
    /// Time between refreshes.
    pub refresh: Duration,
}

/// Whether data is flowing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    /// No snapshot yet.
    Connecting,
    /// The last refresh worked.
    Live,
    /// Refreshes fail since `since`; the last data stays on screen.
    Reconnecting {
        /// First failure (local clock).
        since: SystemTime,
        /// The latest error.
        error: crate::failure::ReadFailure,
    },
}

/// The latest data, merged from snapshots.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Data {
    /// Whether any snapshot arrived.
    pub loaded: bool,
    /// Local clock when the last snapshot arrived.
    pub updated_at: Option<SystemTime>,
    /// Redis clock when the last snapshot was read: everything shown comes
    /// from that one snapshot, so during an outage ages and rates are
    /// computed at this time and stay as they were last seen.
    pub fetched_at: Option<SystemTime>,
    /// Redis clock minus local clock, in ms, at the last snapshot.
    pub clock_skew_ms: i64,
    /// Every queue.
    pub queues: Vec<QueueRow>,
    /// Latest events, newest first.
    pub events: Vec<QueueEvent>,
    /// How far back the main event stream reaches, `None` while empty.
    pub event_reach: Option<Duration>,
    /// Live workers (`workers_known` false: the driver has no registry).
    pub workers: Vec<WorkerInfo>,
    /// Whether the driver reports workers at all.
    pub workers_known: bool,
    /// Schedules.
    pub schedules: Vec<ScheduleInfo>,
    /// Whether the driver reports schedules at all.
    pub schedules_known: bool,
    /// Held leases.
    pub leases: Vec<JobRecord>,
    /// Whether the last snapshot carried the leases. A screen's list is
    /// only kept while snapshots keep bringing it: one left for another
    /// screen is dropped, so coming back never shows a list from an earlier
    /// visit (with ids gone since) as if it were current.
    pub leases_loaded: bool,
    /// Dead letters.
    pub dead: DeadWindow,
    /// Whether the last snapshot carried the dead letters (see
    /// `leases_loaded`).
    pub dead_loaded: bool,
    /// The jobs view's page, when the last snapshot carried one.
    pub jobs: Option<JobsPage>,
    /// Every limiter (Limits screen).
    pub limits: Vec<crate::flow::LimiterRow>,
    /// Whether the last snapshot carried the limiters (see
    /// `leases_loaded`).
    pub limits_loaded: bool,
    /// The queues with flow control.
    pub limited: Vec<String>,
    /// The Metrics view's figures as last read, and for which view.
    pub metrics: Option<(MetricsView, redq::metrics::MetricsHistory)>,
    /// The newest gates (Workflows screen).
    pub gates: Vec<crate::workflow::Gate>,
    /// Whether the last snapshot carried the gates (see `leases_loaded`).
    pub gates_loaded: bool,
    /// The gate view's page, when the last snapshot carried one.
    pub gate: Option<GatePage>,
    /// The schedule detail's schedule as last read (after each snapshot
    /// while its detail is open).
    pub schedule: Option<ScheduleRead>,
}

/// A list position that follows its row when rows move.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cursor {
    /// Index into the visible rows.
    pub index: usize,
    /// Key of the selected row (job id, queue name…), to find it again.
    pub key: Option<String>,
}

/// Status line severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Neutral news.
    Info,
    /// Something worked.
    Ok,
    /// Something was refused or failed.
    Error,
}

/// The status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The message.
    pub text: String,
    /// Its severity.
    pub level: Level,
    /// When it was said (local clock), for [`STATUS_TTL`].
    pub at: SystemTime,
}

/// A running mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// What is running.
    pub label: String,
    /// Jobs done.
    pub done: u64,
    /// Jobs left.
    pub left: u64,
}

/// The whole UI state.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// How the console was started.
    pub settings: Settings,
    /// What the body shows.
    pub view: View,
    /// What takes the keys before the view.
    pub overlay: Overlay,
    /// What each tab keeps while another is shown.
    pub tabs: Tabs,
    /// Connection health.
    pub connection: Connection,
    /// The data.
    pub data: Data,
    /// The status line.
    pub status: Option<Status>,
    /// The running mutation.
    pub busy: Option<Progress>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// The local clock as of the latest tick or update: what status
    /// messages are stamped with. The state reads no clock itself.
    pub clock: SystemTime,
    /// Frozen (`f`) since this local time: snapshots are set aside, the
    /// screen stays exactly as it was; actions still ask and run.
    pub frozen: Option<SystemTime>,
    /// Lines the help overlay is scrolled down.
    pub help_scroll: u16,
    /// A payload search over the jobs view (`S`; see `search`).
    pub search: Option<SearchView>,
    /// The Redis server's memory and restarts (see `server`).
    pub server: ServerWatch,
}

impl State {
    /// A fresh state before any data.
    pub fn new(settings: Settings) -> State {
        State {
            settings,
            view: View::Screen(Screen::Queues),
            overlay: Overlay::None,
            tabs: Tabs::default(),
            connection: Connection::Connecting,
            data: Data::default(),
            status: None,
            busy: None,
            size: (100, 30),
            clock: SystemTime::UNIX_EPOCH,
            frozen: None,
            help_scroll: 0,
            search: None,
            server: ServerWatch::default(),
        }
    }

    /// The tab lit (see [`View::screen`]).
    pub fn screen(&self) -> Screen {
        self.view.screen()
    }

    /// The jobs view, shown or under the detail (see [`View::jobs`]).
    pub fn jobs(&self) -> Option<&JobsView> {
        self.view.jobs()
    }

    /// The job detail, when shown.
    pub fn detail(&self) -> Option<&Detail> {
        self.view.detail()
    }

    /// The confirmation waiting for an answer.
    pub fn confirm(&self) -> Option<&Confirm> {
        match &self.overlay {
            Overlay::Confirm(confirm) => Some(confirm),
            _ => None,
        }
    }

    /// Whether keys are typed into the filter.
    pub fn filter_editing(&self) -> bool {
        self.overlay == Overlay::Filter
    }

    /// What the source should load for what is on screen.
    pub fn focus(&self) -> Focus {
        if let Some(jobs) = self.jobs() {
            return Focus::Jobs(jobs.query.clone());
        }
        if let View::Metrics(metrics) = &self.view {
            return Focus::Metrics(metrics.clone());
        }
        if let View::Gate(gate) = &self.view {
            return Focus::Gate(gate.query.clone());
        }
        if let View::Schedule(view) = &self.view {
            return Focus::Schedule {
                name: view.name.clone(),
                shard: view.shard.unwrap_or(0),
            };
        }
        match self.screen() {
            Screen::Leases => Focus::Leases,
            Screen::Dead => Focus::Dead,
            Screen::Limits => Focus::Limits,
            Screen::Workflows => Focus::Workflows,
            Screen::Events if !self.filter_of(Screen::Events).is_empty() => {
                Focus::Events(self.filter_of(Screen::Events).to_owned())
            }
            _ => Focus::Overview,
        }
    }

    /// The filter of the current list: the jobs view's when it is open,
    /// else the screen's.
    pub fn filter(&self) -> &str {
        match self.jobs() {
            Some(view) => &view.filter,
            None => &self.tabs.filters[self.screen().index()],
        }
    }

    /// The current list's cursor (the one under the detail, if shown).
    pub fn cursor(&self) -> &Cursor {
        if let Some(jobs) = self.jobs() {
            return &jobs.cursor;
        }
        if let View::Gate(gate) = &self.view {
            return &gate.cursor;
        }
        let screen = self.screen();
        if screen == Screen::Dead && self.tabs.dead_grouped {
            return &self.tabs.group_cursor;
        }
        &self.tabs.cursors[screen.index()]
    }

    /// The local clock shifted to Redis's, for countdowns between snapshots.
    pub fn redis_time(&self, local: SystemTime) -> SystemTime {
        let skew = self.data.clock_skew_ms;
        if skew >= 0 {
            local + Duration::from_millis(skew as u64)
        } else {
            local
                .checked_sub(Duration::from_millis(skew.unsigned_abs()))
                .unwrap_or(local)
        }
    }

    /// The Redis time the data on screen is shown at: `now` while live (so
    /// countdowns tick between refreshes), but the time of the last
    /// snapshot once refreshes fail or the screen is frozen (`f`). Kept data is frozen as last seen:
    /// rates do not fall to 0, ages do not keep growing, and no "no worker"
    /// or "stalled" badge appears because heartbeats stopped arriving.
    pub fn data_time(&self, now: SystemTime) -> SystemTime {
        match (&self.connection, self.data.fetched_at) {
            (_, Some(fetched)) if self.frozen.is_some() => fetched,
            (Connection::Live, _) | (_, None) => now,
            (_, Some(fetched)) => fetched,
        }
    }

    /// The Redis time throughput is read at: the last snapshot's. Its
    /// stats buckets end there, so rates, sparklines and the stalled badge
    /// computed at a later moment would count buckets the snapshot could
    /// not hold yet and sink toward 0 until the next refresh (with a slow
    /// `--refresh`, a busy queue read as stopped).
    pub fn stats_time(&self, now: SystemTime) -> SystemTime {
        self.data.fetched_at.unwrap_or(now)
    }

    /// Whether the list on screen came with the last snapshot. Screens fed
    /// by every snapshot always did; the Leases, Dead letters and jobs
    /// lists only while they are in focus.
    pub fn screen_loaded(&self) -> bool {
        match &self.view {
            View::Detail(_) => true,
            View::Jobs(view) => self
                .data
                .jobs
                .as_ref()
                .is_some_and(|page| page.query == view.query),
            View::Screen(Screen::Leases) => self.data.leases_loaded,
            View::Screen(Screen::Dead) => self.data.dead_loaded,
            View::Screen(Screen::Limits) => self.data.limits_loaded,
            View::Screen(Screen::Workflows) => self.data.gates_loaded,
            View::Gate(view) => self
                .data
                .gate
                .as_ref()
                .is_some_and(|page| page.query == view.query),
            View::Metrics(view) => self.metrics_shown(view).is_some(),
            View::Schedule(_) => self.schedule_shown().is_some(),
            View::Screen(_) => self.data.loaded,
        }
    }

    /// The schedule detail's schedule as last read, when that read is of
    /// the schedule shown.
    pub fn schedule_shown(&self) -> Option<&ScheduleRead> {
        let View::Schedule(view) = &self.view else {
            return None;
        };
        self.data
            .schedule
            .as_ref()
            .filter(|read| read.name == view.name && read.shard == view.shard.unwrap_or(0))
    }

    /// The job the detail view shows, which the source keeps re-reading.
    pub fn watched_job(&self) -> Option<String> {
        self.detail().map(|d| d.record.id.clone())
    }

    /// The selected job of the jobs view (among the rows its filter shows).
    pub fn selected_job(&self) -> Option<&JobRecord> {
        let jobs = self.jobs()?;
        self.visible_jobs().get(jobs.cursor.index).copied()
    }

    /// States the jobs view always cycles through.
    pub const JOB_STATES: [JobState; 4] = [
        JobState::Waiting,
        JobState::Scheduled,
        JobState::Leased,
        JobState::Dead,
    ];

    /// The states the jobs view of `queue` shows and cycles through: the
    /// four of every queue, then `held` when the queue has flow control or
    /// holds jobs back (see `redq limits`), `blocked` when jobs of it wait
    /// behind the holder of their ordering key, `awaiting` when jobs of it wait
    /// on a batch, dependencies or children (see `redq batches`), then completed and cancelled when the
    /// queue keeps such jobs (its retention policy; see `redq retention`);
    /// and always the state shown.
    pub fn job_states(&self, queue: &str, shown: JobState) -> Vec<JobState> {
        let counts = self
            .data
            .queues
            .iter()
            .find(|r| r.counts.queue == queue)
            .map(|r| &r.counts);
        let mut states = Self::JOB_STATES.to_vec();
        let limited = self.data.limited.iter().any(|q| q == queue);
        if limited || counts.is_some_and(|c| c.held > 0) || shown == JobState::Held {
            states.push(JobState::Held);
        }
        if counts.is_some_and(|c| c.blocked > 0) || shown == JobState::Blocked {
            states.push(JobState::Blocked);
        }
        if counts.is_some_and(|c| c.awaiting > 0) || shown == JobState::Awaiting {
            states.push(JobState::Awaiting);
        }
        for (kept, n) in [
            (JobState::Completed, counts.map_or(0, |c| c.completed)),
            (JobState::Cancelled, counts.map_or(0, |c| c.cancelled)),
        ] {
            if n > 0 || shown == kept {
                states.push(kept);
            }
        }
        states
    }
}
