//! Sorting a screen's list by one of its columns: `o` moves the sort to the
//! next column (ascending), past the last back to the screen's own order;
//! `O` reverses it. Each screen keeps its own sort (`Tabs::sorts`), the
//! header of the sorted column shows ▲ or ▼, and the sort is stable: rows
//! that tie keep the screen's own order (queues by name, leases by expiry,
//! dead letters newest first…), so equal rows never swap between refreshes.
//!
//! The sort is applied where the rows are chosen (`rows.rs`), so the row
//! selected and acted on is the row drawn. The jobs view lists a page read
//! from Redis in its own order and is not sorted; nor are the Events
//! (newest first is their point) and Limits screens, or dead-letter groups.

use std::time::SystemTime;

use redq::JobRecord;

use super::{Level, QueueRow, ScheduleInfo, Screen, State, WorkerInfo};
use crate::clock::epoch_ms;

/// A list's sort: the header of its column, and the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    /// The column's header, as drawn.
    pub column: &'static str,
    /// Largest (or latest, or last in the alphabet) first.
    pub descending: bool,
}

impl Sort {
    /// The mark after the header: ▲ ascending, ▼ descending.
    pub fn arrow(self) -> &'static str {
        if self.descending {
            "▼"
        } else {
            "▲"
        }
    }
}

/// What a cell sorts by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum SortKey {
    /// A count, a time (ms), a duration.
    Num(i128),
    /// A name (case-insensitive).
    Text(String),
}

fn text(s: &str) -> SortKey {
    SortKey::Text(s.to_lowercase())
}

fn num(n: impl Into<i128>) -> SortKey {
    SortKey::Num(n.into())
}

/// A time as its epoch ms; none sorts before every time.
fn time(at: Option<SystemTime>) -> SortKey {
    num(at.map_or(-1, |t| epoch_ms(t) as i128))
}

/// Sort `rows` by `sort` (stable), reading each row's key for a column.
pub(super) fn sort_rows<T>(rows: &mut [T], sort: Option<Sort>, key: impl Fn(&T, &str) -> SortKey) {
    let Some(sort) = sort else { return };
    rows.sort_by(|a, b| {
        let order = key(a, sort.column).cmp(&key(b, sort.column));
        if sort.descending {
            order.reverse()
        } else {
            order
        }
    });
}

/// `now` is the time ages are read at, `stats_at` the time rates are
/// (`State::stats_time`).
pub(super) fn queue_key(
    row: &QueueRow,
    column: &str,
    now: SystemTime,
    stats_at: SystemTime,
) -> SortKey {
    let c = &row.counts;
    let rate = |r: f64| num((r * 1000.0) as i64);
    match column {
        "QUEUE" => text(&c.queue),
        "WAITING" => num(c.waiting),
        "SCHED" => num(c.scheduled),
        "DUE" => num(c.due),
        "LEASED" => num(c.leased),
        "BLOCKED" => num(c.blocked),
        "AWAITING" => num(c.awaiting),
        "LAPSED" => num(c.lapsed),
        "HELD" => num(c.held),
        "DEAD" => num(c.dead),
        "DONE/S" => rate(super::metrics::rates(&row.stats, stats_at).0),
        "FAIL/S" => rate(super::metrics::rates(&row.stats, stats_at).1),
        // The age of the longest-ready job: queues with none first.
        "OLDEST" => match c.ready_since() {
            Some(at) => num(crate::clock::age(at, now).as_millis() as i64),
            None => num(-1),
        },
        _ => num(0),
    }
}

pub(super) fn job_key(job: &JobRecord, column: &str) -> SortKey {
    match column {
        "JOB" => text(&job.id),
        "QUEUE" => text(&job.queue),
        "NAME" => text(job.name.as_deref().unwrap_or("")),
        "HOLDER" => num(job.holder.map_or(-1, |(node, instance)| {
            ((node as i128) << 32) | instance as i128
        })),
        "LEFT" => time(job.lease_expires_at),
        "TRIES" => num(job.attempts),
        "DIED" => time(job.died_at),
        _ => num(0),
    }
}

pub(super) fn worker_key(worker: &WorkerInfo, column: &str) -> SortKey {
    match column {
        "WORKER" => text(&worker.id),
        "HOST" => text(&worker.host),
        "STATE" => text(worker.state_text()),
        "WAKE-UPS" => text(worker.wake_ups_text()),
        "VERSION" => text(worker.version_text()),
        "LOST-HANDOFFS" => num(worker.handoffs_lost.map_or(-1, i128::from)),
        "LOST-CLAIMS" => num(worker.claims_lost.map_or(-1, i128::from)),
        "RUNNING" => num(worker.in_flight),
        // Ascending: the freshest heartbeat first.
        "HEARTBEAT" => num(-(epoch_ms(worker.last_heartbeat) as i128)),
        "DONE" => num(worker.processed),
        "FAILED" => num(worker.failed),
        _ => num(0),
    }
}

pub(super) fn schedule_key(schedule: &ScheduleInfo, column: &str) -> SortKey {
    match column {
        "NAME" => text(&schedule.name),
        "QUEUE" => text(&schedule.queue),
        "NEXT" => time(schedule.next_run),
        "LAST" => time(schedule.last_run),
        _ => num(0),
    }
}

