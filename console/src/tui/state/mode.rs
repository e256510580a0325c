//! Where the console is: one [`View`] (what the body shows) and one
//! [`Overlay`] (what takes the keys first). Each variant holds only what its
//! screen needs, so what the console cannot be in cannot be written down: a
//! job's detail over the Workers screen, a filter typed into a detail, help
//! over a question waiting for `y`.
//!
//! Key scopes (`input::Scope`), the body drawn and every handler in `apply`
//! match on these two values; nothing else says where the console is.

use redq::JobRecord;

use super::{Cursor, JobsQuery, Mutation};

/// The eight screens, in tab order.
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
    /// Flow control: each limit, its use now, the jobs it holds back.
    Limits,
    /// Batches, dependencies and trees (gates), newest activity first.
    Workflows,
}

impl Screen {
    /// Every screen in tab order.
    pub const ALL: [Screen; Screen::COUNT] = [
        Screen::Queues,
        Screen::Leases,
        Screen::Dead,
        Screen::Schedules,
        Screen::Workers,
        Screen::Events,
        Screen::Limits,
        Screen::Workflows,
    ];

    /// How many screens there are.
    pub const COUNT: usize = 8;

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            Screen::Queues => "Queues",
            Screen::Leases => "Leases",
            Screen::Dead => "Dead letters",
            Screen::Schedules => "Schedules",
            Screen::Workers => "Workers",
            Screen::Events => "Events",
            Screen::Limits => "Limits",
            Screen::Workflows => "Workflows",
        }
    }

    /// Position in tab order (0-based).
    pub fn index(self) -> usize {
        Screen::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// The screen `steps` tabs on from this one (negative: back), wrapping.
    pub fn step(self, steps: isize) -> Screen {
        let n = Screen::COUNT as isize;
        Screen::ALL[(self.index() as isize + steps).rem_euclid(n) as usize]
    }
}

/// What the body shows.
#[derive(Debug, Clone, PartialEq)]
pub enum View {
    /// A screen's own list, under its tab.
    Screen(Screen),
    /// One queue's jobs by state, opened from the Queues screen.
    Jobs(JobsView),
    /// One job, opened from a list that Esc returns to (boxed: a job
    /// record is large beside the other views).
    Detail(Box<Detail>),
    /// One queue's metrics over a window, opened from the Queues screen
    /// (`m`); Esc goes back to it.
    Metrics(MetricsView),
    /// One gate (a batch, a job's dependencies, a tree), opened from the
    /// Workflows screen; Esc goes back to it.
    Gate(GateView),
    /// One schedule: its whole record and its next runs, opened from the
    /// Schedules screen (Enter); Esc goes back to it.
    Schedule(ScheduleView),
}

/// The detail of one schedule (what `redq schedules show` prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleView {
    /// The schedule's name.
    pub name: String,
    /// The shard that stores it (`--shards` above 1 only): a name two
    /// shards store is two schedules.
    pub shard: Option<usize>,
    /// Lines scrolled.
    pub scroll: u16,
}

/// The view of one gate: its counts, its waiters and a page of members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateView {
    /// The gate shown and the members page asked for.
    pub query: GateQuery,
    /// The selection among the page's members.
    pub cursor: Cursor,
    /// Where the earlier pages started (PgUp goes back to the last).
    pub earlier: Vec<String>,
    /// The waiter picked (`w`), by its place: the one `r` and `d` decide.
    pub waiter: usize,
}

/// Which gate, and where its members page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateQuery {
    /// The gate id.
    pub id: String,
    /// The members page starts after this (lex cursor; empty: the first).
    pub cursor: String,
}

/// The Metrics view of one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsView {
    /// The queue shown.
    pub queue: String,
    /// How far back its figures go (`w`, `[`, `]`).
    pub window: redq::metrics::MetricsWindow,
}

/// The jobs view of one queue, opened from the Queues screen (or from the
/// Limits screen, on the queue's held jobs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsView {
    /// The screen it was opened from: its tab stays lit, and Esc goes back
    /// to it.
    pub from: Screen,
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
    /// The job as it was when opened, then as last read again.
    pub record: JobRecord,
    /// Its progress and log lines, as last read (none until the first
    /// re-read).
    pub notes: redq::JobNotes,
    /// How it finished, once it left the queue, when its queue keeps it:
    /// then the detail shows that instead of `record`.
    pub finished: Option<redq::KeptJob>,
    /// Gone: its last read found neither the job nor a kept record of it
    /// (deleted, or finished and not kept). The detail still shows what it
    /// last was, titled gone, and its keys refuse.
    pub gone: bool,
    /// The gate it awaits (batch callback, dependencies, tree parent), as
    /// last read: "awaits G (7 of 10 finished)".
    pub awaits: Option<crate::workflow::Gate>,
    /// Why a due job of a limited queue is held or waits (`held by`,
    /// `waits on`), as last read; empty otherwise.
    pub held: Vec<(&'static str, String)>,
    /// Lines scrolled.
    pub scroll: u16,
    /// The list it was opened from, which Esc shows again as it was.
    pub from: OpenedFrom,
}

