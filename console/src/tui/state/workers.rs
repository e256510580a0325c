//! `z` and `s` on the Workers screen: quiet the selected worker (it claims
//! nothing more, finishes what it runs) or stop it (quiet, then it exits
//! once idle). Both ask first, naming the worker and what it runs now.

use super::{Command, Level, Mutation, Screen, State, View};
use crate::text::inert;

impl State {
    /// Ask to quiet (`stop` false) or stop the selected worker.
    pub(super) fn tell_selected_worker(&mut self, stop: bool) -> Command {
        if self.view != View::Screen(Screen::Workers) {
            return Command::None;
        }
        let Some(worker) = self.visible_workers().get(self.cursor().index).copied() else {
            self.say(Level::Info, "no worker selected");
            return Command::None;
        };
        let (id, host, running) = (worker.id.clone(), worker.host.clone(), worker.in_flight);
        if worker.gone {
            self.say(
                Level::Info,
                format!("worker {} is gone: nothing listens to tell it", inert(&id)),
            );
            return Command::None;
        }
        if !self.may_mutate(if stop { "stop" } else { "quiet" }) {
            return Command::None;
        }
        let who = format!("worker {} on {}", inert(&id), inert(&host));
        let jobs = match running {
            0 => "runs nothing now".to_owned(),
            n => format!("finishes its {}", super::plural(n as usize, "running job")),
        };
        if stop {
            self.ask(
                format!("Stop {who}? It claims nothing more, {jobs}, then exits."),
                Mutation::StopWorker(id),
            )
        } else {
            self.ask(
                format!(
                    "Quiet {who}? It claims nothing more, {jobs}, and stays up until shut down."
                ),
                Mutation::QuietWorker(id),
            )
        }
    }
}
