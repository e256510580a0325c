//! `p`: pause or resume the selected queue (it asks first).

use super::{Command, Level, Mutation, Screen, State, View};
use crate::text::inert;

impl State {
    /// `p` on the Queues screen or in a queue's jobs view.
    pub(super) fn toggle_pause(&mut self) -> Command {
        let queue = match &self.view {
            View::Jobs(view) => Some(view.query.queue.clone()),
            View::Screen(Screen::Queues) => self
                .visible_queues()
                .get(self.cursor().index)
                .map(|q| q.counts.queue.clone()),
            View::Screen(_)
            | View::Detail(_)
            | View::Metrics(_)
            | View::Gate(_)
            | View::Schedule(_) => return Command::None,
        };
        let Some(queue) = queue else {
            self.say(Level::Info, "no queue selected");
            return Command::None;
        };
        let paused = self
            .data
            .queues
            .iter()
            .any(|q| q.counts.queue == queue && q.counts.paused);
        if !self.may_mutate(if paused { "resume" } else { "pause" }) {
            return Command::None;
        }
        let shown = inert(&queue);
        if paused {
            self.ask(
                format!("Resume queue {shown}? Workers start claiming its jobs again."),
                Mutation::Resume(queue),
            )
        } else {
            self.ask(
                format!("Pause queue {shown}? Workers claim nothing from it until it is resumed."),
                Mutation::Pause(queue),
            )
        }
    }
}
