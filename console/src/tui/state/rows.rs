//! The rows each screen shows: the data, filtered and grouped. Views draw
//! these and `apply` acts on them, so what is selected is what is acted on.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use redq::worker::WorkerState;
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

/// A warning shown beside a queue: on the Queues screen (and its narrow
/// form), and in `redq queues` (its WARNINGS column and its JSON
/// `warnings`), all computed by [`queue_badges`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Badge {
    /// Claims are paused: its words (`paused`, or `paused 1/3` over shards
    /// a pause reached only some of).
    Paused(String),
    /// The queue has work only a claim moves (ready jobs, jobs held by a
    /// limit, lapsed leases) and no running worker serves it, paused or
    /// not: resuming alone would not start anything. `quiet` and
    /// `stopping` count the live workers that list the queue but claim
    /// nothing (`z` and `s` on the Workers screen), so the badge says why.
    NoWorker {
        /// Quiet workers listing the queue.
        quiet: usize,
        /// Stopping workers listing the queue.
        stopping: usize,
    },
    /// Jobs are ready, a running worker serves the queue (or the driver
    /// has no worker registry to say), yet nothing is leased and nothing
    /// finished for [`STALL_AFTER`].
    Stalled,
    /// Leases lapsed and nobody reclaimed them.
    Lapsed,
}

/// Each badge as the help screen explains it: its text, then one plain
/// sentence. One table, so the legend names every badge [`Badge::text`]
/// can show (a test holds them together).
pub const BADGE_LEGEND: &[(&str, &str)] = &[
    (
        "PAUSED",
        "Claims take nothing from the queue until it is resumed (p); PAUSED 1/3 means the pause reached 1 of 3 shards.",
    ),
    (
        "NO WORKER",
        "Jobs are ready, held by a limit or in lapsed leases, and no running worker serves the queue, so nothing will start, even after a resume; (2 quiet) or (1 stopping) counts the workers that list it but claim nothing.",
    ),
    (
        "LAPSED",
        "Leases ran out and nobody reclaimed them yet; a worker's claim or x on the Leases screen brings those jobs back.",
    ),
    (
        "STALLED",
        "Jobs are ready and a running worker lists the queue, yet nothing is leased and nothing completed or failed for a minute: look at that worker.",
    ),
];

impl Badge {
    /// The badge text, as the console shows it.
    pub fn text(&self) -> String {
        match self {
            Badge::Paused(words) => words.to_uppercase(),
            Badge::NoWorker { quiet, stopping } => {
                let why: Vec<String> = [(*quiet, "quiet"), (*stopping, "stopping")]
                    .into_iter()
                    .filter(|(n, _)| *n > 0)
                    .map(|(n, word)| format!("{n} {word}"))
                    .collect();
                match why.is_empty() {
                    true => "NO WORKER".to_owned(),
                    false => format!("NO WORKER ({})", why.join(", ")),
                }
            }
            Badge::Stalled => "STALLED".to_owned(),
            Badge::Lapsed => "LAPSED".to_owned(),
        }
    }

    /// The badge as a word for scripts (`redq queues`' WARNINGS and its
    /// JSON `warnings`): `paused`, `no_worker`, `lapsed`, `stalled`. Fixed,
    /// whatever the reason in its text, so an alert matches one word.
    pub fn code(&self) -> &'static str {
        match self {
            Badge::Paused(_) => "paused",
            Badge::NoWorker { .. } => "no_worker",
            Badge::Stalled => "stalled",
            Badge::Lapsed => "lapsed",
        }
    }
}

