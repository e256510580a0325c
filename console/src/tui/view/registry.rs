//! Screens 4 and 5: schedules and workers, from the driver's registries.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row};
use ratatui::Frame;

use super::table::{self, num, List};
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::state::rows::WORKER_STALE;
use crate::tui::state::State;
use crate::tui::theme::Theme;

pub fn schedules(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let schedules = state.visible_schedules();
    let when = |at: Option<SystemTime>| at.map(|t| clock::short(t, now)).unwrap_or("—".into());
    let rows = schedules
        .iter()
        .map(|s| {
            Row::new(vec![
                Cell::from(truncate(&inert(&s.name), 20)),
                Cell::from(truncate(&inert(&s.queue), 12)),
                Cell::from(truncate(&inert(&s.expression), 17)),
                Cell::from(truncate(&inert(&s.timezone), 13)),
                Cell::from(when(s.next_run)),
                Cell::from(when(s.last_run)),
                if s.paused {
                    Cell::from("PAUSED").style(theme.warn())
                } else {
                    Cell::from("")
                },
            ])
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no schedules".to_owned()];
    if !state.data.schedules_known {
        empty.push("this driver version does not store recurring schedules yet".to_owned());
    }
    let list = List {
        title: format!(" Schedules ({}) ", schedules.len()),
        header: vec![
            "NAME",
            "QUEUE",
            "EXPRESSION",
            "TIMEZONE",
            "NEXT",
            "LAST",
            "",
        ],
        widths: vec![
            Constraint::Length(20),
            Constraint::Length(12),
            Constraint::Length(17),
            Constraint::Length(13),
            Constraint::Length(11),
            Constraint::Length(11),
            Constraint::Min(6),
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
            let beat =
                Cell::from(Line::from(format!("{} ago", clock::compact(age))).right_aligned());
            Row::new(vec![
                Cell::from(table::worker_id(w.node, w.instance)),
                Cell::from(truncate(&inert(&w.host), 14)),
                Cell::from(Line::from(w.pid.to_string()).right_aligned()),
                Cell::from(truncate(&inert(&w.queues.join(",")), 18)),
                num(w.in_flight),
                if age >= WORKER_STALE {
                    beat.style(theme.warn())
                } else {
                    beat
                },
                num(w.processed),
                num(w.failed),
            ])
        })
        .collect::<Vec<_>>();
    let mut empty = vec!["no workers registered".to_owned()];
    if !state.data.workers_known {
        empty.push("this driver version does not report workers yet".to_owned());
    }
    let list = List {
        title: format!(" Workers ({}) ", workers.len()),
        header: vec![
            "WORKER",
            "HOST",
            "PID",
            "QUEUES",
            "RUNNING",
            "HEARTBEAT",
            "DONE",
            "FAILED",
        ],
        widths: vec![
            Constraint::Length(18),
            Constraint::Length(14),
            Constraint::Length(7),
            Constraint::Length(18),
            Constraint::Length(7),
            Constraint::Length(10),
            Constraint::Length(8),
            Constraint::Min(6),
        ],
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw(frame, area, list, theme);
}
