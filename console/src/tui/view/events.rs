//! Screen 6: the event feed (dead letters and whatever else the driver logs).

use std::time::SystemTime;

use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row};
use ratatui::Frame;

use super::table::{self, List};
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let events = state.visible_events();
    let idw = table::id_width(area);
    let fixed = [11, 6, 12, idw, 16, 5];
    let shard = table::ShardColumn::new(&state.settings.shards);
    let errw = table::rest_width(area, &fixed).saturating_sub(shard.taken());
    let rows = events
        .iter()
        .map(|e| {
            let kind = Cell::from(truncate(&inert(&e.kind), 6));
            // The job id is the first column the shard qualifies: the
            // SHARD column goes after TIME here, as after JOB elsewhere.
            Row::new(shard.cells(
                vec![
                    Cell::from(clock::short(e.at, now)),
                    if e.kind == "dead" {
                        kind.style(theme.error())
                    } else {
                        kind
                    },
                    Cell::from(truncate(&inert(&e.queue), 12)),
                    table::id_cell(&e.job_id, idw),
                    Cell::from(truncate(&inert(e.name.as_deref().unwrap_or("—")), 16)),
                    Cell::from(Line::from(e.attempts.to_string()).right_aligned()),
                    Cell::from(truncate(&inert(&e.error), errw)),
                ],
                &e.namespace,
            ))
        })
        .collect::<Vec<_>>();
    let empty = if state.filter().is_empty() {
        vec![
            "no events yet".to_owned(),
            "dead letters are logged here as they happen".to_owned(),
        ]
    } else {
        vec!["no event matches the filter".to_owned()]
    };
    let mut list = List {
        title: format!(" Events: latest {} ", events.len()),
        header: vec!["TIME", "KIND", "QUEUE", "JOB", "NAME", "TRIES", "ERROR"],
        widths: fixed
            .iter()
            .map(|w| Constraint::Length(*w))
            .chain([Constraint::Min(10)])
            .collect(),
        rows,
        selected: state.cursor().index,
        empty,
    };
    shard.add_to(&mut list);
    table::draw(frame, area, list, theme);
}