/// The lists whose rows open a detail.
#[derive(Debug, Clone, PartialEq)]
pub enum OpenedFrom {
    /// The Leases screen.
    Leases,
    /// The Dead letters screen.
    Dead,
    /// A jobs view: kept whole (page, state, filter, selection) and still
    /// loaded underneath, so Esc returns to it unchanged.
    Jobs(JobsView),
}

impl View {
    /// The tab lit: the screen shown, or the one this view was opened from.
    pub fn screen(&self) -> Screen {
        match self {
            View::Screen(screen) => *screen,
            View::Jobs(jobs) => jobs.from,
            View::Metrics(_) => Screen::Queues,
            View::Gate(_) => Screen::Workflows,
            View::Schedule(_) => Screen::Schedules,
            View::Detail(detail) => match &detail.from {
                OpenedFrom::Leases => Screen::Leases,
                OpenedFrom::Dead => Screen::Dead,
                OpenedFrom::Jobs(jobs) => jobs.from,
            },
        }
    }

    /// The jobs view shown, or the one under the detail.
    pub fn jobs(&self) -> Option<&JobsView> {
        match self {
            View::Jobs(jobs) => Some(jobs),
            View::Detail(detail) => match &detail.from {
                OpenedFrom::Jobs(jobs) => Some(jobs),
                OpenedFrom::Leases | OpenedFrom::Dead => None,
            },
            View::Screen(_) | View::Metrics(_) | View::Gate(_) | View::Schedule(_) => None,
        }
    }

    /// The jobs view shown, or the one under the detail, to change.
    pub(super) fn jobs_mut(&mut self) -> Option<&mut JobsView> {
        match self {
            View::Jobs(jobs) => Some(jobs),
            View::Detail(detail) => match &mut detail.from {
                OpenedFrom::Jobs(jobs) => Some(jobs),
                OpenedFrom::Leases | OpenedFrom::Dead => None,
            },
            View::Screen(_) | View::Metrics(_) | View::Gate(_) | View::Schedule(_) => None,
        }
    }

    /// The detail of `record`, opened from `from`, scrolled to its top.
    pub(super) fn detail_of(record: &JobRecord, from: OpenedFrom) -> View {
        View::Detail(Box::new(Detail {
            record: record.clone(),
            notes: redq::JobNotes::default(),
            finished: None,
            gone: false,
            awaits: None,
            held: Vec::new(),
            scroll: 0,
            from,
        }))
    }

    /// The job detail, when it is shown.
    pub fn detail(&self) -> Option<&Detail> {
        match self {
            View::Detail(detail) => Some(detail),
            _ => None,
        }
    }
}

impl OpenedFrom {
    /// The view Esc goes back to.
    pub(super) fn into_view(self) -> View {
        match self {
            OpenedFrom::Leases => View::Screen(Screen::Leases),
            OpenedFrom::Dead => View::Screen(Screen::Dead),
            OpenedFrom::Jobs(jobs) => View::Jobs(jobs),
        }
    }
}

/// What takes the keys before the view does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Overlay {
    /// Nothing: keys go to the view.
    #[default]
    None,
    /// The help screen; any key closes it.
    Help,
    /// Typing into the current list's filter.
    Filter,
    /// A destructive action waiting for `y`; any other key answers no.
    Confirm(Confirm),
}

/// A destructive action waiting for `y`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// The question, naming what will be touched and how many jobs (for
    /// the text shown, with a requeue's attempt count, see `Confirm::text`).
    pub prompt: String,
    /// What `y` does; a requeue carries the attempt count typed so far.
    pub mutation: Mutation,
    /// A requeue's attempt count must stay below this: the lowest max
    /// attempts among the jobs it touches. `None`: no limit (every job is
    /// unlimited, or this is not a requeue).
    pub attempts_below: Option<u32>,
}

/// What each tab keeps while another is shown, so coming back finds it as
/// it was: its selection, its filter, its sort, and (Dead letters) its
/// grouping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tabs {
    /// One cursor per screen.
    pub cursors: [Cursor; Screen::COUNT],
    /// One filter per screen.
    pub filters: [String; Screen::COUNT],
    /// Dead letters are grouped by error signature.
    pub dead_grouped: bool,
    /// Cursor over the dead-letter groups.
    pub group_cursor: Cursor,
    /// One sort per screen (`o`, `O`); none: the screen's own order.
    pub sorts: [Option<super::sort::Sort>; Screen::COUNT],
    /// The Metrics view's window last chosen, which the next `m` opens
    /// with (none yet: the last 5 minutes).
    pub metrics_window: Option<redq::metrics::MetricsWindow>,
}
