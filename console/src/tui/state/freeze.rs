//! `f`: freeze the screen to read it (an id, a count, an error) while the
//! data would otherwise move under the eyes. Snapshots keep arriving and
//! are set aside; the header says frozen and since when; `f` again resumes
//! with the next snapshot. Actions still ask and run: their result is on
//! the status line, and shows in the data once unfrozen.

use super::{Level, State};
use crate::clock;

impl State {
    /// `f`: freeze, or resume.
    pub(super) fn toggle_freeze(&mut self) {
        match self.frozen.take() {
            Some(_) => self.say(
                Level::Info,
                "resumed: the screen refreshes again from the next snapshot",
            ),
            None => {
                self.frozen = Some(self.clock);
                let at = clock::short(self.clock, self.clock);
                self.say(
                    Level::Info,
                    format!("frozen at {at} UTC: nothing on screen changes until f"),
                );
            }
        }
    }

    /// Whether a snapshot is set aside rather than shown.
    pub(super) fn holds_snapshots(&self) -> bool {
        self.frozen.is_some()
    }
}