/// Warnings for one queue at `now` (Redis clock), throughput read at
/// `stats_at`; `workers`: the registry's workers, `None` when the driver
/// has none to ask (then no NO WORKER, and STALLED alone flags a backlog
/// nothing moves). The one definition the console and `redq queues`
/// share, so a script sees what the screen shows.
///
/// A worker serves the queue when it lists it, is not gone, its heartbeat
/// is younger than [`WORKER_STALE`], and it runs: a quiet or stopping one
/// claims nothing, so it is counted in the badge's reason instead.
pub fn queue_badges(
    row: &QueueRow,
    workers: Option<&[WorkerInfo]>,
    now: SystemTime,
    stats_at: SystemTime,
) -> Vec<Badge> {
    let c = &row.counts;
    let mut out = Vec::new();
    if let Some(words) = crate::tui::view::facts::pause_of(c) {
        out.push(Badge::Paused(words));
    }
    if c.lapsed > 0 {
        out.push(Badge::Lapsed);
    }
    let ready = c.waiting > 0 || overdue(c, now);
    // Work that only a claim moves: ready jobs, jobs a limit holds (a
    // claim releases them when the limit has room), and lapsed leases
    // (with no worker to claim, only an operator's reclaim returns them).
    // Counted paused or not: a paused queue nobody serves stays stuck
    // after its resume, and the operator should know before resuming.
    let needs_claims = ready || c.held > 0 || c.lapsed > 0;
    if let Some(workers) = workers.filter(|_| needs_claims) {
        let (mut running, mut quiet, mut stopping) = (0, 0, 0);
        for w in workers.iter().filter(|w| {
            !w.gone
                && w.queues.contains(&c.queue)
                && crate::clock::age(w.last_heartbeat, now) < WORKER_STALE
        }) {
            match w.state {
                WorkerState::Running => running += 1,
                WorkerState::Quiet => quiet += 1,
                WorkerState::Stopping => stopping += 1,
            }
        }
        if running == 0 {
            out.push(Badge::NoWorker { quiet, stopping });
        }
    }
    // Held jobs stay out of STALLED: a long rate window may hold them a
    // while with every worker well.
    let no_worker = out.iter().any(|b| matches!(b, Badge::NoWorker { .. }));
    if ready
        && !c.paused
        && c.leased == 0
        && !metrics::active_within(&row.stats, stats_at, STALL_AFTER)
        && !no_worker
    {
        out.push(Badge::Stalled);
    }
    out
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

    /// Warnings for one queue at `now` (Redis clock): [`queue_badges`]
    /// over this snapshot's workers and throughput.
    pub fn badges(&self, row: &QueueRow, now: SystemTime) -> Vec<Badge> {
        let workers = self
            .data
            .workers_known
            .then_some(self.data.workers.as_slice());
        queue_badges(row, workers, now, self.stats_time(now))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use redq::worker::WorkerState;
    use redq::QueueCounts;

    use super::{queue_badges, Badge, BADGE_LEGEND};
    use crate::tui::state::{QueueRow, WorkerInfo};

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    fn row(queue: &str, waiting: u64, held: u64) -> QueueRow {
        QueueRow {
            counts: QueueCounts {
                queue: queue.into(),
                waiting,
                scheduled: 0,
                leased: 0,
                dead: 0,
                blocked: 0,
                lapsed: 0,
                completed: 0,
                cancelled: 0,
                held,
                awaiting: 0,
                due: 0,
                due_since: None,
                paused: false,
                paused_shards: 0,
                shards: 1,
                head_enqueued_at: (waiting > 0).then(|| now() - Duration::from_secs(30)),
                now: now(),
            },
            stats: Vec::new(),
        }
    }

    fn worker(id: &str, queue: &str, state: WorkerState) -> WorkerInfo {
        WorkerInfo {
            id: id.into(),
            node: 1,
            instance: 1,
            host: "web-1".into(),
            pid: 1,
            started_at: now() - Duration::from_secs(600),
            queues: vec![queue.into()],
            in_flight: 0,
            processed: 0,
            failed: 0,
            last_heartbeat: now() - Duration::from_secs(1),
            shards: Vec::new(),
            gone_shards: Vec::new(),
            state,
            gone: false,
            wake_ups: None,
            version: None,
            handoffs_lost: None,
            claims_lost: None,
        }
    }

    fn texts(badges: &[Badge]) -> Vec<String> {
        badges.iter().map(Badge::text).collect()
    }

    #[test]
    fn a_queue_whose_workers_are_all_quiet_or_stopping_has_no_worker_at_once() {
        let workers = [
            worker("a", "emails", WorkerState::Quiet),
            worker("b", "emails", WorkerState::Quiet),
            worker("c", "emails", WorkerState::Stopping),
        ];
        let badges = queue_badges(&row("emails", 5, 0), Some(&workers), now(), now());
        assert_eq!(texts(&badges), ["NO WORKER (2 quiet, 1 stopping)"]);
        assert_eq!(badges[0].code(), "no_worker");
        // One running worker (here at work on one of them) is enough.
        let mut serving = workers.to_vec();
        serving.push(worker("d", "emails", WorkerState::Running));
        let mut busy = row("emails", 5, 0);
        busy.counts.leased = 1;
        assert!(queue_badges(&busy, Some(&serving), now(), now()).is_empty());
    }

    #[test]
    fn a_gone_or_silent_worker_serves_nothing() {
        let mut gone = worker("a", "emails", WorkerState::Running);
        gone.gone = true;
        let mut silent = worker("b", "emails", WorkerState::Running);
        silent.last_heartbeat = now() - Duration::from_secs(60);
        let badges = queue_badges(&row("emails", 1, 0), Some(&[gone, silent]), now(), now());
        assert_eq!(texts(&badges), ["NO WORKER"]);
    }

    #[test]
    fn held_jobs_with_no_worker_get_no_worker_but_never_stalled() {
        let badges = queue_badges(&row("webhooks", 0, 53), Some(&[]), now(), now());
        assert_eq!(texts(&badges), ["NO WORKER"]);
        // With a worker, a limit holding jobs is normal, however long.
        let workers = [worker("a", "webhooks", WorkerState::Running)];
        assert!(queue_badges(&row("webhooks", 0, 53), Some(&workers), now(), now()).is_empty());
        // Without a registry nothing can be said of held jobs.
        assert!(queue_badges(&row("webhooks", 0, 53), None, now(), now()).is_empty());
    }

    #[test]
    fn a_paused_queue_nobody_serves_says_both() {
        let mut paused = row("thumbnails", 40, 0);
        paused.counts.paused = true;
        let quiet = [worker("a", "thumbnails", WorkerState::Quiet)];
        let badges = queue_badges(&paused, Some(&quiet), now(), now());
        assert_eq!(texts(&badges), ["PAUSED", "NO WORKER (1 quiet)"]);
        // Served, it is only paused; empty, a resume has nothing to start.
        let running = [worker("a", "thumbnails", WorkerState::Running)];
        assert_eq!(
            texts(&queue_badges(&paused, Some(&running), now(), now())),
            ["PAUSED"]
        );
        let mut empty = row("thumbnails", 0, 0);
        empty.counts.paused = true;
        assert_eq!(
            texts(&queue_badges(&empty, Some(&[]), now(), now())),
            ["PAUSED"]
        );
    }

    #[test]
    fn a_served_backlog_that_nothing_moves_is_stalled() {
        let workers = [worker("a", "reports", WorkerState::Running)];
        let badges = queue_badges(&row("reports", 12, 0), Some(&workers), now(), now());
        assert_eq!(texts(&badges), ["STALLED"]);
        assert_eq!(badges[0].code(), "stalled");
    }

    #[test]
    fn the_legend_explains_every_badge() {
        let all = [
            Badge::Paused("paused".into()),
            Badge::NoWorker {
                quiet: 0,
                stopping: 0,
            },
            Badge::Lapsed,
            Badge::Stalled,
        ];
        for badge in &all {
            assert!(
                BADGE_LEGEND.iter().any(|(name, _)| *name == badge.text()),
                "{badge:?} is not in the legend"
            );
        }
        assert_eq!(BADGE_LEGEND.len(), all.len());
    }
}
