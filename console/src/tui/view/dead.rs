//! Screen 3: dead letters, one per row or grouped by error signature.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row};
use ratatui::Frame;

use super::table::{self, List};
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::source::DEAD_WINDOW;
use crate::tui::state::{plural, State};
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    if state.group_dead {
        groups(frame, area, state, theme, now);
        return;
    }
    let dead = state.visible_dead();
    let idw = table::id_width(area);
    let fixed = [idw, 11, 16, 5, 11];
    let shard = table::ShardColumn::new(&state.settings.shards);
    let errw = table::rest_width(area, &fixed).saturating_sub(shard.taken());
    let rows = dead
        .iter()
        .map(|job| {
            let died = job
                .died_at
                .map(|at| clock::short(at, now))
                .unwrap_or_else(|| "—".into());
            let attempts = table::tries(job.attempts, job.max_attempts);
            Row::new(shard.cells(
                vec![
                table::id_cell(&job.id, idw),
                Cell::from(truncate(&inert(&job.queue), 11)),
                Cell::from(truncate(&inert(job.name.as_deref().unwrap_or("—")), 16)),
                Cell::from(Line::from(attempts).right_aligned()),
                Cell::from(died),
                Cell::from(truncate(
                    &inert(job.last_error.as_deref().unwrap_or("—")),
                    errw,
                ))
                .style(theme.error()),
                ],
                &job.namespace,
            ))
        })
        .collect::<Vec<_>>();
    let mut list = List {
        title: title(state, dead.len(), "dead letter"),
        header: vec!["JOB", "QUEUE", "NAME", "TRIES", "DIED", "ERROR"],
        widths: fixed
            .iter()
            .map(|w| Constraint::Length(*w))
            .chain([Constraint::Min(10)])
            .collect(),
        rows,
        selected: state.cursor().index,
        empty: empty(state),
    };
    shard.add_to(&mut list);
    table::draw(frame, area, list, theme);
}

fn title(state: &State, shown: usize, what: &str) -> String {
    let total: u64 = state.data.queues.iter().map(|q| q.counts.dead).sum();
    let mut title = format!(" Dead letters ({total})");
    if state.group_dead || !state.filter().is_empty() {
        title.push_str(&format!(": {}", plural(shown, what)));
    }
    if !state.filter().is_empty() {
        title.push_str(" matching the filter");
    }
    if state.data.dead.truncated {
        title.push_str(&format!(
            "; the newest {DEAD_WINDOW} of each queue are loaded"
        ));
    }
    title.push(' ');
    title
}

fn empty(state: &State) -> Vec<String> {
    if !state.data.dead_loaded {
        vec!["loading dead letters…".to_owned()]
    } else if state.filter().is_empty() {
        vec![
            "no dead letters".to_owned(),
            "jobs land here when their attempts or retry window are spent".to_owned(),
        ]
    } else {
        vec!["no dead letter matches the filter".to_owned()]
    }
}

fn groups(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let groups = state.dead_groups();
    let sigw = table::rest_width(area, &[6, 20, 11]);
    let rows = groups
        .iter()
        .map(|g| {
            let newest = g
                .newest()
                .map(|at| clock::short(at, now))
                .unwrap_or_else(|| "—".into());
            Row::new(vec![
                Cell::from(Line::from(g.jobs.len().to_string()).right_aligned()),
                Cell::from(truncate(&inert(&g.signature), sigw)).style(theme.error()),
                Cell::from(truncate(&inert(&g.queues.join(", ")), 20)),
                Cell::from(newest),
            ])
        })
        .collect::<Vec<_>>();
    let list = List {
        title: title(state, groups.len(), "error signature"),
        header: vec!["COUNT", "ERROR SIGNATURE", "QUEUES", "NEWEST"],
        widths: vec![
            Constraint::Length(6),
            Constraint::Min(30),
            Constraint::Length(20),
            Constraint::Length(11),
        ],
        rows,
        selected: state.cursor().index,
        empty: empty(state),
    };
    table::draw(frame, area, list, theme);
}
