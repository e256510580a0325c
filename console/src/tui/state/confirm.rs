//! Destructive actions are two events: a key asks (`ask`), and only the
//! answer `y` acts (`answer`). Both refuse while read-only or busy. A
//! requeue's question also takes digits: the attempt count it restarts at.

use super::{Action, Command, Confirm, Level, Mutation, Overlay, Progress, State};

impl State {
    /// Refuse mutations in read-only mode or while one runs.
    pub(super) fn may_mutate(&mut self, what: &str) -> bool {
        if self.settings.read_only {
            self.say(
                Level::Error,
                format!("read-only: {what} refused (--read-only, or no --url or REDIS_URL named this Redis)"),
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
        self.ask_requeue(prompt, mutation, None)
    }

    /// Put a requeue's question up, its attempt count to stay below
    /// `attempts_below` (see [`Confirm::attempts_below`]).
    pub(super) fn ask_requeue(
        &mut self,
        prompt: String,
        mutation: Mutation,
        attempts_below: Option<u32>,
    ) -> Command {
        self.overlay = Overlay::Confirm(Confirm {
            prompt,
            mutation,
            attempts_below,
        });
        Command::None
    }

    /// The answer to `confirm` (already closed): digits and Backspace edit
    /// a requeue's attempt count and keep the question open, `y` starts the
    /// mutation, anything else cancels it.
    pub(super) fn answer(&mut self, mut confirm: Confirm, action: &Action) -> Command {
        let editable = confirm.mutation.attempts().is_some();
        match action {
            Action::AttemptsDigit(d) if editable => {
                let typed = confirm.type_attempts_digit(*d);
                return self.keep_asking(confirm, typed.err());
            }
            Action::AttemptsErase if editable => {
                confirm.erase_attempts_digit();
                return self.keep_asking(confirm, None);
            }
            Action::Confirm => {}
            _ => {
                self.say(Level::Info, "cancelled: nothing was changed");
                return Command::None;
            }
        }
        if let Some(refusal) = confirm.attempts_refusal() {
            // Nothing is sent; the count can still be corrected.
            self.overlay = Overlay::Confirm(confirm);
            self.say(Level::Error, refusal);
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
        if matches!(mutation, Mutation::OnMatches { .. }) {
            self.search_again_after_change();
        }
        Command::Mutate(mutation)
    }

    /// Leave `confirm` open after an edit; the status line says what is
    /// wrong with the count now (`refused`, else the range), or nothing.
    fn keep_asking(&mut self, confirm: Confirm, refused: Option<String>) -> Command {
        match refused.or_else(|| confirm.attempts_refusal()) {
            Some(refusal) => self.say(Level::Error, refusal),
            None => self.status = None,
        }
        self.overlay = Overlay::Confirm(confirm);
        Command::None
    }
}
