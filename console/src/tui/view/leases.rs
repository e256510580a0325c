//! Screen 2: held leases, soonest to lapse first.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Cell, Row};
use ratatui::Frame;

use super::table::{self, List};
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let leases = state.visible_leases();
    let idw = table::id_width(area);
    let lapsed = leases
        .iter()
        .filter(|j| j.lease_expires_at.is_some_and(|at| at <= now))
        .count();
    let shard = table::ShardColumn::new(&state.settings.shards);
    let rows = leases
        .iter()
        .map(|job| {
            let holder = match job.holder {
                Some((node, instance)) => {
                    let host = state
                        .worker_for(node, instance)
                        .map(|w| format!(" {}", inert(&w.host)))
                        .unwrap_or_default();
                    format!("{}{host}", table::worker_id(node, instance))
                }
                None => "—".to_owned(),
            };
            let left = match job.lease_expires_at {
                Some(at) if at > now => {
                    Cell::from(clock::compact(at.duration_since(now).unwrap_or_default()))
                }
                Some(at) => Cell::from(format!(
                    "LAPSED {} ago",
                    clock::compact(clock::age(at, now))
                ))
                .style(theme.warn()),
                None => Cell::from("—"),
            };
            let attempts = table::tries(job.attempts, job.max_attempts);
            Row::new(shard.cells(
                vec![
                    table::id_cell(&job.id, idw),
                    Cell::from(truncate(&inert(&job.queue), 12)),
                    Cell::from(truncate(&inert(job.name.as_deref().unwrap_or("—")), 16)),
                    Cell::from(truncate(&holder, 28)),
                    left,
                    Cell::from(attempts),
                ],
                &job.namespace,
            ))
        })
        .collect::<Vec<_>>();
    let empty = if !state.data.leases_loaded {
        vec!["loading leases…".to_owned()]
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
        header: vec![
            "JOB",
            "QUEUE",
            "NAME",
            "HOLDER (NODE-INSTANCE HOST)",
            "LEFT",
            "TRIES",
        ],
        widths: vec![
            Constraint::Length(idw),
            Constraint::Length(12),
            Constraint::Length(16),
            Constraint::Length(28),
            Constraint::Length(15),
            Constraint::Min(5),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    shard.add_to(&mut list);
    table::draw(frame, area, list, theme);
}
