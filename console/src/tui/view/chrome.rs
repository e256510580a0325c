//! Everything around the screens: title, tabs, banner, status line, footer
//! hints, the help overlay, the confirmation dialog.

use std::time::{Duration, SystemTime};

use ratatui::layout::{Alignment, Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::table::group_digits;
use crate::clock;
use crate::text::{inert, truncate};
use crate::tui::input;
use crate::tui::state::{Confirm, Connection, Level, Screen, State, View};
use crate::tui::theme::Theme;

pub fn title(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let s = &state.settings;
    let (dot, health) = match &state.connection {
        Connection::Connecting => ("○", "connecting"),
        Connection::Live => ("●", "live"),
        // Redis answers: it is the user's rules that fail every read.
        Connection::Reconnecting { error, .. } if error.acl_refused() => ("✕", error.word()),
        Connection::Reconnecting { .. } if !state.data.loaded => ("○", "retrying"),
        Connection::Reconnecting { error, .. } => ("◌", error.word()),
    };
    // Counts on screen can be a whole refresh old: said once it is longer
    // than the default second.
    let every = if s.refresh > Duration::from_secs(1) {
        let ms = s.refresh.as_millis();
        match ms % 1000 {
            0 => format!(", every {}", clock::compact(s.refresh)),
            _ => format!(", every {ms}ms"),
        }
    } else {
        String::new()
    };
    let health = format!("{health}{every}");
    let mut right = format!("{dot} {health}  {} UTC ", clock::short(now, now));
    // Said first on the right, in the warning colour: the clock keeps
    // ticking, the data does not.
    let frozen = state
        .frozen
        .map(|since| {
            format!(
                "FROZEN since {} UTC (f resumes)  ",
                clock::short(since, since)
            )
        })
        .unwrap_or_default();
    if s.read_only {
        right = format!("READ-ONLY  {right}");
    }
    let mut left = format!(
        " redq  {}  namespace {}",
        inert(&s.url),
        inert(&s.namespace)
    );
    if !s.shards.is_empty() {
        // The base name alone would suggest one namespace.
        left.push_str(&format!(" × {} shards", s.shards.len()));
    }
    let right_width = frozen.chars().count() + right.chars().count();
    let room = (area.width as usize).saturating_sub(right_width + 1);
    let left = truncate(&left, room);
    let pad = (area.width as usize).saturating_sub(left.chars().count() + right_width);
    let line = Line::from(vec![
        Span::raw(left),
        Span::raw(" ".repeat(pad)),
        Span::styled(frozen, theme.warn()),
        Span::raw(right),
    ]);
    frame.render_widget(Paragraph::new(line).style(theme.title()), area);
}

/// The tab line. Eight tabs with their full titles need about 100
/// columns: narrower, the gaps close up first, then titles take their
/// short forms ("Dead" for "Dead letters", then "Sched" for "Schedules"),
/// so no tab is ever cut off at 80 columns.
pub fn tabs(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let dead: u64 = state.data.queues.iter().map(|q| q.counts.dead).sum();
    let label = |screen: Screen, short: u8| {
        let title = match screen {
            Screen::Dead if short >= 1 => "Dead",
            Screen::Schedules if short >= 2 => "Sched",
            other => other.title(),
        };
        let mut label = format!("{} {title}", screen.index() + 1);
        if screen == Screen::Dead && dead > 0 {
            label.push_str(&format!(" ({dead})"));
        }
        label
    };
    let fits = |gap: usize, short: u8| {
        let text: usize = Screen::ALL
            .iter()
            .map(|s| label(*s, short).chars().count())
            .sum();
        1 + text + gap * (Screen::COUNT - 1) <= area.width as usize
    };
    let (gap, short) = [(3, 0), (2, 0), (3, 1), (2, 1), (1, 1), (2, 2), (1, 2)]
        .into_iter()
        .find(|(gap, short)| fits(*gap, *short))
        .unwrap_or((1, 2));
    let mut spans = vec![Span::raw(" ")];
    for screen in Screen::ALL {
        if screen.index() > 0 {
            spans.push(Span::raw(" ".repeat(gap)));
        }
        let style = if screen == state.screen() {
            theme.tab_active()
        } else {
            theme.dim()
        };
        spans.push(Span::styled(label(screen, short), style));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The outage banner: since when, and what the screen shows meanwhile.
/// Kept data is frozen at its snapshot's time (see `State::data_time`); a
/// list this screen never loaded before the outage is not made up from an
/// earlier visit, and the banner says so. The cause is on the status line.
pub fn banner(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let Connection::Reconnecting { since, error } = &state.connection else {
        return;
    };
    let since_text = clock::short(*since, *since);
    let text = match state.data.fetched_at {
        // Redis answers and refuses: "unreachable" or "reconnecting" would
        // send an operator to the network; the status line says what.
        _ if error.acl_refused() && !state.screen_loaded() => format!(
            " not loaded: Redis's ACL refuses this user a read since {since_text} UTC; \
             tried again every {}",
            clock::compact(state.settings.refresh)
        ),
        Some(at) if error.acl_refused() => format!(
            " refused by Redis's ACL since {since_text} UTC — showing data from {} UTC, frozen",
            clock::short(at, *since)
        ),
        None if error.acl_refused() => {
            format!(" refused by Redis's ACL since {since_text} UTC — no data yet")
        }
        _ if !state.screen_loaded() => format!(
            " not loaded: Redis unreachable since {since_text} UTC; reconnecting, \
             this list loads once Redis answers"
        ),
        Some(at) => format!(
            " reconnecting since {since_text} UTC — showing data from {} UTC, frozen",
            clock::short(at, *since)
        ),
        None => format!(" reconnecting since {since_text} UTC — no data yet"),
    };
    frame.render_widget(
        Paragraph::new(truncate(&text, area.width as usize)).style(theme.banner()),
        area,
    );
}

/// How many rows the server's notices (`State::server_notices`) take in
/// `width` columns: each is wrapped at words, after a column of margin.
pub fn server_notice_rows(notices: &[(Level, String)], width: u16) -> u16 {
    let inner = width.saturating_sub(1);
    notices
        .iter()
        .map(|(_, text)| wrapped_lines(&inert(text), inner))
        .sum()
}

/// The server's notices, each wrapped under the one before: a restart that
/// lost the namespace's jobs and a full memory in the error style, a
/// restart with the data reloaded and a nearly full memory in the warning
/// one.
pub fn server_notices(frame: &mut Frame, area: Rect, notices: &[(Level, String)], theme: &Theme) {
    let mut rest = Rect {
        x: area.x.saturating_add(1),
        width: area.width.saturating_sub(1),
        ..area
    };
    for (level, text) in notices {
        let text = inert(text);
        let rows = wrapped_lines(&text, rest.width).min(rest.height);
        let style = match level {
            Level::Error => theme.error(),
            _ => theme.warn(),
        };
        let here = Rect {
            height: rows,
            ..rest
        };
        frame.render_widget(
            Paragraph::new(text).style(style).wrap(Wrap { trim: true }),
            here,
        );
        rest.y = rest.y.saturating_add(rows);
        rest.height = rest.height.saturating_sub(rows);
    }
}

pub fn status(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let filter = state.filter();
    let line = if state.filter_editing() {
        Line::from(vec![
            Span::styled(" / ", theme.key()),
            Span::raw(inert(filter)),
            Span::styled("▏", theme.key()),
        ])
    } else if let Some(busy) = &state.busy {
        let counts = if busy.done + busy.left > 0 {
            format!(
                ": {} done, {} left",
                group_digits(busy.done),
                group_digits(busy.left)
            )
        } else {
            "…".to_owned()
        };
        Line::styled(format!(" ⟳ {}{counts}", busy.label), theme.warn())
    } else if let Some(status) = &state.status {
        let style = match status.level {
            Level::Info => theme.text(),
            Level::Ok => theme.ok(),
            Level::Error => theme.error(),
        };
        Line::styled(format!(" {}", inert(&status.text)), style)
    } else if let (Connection::Reconnecting { error, .. }, true) =
        (&state.connection, state.data.loaded)
    {
        // The banner says since when; this says why, as of the last try.
        Line::styled(format!(" {}", inert(&error.sentence)), theme.error())
    } else if !filter.is_empty() && matches!(state.view, View::Screen(_)) {
        Line::from(vec![
            Span::styled(" filter: ", theme.dim()),
            Span::raw(inert(filter)),
            Span::styled("  (Esc clears)", theme.dim()),
        ])
    } else if state.settings.read_only {
        Line::styled(
            " read-only: requeue, delete and pause are disabled",
            theme.dim(),
        )
    } else {
        Line::default()
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// Footer hints from the key table. When they do not all fit, the
/// screen-specific ones are kept first, but the screen keys (`1-8
/// screens`), `? help` and `q quit` always keep their place at the end.
pub fn footer(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let hints = input::hints(state);
    let width = |h: &str| h.chars().count() + 2;
    let (tail, head): (Vec<&str>, Vec<&str>) = hints
        .iter()
        .partition(|h| h.starts_with("? ") || h.starts_with("q ") || h.ends_with(" screens"));
    let reserved: usize = tail.iter().map(|h| width(h)).sum();
    let mut used = 1 + reserved;
    let mut shown = Vec::new();
    for hint in head {
        if used + width(hint) > area.width as usize {
            continue;
        }
        used += width(hint);
        shown.push(hint);
    }
    shown.extend(tail);
    let mut spans = vec![Span::raw(" ")];
    for hint in shown {
        let (key, what) = hint.split_once(' ').unwrap_or((hint, ""));
        spans.push(Span::styled(key, theme.key()));
        spans.push(Span::styled(format!(" {what}  "), theme.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn waiting(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let mut lines = vec![Line::from(format!(
        "connecting to {} …",
        inert(&state.settings.url)
    ))];
    if let Connection::Reconnecting { error, since } = &state.connection {
        lines.push(Line::styled(inert(&error.sentence), theme.error()));
        let outage = if error.acl_refused() {
            "refused by Redis's ACL"
        } else {
            "unreachable"
        };
        lines.push(Line::styled(
            format!(
                "{outage} since {} UTC; retrying every {}",
                clock::short(*since, *since),
                clock::compact(state.settings.refresh)
            ),
            theme.dim(),
        ));
    }
    let [middle] = Layout::vertical([Constraint::Length(3)])
        .flex(Flex::Center)
        .areas(area);
    frame.render_widget(Paragraph::new(lines).alignment(Alignment::Center), middle);
}

fn popup(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

/// The question over the body, and the keys that answer it (the same
/// hints as the footer, from the key table).
pub fn confirm(frame: &mut Frame, area: Rect, state: &State, confirm: &Confirm, theme: &Theme) {
    let width = 64.min(area.width);
    let prompt = confirm.text();
    let mut keys = Vec::new();
    for hint in input::hints(state) {
        let (key, what) = hint.split_once(' ').unwrap_or((hint, ""));
        keys.push(Span::styled(key, theme.key()));
        keys.push(Span::raw(format!(" {what}  ")));
    }
    let keys_text: String = keys.iter().map(|s| s.content.as_ref()).collect();
    let prompt = inert(&prompt);
    // Inside the borders; the blank line and the borders add 3.
    let inner = width.saturating_sub(2);
    let lines = wrapped_lines(&prompt, inner) + wrapped_lines(&keys_text, inner) + 3;
    let text = Text::from(vec![Line::from(prompt), Line::default(), Line::from(keys)]);
    let rect = popup(area, width, lines);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: true }).block(
            Block::bordered()
                .title(Line::styled(" Confirm [y/N] ", theme.warn()))
                .border_style(theme.warn()),
        ),
        rect,
    );
}

/// How many rows `text` takes, wrapped at words into `width` columns as
/// the dialog's paragraph wraps it (a word longer than a row is split).
fn wrapped_lines(text: &str, width: u16) -> u16 {
    let width = usize::from(width.max(1));
    let (mut rows, mut used) = (1u16, 0usize);
    for word in text.split_whitespace() {
        let len = word.chars().count();
        let needed = if used == 0 { len } else { used + 1 + len };
        if needed <= width {
            used = needed;
        } else {
            rows += 1;
            used = len;
            while used > width {
                rows += 1;
                used -= width;
            }
        }
    }
    rows
}
