//! Which calls go to a script's variant (`lua/README.md`, "Variants"), for
//! the variants whose need the driver cannot know before the call.
//!
//! An enqueue's needs follow from its jobs' options, which the driver has
//! in hand (`queue.rs`, `send_jobs`). An ack's follow also from the queue's
//! state in Redis (whether it keeps finished jobs or has limits, whether
//! gates exist) and from each job's record (a dedup or ordering key): so an
//! ack goes to `ack_plain` first, and a call the variant refuses (before
//! writing anything) is sent again to the whole script. The queue is then
//! remembered for as long as the handle lives, so its later acks go whole
//! at once: what makes a queue's acks need the whole script (a retention
//! policy, limits, keyed jobs) is seldom undone, and a remembered queue
//! costs only the keys the variant would have saved.

use std::collections::HashSet;
use std::sync::RwLock;

use crate::QueueError;

/// The first words of a variant's refusal (`lua/lib/check.lua`
/// `variant_refused`), after `redq: `.
const VARIANT_REFUSED: &str = "variant refused: ";

/// Whether `err` is a variant's refusal of a call that needs the whole
/// script: nothing was written.
pub(crate) fn refused_by_variant(err: &QueueError) -> bool {
    matches!(err, QueueError::Protocol(message)
        if message.strip_prefix(super::REFUSED_INPUT).is_some_and(|m| m.starts_with(VARIANT_REFUSED)))
}

/// The queues whose acks this handle sends to the whole ack script.
#[derive(Default)]
pub(crate) struct WholeAcks(RwLock<HashSet<String>>);

impl WholeAcks {
    /// Whether `queue`'s acks go to the whole script.
    pub fn contains(&self, queue: &str) -> bool {
        self.0.read().expect("whole acks").contains(queue)
    }

    /// Send `queue`'s acks to the whole script from now on.
    pub fn insert(&self, queue: &str) {
        self.0.write().expect("whole acks").insert(queue.to_owned());
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
        let whole = WholeAcks::default();
        assert!(!whole.contains("q"));
        whole.insert("q");
        assert!(whole.contains("q") && !whole.contains("r"));
    }
}
