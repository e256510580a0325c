//! How a worker hears that work is due, as its registry record shows it.
//!
//! The scripts publish wake-ups and hand-offs on shard channels where the
//! server takes `SPUBLISH` (`lua/lib/notify.lua`). A worker that could
//! subscribe only plainly (a server before Redis 7.0, or an ACL without
//! `+ssubscribe`) still gets its hand-offs, but misses wake-ups published on
//! shard channels and starts such work only at its next poll (`max_idle`).
//! Operators read this in `redq workers` and the console's Workers screen,
//! for example to check that every worker was upgraded before the producers
//! (docs/cluster.md, "Wake-ups on shard channels").

use std::sync::atomic::{AtomicU8, Ordering};

use serde::Serialize;

/// What a worker's wake-up listener is subscribed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WakeUps {
    /// Shard channels as well as plain ones: it hears every wake-up.
    Shard,
    /// Plain channels only: where the scripts may `SPUBLISH`, it starts
    /// work that was not handed to it only at its next poll.
    Plain,
    /// No subscription (pub/sub refused, or its connection is down): it
    /// looks at its queues every `max_idle`.
    Polls,
}

impl WakeUps {
    /// What the subscriptions made say: the plain one, the shard one.
    pub(crate) fn from_subscriptions(plain: bool, shard: bool) -> WakeUps {
        match (plain, shard) {
            (_, true) => WakeUps::Shard,
            (true, false) => WakeUps::Plain,
            (false, false) => WakeUps::Polls,
        }
    }

    /// The word the registry record stores and screens show.
    pub fn as_str(self) -> &'static str {
        match self {
            WakeUps::Shard => "shard",
            WakeUps::Plain => "plain",
            WakeUps::Polls => "polls",
        }
    }

    /// Read back from the registry record; `None` for a word this version
    /// does not know.
    pub fn parse(word: &str) -> Option<WakeUps> {
        [WakeUps::Shard, WakeUps::Plain, WakeUps::Polls]
            .into_iter()
            .find(|w| w.as_str() == word)
    }
}

/// One listener's [`WakeUps`], shared with the heartbeat that reports it
/// (one of each per namespace a worker serves).
#[derive(Debug)]
pub(crate) struct WakeUpsCell(AtomicU8);

impl Default for WakeUpsCell {
    /// Polls until the listener has subscribed.
    fn default() -> Self {
        WakeUpsCell(AtomicU8::new(WakeUps::Polls as u8))
    }
}

impl WakeUpsCell {
    pub fn set(&self, wake_ups: WakeUps) {
        self.0.store(wake_ups as u8, Ordering::Release);
    }

    pub fn get(&self) -> WakeUps {
        match self.0.load(Ordering::Acquire) {
            v if v == WakeUps::Shard as u8 => WakeUps::Shard,
            v if v == WakeUps::Plain as u8 => WakeUps::Plain,
            _ => WakeUps::Polls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cell_reads_back_what_was_set() {
        let cell = WakeUpsCell::default();
        assert_eq!(cell.get(), WakeUps::Polls);
        for wake_ups in [WakeUps::Shard, WakeUps::Plain, WakeUps::Polls] {
            cell.set(wake_ups);
            assert_eq!(cell.get(), wake_ups);
        }
    }

    #[test]
    fn the_record_word_reads_back_and_an_unknown_one_is_none() {
        for wake_ups in [WakeUps::Shard, WakeUps::Plain, WakeUps::Polls] {
            assert_eq!(WakeUps::parse(wake_ups.as_str()), Some(wake_ups));
        }
        assert_eq!(WakeUps::parse("carrier-pigeon"), None);
    }

    #[test]
    fn a_shard_subscription_hears_every_wake_up() {
        assert_eq!(WakeUps::from_subscriptions(true, true), WakeUps::Shard);
        assert_eq!(WakeUps::from_subscriptions(true, false), WakeUps::Plain);
        assert_eq!(WakeUps::from_subscriptions(false, false), WakeUps::Polls);
    }
}
