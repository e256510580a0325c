//! The attempt count a requeue restarts at, typed into its confirmation:
//! digits append, Backspace erases, and a count the jobs could not run
//! under is refused before anything is sent.
//!
//! The driver accepts any count (a job whose max attempts is not above it
//! gets one more try); the console refuses those counts instead, because
//! an operator typing one expects the job to get `max - count` tries, and
//! a count at or above the maximum would silently give it one.

use redq::JobRecord;

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

/// The lowest max attempts among `jobs`, unlimited ones (0) aside: the
/// bound a requeue's attempt count stays below.
pub(super) fn lowest_max_attempts<'a>(
    jobs: impl IntoIterator<Item = &'a JobRecord>,
) -> Option<u32> {
    jobs.into_iter()
        .map(|j| j.max_attempts)
        .filter(|&max| max > 0)
        .min()
}

fn refusal(attempts: u32, below: u32) -> String {
    let accepted = match below {
        1 => "only 0 is accepted".to_owned(),
        _ => format!("accepted are 0 to {}", below - 1),
    };
    format!("attempts {attempts} refused: {accepted} (max attempts is {below})")
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
