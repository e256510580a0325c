//! The attempt count a requeue restarts at, typed into its confirmation:
//! digits append, Backspace erases, and a count the jobs could not run
//! under is refused before anything is sent.
//!
//! Which counts are refused, and why, is `crate::requeue_attempts`'s: the
//! CLI's `--attempts` refuses the same ones.

pub(super) use crate::requeue_attempts::lowest_max_attempts;
use crate::requeue_attempts::refusal;

use super::Confirm;

impl Confirm {
    /// The question as shown: a requeue also says where attempts restart,
    /// and why that count is refused when it is.
    pub fn text(&self) -> String {
        let Some(attempts) = self.mutation.attempts() else {
            return self.prompt.clone();
        };
        match self.attempts_refusal() {
            None => format!("{} Attempts restart at {attempts}.", self.prompt),
            Some(refusal) => format!("{} {}.", self.prompt, capitalized(&refusal)),
        }
    }

    /// Why the attempt count typed cannot be sent, as a status message;
    /// `None` when it can (or this is not a requeue).
    pub fn attempts_refusal(&self) -> Option<String> {
        let attempts = self.mutation.attempts()?;
        let below = self.attempts_below?;
        (attempts >= below).then(|| refusal(attempts, below))
    }

    /// Append digit `d` to a requeue's attempt count. A count too large to
    /// store is refused and left as it was.
    pub(super) fn type_attempts_digit(&mut self, d: u8) -> Result<(), String> {
        let Some(attempts) = self.mutation.attempts_mut() else {
            return Ok(());
        };
        match attempts
            .checked_mul(10)
            .and_then(|n| n.checked_add(u32::from(d)))
        {
            Some(n) => {
                *attempts = n;
                Ok(())
            }
            None => Err(format!("attempts refused: accepted are 0 to {}", u32::MAX)),
        }
    }

    /// Erase the last digit of a requeue's attempt count.
    pub(super) fn erase_attempts_digit(&mut self) {
        if let Some(attempts) = self.mutation.attempts_mut() {
            *attempts /= 10;
        }
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
