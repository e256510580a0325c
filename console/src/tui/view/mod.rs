//! Drawing: pure functions of `&State`, a theme and a fixed `now` (Redis
//! clock). Nothing here reads a clock, touches Redis or changes state, so
//! every screen renders the same way in a `TestBackend` as on a terminal.

mod chrome;
mod dead;
mod events;
pub(crate) mod facts;
mod help;
mod jobs;
mod leases;
mod limits;
pub mod metrics;
mod queues;
mod registry;
pub(crate) mod schedule;
mod search;
mod small;
mod table;
mod workers;
mod workflows;

/// What an empty list says before its first load: "loading …" while Redis
/// answers, "not loaded" while it is unreachable (the banner says since
/// when), so a list that will not come until Redis is back never reads as
/// if it were on its way.
fn not_loaded(state: &State, what: &str) -> String {
    match state.connection {
        Connection::Reconnecting { ref error, .. } if error.acl_refused() => {
            format!("{what} not loaded: Redis's ACL refuses this user a read")
        }
        Connection::Reconnecting { .. } => format!("{what} not loaded: Redis is unreachable"),
        _ => format!("loading {what}…"),
    }
}

pub use help::help_line_count;

use std::time::SystemTime;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

use super::state::{Connection, Overlay, Screen, State, View};
use super::theme::Theme;

/// The smallest terminal the console draws in.
pub const MIN_SIZE: (u16, u16) = (80, 24);

/// Draw the whole console for `state` at `now` (Redis clock).
pub fn render(frame: &mut Frame, state: &State, theme: &Theme, now: SystemTime) {
    let area = frame.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        small::render(frame, area, state, theme, now);
        return;
    }
    let banner = matches!(state.connection, Connection::Reconnecting { .. });
    // What is wrong with the server itself (a restart seen, its memory
    // full) stays under the tabs, however the screens change.
    let notices = state.server_notices();
    let [title, tabs, banner_area, notices_area, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(u16::from(banner)),
        Constraint::Length(chrome::server_notice_rows(&notices, area.width)),
        Constraint::Min(5),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    chrome::title(frame, title, state, theme, now);
    chrome::tabs(frame, tabs, state, theme);
    if banner {
        chrome::banner(frame, banner_area, state, theme);
    }
    chrome::server_notices(frame, notices_area, &notices, theme);
    // Kept data is drawn at its own snapshot's time during an outage.
    body_of(frame, body, state, theme, state.data_time(now));
    chrome::status(frame, status, state, theme);
    chrome::footer(frame, footer, state, theme);
    match &state.overlay {
        Overlay::Help => help::render(frame, area, state, theme),
        Overlay::Confirm(confirm) => chrome::confirm(frame, body, state, confirm, theme),
        // The filter being typed shows on the status line.
        Overlay::Filter | Overlay::None => {}
    }
}

fn body_of(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    if !state.data.loaded {
        chrome::waiting(frame, area, state, theme);
        return;
    }
    match &state.view {
        View::Detail(detail) => jobs::detail(frame, area, state, detail, theme, now),
        View::Jobs(view) => match state.search_shown() {
            Some(found) => search::render(frame, area, state, found, theme),
            None => jobs::render(frame, area, state, view, theme, now),
        },
        View::Metrics(view) => match state.metrics_shown(view) {
            Some(history) => metrics::draw(frame, area, history, view.window, theme),
            None => {
                let text = not_loaded(state, "metrics");
                metrics::not_read(frame, area, &view.queue, view.window, &text, theme)
            }
        },
        View::Screen(Screen::Queues) => queues::render(frame, area, state, theme, now),
        View::Screen(Screen::Leases) => leases::render(frame, area, state, theme, now),
        View::Screen(Screen::Dead) => dead::render(frame, area, state, theme, now),
        View::Screen(Screen::Schedules) => registry::schedules(frame, area, state, theme, now),
        View::Screen(Screen::Workers) => workers::workers(frame, area, state, theme, now),
        View::Screen(Screen::Events) => events::render(frame, area, state, theme, now),
        View::Screen(Screen::Limits) => limits::render(frame, area, state, theme, now),
        View::Screen(Screen::Workflows) => workflows::render(frame, area, state, theme, now),
        View::Gate(view) => workflows::gate(frame, area, state, view, theme, now),
        View::Schedule(view) => schedule::render(frame, area, state, view, theme, now),
    }
}
