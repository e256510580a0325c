//! The help overlay: every binding of the key table, section by section,
//! over the whole terminal. Two columns when both fit whole, else one; it
//! scrolls (`State::help_scroll`), and its last row says where one is and
//! how to move, so at 80×24 nothing is out of reach or cut. Right after
//! the Queues keys, a legend of that screen: each badge, and each column
//! shown only while some queue needs it, in one plain sentence wrapped
//! whole rather than cut.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use crate::text::truncate;
use crate::tui::input::{self, Scope};
use crate::tui::state::rows::BADGE_LEGEND;
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Room for the keys column: two spaces, then the label.
const KEYS_WIDTH: usize = 13;

type Section = (&'static str, Vec<(&'static str, &'static str)>);

/// The Queues screen's columns that appear only while some queue has such
/// jobs, and OLDEST, as the legend explains them.
const QUEUE_COLUMNS: &[(&str, &str)] = &[
    (
        "DUE",
        "Scheduled jobs whose time has come; only a claim moves them to WAITING, so they pile up when no worker claims.",
    ),
    (
        "HELD",
        "Ready jobs that their limit key's limits hold back; the Limits screen says which limit and why.",
    ),
    (
        "BLOCKED",
        "Jobs waiting behind an earlier job with the same ordering key.",
    ),
    (
        "AWAITING",
        "Jobs waiting on other jobs (their batch, dependencies or tree), and those held for an operator after a dependency failed.",
    ),
    (
        "LAPSED",
        "Leased jobs whose lease ran out with nobody reclaiming them.",
    ),
    (
        "OLDEST",
        "How long the job that has waited longest to run has been ready, due jobs included.",
    ),
];

/// The legend's parts: the badges, then the columns.
const LEGEND: [(&str, &[(&str, &str)]); 2] = [
    ("Queues screen: warnings beside a queue", BADGE_LEGEND),
    ("Queues screen: columns shown when needed", QUEUE_COLUMNS),
];

/// One line of help, before styling.
enum HelpLine {
    /// A section's or a legend part's heading.
    Title(&'static str),
    /// Keys (or a legend's name; empty on a sentence's later lines) and
    /// what they do.
    Row(&'static str, String),
}

/// The widest row a section can hold: keys and their text.
fn row_width(sections: &[Section]) -> usize {
    sections
        .iter()
        .flat_map(|(_, rows)| {
            rows.iter()
                .map(|(_, what)| KEYS_WIDTH + what.chars().count())
        })
        .max()
        .unwrap_or(0)
}

/// The legend `width` columns wide: each sentence wrapped at blanks after
/// the names' column (a word longer than the room alone is cut).
fn legend_lines(width: usize, out: &mut Vec<HelpLine>) {
    let room = width.saturating_sub(KEYS_WIDTH).max(1);
    for (title, entries) in LEGEND {
        out.push(HelpLine::Title(title));
        for (name, text) in entries {
            let mut line = String::new();
            let mut name = *name;
            for word in text.split(' ') {
                let wanted = line.chars().count() + 1 + word.chars().count();
                if !line.is_empty() && wanted > room {
                    out.push(HelpLine::Row(name, std::mem::take(&mut line)));
                    name = "";
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            out.push(HelpLine::Row(name, line));
        }
    }
}

/// The lines of `part` in a column `width` wide: each section's heading
/// and keys, the legend after the Queues section's.
fn column_lines(part: &[Section], width: usize) -> Vec<HelpLine> {
    let room = width.saturating_sub(KEYS_WIDTH);
    let mut out = Vec::new();
    for (title, rows) in part {
        out.push(HelpLine::Title(title));
        for (keys, what) in rows {
            out.push(HelpLine::Row(keys, truncate(what, room)));
        }
        if *title == Scope::Queues.title() {
            legend_lines(width, &mut out);
        }
    }
    out
}

fn lines(part: &[Section], width: usize) -> usize {
    column_lines(part, width).len()
}

/// The two columns' areas in `body`, and so their widths: the render and
/// the line count (which the legend's wrapping depends on) agree.
fn halves(body: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body)
}

fn half_widths(width: usize) -> (usize, usize) {
    let [l, r] = halves(Rect::new(0, 0, width.min(u16::MAX as usize) as u16, 1));
    (l.width as usize, r.width as usize)
}

/// Where the sections split into two columns at `width` columns (inside
/// the border), or `None` for one column: two only when every row fits
/// whole in half the width.
fn split(sections: &[Section], width: usize) -> Option<usize> {
    if row_width(sections) + 1 > width / 2 {
        return None;
    }
    // Where the two columns come out most even in lines.
    let (l, r) = half_widths(width);
    (0..=sections.len()).min_by_key(|at| lines(&sections[..*at], l).max(lines(&sections[*at..], r)))
}

/// How many lines help has at a terminal `width` columns wide: what the
/// scroll may reach.
pub fn help_line_count(width: u16) -> usize {
    let sections = input::help_sections();
    let inner = (width as usize).saturating_sub(2);
    match split(&sections, inner) {
        Some(at) => {
            let (l, r) = half_widths(inner);
            lines(&sections[..at], l).max(lines(&sections[at..], r))
        }
        None => lines(&sections, inner),
    }
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let sections = input::help_sections();
    let block = Block::bordered().title(Line::styled(
        " Help: keys come from the same table that handles them ",
        theme.header(),
    ));
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let [body, position] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    let column = |part: &[Section], width: u16| -> Vec<Line> {
        column_lines(part, width as usize)
            .into_iter()
            .map(|line| match line {
                HelpLine::Title(title) => Line::styled(title, theme.header()),
                HelpLine::Row(keys, what) => Line::from(vec![
                    Span::styled(format!("  {keys:<11}"), theme.key()),
                    Span::raw(what),
                ]),
            })
            .collect()
    };
    let total = help_line_count(area.width);
    let shown = body.height as usize;
    let scroll = (state.help_scroll as usize).min(total.saturating_sub(shown));
    match split(&sections, inner.width as usize) {
        Some(at) => {
            let [l, r] = halves(body);
            let (left, right) = (
                column(&sections[..at], l.width),
                column(&sections[at..], r.width),
            );
            frame.render_widget(Paragraph::new(left).scroll((scroll as u16, 0)), l);
            frame.render_widget(Paragraph::new(right).scroll((scroll as u16, 0)), r);
        }
        None => {
            let all = column(&sections, body.width);
            frame.render_widget(Paragraph::new(all).scroll((scroll as u16, 0)), body);
        }
    }
    let last = (scroll + shown).min(total);
    // The keys to scroll in full, or in short when three-digit line
    // numbers leave no room: the line is never cut mid-word at 80 columns.
    let where_text = [
        " · j/k ↓/↑ PgDn/PgUp Space g/G scroll",
        " · j/k PgDn/PgUp g/G scroll",
    ]
    .iter()
    .map(|keys| {
        let mut text = format!(" lines {}–{last} of {total}", scroll + 1);
        if total > shown {
            text.push_str(keys);
        }
        text.push_str(" · any other key closes");
        text
    })
    .find(|text| text.chars().count() <= position.width as usize)
    .unwrap_or_else(|| {
        format!(
            " lines {}–{last} of {total} · any other key closes",
            scroll + 1
        )
    });
    frame.render_widget(
        Paragraph::new(Line::styled(
            truncate(&where_text, position.width as usize),
            theme.dim(),
        )),
        position,
    );
}
