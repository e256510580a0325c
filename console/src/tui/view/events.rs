//! Screen 6: the event feed (dead letters and whatever else the driver logs).

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::facts;
use super::table::{self, Column, Item, List};
use crate::clock;
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let events = state.visible_events();
    let shard = table::ShardColumn::new(&state.settings.shards);
    let rows = events
        .iter()
        .map(|e| {
            let kind = Item::new(&e.kind);
            // The job id is the first column the shard qualifies: the
            // SHARD column goes after TIME here, as after JOB elsewhere.
            shard.cells(
                vec![
                    Item::new(clock::short(e.at, now)),
                    if e.kind == "dead" {
                        kind.style(theme.error())
                    } else {
                        kind
                    },
                    Item::new(&e.queue),
                    Item::new(&e.job_id),
                    Item::new(e.name.as_deref().unwrap_or("—")),
                    Item::new(facts::tries(e.attempts, None)),
                    Item::new(&e.error),
                ],
                &e.namespace,
            )
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
        columns: vec![
            Column::whole("TIME"),
            Column::name("KIND"),
            Column::name("QUEUE"),
            Column::id("JOB"),
            Column::name("NAME").optional(1),
            Column::number("TRIES"),
            Column::text("ERROR"),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    shard.add_to(&mut list);
    table::draw(frame, area, list, theme);
}
