//! Screens 4 and 5: schedules and workers, from the driver's registries.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::facts;
use super::table::{self, Column, Item, List};
use crate::clock;
use crate::tui::state::rows::WORKER_STALE;
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn schedules(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let schedules = state.visible_schedules();
    let when = |at: Option<SystemTime>| at.map(|t| clock::short(t, now)).unwrap_or("—".into());
    let rows = schedules
        .iter()
        .map(|s| {
            vec![
                Item::new(&s.name),
                Item::new(&s.queue),
                Item::new(&s.expression),
                Item::new(&s.timezone),
                Item::new(when(s.next_run)),
                Item::new(when(s.last_run)),
                if s.paused {
                    Item::new("PAUSED").style(theme.warn())
                } else {
                    Item::new("")
                },
            ]
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no schedules".to_owned()];
    if !state.data.schedules_known {
        empty.push("this driver version does not store recurring schedules yet".to_owned());
    }
    let list = List {
        title: format!(" Schedules ({}) ", schedules.len()),
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
    table::draw(frame, area, list, theme);
}

pub fn workers(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let workers = state.visible_workers();
    let rows = workers
        .iter()
        .map(|w| {
            let age = clock::age(w.last_heartbeat, now);
            let beat = Item::new(format!("{} ago", clock::compact(age)));
            vec![
                Item::new(facts::worker(w.node, w.instance)),
                Item::new(&w.host),
                Item::new(w.pid.to_string()),
                Item::new(w.queues.join(",")),
                Item::number(w.in_flight),
                if age >= WORKER_STALE {
                    beat.style(theme.warn())
                } else {
                    beat
                },
                Item::number(w.processed),
                Item::number(w.failed),
            ]
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no workers registered".to_owned()];
    if !state.data.workers_known {
        empty.push("this driver version does not report workers yet".to_owned());
    }
    let list = List {
        title: format!(" Workers ({}) ", workers.len()),
        columns: vec![
            Column::name("WORKER"),
            Column::name("HOST"),
            Column::number("PID"),
            Column::name("QUEUES"),
            Column::number("RUNNING"),
            Column::whole("HEARTBEAT").right(),
            Column::number("DONE"),
            Column::number("FAILED"),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw(frame, area, list, theme);
}
