//! The help overlay scrolls, so every key fits even at 80×24: j/k and the
//! arrows move a line, PgDn/PgUp (and Space) a page, g/G the ends; any
//! other key closes it.

use super::State;

impl State {
    /// Scroll help by `lines` (negative: up), no further than its end.
    pub(super) fn scroll_help(&mut self, lines: i64) {
        let most = crate::tui::view::help_line_count(self.size.0) as i64;
        let shown = i64::from(help_rows(self.size.1));
        let last = (most - shown).max(0);
        let to = (i64::from(self.help_scroll) + lines).clamp(0, last);
        self.help_scroll = to as u16;
    }

    /// A page of help: the rows it shows, less one kept for context.
    pub(super) fn help_page(&self) -> i64 {
        i64::from(help_rows(self.size.1).saturating_sub(1).max(1))
    }
}

/// Rows of keys the help overlay shows in a terminal `height` rows high
/// (inside its border, less the line saying where one is).
pub fn help_rows(height: u16) -> u16 {
    height.saturating_sub(3)
}
