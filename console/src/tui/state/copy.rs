//! `i`: copy the selected row's id (a job id, a worker id, a schedule or
//! queue name) to the clipboard. The state only names what to copy; the
//! app loop writes it to the terminal as OSC 52 (`tui::clipboard`), which
//! terminals, tmux (`set -g set-clipboard on`) and ssh pass on.

use super::{Command, Level, Screen, State, View};
use crate::text::inert;

impl State {
    /// What `i` copies here: (what it is, the text), if a row is selected.
    pub fn copy_target(&self) -> Option<(&'static str, String)> {
        if let Some(detail) = self.detail() {
            return Some(("job id", detail.record.id.clone()));
        }
        if self.jobs().is_some() {
            return self.selected_job().map(|j| ("job id", j.id.clone()));
        }
        let at = self.cursor().index;
        match self.view {
            View::Screen(Screen::Queues) => self
                .visible_queues()
                .get(at)
                .map(|q| ("queue name", q.counts.queue.clone())),
            View::Screen(Screen::Leases) => self
                .visible_leases()
                .get(at)
                .map(|j| ("job id", j.id.clone())),
            View::Screen(Screen::Dead) if self.tabs.dead_grouped => self
                .dead_groups()
                .get(self.tabs.group_cursor.index)
                .map(|g| ("error signature", g.signature.clone())),
            View::Screen(Screen::Dead) => self
                .visible_dead()
                .get(at)
                .map(|j| ("job id", j.id.clone())),
            View::Screen(Screen::Schedules) => self
                .visible_schedules()
                .get(at)
                .map(|s| ("schedule name", s.name.clone())),
            View::Screen(Screen::Workers) => self
                .visible_workers()
                .get(at)
                .map(|w| ("worker id", w.id.clone())),
            View::Screen(Screen::Events) => self
                .visible_events()
                .get(at)
                .filter(|e| !e.job_id.is_empty())
                .map(|e| ("job id", e.job_id.clone())),
            View::Screen(Screen::Workflows) => self
                .visible_gates()
                .get(at)
                .map(|g| ("gate id", g.id.clone())),
            View::Schedule(ref view) => Some(("schedule name", view.name.clone())),
            View::Gate(_) => self
                .visible_members()
                .get(at)
                .map(|m| ("job id", m.id.clone())),
            View::Screen(Screen::Limits) => self
                .visible_limits()
                .get(at)
                .map(|r| ("limit key", r.key().unwrap_or(&r.queue).to_owned())),
            _ => None,
        }
    }

    /// `i`: copy, and say what was copied.
    pub(super) fn copy_selected(&mut self) -> Command {
        let Some((what, text)) = self.copy_target() else {
            self.say(Level::Info, "nothing selected to copy");
            return Command::None;
        };
        self.say(
            Level::Ok,
            format!("copied {what} {} to the clipboard (OSC 52)", inert(&text)),
        );
        Command::Copy(text)
    }
}
