//! The help overlay: every binding of the key table, section by section,
//! over the whole terminal. Two columns when both fit whole, else one; it
//! scrolls (`State::help_scroll`), and its last row says where one is and
//! how to move, so at 80×24 nothing is out of reach or cut.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use crate::text::truncate;
use crate::tui::input;
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Room for the keys column: two spaces, then the label.
const KEYS_WIDTH: usize = 13;

type Section = (&'static str, Vec<(&'static str, &'static str)>);

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

fn lines(part: &[Section]) -> usize {
    part.iter().map(|(_, rows)| 1 + rows.len()).sum()
}

/// Where the sections split into two columns at `width` columns (inside
/// the border), or `None` for one column: two only when every row fits
/// whole in half the width.
fn split(sections: &[Section], width: usize) -> Option<usize> {
    if row_width(sections) + 1 > width / 2 {
        return None;
    }
    // Where the two columns come out most even in lines.
    (0..=sections.len()).min_by_key(|at| lines(&sections[..*at]).max(lines(&sections[*at..])))
}

/// How many lines help has at a terminal `width` columns wide: what the
/// scroll may reach.
pub fn help_line_count(width: u16) -> usize {
    let sections = input::help_sections();
    let inner = (width as usize).saturating_sub(2);
    match split(&sections, inner) {
        Some(at) => lines(&sections[..at]).max(lines(&sections[at..])),
        None => lines(&sections),
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
    let column = |part: &[Section], width: u16| {
        let mut out: Vec<Line> = Vec::new();
        for (title, rows) in part {
            out.push(Line::styled(*title, theme.header()));
            for (keys, what) in rows {
                let room = (width as usize).saturating_sub(KEYS_WIDTH);
                out.push(Line::from(vec![
                    Span::styled(format!("  {keys:<11}"), theme.key()),
                    Span::raw(truncate(what, room)),
                ]));
            }
        }
        out
    };
    let total = help_line_count(area.width);
    let shown = body.height as usize;
    let scroll = (state.help_scroll as usize).min(total.saturating_sub(shown));
    match split(&sections, inner.width as usize) {
        Some(at) => {
            let [l, r] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                    .areas(body);
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
    let mut where_text = format!(" lines {}–{last} of {total}", scroll + 1);
    if total > shown {
        where_text.push_str(" · j/k ↓/↑ PgDn/PgUp Space g/G scroll");
    }
    where_text.push_str(" · any other key closes");
    frame.render_widget(
        Paragraph::new(Line::styled(
            truncate(&where_text, position.width as usize),
            theme.dim(),
        )),
        position,
    );
}
