//! Screen 1: every queue with its sizes, throughput and warnings.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row};
use ratatui::Frame;

use super::table::{self, num, List};
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::state::metrics::{rate_text, rates, series, sparkline};
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Columns per sparkline at 100 columns (each covers 90 s of the 15
/// minutes); wider terminals get longer sparklines, up to 30 columns.
const SPARK: usize = 10;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let queues = state.visible_queues();
    let spark = SPARK + (area.width.saturating_sub(100) / 4).min(20) as usize;
    let rows = queues
        .iter()
        .map(|row| {
            let c = &row.counts;
            let (ok_rate, fail_rate) = rates(&row.stats, now);
            let ok = sparkline(&series(&row.stats, now, spark, |b| b.processed));
            let failed = sparkline(&series(&row.stats, now, spark, |b| b.failed));
            let oldest = match c.head_enqueued_at {
                Some(at) if c.waiting > 0 => clock::compact(clock::age(at, now)),
                _ => "—".to_owned(),
            };
            let badges: Vec<Span> = state
                .badges(row, now)
                .into_iter()
                .flat_map(|b| [Span::styled(b.text(), theme.warn()), Span::raw(" ")])
                .collect();
            let dead = if c.dead > 0 {
                num(c.dead).style(theme.error())
            } else {
                num(0)
            };
            Row::new(vec![
                Cell::from(truncate(&inert(&c.queue), 14)),
                num(c.waiting),
                num(c.scheduled),
                num(c.leased),
                dead,
                Cell::from(Line::from(rate_text(ok_rate)).right_aligned()),
                Cell::from(Line::from(rate_text(fail_rate)).right_aligned()),
                Cell::from(Span::styled(ok, theme.spark_ok())),
                Cell::from(Span::styled(failed, theme.spark_fail())),
                Cell::from(Line::from(oldest).right_aligned()),
                Cell::from(Line::from(badges)),
            ])
        })
        .collect::<Vec<_>>();
    let empty = if state.filter().is_empty() {
        vec![
            "no queues yet".to_owned(),
            format!(
                "nothing was ever enqueued in namespace {}",
                inert(&state.settings.namespace)
            ),
        ]
    } else {
        vec!["no queue matches the filter".to_owned()]
    };
    let list = List {
        title: format!(" Queues ({}) ", queues.len()),
        header: vec![
            "QUEUE",
            "WAITING",
            "SCHED",
            "LEASED",
            "DEAD",
            "DONE/S",
            "FAIL/S",
            "DONE 15m",
            "FAILED 15m",
            "OLDEST",
            "",
        ],
        widths: vec![
            Constraint::Length(14),
            Constraint::Length(7),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(spark as u16),
            Constraint::Length(spark as u16),
            Constraint::Length(6),
            Constraint::Min(6),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw(frame, area, list, theme);
}
