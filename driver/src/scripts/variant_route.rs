//! Which calls go to a script's variant (`lua/README.md`, "Variants"), for
//! the variants whose need the driver cannot know before the call.
//!
//! An enqueue's needs follow from its jobs' options, which the driver has
//! in hand (`queue.rs`, `send_jobs`). An ack's and a claim's follow from
//! the queue's state in Redis and from its jobs' records, which the driver
//! does not know before the call: so such a call goes to the variant
//! first, and a call the variant refuses (before writing anything) is sent
//! again to the whole script. The queue's calls of that script then go
//! whole at once for [`REMEMBERED_FOR`], not for good: much of what makes
//! a call need the whole script comes and goes (a retry's backoff ending,
//! a lease lapsing, a job with a dedup or ordering key among plain ones,
//! gates while a workflow runs), and a queue remembered for good after its
//! first such call would never use the variant again. A queue that always
//! needs the whole script (one that keeps finished jobs, or has limits)
//! pays one refused call that often, which wrote nothing.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use crate::QueueError;

/// The first words of a variant's refusal (`lua/lib/check.lua`
/// `variant_refused`), after `redq: `.
const VARIANT_REFUSED: &str = "variant refused: ";

/// How long a queue whose call a variant refused sends that script's
/// calls to the whole script: at most one refused call this often a
/// queue, script and handle.
pub(crate) const REMEMBERED_FOR: Duration = Duration::from_secs(30);

/// Whether `err` is a variant's refusal of a call that needs the whole
/// script: nothing was written.
pub(crate) fn refused_by_variant(err: &QueueError) -> bool {
    matches!(err, QueueError::Protocol(message)
        if message.strip_prefix(super::REFUSED_INPUT).is_some_and(|m| m.starts_with(VARIANT_REFUSED)))
}

/// The queues whose calls of one script this handle sends to the whole
/// script, each with when it was last refused.
pub(crate) struct WholeQueues {
    remembered_for: Duration,
    since: RwLock<HashMap<String, Instant>>,
}

impl Default for WholeQueues {
    fn default() -> Self {
        WholeQueues::remembering_for(REMEMBERED_FOR)
    }
}

impl WholeQueues {
    /// Queues remembered for `length` after each refusal.
    fn remembering_for(length: Duration) -> Self {
        WholeQueues {
            remembered_for: length,
            since: RwLock::default(),
        }
    }

    /// Whether `queue`'s calls go to the whole script now.
    pub fn contains(&self, queue: &str) -> bool {
        let since = self.since.read().expect("whole queues");
        since
            .get(queue)
            .is_some_and(|at| at.elapsed() < self.remembered_for)
    }

    /// Send `queue`'s calls to the whole script from now on, for a while.
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
    fn a_queue_is_remembered_for_a_while_and_forgotten_after_it() {
        let whole = WholeQueues::default();
        assert!(!whole.contains("q"));
        whole.insert("q");
        assert!(whole.contains("q") && !whole.contains("r"));

        let whole = WholeQueues::remembering_for(Duration::from_millis(30));
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
