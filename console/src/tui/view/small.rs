//! A terminal below [`MIN_SIZE`] (a tmux split beside a shell during an
//! incident): not the screens, but what an operator needs at a glance —
//! whether Redis answers, what is wrong with the server, and each queue's
//! backlog with its warnings — and how large the full console needs it.

use std::time::SystemTime;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{chrome, MIN_SIZE};
use crate::text::{inert, truncate};
use crate::tui::state::rows::Badge;
use crate::tui::state::{Connection, State};
use crate::tui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let banner = matches!(state.connection, Connection::Reconnecting { .. });
    let notices = state.server_notices();
    let notice_rows = chrome::server_notice_rows(&notices, area.width).min(area.height / 3);
    let [title, banner_area, notices_area, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(u16::from(banner)),
        Constraint::Length(notice_rows),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    chrome::title(frame, title, state, theme, now);
    if banner {
        chrome::banner(frame, banner_area, state, theme);
    }
    chrome::server_notices(frame, notices_area, &notices, theme);
    frame.render_widget(
        Paragraph::new(queue_lines(state, theme, state.data_time(now), body.width)),
        body,
    );
    let hint = format!(
        "{}×{}: the full console needs {}×{} · q quits",
        area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
    );
    frame.render_widget(
        Paragraph::new(truncate(&hint, area.width as usize)).style(theme.dim()),
        footer,
    );
}

/// The most of a queue's name shown (the counts and badges matter more).
const NAME_MAX: usize = 24;

/// One line a queue: its name, waiting, leased and dead counts, and its
/// badges (NO WORKER, LAPSED, …) in the warning colour.
fn queue_lines<'a>(state: &State, theme: &Theme, now: SystemTime, width: u16) -> Vec<Line<'a>> {
    let queues = state.visible_queues();
    if queues.is_empty() {
        let said = match state.data.loaded {
            true => "no queues",
            false => "queues not loaded yet",
        };
        return vec![Line::styled(said.to_owned(), theme.dim())];
    }
    let names: Vec<String> = queues
        .iter()
        .map(|row| truncate(&inert(&row.counts.queue), NAME_MAX))
        .collect();
    let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    queues
        .iter()
        .zip(names)
        .map(|(row, name)| {
            let c = &row.counts;
            let counts = format!(
                " {name:<name_width$} w{} l{} d{}",
                c.waiting, c.leased, c.dead
            );
            let badges: Vec<String> = state.badges(row, now).iter().map(Badge::text).collect();
            let mut spans = vec![Span::raw(counts)];
            if !badges.is_empty() {
                spans.push(Span::styled(format!(" {}", badges.join(" ")), theme.warn()));
            }
            let line = Line::from(spans);
            if line.width() > width as usize {
                // Cut whole, in plain text: the badges are the line's end.
                let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
                return Line::raw(truncate(&text, width as usize));
            }
            line
        })
        .collect()
}
