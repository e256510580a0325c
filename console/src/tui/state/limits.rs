//! `x` on the Limits screen: lift the selected limit (it asks first,
//! naming the queue, the scope and the limit; default No).

use redq::flow::LimitScope;

use super::{Command, Level, Mutation, Screen, State, View};
use crate::flow::{scope_text, Scope};
use crate::text::inert;

impl State {
    /// `x`: clear the selected row's limit.
    pub(super) fn clear_selected_limit(&mut self) -> Command {
        if self.view != View::Screen(Screen::Limits) {
            return Command::None;
        }
        let Some(row) = self
            .visible_limits()
            .get(self.cursor().index)
            .map(|r| (*r).clone())
        else {
            self.say(Level::Info, "no limit selected");
            return Command::None;
        };
        let scope = match &row.scope {
            Scope::Queue => LimitScope::Queue,
            Scope::EachKey => LimitScope::EachKey,
            Scope::Key {
                overridden: false,
                key,
            } => {
                let text = format!(
                    "key {} has no limit of its own (the each-key default applies): \
                     clear the each-key row instead",
                    inert(key)
                );
                self.say(Level::Info, text);
                return Command::None;
            }
            Scope::Key { key, .. } => LimitScope::Key(key.clone()),
        };
        let named = format!("{} limit", scope_text(&scope));
        if row.limit.is_none() {
            let text = format!("{} has no {named} to clear", inert(&row.queue));
            self.say(Level::Info, text);
            return Command::None;
        }
        if !self.may_mutate("clearing a limit") {
            return Command::None;
        }
        let prompt = format!(
            "Clear the {named} of {} ({})? Jobs it holds back start as the other limits allow.",
            inert(&row.queue),
            row.limit
        );
        let queue = row.queue.clone();
        self.ask(prompt, Mutation::ClearLimit { queue, scope })
    }
}
