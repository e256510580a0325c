//! Which calls go to a script's variant (`lua/README.md`, "Variants"), for
//! the variants whose need the driver cannot know before the call.
//!
//! An enqueue's needs follow from its jobs' options, which the driver has
//! in hand (`queue.rs`, `send_jobs`). An ack's and a claim's follow from
//! the queue's state in Redis, which the driver does not know before the
//! call: so such a call goes to the variant first, and a call the variant
//! refuses (before writing anything) is sent again to the whole script.
//! The queue is then remembered, so its next calls go whole at once:
//!
//! - an ack's, for as long as the handle lives: what makes a queue's acks
//!   need the whole script (a retention policy, limits, keyed jobs, gates)
//!   is seldom undone, and a remembered queue costs only the keys the
//!   variant would have saved;
//! - a claim's, for [`CLAIMS_GO_WHOLE_FOR`]: what makes a claim need the
//!   whole script is mostly work that comes and goes (a retry or a delayed
//!   job come due, a lapsed lease, a released ordering successor), and a
//!   queue remembered for good after its first due retry would never claim
//!   through the variant again. A queue that always needs the whole script
//!   (one with limits) pays one refused call that long.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use crate::QueueError;

/// The first words of a variant's refusal (`lua/lib/check.lua`
/// `variant_refused`), after `redq: `.
const VARIANT_REFUSED: &str = "variant refused: ";

/// How long a queue whose claim the variant refused claims through the
/// whole script: one refused call at most this often a queue and handle.
pub(crate) const CLAIMS_GO_WHOLE_FOR: Duration = Duration::from_secs(30);

/// Whether `err` is a variant's refusal of a call that needs the whole
/// script: nothing was written.
pub(crate) fn refused_by_variant(err: &QueueError) -> bool {
    matches!(err, QueueError::Protocol(message)
        if message.strip_prefix(super::REFUSED_INPUT).is_some_and(|m| m.starts_with(VARIANT_REFUSED)))
}

/// The queues whose calls of one script this handle sends to the whole
/// script, each since when it was remembered.
pub(crate) struct WholeQueues {
    /// How long a queue is remembered; `None`: for the handle's life.
    remembered_for: Option<Duration>,
    since: RwLock<HashMap<String, Instant>>,
}

impl WholeQueues {
    /// Queues remembered for the handle's life (acks).
    pub fn for_good() -> Self {
        WholeQueues {
            remembered_for: None,
            since: RwLock::default(),
        }
    }

    /// Queues remembered for `length` after each refusal (claims).
    pub fn for_a_while(length: Duration) -> Self {
        WholeQueues {
            remembered_for: Some(length),
            since: RwLock::default(),
        }
    }

    /// Whether `queue`'s calls go to the whole script now.
    pub fn contains(&self, queue: &str) -> bool {
        let since = self.since.read().expect("whole queues");
        since.get(queue).is_some_and(|at| {
            self.remembered_for
                .is_none_or(|length| at.elapsed() < length)
        })
    }

    /// Send `queue`'s calls to the whole script from now on.
    pub fn insert(&self, queue: &str) {
        let mut since = self.since.write().expect("whole queues");
        since.insert(queue.to_owned(), Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marker is the one the scripts write.
    #[test]
    fn the_marker_is_the_scripts_refusal() {
        let check = include_str!("../../../lua/lib/check.lua");
        assert!(
            check.contains(&format!("fail('{VARIANT_REFUSED}")),
            "lua/lib/check.lua variant_refused must begin with {VARIANT_REFUSED:?}"
        );
        let refused = QueueError::Protocol(format!(
            "{}{VARIANT_REFUSED}this variant of ack takes no call with a queue with limits",
            super::super::REFUSED_INPUT
        ));
        assert!(refused_by_variant(&refused));
        let other = QueueError::Protocol(format!(
            "{}ack count must be a whole number",
            super::super::REFUSED_INPUT
        ));
        assert!(!refused_by_variant(&other));
    }

    #[test]
    fn a_queue_is_remembered() {
        let whole = WholeQueues::for_good();
        assert!(!whole.contains("q"));
        whole.insert("q");
        assert!(whole.contains("q") && !whole.contains("r"));
    }

    #[test]
    fn a_queue_remembered_for_a_while_is_forgotten_after_it() {
        let whole = WholeQueues::for_a_while(Duration::from_millis(30));
        whole.insert("q");
        assert!(whole.contains("q"));
        let deadline = Instant::now() + Duration::from_secs(5);
        while whole.contains("q") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!whole.contains("q"), "still remembered after 5 s");
        // Refused again: remembered again, from then.
        whole.insert("q");
        assert!(whole.contains("q"));
    }
}
