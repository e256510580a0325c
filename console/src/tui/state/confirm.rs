//! Destructive actions are two events: a key asks (`ask`), and only the
//! answer `y` acts (`answer`). Both refuse while read-only or busy.

use super::{Action, Command, Confirm, Level, Mutation, Overlay, Progress, State};

impl State {
    /// Refuse mutations in read-only mode or while one runs.
    pub(super) fn may_mutate(&mut self, what: &str) -> bool {
        if self.settings.read_only {
            self.say(
                Level::Error,
                format!("read-only: {what} refused (the console was started with --read-only)"),
            );
            return false;
        }
        if let Some(busy) = &self.busy {
            let text = format!("busy: wait until \"{}\" finishes", busy.label);
            self.say(Level::Error, text);
            return false;
        }
        true
    }

    /// Put the question up; nothing is done until it is answered.
    pub(super) fn ask(&mut self, prompt: String, mutation: Mutation) -> Command {
        self.overlay = Overlay::Confirm(Confirm { prompt, mutation });
        Command::None
    }

    /// The answer to `confirm` (already closed): `y` starts the mutation,
    /// anything else cancels it.
    pub(super) fn answer(&mut self, confirm: Confirm, action: &Action) -> Command {
        if *action != Action::Confirm {
            self.say(Level::Info, "cancelled: nothing was changed");
            return Command::None;
        }
        let mutation = confirm.mutation;
        if !self.may_mutate(&mutation.label()) {
            return Command::None;
        }
        self.busy = Some(Progress {
            label: mutation.label(),
            done: 0,
            left: 0,
        });
        self.status = None;
        Command::Mutate(mutation)
    }
}
