//! Screen 3: dead letters, one per row or grouped by error signature.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::facts;
use super::table::{self, Column, Item, List};
use crate::clock;
use crate::tui::source::{DEAD_CENSUS_BOUND, DEAD_WINDOW};
use crate::tui::state::{plural, State};
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    if state.tabs.dead_grouped {
        groups(frame, area, state, theme, now);
        return;
    }
    let dead = state.visible_dead();
    let shard = table::ShardColumn::new(&state.settings.shards);
    let rows = dead
        .iter()
        .map(|job| {
            let died = job
                .died_at
                .map(|at| clock::short(at, now))
                .unwrap_or_else(|| "—".into());
            shard.cells(
                vec![
                    Item::new(&job.id),
                    Item::new(&job.queue),
                    Item::new(job.name.as_deref().unwrap_or("—")),
                    Item::new(facts::tries(job.attempts, job.max_attempts)),
                    Item::new(died),
                    Item::new(job.last_error.as_deref().unwrap_or("—")).style(theme.error()),
                ],
                &job.namespace,
            )
        })
        .collect::<Vec<_>>();
    let mut list = List {
        title: title(state, dead.len(), "dead letter"),
        columns: vec![
            Column::id("JOB"),
            Column::name("QUEUE"),
            Column::name("NAME"),
            Column::number("TRIES"),
            Column::whole("DIED"),
            Column::text("ERROR"),
        ],
        rows,
        selected: state.cursor().index,
        empty: empty(state),
    };
    shard.add_to(&mut list);
    table::draw_sorted(frame, area, list, theme, state.sort());
}

fn title(state: &State, shown: usize, what: &str) -> String {
    let total: u64 = state.data.queues.iter().map(|q| q.counts.dead).sum();
    let mut title = format!(" Dead letters ({total})");
    if state.tabs.dead_grouped || !state.filter().is_empty() {
        title.push_str(&format!(": {}", plural(shown, what)));
    }
    if !state.filter().is_empty() {
        title.push_str(" matching the filter");
    }
    if state.tabs.dead_grouped {
        // The groups count every dead letter, up to a bound a refresh.
        let cut: Vec<&str> = state
            .data
            .dead
            .groups
            .iter()
            .filter(|c| !c.complete)
            .map(|c| c.queue.as_str())
            .collect();
        if !cut.is_empty() {
            title.push_str(&format!(
                "; ≥: counted over the newest {} dead letters of {}",
                table::group_digits(DEAD_CENSUS_BOUND as u64),
                crate::text::inert(&cut.join(", "))
            ));
        }
    } else if state.data.dead.truncated {
        title.push_str(&format!(
            "; the newest {DEAD_WINDOW} of each queue are loaded"
        ));
    }
    for (queue, bound) in &state.data.dead.bounds {
        title.push_str(&format!(
            "; {} {}",
            crate::text::inert(queue),
            bound_words(bound)
        ));
    }
    title.push(' ');
    title
}

/// A queue's dead-letter bound in a title: `kept ≤ 10,000, 30d`.
fn bound_words(bound: &redq::kept::DeadBound) -> String {
    let mut parts = Vec::new();
    if let Some(n) = bound.count_bound() {
        parts.push(format!("≤ {}", table::group_digits(n)));
    }
    if let Some(age) = bound.age_bound() {
        parts.push(clock::as_flag(age));
    }
    format!("kept {}", parts.join(", "))
}

fn empty(state: &State) -> Vec<String> {
    if !state.data.dead_loaded {
        vec![super::not_loaded(state, "dead letters")]
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
    let rows = groups
        .iter()
        .map(|g| {
            let newest = g
                .newest
                .map(|at| clock::short(at, now))
                .unwrap_or_else(|| "—".into());
            vec![
                match g.complete {
                    true => Item::number(g.count),
                    false => Item::new(format!("≥{}", table::group_digits(g.count))),
                },
                Item::new(&g.signature).style(theme.error()),
                Item::new(g.queues.join(", ")),
                Item::new(newest),
            ]
        })
        .collect::<Vec<_>>();
    let list = List {
        title: title(state, groups.len(), "error signature"),
        columns: vec![
            Column::number("COUNT"),
            Column::text("ERROR SIGNATURE"),
            Column::name("QUEUES"),
            Column::whole("NEWEST"),
        ],
        rows,
        selected: state.cursor().index,
        empty: empty(state),
    };
    table::draw(frame, area, list, theme);
}
