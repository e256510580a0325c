//! The Workflows screen and the gate view: which gates and members are
//! shown, paging through members, and what `c` (cancel the gate), `r`
//! (release a held waiter) and `d` (dead-letter it) ask.

use super::{Command, Cursor, Level, Mutation, Screen, State, View};
use crate::text::inert;
use crate::workflow::{
    held_waiter, kind_word, members_noun, Gate, GateKind, GateState, Member, Waiter, WaiterDecision,
};

impl State {
    /// Gates matching the Workflows filter (id, kind, state, label, a
    /// waiter's id or queue), newest activity first as the source read them.
    pub fn visible_gates(&self) -> Vec<&Gate> {
        let f = self.tabs.filters[Screen::Workflows.index()].to_lowercase();
        self.data
            .gates
            .iter()
            .filter(|g| {
                f.is_empty() || {
                    let mut fields = vec![
                        g.id.as_str(),
                        kind_word(g.kind),
                        g.kind.as_str(),
                        g.state.as_str(),
                        g.label.as_deref().unwrap_or(""),
                    ];
                    for w in &g.waiters {
                        fields.extend([w.id.as_str(), w.queue.as_str(), w.decision.as_str()]);
                    }
                    fields.iter().any(|x| x.to_lowercase().contains(&f))
                }
            })
            .collect()
    }

    /// The gate view's gate and members, when the last snapshot brought
    /// the page it asks for.
    pub fn gate_shown(&self) -> Option<&super::GatePage> {
        let View::Gate(view) = &self.view else {
            return None;
        };
        self.data.gate.as_ref().filter(|p| p.query == view.query)
    }

    /// The members the gate view lists.
    pub fn visible_members(&self) -> Vec<&Member> {
        self.gate_shown()
            .map(|p| p.members.members.iter().collect())
            .unwrap_or_default()
    }

    /// The gate `c`, `r` and `d` act on: the one shown, or the selected row
    /// of the Workflows screen.
    fn acted_gate(&self) -> Option<Gate> {
        match &self.view {
            View::Gate(_) => self.gate_shown().and_then(|p| p.gate.clone()),
            View::Screen(Screen::Workflows) => self
                .visible_gates()
                .get(self.cursor().index)
                .map(|g| (*g).clone()),
            _ => None,
        }
    }

    /// PgDn/PgUp in the gate view: the next or previous page of members.
    pub(super) fn turn_members_page(&mut self, forward: bool) {
        let next = self.gate_shown().and_then(|p| p.members.next.clone());
        let View::Gate(view) = &mut self.view else {
            return;
        };
        if forward {
            let Some(next) = next else { return };
            view.earlier
                .push(std::mem::replace(&mut view.query.cursor, next));
        } else {
            let Some(previous) = view.earlier.pop() else {
                return;
            };
            view.query.cursor = previous;
        }
        view.cursor = Cursor::default();
    }

    /// `c`: cancel the gate (asks, naming it and what it cancels).
    pub(super) fn cancel_gate(&mut self) -> Command {
        let Some(gate) = self.acted_gate() else {
            self.say(Level::Info, "no batch, dependencies or tree selected");
            return Command::None;
        };
        let held = gate
            .waiters
            .iter()
            .filter(|w| w.decision == WaiterDecision::Held)
            .count();
        let finished = match gate.state {
            GateState::Done => held == 0,
            GateState::Cancelled => gate.pending == 0,
            GateState::Open | GateState::Sealed => false,
        };
        if finished {
            let text = format!(
                "{} {} is {} already: nothing to cancel",
                kind_word(gate.kind),
                inert(&gate.id),
                gate.state.as_str()
            );
            self.say(Level::Info, text);
            return Command::None;
        }
        if !self.may_mutate("cancelling a workflow") {
            return Command::None;
        }
        let named = format!("{} {}", kind_word(gate.kind), inert(&gate.id));
        let prompt = if gate.state == GateState::Done {
            format!(
                "Cancel the {} held waiting on {named}? It is done; {} cancelled.",
                super::plural(held, "job"),
                if held == 1 {
                    "that job is"
                } else {
                    "those jobs are"
                }
            )
        } else {
            let waiting = gate
                .waiters
                .iter()
                .filter(|w| w.decision == WaiterDecision::Pending)
                .count();
            let subtrees = match gate.kind {
                GateKind::Tree => " So are its subtrees, at every level.",
                GateKind::Batch | GateKind::Dependencies => "",
            };
            format!(
                "Cancel {named}? Its {} pending {} cancelled and {} waiting on it {}.{subtrees}",
                gate.pending,
                if gate.pending == 1 {
                    "member is"
                } else {
                    "members are"
                },
                super::plural(waiting, "job"),
                if waiting == 1 {
                    "is cancelled too"
                } else {
                    "are cancelled too"
                },
            )
        };
        self.ask(prompt, Mutation::CancelGate(gate.id))
    }

