//! Screen 2: held leases, soonest to lapse first.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::facts;
use super::table::{self, Column, Item, List};
use crate::clock;
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let leases = state.visible_leases();
    let lapsed = leases
        .iter()
        .filter(|j| j.lease_expires_at.is_some_and(|at| at <= now))
        .count();
    let shard = table::ShardColumn::new(&state.settings.shards);
    let rows = leases
        .iter()
        .map(|job| {
            let (holder, host) = match job.holder {
                // A holder the registry lists as gone will not finish the
                // job: its lease lapses (or has), and is reclaimed. Said on
                // HOLDER, which stays at 80 columns where HOST goes first:
                // on HOST a narrow terminal hid it, and a dead worker's
                // leases read as healthy until they lapsed.
                Some((node, instance)) => {
                    let holder = facts::worker(node, instance);
                    match state.worker_for(node, instance) {
                        Some(w) if w.gone => (
                            Item::new(format!("{holder} (gone)")).style(theme.warn()),
                            Item::new(&w.host),
                        ),
                        Some(w) => (Item::new(holder), Item::new(&w.host)),
                        None => (Item::new(holder), Item::new("—")),
                    }
                }
                None => (Item::new("—"), Item::new("—")),
            };
            let left = match job.lease_expires_at {
                Some(at) if at > now => {
                    Item::new(clock::compact(at.duration_since(now).unwrap_or_default()))
                }
                Some(at) => Item::new(format!(
                    "LAPSED {} ago",
                    clock::compact(clock::age(at, now))
                ))
                .style(theme.warn()),
                None => Item::new("—"),
            };
            shard.cells(
                vec![
                    Item::new(&job.id),
                    Item::new(&job.queue),
                    Item::new(job.name.as_deref().unwrap_or("—")),
                    holder,
                    host,
                    left,
                    Item::new(facts::tries(job.attempts, job.max_attempts)),
                ],
                &job.namespace,
            )
        })
        .collect::<Vec<_>>();
    let empty = if !state.data.leases_loaded {
        vec![super::not_loaded(state, "leases")]
    } else if state.filter().is_empty() {
        vec![
            "no leases held".to_owned(),
            "no worker is running a job right now".to_owned(),
        ]
    } else {
        vec!["no lease matches the filter".to_owned()]
    };
    let mut title = format!(" Leases ({}) ", leases.len());
    if lapsed > 0 {
        title.push_str(&format!("— {lapsed} lapsed, not yet reclaimed "));
    }
    let mut list = List {
        title,
        columns: vec![
            Column::id("JOB"),
            Column::name("QUEUE"),
            Column::name("NAME"),
            Column::name("HOLDER"),
            Column::name("HOST").optional(1),
            Column::whole("LEFT"),
            Column::number("TRIES"),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    shard.add_to(&mut list);
    table::draw_sorted(frame, area, list, theme, state.sort());
}
