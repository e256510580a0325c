//! Screen 5: the workers, from the driver's worker registry; over shards,
//! one row per worker however many shards list it, with a SHARDS column
//! saying which (`aggregate::workers`).

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::facts;
use super::table::{self, Column, Item, List};
use crate::clock;
use crate::tui::state::rows::WORKER_STALE;
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn workers(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let workers = state.visible_workers();
    let state_shown = state.workers_state_shown();
    let wake_ups_shown = state.workers_wake_ups_shown();
    let version_shown = state.workers_version_shown();
    let lost_handoffs_shown = state.workers_lost_handoffs_shown();
    let lost_claims_shown = state.workers_lost_claims_shown();
    let shards_shown = workers.iter().any(|w| !w.shards.is_empty());
    let rows = workers
        .iter()
        .map(|w| {
            let age = clock::age(w.last_heartbeat, now);
            // A gone worker's row says when it was last seen; its figures
            // are as of then.
            let beat = if w.gone {
                Item::new(format!("last seen {} ago", clock::compact(age)))
            } else {
                Item::new(format!("{} ago", clock::compact(age)))
            };
            let state_cell = Item::new(w.state_text());
            let mut cells = vec![Item::new(facts::worker(w.node, w.instance))];
            if shards_shown {
                // A shard that lost a live worker's heartbeats: warned.
                let cell = Item::new(w.shards_text());
                cells.push(if w.gone || w.gone_shards.is_empty() {
                    cell
                } else {
                    cell.style(theme.warn())
                });
            }
            cells.extend([
                Item::new(&w.host),
                Item::new(w.pid.to_string()),
                Item::new(w.queues.join(",")),
            ]);
            if state_shown {
                cells.push(match w.state {
                    _ if w.gone => state_cell.style(theme.error()),
                    redq::worker::WorkerState::Running => state_cell,
                    _ => state_cell.style(theme.warn()),
                });
            }
            if wake_ups_shown {
                let cell = Item::new(w.wake_ups_text());
                cells.push(if w.may_miss_wake_ups() && !w.gone {
                    cell.style(theme.warn())
                } else {
                    cell
                });
            }
            if version_shown {
                cells.push(Item::new(w.version_text()));
            }
            cells.extend([
                // A gone worker runs nothing: its leases are lapsing, and
                // the count it last reported would read as work under way.
                if w.gone {
                    Item::new("-")
                } else {
                    Item::number(w.in_flight)
                },
                if w.gone || age >= WORKER_STALE {
                    beat.style(theme.warn())
                } else {
                    beat
                },
                Item::number(w.processed),
                Item::number(w.failed),
            ]);
            if lost_handoffs_shown {
                cells.push(lost_cell(w.handoffs_lost, theme));
            }
            if lost_claims_shown {
                cells.push(lost_cell(w.claims_lost, theme));
            }
            cells
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no workers registered".to_owned()];
    if !state.data.workers_known {
        empty.push("this driver version does not report workers yet".to_owned());
    }
    let gone = workers.iter().filter(|w| w.gone).count();
    let title = match gone {
        0 => format!(" Workers ({}) ", workers.len()),
        // How long a gone worker stays listed is the driver's GONE_KEPT.
        n => format!(
            " Workers ({} live, {n} gone in the last {}) ",
            workers.len() - n,
            clock::compact(redq::worker::GONE_KEPT + redq::worker::WORKER_TTL)
        ),
    };
    let mut columns = vec![Column::name("WORKER")];
    // Over shards: which shards list each worker (one row however many).
    if shards_shown {
        columns.push(Column::whole("SHARDS"));
    }
    columns.extend([
        Column::name("HOST"),
        Column::number("PID").optional(1),
        Column::name("QUEUES").optional(2),
    ]);
    // Shown only while some worker is not simply running, like the Queues
    // screen's HELD: the PID, then the queues make way at 80 columns.
    if state_shown {
        columns.push(Column::whole("STATE"));
    }
    // Shown only while some live worker hears no shard channel: it may
    // start work late (redq::worker::WakeUps).
    if wake_ups_shown {
        columns.push(Column::whole("WAKE-UPS"));
    }
    // Shown only while live workers run more than one version.
    if version_shown {
        columns.push(Column::whole("VERSION"));
    }
    columns.extend([
        Column::number("RUNNING"),
        Column::whole("HEARTBEAT").right(),
        Column::number("DONE"),
        Column::number("FAILED"),
    ]);
    // Shown only while some worker lost a hand-off: its subscription broke
    // or lagged (the handoff_lost events name the jobs).
    if lost_handoffs_shown {
        columns.push(Column::number("LOST-HANDOFFS"));
    }
    // Shown only while some worker lost a claim's reply: its connection
    // broke or timed out mid-claim (the claim_lost events name the jobs).
    if lost_claims_shown {
        columns.push(Column::number("LOST-CLAIMS"));
    }
    let list = List {
        title,
        columns,
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw_sorted(frame, area, list, theme, state.sort());
}

/// A worker's count of lost hand-offs or claims: `?` from an earlier
/// version that does not say, in the warning colour above 0.
fn lost_cell<'a>(count: Option<u64>, theme: &Theme) -> Item<'a> {
    match count {
        Some(0) => Item::number(0),
        Some(n) => Item::number(n).style(theme.warn()),
        None => Item::new("?"),
    }
}