    /// `w` in the gate view: pick the next waiter (after the last, the
    /// first again).
    pub(super) fn next_waiter(&mut self) {
        let count = self
            .gate_shown()
            .and_then(|p| p.gate.as_ref())
            .map_or(0, |g| g.waiters.len());
        if let View::Gate(view) = &mut self.view {
            view.waiter = match count {
                0 => 0,
                n => (view.waiter + 1) % n,
            };
        }
    }

    /// The waiter `r` and `d` decide, with its place (from 1): in the gate
    /// view the one picked (`w`), on the Workflows screen the first held.
    fn acted_waiter(&self, gate: &Gate) -> Option<(usize, Waiter)> {
        let place = match &self.view {
            View::Gate(view) => view.waiter,
            _ => {
                let held = held_waiter(gate)?;
                gate.waiters.iter().position(|w| w.id == held.id)?
            }
        };
        gate.waiters.get(place).map(|w| (place + 1, w.clone()))
    }

    /// `r` / `d`: release or dead-letter a held waiter (asks, naming it):
    /// the one picked in the gate view, the first held on the Workflows
    /// screen.
    pub(super) fn decide_held(&mut self, release: bool) -> Command {
        let Some(gate) = self.acted_gate() else {
            self.say(Level::Info, "no batch, dependencies or tree selected");
            return Command::None;
        };
        let held = gate
            .waiters
            .iter()
            .filter(|w| w.decision == WaiterDecision::Held)
            .count();
        let picked = self.acted_waiter(&gate);
        let Some((place, waiter)) = picked
            .clone()
            .filter(|(_, w)| w.decision == WaiterDecision::Held)
        else {
            let text = match (held, picked) {
                (0, _) => format!(
                    "no job waiting on {} is held: only a held job is released or failed by hand",
                    inert(&gate.id)
                ),
                (_, Some((place, w))) => format!(
                    "waiter {place} of {}, {}, is {}: only a held job is released or failed by \
                     hand; w picks another",
                    gate.waiters.len(),
                    inert(&w.id),
                    w.decision.as_str()
                ),
                (_, None) => "no waiter picked: w picks one".to_owned(),
            };
            self.say(Level::Info, text);
            return Command::None;
        };
        let which = match (gate.waiters.len(), &self.view) {
            (1, _) => String::new(),
            (n, View::Gate(_)) => format!(" (waiter {place} of {n}, w picks another)"),
            (n, _) if held > 1 => format!(
                " (waiter {place} of {n}, the first of {held} held: Enter, then w picks another)"
            ),
            (n, _) => format!(" (waiter {place} of {n})"),
        };
        if !self.may_mutate(if release {
            "releasing a held job"
        } else {
            "dead-lettering a held job"
        }) {
            return Command::None;
        }
        let why = crate::workflow::why::waiter_why(&gate, &waiter);
        let prompt = if release {
            format!(
                "Release held job {}{which} into {} ({why})? It runs as if its {} had all \
                 succeeded.",
                inert(&waiter.id),
                inert(&waiter.queue),
                members_noun(gate.kind)
            )
        } else {
            format!(
                "Dead-letter held job {}{which} of {} ({why})? It does not run.",
                inert(&waiter.id),
                inert(&waiter.queue)
            )
        };
        self.ask(
            prompt,
            Mutation::DecideHeld {
                id: waiter.id,
                release,
            },
        )
    }
}
