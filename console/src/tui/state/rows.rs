//! The rows each screen shows: the data, filtered and grouped. Views draw
//! these and `apply` acts on them, so what is selected is what is acted on.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use redq::{JobRecord, QueueEvent};

use super::metrics;
use super::sort;
use super::{QueueRow, ScheduleInfo, Screen, State, WorkerInfo};
use crate::flow::LimiterRow;
use crate::signature::signature;

/// A heartbeat older than this means the worker is gone (the driver's
/// registry drops such workers itself; this guards against a stale view).
pub const WORKER_STALE: Duration = redq::worker::WORKER_TTL;
/// A backlog with no completions or failures for this long is stalled.
pub const STALL_AFTER: Duration = Duration::from_secs(60);
/// Scheduled jobs due for this long with no claim moving them to waiting
/// are overdue: a live worker claims them within moments of their time.
pub const OVERDUE_AFTER: Duration = Duration::from_secs(5);

/// Whether `counts` has scheduled jobs due for [`OVERDUE_AFTER`] at `now`
/// (Redis clock): nobody claims them, so they are a backlog, though they
/// are not counted as waiting.
pub fn overdue(counts: &redq::QueueCounts, now: SystemTime) -> bool {
    counts
        .due_since
        .is_some_and(|since| crate::clock::age(since, now) >= OVERDUE_AFTER)
}

/// Dead letters sharing an error signature, counted over every dead
/// letter of their queues as far as the source read them
/// (`crate::dead_census`), not over the loaded window.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadGroup {
    /// The signature.
    pub signature: String,
    /// How many dead letters have it.
    pub count: u64,
    /// Whether every dead letter of its queues was counted; else `count`
    /// is a lower bound (shown "≥600").
    pub complete: bool,
    /// The queues they died in.
    pub queues: Vec<String>,
    /// The newest death in the group.
    pub newest: Option<SystemTime>,
    /// The newest one's error.
    pub example: String,
    /// The lowest max attempts among them (unlimited ones aside).
    pub lowest_max_attempts: Option<u32>,
    /// The newest few, (queue, id), newest first: the canaries `K` sends.
    pub canaries: Vec<(String, String)>,
}

/// A warning shown beside a queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Badge {
    /// Claims are paused: its words (`paused`, or `paused 1/3` over shards
    /// a pause reached only some of).
    Paused(String),
    /// Jobs are waiting (or leases lapsed, which only a claim or an
    /// operator's reclaim returns) and no live worker serves the queue.
    NoWorker,
    /// Jobs are waiting, nothing is leased, and nothing finished lately.
    Stalled,
    /// Leases lapsed and nobody reclaimed them.
    Lapsed,
}

impl Badge {
    /// The badge text.
    pub fn text(&self) -> String {
        match self {
            Badge::Paused(words) => words.to_uppercase(),
            Badge::NoWorker => "NO WORKER".to_owned(),
            Badge::Stalled => "STALLED".to_owned(),
            Badge::Lapsed => "LAPSED".to_owned(),
        }
    }
}

fn matches(filter: &str, fields: &[&str]) -> bool {
    if filter.is_empty() {
        return true;
    }
    let needle = filter.to_lowercase();
    fields.iter().any(|f| f.to_lowercase().contains(&needle))
}

/// Whether event `e` passes the Events filter `filter`: `kind:PREFIX`
/// keeps the kinds starting with it (`kind:worker`), any other text events
/// with it in a field (who did it included). The source reads further back
/// for a filter than for none (`source::fetch`), with this same test.
pub fn event_matches(filter: &str, e: &QueueEvent) -> bool {
    match filter.strip_prefix("kind:") {
        Some(kind) => e.kind.starts_with(kind.to_lowercase().as_str()),
        None => matches(
            filter,
            &[
                &e.kind,
                &e.queue,
                &e.job_id,
                e.name.as_deref().unwrap_or(""),
                &e.error,
                e.by.as_deref().unwrap_or(""),
                e.detail.as_deref().unwrap_or(""),
            ],
        ),
    }
}

fn job_matches(filter: &str, job: &JobRecord) -> bool {
    matches(
        filter,
        &[
            &job.id,
            &job.queue,
            job.name.as_deref().unwrap_or(""),
            job.last_error.as_deref().unwrap_or(""),
            job.limit_key.as_deref().unwrap_or(""),
        ],
    ) || (!filter.is_empty() && signature(job.last_error.as_deref().unwrap_or("")).contains(filter))
        // "Every job of cus_3": the payload as its JSON text.
        || (!filter.is_empty() && matches(filter, &[&job.payload.to_string()]))
}

impl State {
    pub(super) fn filter_of(&self, screen: Screen) -> &str {
        &self.tabs.filters[screen.index()]
    }