impl State {
    /// The columns the current list sorts by, in the order `o` visits them
    /// (headers as drawn; the Queues screen's optional columns only while
    /// shown). Empty: this list is not sorted.
    pub fn sort_columns(&self) -> Vec<&'static str> {
        if self.jobs().is_some() {
            return Vec::new();
        }
        match self.screen() {
            Screen::Queues => {
                let queues = &self.data.queues;
                let now = self.data_time(self.redis_time(self.clock));
                let mut columns = vec!["QUEUE", "WAITING", "SCHED"];
                if queues.iter().any(|q| super::rows::overdue(&q.counts, now)) {
                    columns.push("DUE");
                }
                columns.push("LEASED");
                for (header, shown) in [
                    ("HELD", queues.iter().any(|q| q.counts.held > 0)),
                    ("BLOCKED", queues.iter().any(|q| q.counts.blocked > 0)),
                    ("AWAITING", queues.iter().any(|q| q.counts.awaiting > 0)),
                    ("LAPSED", queues.iter().any(|q| q.counts.lapsed > 0)),
                ] {
                    if shown {
                        columns.push(header);
                    }
                }
                columns.extend(["DEAD", "DONE/S", "FAIL/S", "OLDEST"]);
                columns
            }
            Screen::Leases => vec!["JOB", "QUEUE", "NAME", "HOLDER", "LEFT", "TRIES"],
            Screen::Dead if !self.tabs.dead_grouped => {
                vec!["JOB", "QUEUE", "NAME", "TRIES", "DIED"]
            }
            Screen::Schedules => vec!["NAME", "QUEUE", "NEXT", "LAST"],
            Screen::Workers => {
                let mut columns = vec!["WORKER", "HOST"];
                if self.workers_state_shown() {
                    columns.push("STATE");
                }
                if self.workers_wake_ups_shown() {
                    columns.push("WAKE-UPS");
                }
                if self.workers_version_shown() {
                    columns.push("VERSION");
                }
                columns.extend(["RUNNING", "HEARTBEAT", "DONE", "FAILED"]);
                if self.workers_lost_handoffs_shown() {
                    columns.push("LOST-HANDOFFS");
                }
                if self.workers_lost_claims_shown() {
                    columns.push("LOST-CLAIMS");
                }
                columns
            }
            _ => Vec::new(),
        }
    }

    /// Whether the Workers screen has a STATE column: only while some
    /// worker is quiet, stopping or gone (most of the time all run, and 80
    /// columns are scarce).
    pub fn workers_state_shown(&self) -> bool {
        self.data
            .workers
            .iter()
            .any(|w| w.gone || w.state != redq::worker::WorkerState::Running)
    }

    /// Whether the Workers screen has a WAKE-UPS column: only while some
    /// live worker hears no shard channel (an earlier version, an ACL
    /// without `+ssubscribe`, no subscription at all), which may start
    /// work only at its next poll.
    pub fn workers_wake_ups_shown(&self) -> bool {
        self.data
            .workers
            .iter()
            .any(|w| !w.gone && w.may_miss_wake_ups())
    }

    /// Whether the Workers screen has a LOST-HANDOFFS column: only while
    /// some worker it lists gave back a hand-off whose message never
    /// reached it (its subscription broke or lagged).
    pub fn workers_lost_handoffs_shown(&self) -> bool {
        self.data.workers.iter().any(WorkerInfo::lost_handoffs)
    }

    /// Whether the Workers screen has a LOST-CLAIMS column: only while
    /// some worker it lists gave back a claim's jobs whose reply never
    /// reached it (its connection broke or timed out mid-claim).
    pub fn workers_lost_claims_shown(&self) -> bool {
        self.data.workers.iter().any(WorkerInfo::lost_claims)
    }

    /// Whether the Workers screen has a VERSION column: only while the live
    /// workers run more than one version (a rolling upgrade under way).
    pub fn workers_version_shown(&self) -> bool {
        let mut live = self.data.workers.iter().filter(|w| !w.gone);
        let Some(first) = live.next() else {
            return false;
        };
        live.any(|w| w.version != first.version)
    }

    /// The current list's sort, while its column is shown.
    pub fn sort(&self) -> Option<Sort> {
        self.sort_of(self.screen())
    }

    /// `screen`'s sort, while its column is shown there.
    pub(super) fn sort_of(&self, screen: Screen) -> Option<Sort> {
        if screen != self.screen() {
            // Rows of a screen not shown are never sorted for display.
            return self.tabs.sorts[screen.index()];
        }
        let columns = self.sort_columns();
        self.tabs.sorts[screen.index()].filter(|s| columns.contains(&s.column))
    }

    /// `o`: sort by the next column, ascending; after the last, the
    /// screen's own order again.
    pub(super) fn sort_next(&mut self) {
        let columns = self.sort_columns();
        if columns.is_empty() {
            self.say(Level::Info, "this list keeps its own order");
            return;
        }
        let next = match self.sort() {
            None => Some(columns[0]),
            Some(sort) => columns
                .iter()
                .position(|c| *c == sort.column)
                .and_then(|i| columns.get(i + 1).copied()),
        };
        self.set_sort(next.map(|column| Sort {
            column,
            descending: false,
        }));
    }

    /// `O`: reverse the sort (none yet: the first column, descending).
    pub(super) fn sort_reverse(&mut self) {
        let columns = self.sort_columns();
        let Some(first) = columns.first() else {
            self.say(Level::Info, "this list keeps its own order");
            return;
        };
        let sort = match self.sort() {
            Some(sort) => Sort {
                descending: !sort.descending,
                ..sort
            },
            None => Sort {
                column: first,
                descending: true,
            },
        };
        self.set_sort(Some(sort));
    }

    fn set_sort(&mut self, sort: Option<Sort>) {
        self.tabs.sorts[self.screen().index()] = sort;
        // The selection stays on its row (`reanchor` finds it by key).
        let text = match sort {
            Some(s) => format!(
                "sorted by {} {}, o: next column, O: reverse",
                s.column,
                s.arrow()
            ),
            None => "back to this list's own order".to_owned(),
        };
        self.say(Level::Info, text);
    }
}
