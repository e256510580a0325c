//! The console's state: plain data, changed only by [`State::apply`].
//!
//! `apply` takes an [`Action`] (a key the input table translated, or an
//! update from the I/O task) and returns a [`Command`] for the app loop to
//! carry out. It does no I/O and reads no clock, so every behaviour is a
//! table-driven unit test away.

mod apply;
mod data;
pub mod metrics;
pub mod rows;

use std::time::{Duration, SystemTime};

use redq::{JobRecord, JobState, QueueEvent};

pub use apply::{Action, Command};
pub use data::{
    plural, DeadIds, DeadWindow, Focus, JobsPage, JobsQuery, Mutation, QueueRow, ScheduleInfo,
    Snapshot, Update, WorkerInfo,
};
pub use rows::{Badge, DeadGroup};

/// Jobs per page in the jobs view.
pub const JOBS_PAGE: usize = 50;
/// How long a status message stays on screen. A message says what just
/// happened; kept longer it reads as what is happening now.
pub const STATUS_TTL: Duration = Duration::from_secs(10);

/// The six screens, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Screen {
    /// Queue overview.
    Queues,
    /// Held leases.
    Leases,
    /// Dead letters.
    Dead,
    /// Recurring schedules.
    Schedules,
    /// Live workers.
    Workers,
    /// The event feed.
    Events,
}

impl Screen {
    /// Every screen in tab order.
    pub const ALL: [Screen; 6] = [
        Screen::Queues,
        Screen::Leases,
        Screen::Dead,
        Screen::Schedules,
        Screen::Workers,
        Screen::Events,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            Screen::Queues => "Queues",
            Screen::Leases => "Leases",
            Screen::Dead => "Dead letters",
            Screen::Schedules => "Schedules",
            Screen::Workers => "Workers",
            Screen::Events => "Events",
        }
    }

    /// Position in tab order (0-based).
    pub fn index(self) -> usize {
        Screen::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

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
        error: String,
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
}

/// A list position that follows its row when rows move.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cursor {
    /// Index into the visible rows.
    pub index: usize,
    /// Key of the selected row (job id, queue name…), to find it again.
    pub key: Option<String>,
}

/// The jobs view opened from the Queues screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsView {
    /// What it lists.
    pub query: JobsQuery,
    /// Its selection.
    pub cursor: Cursor,
    /// Its own filter (`/` in the jobs view): narrows the loaded page, kept
    /// across pages and states, apart from the Queues screen's filter.
    pub filter: String,
}

/// The detail view of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// The job as it was when opened.
    pub record: JobRecord,
    /// Lines scrolled.
    pub scroll: u16,
}

/// A destructive action waiting for `y`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// The question, naming what will be touched and how many jobs.
    pub prompt: String,
    /// What `y` does.
    pub mutation: Mutation,
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
    /// The screen shown.
    pub screen: Screen,
    /// Connection health.
    pub connection: Connection,
    /// The data.
    pub data: Data,
    /// One cursor per screen.
    pub cursors: [Cursor; 6],
    /// One filter per screen.
    pub filters: [String; 6],
    /// Typing into the filter.
    pub filter_editing: bool,
    /// Dead letters grouped by error signature.
    pub group_dead: bool,
    /// Cursor over the dead-letter groups.
    pub group_cursor: Cursor,
    /// The jobs view, when open.
    pub jobs: Option<JobsView>,
    /// The job detail, when open.
    pub detail: Option<Detail>,
    /// A pending confirmation.
    pub confirm: Option<Confirm>,
    /// The help overlay is open.
    pub help: bool,
    /// The status line.
    pub status: Option<Status>,
    /// The running mutation.
    pub busy: Option<Progress>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// The local clock as of the latest tick or update: what status
    /// messages are stamped with. The state reads no clock itself.
    pub clock: SystemTime,
}

impl State {
    /// A fresh state before any data.
    pub fn new(settings: Settings) -> State {
        State {
            settings,
            screen: Screen::Queues,
            connection: Connection::Connecting,
            data: Data::default(),
            cursors: Default::default(),
            filters: Default::default(),
            filter_editing: false,
            group_dead: false,
            group_cursor: Cursor::default(),
            jobs: None,
            detail: None,
            confirm: None,
            help: false,
            status: None,
            busy: None,
            size: (100, 30),
            clock: SystemTime::UNIX_EPOCH,
        }
    }

    /// What the source should load for what is on screen.
    pub fn focus(&self) -> Focus {
        if let Some(jobs) = &self.jobs {
            return Focus::Jobs(jobs.query.clone());
        }
        match self.screen {
            Screen::Leases => Focus::Leases,
            Screen::Dead => Focus::Dead,
            _ => Focus::Overview,
        }
    }

    /// The filter of the current list: the jobs view's when it is open,
    /// else the screen's.
    pub fn filter(&self) -> &str {
        match &self.jobs {
            Some(view) => &view.filter,
            None => &self.filters[self.screen.index()],
        }
    }

    /// The current screen's cursor.
    pub fn cursor(&self) -> &Cursor {
        if let Some(jobs) = &self.jobs {
            return &jobs.cursor;
        }
        if self.screen == Screen::Dead && self.group_dead {
            return &self.group_cursor;
        }
        &self.cursors[self.screen.index()]
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
    /// snapshot once refreshes fail. Kept data is frozen as last seen:
    /// rates do not fall to 0, ages do not keep growing, and no "no worker"
    /// or "stalled" badge appears because heartbeats stopped arriving.
    pub fn data_time(&self, now: SystemTime) -> SystemTime {
        match (&self.connection, self.data.fetched_at) {
            (Connection::Live, _) | (_, None) => now,
            (_, Some(fetched)) => fetched,
        }
    }

    /// Whether the list on screen came with the last snapshot. Screens fed
    /// by every snapshot always did; the Leases, Dead letters and jobs
    /// lists only while they are in focus.
    pub fn screen_loaded(&self) -> bool {
        if self.detail.is_some() {
            return true;
        }
        if let Some(view) = &self.jobs {
            return self
                .data
                .jobs
                .as_ref()
                .is_some_and(|page| page.query == view.query);
        }
        match self.screen {
            Screen::Leases => self.data.leases_loaded,
            Screen::Dead => self.data.dead_loaded,
            _ => self.data.loaded,
        }
    }

    /// The job the detail view shows, which the source keeps re-reading.
    pub fn watched_job(&self) -> Option<String> {
        self.detail.as_ref().map(|d| d.record.id.clone())
    }

    /// The selected job of the jobs view (among the rows its filter shows).
    pub fn selected_job(&self) -> Option<&JobRecord> {
        let jobs = self.jobs.as_ref()?;
        self.visible_jobs().get(jobs.cursor.index).copied()
    }

    /// States the jobs view cycles through.
    pub const JOB_STATES: [JobState; 4] = [
        JobState::Waiting,
        JobState::Scheduled,
        JobState::Leased,
        JobState::Dead,
    ];
}