    /// Queues matching the Queues filter.
    pub fn visible_queues(&self) -> Vec<&QueueRow> {
        let f = self.filter_of(Screen::Queues);
        let mut rows: Vec<_> = self
            .data
            .queues
            .iter()
            .filter(|q| matches(f, &[&q.counts.queue]))
            .collect();
        let now = self.data_time(self.redis_time(self.clock));
        let stats_at = self.stats_time(now);
        let sort = self.sort_of(Screen::Queues);
        sort::sort_rows(&mut rows, sort, |q, c| sort::queue_key(q, c, now, stats_at));
        rows
    }

    /// The jobs view's loaded page, narrowed by its filter.
    pub fn visible_jobs(&self) -> Vec<&JobRecord> {
        let Some(view) = self.jobs() else {
            return Vec::new();
        };
        match &self.data.jobs {
            Some(page) if page.query == view.query => page
                .page
                .items
                .iter()
                .filter(|j| job_matches(&view.filter, j))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Leases matching the Leases filter, soonest expiry first.
    pub fn visible_leases(&self) -> Vec<&JobRecord> {
        let f = self.filter_of(Screen::Leases);
        let mut rows: Vec<_> = self
            .data
            .leases
            .iter()
            .filter(|j| job_matches(f, j))
            .collect();
        rows.sort_by_key(|j| (j.lease_expires_at, j.id.clone()));
        sort::sort_rows(&mut rows, self.sort_of(Screen::Leases), |j, c| {
            sort::job_key(j, c)
        });
        rows
    }

    /// Dead letters matching the Dead letters filter, newest first.
    pub fn visible_dead(&self) -> Vec<&JobRecord> {
        let f = self.filter_of(Screen::Dead);
        let mut rows: Vec<_> = self
            .data
            .dead
            .items
            .iter()
            .filter(|j| job_matches(f, j))
            .collect();
        if !self.tabs.dead_grouped {
            sort::sort_rows(&mut rows, self.sort_of(Screen::Dead), |j, c| {
                sort::job_key(j, c)
            });
        }
        rows
    }

    /// Error signatures over every dead letter of each queue (as far as
    /// the source counted them), biggest group first; a signature found in
    /// several queues is one group. The filter keeps the groups whose
    /// signature, example error or a queue contains it.
    pub fn dead_groups(&self) -> Vec<DeadGroup> {
        let filter = self.filter_of(Screen::Dead);
        let mut groups: BTreeMap<&str, DeadGroup> = BTreeMap::new();
        // Each group's newest dead letters over its queues: (died, queue, id).
        type Newest = Vec<(Option<SystemTime>, String, String)>;
        let mut dated: BTreeMap<&str, Newest> = BTreeMap::new();
        for census in &self.data.dead.groups {
            for tally in &census.groups {
                let group = groups
                    .entry(tally.signature.as_str())
                    .or_insert_with(|| DeadGroup {
                        signature: tally.signature.clone(),
                        count: 0,
                        complete: true,
                        queues: Vec::new(),
                        newest: None,
                        example: tally.example.clone(),
                        lowest_max_attempts: None,
                        canaries: Vec::new(),
                    });
                group.count += tally.count;
                group.complete &= census.complete;
                group.queues.push(tally.queue.clone());
                if tally.newest > group.newest {
                    group.newest = tally.newest;
                    group.example = tally.example.clone();
                }
                group.lowest_max_attempts =
                    match (group.lowest_max_attempts, tally.lowest_max_attempts) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                let ids = dated.entry(tally.signature.as_str()).or_default();
                ids.extend(
                    tally
                        .newest_ids
                        .iter()
                        .map(|(at, id)| (*at, tally.queue.clone(), id.clone())),
                );
            }
        }
        let mut out: Vec<DeadGroup> = groups
            .into_iter()
            .map(|(signature, mut group)| {
                let mut ids = dated.remove(signature).unwrap_or_default();
                ids.sort_by(|a, b| b.0.cmp(&a.0).then(b.2.cmp(&a.2)));
                group.canaries = ids
                    .into_iter()
                    .take(crate::canary::DEFAULT_CANARIES)
                    .map(|(_, queue, id)| (queue, id))
                    .collect();
                group.queues.sort();
                group.queues.dedup();
                group
            })
            .filter(|g| {
                let queues = g.queues.join(",");
                matches(filter, &[&g.signature, &g.example, &queues])
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
        out
    }

    /// Events matching the Events filter, newest first (see
    /// [`event_matches`]).
    pub fn visible_events(&self) -> Vec<&QueueEvent> {
        let f = self.filter_of(Screen::Events);
        self.data
            .events
            .iter()
            .filter(|e| event_matches(f, e))
            .collect()
    }

    /// Workers matching the Workers filter.
    pub fn visible_workers(&self) -> Vec<&WorkerInfo> {
        let f = self.filter_of(Screen::Workers);
        let mut rows: Vec<_> = self
            .data
            .workers
            .iter()
            .filter(|w| {
                let queues = w.queues.join(",");
                matches(
                    f,
                    &[&w.id, &w.host, &queues, w.state_text(), w.wake_ups_text()],
                )
            })
            .collect();
        sort::sort_rows(&mut rows, self.sort_of(Screen::Workers), |w, c| {
            sort::worker_key(w, c)
        });
        rows
    }

    /// Schedules matching the Schedules filter.
    pub fn visible_schedules(&self) -> Vec<&ScheduleInfo> {
        let f = self.filter_of(Screen::Schedules);
        let mut rows: Vec<_> = self
            .data
            .schedules
            .iter()
            .filter(|s| matches(f, &[&s.name, &s.queue, &s.expression]))
            .collect();
        let sort = self.sort_of(Screen::Schedules);
        sort::sort_rows(&mut rows, sort, |s, c| sort::schedule_key(s, c));
        rows
    }

    /// Limiters matching the Limits filter (queue, key or scope), in the
    /// order the source sorted them: by queue, the queue's own limit, its
    /// each-key default, then its keys.
    pub fn visible_limits(&self) -> Vec<&LimiterRow> {
        let f = self.filter_of(Screen::Limits);
        self.data
            .limits
            .iter()
            .filter(|r| matches(f, &[&r.queue, r.key().unwrap_or(""), r.scope_text()]))
            .collect()
    }

    /// Keys of the rows the current list shows, in order.
    pub(super) fn row_keys(&self) -> Vec<String> {
        if self.jobs().is_some() {
            return self.visible_jobs().iter().map(|j| j.id.clone()).collect();
        }
        if matches!(self.view, super::View::Gate(_)) {
            return self
                .visible_members()
                .iter()
                .map(|m| m.id.clone())
                .collect();
        }
        match self.screen() {
            Screen::Queues => self
                .visible_queues()
                .iter()
                .map(|q| q.counts.queue.clone())
                .collect(),
            Screen::Leases => self.visible_leases().iter().map(|j| j.id.clone()).collect(),
            Screen::Dead if self.tabs.dead_grouped => self
                .dead_groups()
                .into_iter()
                .map(|g| g.signature)
                .collect(),
            Screen::Dead => self.visible_dead().iter().map(|j| j.id.clone()).collect(),
            // Name and shard: a name two shards store is two rows, and the
            // cursor must stay on the one selected (NUL is in no name).
            Screen::Schedules => self
                .visible_schedules()
                .iter()
                .map(|s| match s.shard {
                    Some(shard) => format!("{}\0{shard}", s.name),
                    None => s.name.clone(),
                })
                .collect(),
            Screen::Workers => self
                .visible_workers()
                .iter()
                .map(|w| w.id.clone())
                .collect(),
            Screen::Events => self
                .visible_events()
                .iter()
                .map(|e| e.event_id.clone())
                .collect(),
            Screen::Limits => self.visible_limits().iter().map(|r| r.row_key()).collect(),
            Screen::Workflows => self.visible_gates().iter().map(|g| g.id.clone()).collect(),
        }
    }

    /// The live worker holding a lease, if the registry knows it.
    pub fn worker_for(&self, node: u64, instance: u32) -> Option<&WorkerInfo> {
        self.data
            .workers
            .iter()
            .find(|w| w.node == node && w.instance == instance)
    }

    /// Warnings for one queue at `now` (Redis clock).
    pub fn badges(&self, row: &QueueRow, now: SystemTime) -> Vec<Badge> {
        let c = &row.counts;
        let mut out = Vec::new();
        if let Some(words) = crate::tui::view::facts::pause_of(c) {
            out.push(Badge::Paused(words));
        }
        if c.lapsed > 0 {
            out.push(Badge::Lapsed);
        }
        let backlog = (c.waiting > 0 || overdue(c, now)) && !c.paused;
        // Lapsed leases are work too: with no worker to claim, nothing
        // returns them but an operator's reclaim (`x`).
        let unserved = backlog || (c.lapsed > 0 && !c.paused);
        if unserved && self.data.workers_known {
            let served = self.data.workers.iter().any(|w| {
                w.queues.contains(&c.queue)
                    && crate::clock::age(w.last_heartbeat, now) < WORKER_STALE
            });
            if !served {
                out.push(Badge::NoWorker);
            }
        }
        if backlog
            && c.leased == 0
            && !metrics::active_within(&row.stats, self.stats_time(now), STALL_AFTER)
            && !out.contains(&Badge::NoWorker)
        {
            out.push(Badge::Stalled);
        }
        out
    }
}
