//! The detail of one schedule (Enter on the Schedules screen): what `redq
//! schedules show NAME` prints, the same lines
//! (`commands::schedules::show_lines`), with the next 5 runs in UTC and in
//! its zone. Every text from Redis, the payload too, is shown inert.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use crate::commands::schedules::show_lines;
use crate::text::inert;
use crate::tui::state::{ScheduleView, State};
use crate::tui::theme::Theme;

/// Width of the label column, as `redq schedules show` pads it.
const LABEL: usize = 14;

/// Draw the schedule detail of `view` at `now` (Redis clock).
pub fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    view: &ScheduleView,
    theme: &Theme,
    now: SystemTime,
) {
    let (title, lines) = detail(state, view, area.width.saturating_sub(2), theme, now);
    let block = Block::bordered().title(Line::styled(title, theme.header()));
    frame.render_widget(
        Paragraph::new(lines).block(block).scroll((view.scroll, 0)),
        area,
    );
}

/// The detail's title and lines at `width` columns: a value too long for
/// its line goes on under its own column, never under the labels.
pub(crate) fn detail(
    state: &State,
    view: &ScheduleView,
    width: u16,
    theme: &Theme,
    now: SystemTime,
) -> (String, Vec<Line<'static>>) {
    let name = match view.shard {
        Some(shard) => format!("{} (shard {shard})", inert(&view.name)),
        None => inert(&view.name),
    };
    let read = state.schedule_shown();
    match read.map(|r| (r.gone, r.record.as_deref())) {
        None => (
            format!(" schedule {name} "),
            vec![Line::from(super::not_loaded(state, "this schedule"))],
        ),
        Some((_, None)) => (
            format!(" schedule {name} (gone) "),
            vec![Line::from(format!(
                "schedule {name} is gone: no schedule has this name any more (deleted)"
            ))],
        ),
        Some((gone, Some(record))) => {
            let mut lines = Vec::new();
            if gone {
                lines.push(Line::styled(
                    "This schedule is gone (deleted): below is what it last was; its keys refuse.",
                    theme.warn(),
                ));
            }
            let room = (width as usize).saturating_sub(LABEL).max(20);
            match show_lines(view.shard, record, state.data_time(now)) {
                Ok(shown) => {
                    for (label, text) in shown {
                        for (i, part) in wrap(text.trim_end(), room).into_iter().enumerate() {
                            let label = if i == 0 { label } else { "" };
                            lines.push(Line::from(vec![
                                Span::styled(format!("{label:<LABEL$}"), theme.header()),
                                Span::raw(part),
                            ]));
                        }
                    }
                }
                Err(error) => lines.push(Line::from(format!(
                    "its runs cannot be computed: {}",
                    inert(&error.to_string())
                ))),
            }
            let state_word = if gone { " (gone)" } else { "" };
            (format!(" schedule {name}{state_word} "), lines)
        }
    }
}

/// `text` in lines of at most `room` characters, broken at spaces where
/// it can be, else (a long payload) anywhere.
fn wrap(text: &str, room: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let taken = line.chars().count();
        if taken > 0 && taken + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        } else if taken > 0 {
            line.push(' ');
        }
        for c in word.chars() {
            if line.chars().count() == room {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn a_long_value_breaks_at_spaces_and_a_long_word_anywhere() {
        assert_eq!(wrap("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap("", 3), [""]);
        assert_eq!(wrap("a  b", 10), ["a  b"]);
    }
}
