//! Screen 4: the schedules, from the driver's schedule store.

use std::time::{Duration, SystemTime};

use ratatui::layout::Rect;
use ratatui::Frame;

use super::table::{self, Column, Item, List};
use crate::clock;
use crate::tui::state::{ScheduleInfo, State};
use crate::tui::theme::Theme;

pub fn schedules(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let schedules = state.visible_schedules();
    // Over shards, each schedule is stored (and ticked) by one shard; a
    // name two shards both store reads as two rows told apart here.
    let sharded = !state.settings.shards.is_empty();
    let when = |at: Option<SystemTime>| at.map(|t| clock::short(t, now)).unwrap_or("—".into());
    let rows = schedules
        .iter()
        .map(|s| {
            let mut cells = vec![
                Item::new(&s.name),
                Item::new(&s.queue),
                Item::new(&s.expression),
                Item::new(&s.timezone),
                next_cell(s, now, theme),
                Item::new(when(s.last_run)),
                if s.paused {
                    Item::new("PAUSED").style(theme.warn())
                } else {
                    Item::new("")
                },
            ];
            if sharded {
                cells.insert(1, Item::new(s.shard.map_or("?".into(), |i| i.to_string())));
            }
            cells
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no schedules".to_owned()];
    if !state.data.schedules_known {
        empty.push("this driver version does not store recurring schedules yet".to_owned());
    }
    let mut list = List {
        // NEXT and LAST sit beside each schedule's own time zone, so the
        // title says which zone they are shown in.
        title: format!(" Schedules ({}), NEXT and LAST in UTC ", schedules.len()),
        columns: vec![
            Column::name("NAME"),
            Column::name("QUEUE"),
            Column::name("EXPRESSION"),
            Column::name("TIMEZONE"),
            Column::whole("NEXT"),
            Column::whole("LAST"),
            Column::whole(""),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    if sharded {
        list.columns.insert(1, Column::number("SHARD"));
    }
    table::draw_sorted(frame, area, list, theme, state.sort());
}

/// A tick this late is overdue. Schedulers poll at most a second apart by
/// default (`DEFAULT_SCHEDULER_MAX_IDLE`), but that is configurable: the
/// margin keeps a slower poll from reading as a dead one.
const TICK_OVERDUE_AFTER: Duration = Duration::from_secs(30);

/// A schedule's next tick, marked when its time passed with no tick fired:
/// ticks fire through schedulers, so one overdue means none is running.
fn next_cell<'a>(s: &ScheduleInfo, now: SystemTime, theme: &Theme) -> Item<'a> {
    let Some(next) = s.next_run else {
        return Item::new("—");
    };
    let text = clock::short(next, now);
    let overdue = !s.paused && clock::age(next, now) >= TICK_OVERDUE_AFTER;
    match overdue {
        true => Item::new(format!("{text} overdue")).style(theme.warn()),
        false => Item::new(text),
    }
}
