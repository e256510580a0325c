//! Screen 7: flow control. One row per limiter (a queue's own limit, its
//! each-key default, then its keys), with its use now and the jobs it
//! holds back; Enter lists a queue's held jobs.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::table::{self, Column, Item, List};
use crate::flow::LimiterRow;
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let limiters = state.visible_limits();
    // A paused queue starts nothing, so its limiters sit idle with jobs held
    // behind them: said on its rows, or a free limiter with a growing held
    // count reads as a stuck one while the cause is on another screen.
    let paused: Vec<&str> = state
        .data
        .queues
        .iter()
        .filter(|q| q.counts.paused)
        .map(|q| q.counts.queue.as_str())
        .collect();
    let rows = limiters
        .iter()
        .map(|row| cells(row, paused.contains(&row.queue.as_str()), theme, now))
        .collect::<Vec<_>>();
    let held: u64 = limiters.iter().filter_map(|r| r.held_in_all).sum();
    let paused_shown = paused
        .iter()
        .filter(|q| limiters.iter().any(|r| r.queue == **q))
        .count() as u64;
    let paused_note = match paused_shown {
        0 => String::new(),
        n => format!(", {} paused", crate::output::count(n, "queue", "queues")),
    };
    let empty = if !state.data.limits_loaded {
        vec![super::not_loaded(state, "limits")]
    } else if state.filter().is_empty() {
        vec![
            "no limits set and no job with a limit key".to_owned(),
            "redq limits set QUEUE --concurrency N --rate 100/1s sets one".to_owned(),
        ]
    } else {
        vec!["no limit matches the filter".to_owned()]
    };
    let list = List {
        title: format!(
            " Limits ({}), {} held{paused_note} ",
            limiters.len(),
            crate::output::count(held, "job", "jobs")
        ),
        columns: vec![
            Column::name("QUEUE"),
            Column::whole("SCOPE"),
            Column::name("KEY"),
            Column::whole("LIMIT"),
            Column::number("IN USE"),
            Column::number("STARTED"),
            Column::number("HELD"),
            Column::whole("PUSHED BACK"),
            // Left out at 80 columns, where the limit itself must stay whole.
            Column::text("WHY").optional(0),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw(frame, area, list, theme);
}

/// A limiter's cells: what is at its bound, holds jobs or is pushed back
/// stands out, and so does a queue that is paused.
fn cells<'a>(row: &'a LimiterRow, paused: bool, theme: &Theme, now: SystemTime) -> Vec<Item<'a>> {
    let full = match (row.leased, row.limit.concurrency) {
        (Some(n), Some(max)) => n >= u64::from(max),
        _ => false,
    };
    let rate_full = match (row.started, row.limit.rate) {
        (Some(n), Some(rate)) => n >= u64::from(rate.max),
        _ => false,
    };
    let pushed = row.pushed_back_until.is_some_and(|until| until > now);
    let warn_if = |item: Item<'a>, on: bool| if on { item.style(theme.warn()) } else { item };
    let queue = match paused {
        true => Item::new(format!("{} (paused)", row.queue)).style(theme.warn()),
        false => Item::new(&row.queue),
    };
    vec![
        queue,
        Item::new(row.scope_text()),
        Item::new(row.key_text()),
        Item::new(row.limit_text()),
        warn_if(Item::new(row.in_use_text()), full),
        warn_if(Item::new(row.started_text()), rate_full),
        warn_if(Item::new(row.held_text()), row.held.is_some_and(|n| n > 0)),
        warn_if(Item::new(row.pushed_back_text(now)), pushed),
        Item::new(row.why_text()),
    ]
}
