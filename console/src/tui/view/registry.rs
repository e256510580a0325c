//! Screen 4: the schedules, from the driver's schedule store.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::Frame;
use redq::Operator;

use super::table::{self, Column, Item, List};
use crate::clock;
use crate::text::inert;
use crate::tui::state::{ScheduleInfo, State};
use crate::tui::theme::{Theme, SELECTED_MARKER};

pub fn schedules(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let schedules = state.visible_schedules();
    // Over shards, each schedule is stored (and ticked) by one shard; a
    // name two shards both store reads as two rows told apart here.
    let sharded = !state.settings.shards.is_empty();
    let when = |at: Option<SystemTime>| at.map(|t| clock::short(t, now)).unwrap_or("—".into());
    let mut rows: Vec<Vec<(String, Option<Style>)>> = schedules
        .iter()
        .map(|s| {
            let mut cells = vec![
                (s.name.clone(), None),
                (s.queue.clone(), None),
                (s.expression.clone(), None),
                (s.timezone.clone(), None),
                next_cell(s, now, theme),
                (local_next(s), None),
                (when(s.last_run), None),
                state_cell(s, theme),
            ];
            if sharded {
                cells.insert(1, (s.shard.map_or("?".into(), |i| i.to_string()), None));
            }
            cells
        })
        .collect();
    let mut columns = vec![
        Column::name("NAME"),
        Column::name("QUEUE"),
        Column::name("EXPRESSION"),
        Column::name("TIMEZONE"),
        Column::whole("NEXT"),
        Column::whole(LOCAL),
        Column::whole("LAST"),
        Column::whole(""),
    ];
    if sharded {
        columns.insert(1, Column::number("SHARD"));
    }
    // LOCAL only where every other cell stays whole: it repeats NEXT, so
    // it must not cost a name its middle.
    if !all_whole(area.width, &columns, &rows) {
        let at = columns.iter().position(|c| c.header == LOCAL).unwrap_or(0);
        columns.remove(at);
        for row in &mut rows {
            row.remove(at);
        }
    }
    let rows = rows
        .into_iter()
        .map(|row| {
            row.into_iter()
                .map(|(text, style)| match style {
                    Some(style) => Item::new(text).style(style),
                    None => Item::new(text),
                })
                .collect()
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no schedules".to_owned()];
    if !state.data.schedules_known {
        empty.push("this driver version does not store recurring schedules yet".to_owned());
    }
    let list = List {
        // NEXT and LAST sit beside each schedule's own time zone, so the
        // title says which zone they are shown in.
        title: match columns.iter().any(|c| c.header == LOCAL) {
            true => format!(
                " Schedules ({}), NEXT and LAST in UTC, LOCAL in each TIMEZONE ",
                schedules.len()
            ),
            false => format!(" Schedules ({}), NEXT and LAST in UTC ", schedules.len()),
        },
        columns,
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw_sorted(frame, area, list, theme, state.sort());
}

/// The header of NEXT on each schedule's own wall clock.
const LOCAL: &str = "LOCAL";

/// Whether every column fits whole, as wide as its header and widest
/// cell, in a bordered list `width` columns wide (one space between
/// columns, the selection marker before them).
fn all_whole(width: u16, columns: &[Column], rows: &[Vec<(String, Option<Style>)>]) -> bool {
    let room = usize::from(width)
        .saturating_sub(2)
        .saturating_sub(SELECTED_MARKER.chars().count());
    let wanted: usize = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|(text, _)| inert(text).chars().count())
                .chain([c.header.chars().count() + 1])
                .max()
                .unwrap_or(0)
        })
        .sum();
    wanted + columns.len().saturating_sub(1) <= room
}

/// A schedule's next tick, marked when its time passed with no tick fired
/// ([`ScheduleInfo::overdue_by`], the rule `redq schedules` marks by too):
/// ticks fire through schedulers, so one overdue means none is running.
fn next_cell(s: &ScheduleInfo, now: SystemTime, theme: &Theme) -> (String, Option<Style>) {
    let Some(next) = s.next_run else {
        return ("—".to_owned(), None);
    };
    let text = clock::short(next, now);
    match s.overdue_by(now) {
        Some(_) => (format!("{text} overdue"), Some(theme.warn())),
        None => (text, None),
    }
}

/// The next tick on the schedule's own wall clock, `MM-DD HH:MM` (the
/// zone is the TIMEZONE column beside it): what the expression says, so
/// `0 2 * * *` in New York reads `02:00` here.
fn local_next(s: &ScheduleInfo) -> String {
    s.next_run
        .and_then(|next| Operator::wall_clock(next, &s.timezone))
        // `2026-12-08 02:00:00 -05:00` → `12-08 02:00`.
        .and_then(|local| local.get(5..16).map(str::to_owned))
        .unwrap_or_else(|| "—".to_owned())
}

/// PAUSED or ENDED; nothing for an active schedule.
fn state_cell(s: &ScheduleInfo, theme: &Theme) -> (String, Option<Style>) {
    if s.paused {
        ("PAUSED".to_owned(), Some(theme.warn()))
    } else if s.ended() {
        ("ENDED".to_owned(), Some(theme.dim()))
    } else {
        (String::new(), None)
    }
}
