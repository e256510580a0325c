//! Why a limiter starts nothing now, and why a key's held jobs wait: read
//! from the figures [`QueueLimits`] already holds (no call of its own), so
//! `redq limits list`, the console's Limits screen and a held job's detail
//! give the same reason.
//!
//! A queue-wide limit holds back jobs that are not in the held set: an
//! unkeyed due job waits in the queue's waiting jobs, and a key with room
//! of its own stays ready, while the queue has no room. So the jobs a
//! queue's own limit holds back are its unkeyed due jobs plus the held jobs
//! of its ready keys, whenever the queue-wide limit (or the queue's
//! push-back) has no room: [`QueueLimits::held_by_queue`].

use std::fmt;
use std::time::SystemTime;

use super::{KeyLimitUse, Limit, QueueLimits};
use crate::{QueueError, RedisQueue};

/// Why a limiter (a queue's own limit, or a key's) starts nothing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Blocked {
    /// A handler's push-back lasts until then.
    PushedBack(SystemTime),
    /// As many leased as its concurrency allows (`leased` of `of`).
    Concurrency {
        /// Leased now.
        leased: u64,
        /// Its concurrency.
        of: u32,
    },
    /// Its rate window is full (`started` of `of`).
    Rate {
        /// Started in the current window.
        started: u64,
        /// Its rate's max.
        of: u32,
    },
}

impl Blocked {
    /// What blocks a limiter with these figures now, if anything (a
    /// push-back first: it stops every start).
    pub(crate) fn of(
        limit: &Limit,
        leased: u64,
        started: u64,
        pushed_back_until: Option<SystemTime>,
    ) -> Option<Blocked> {
        if let Some(until) = pushed_back_until {
            return Some(Blocked::PushedBack(until));
        }
        if let Some(of) = limit.concurrency {
            if leased >= u64::from(of) {
                return Some(Blocked::Concurrency { leased, of });
            }
        }
        match limit.rate {
            Some(rate) if started >= u64::from(rate.max) => Some(Blocked::Rate {
                started,
                of: rate.max,
            }),
            _ => None,
        }
    }
}

/// `pushed back until 2026-12-07T16:56:33.123Z`, `at its concurrency (5/5
/// running)`, `its rate window is full (20/20 started)`.
impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::PushedBack(until) => {
                write!(f, "pushed back until {}", crate::human::time_text(*until))
            }
            Blocked::Concurrency { leased, of } => {
                write!(f, "at its concurrency ({leased}/{of} running)")
            }
            Blocked::Rate { started, of } => {
                write!(f, "its rate window is full ({started}/{of} started)")
            }
        }
    }
}

/// Why a key's held jobs (or a queue's unkeyed due jobs) are not running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeldBy {
    /// The queue is paused: nothing of it starts.
    Paused,
    /// The key's own limit (its override, else the each-key default).
    Key(Blocked),
    /// The queue-wide limit: the key has room, the queue has none.
    Queue(Blocked),
    /// Every limit has room: no worker has claimed them yet (none runs for
    /// the queue, or all are busy).
    NoWorker,
}

/// `the queue is paused`; `the key's limit: at its concurrency (2/2
/// running)`; `the queue-wide limit: its rate window is full (20/20
/// started)`; `ready: no worker claimed them`.
impl fmt::Display for HeldBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeldBy::Paused => f.write_str("the queue is paused"),
            HeldBy::Key(why) => write!(f, "the key's limit: {why}"),
            HeldBy::Queue(why) => write!(f, "the queue-wide limit: {why}"),
            HeldBy::NoWorker => f.write_str("ready: no worker claimed them"),
        }
    }
}

impl QueueLimits {
    /// What stops the queue-wide limit starting anything now (its figures
    /// as read; over shards, the first shard whose share has no room).
    pub fn queue_blocked(&self) -> Option<Blocked> {
        if !self.shards.is_empty() {
            return self.shards.iter().find_map(|s| s.blocked);
        }
        Blocked::of(
            &self.limit,
            self.leased,
            self.started_in_window,
            self.pushed_back_until,
        )
    }

    /// Why key `key`'s held jobs wait: the queue is paused, the key's own
    /// limit has no room, the queue-wide one has none, or none blocks them
    /// and no worker has claimed them. `None` when it holds none.
    pub fn why_key_held(&self, key: &KeyLimitUse) -> Option<HeldBy> {
        if key.held == 0 {
            return None;
        }
        Some(self.why(Some(key)))
    }

    /// Why a job of this queue waits (a held one of `key`, or an unkeyed
    /// due one for `None`).
    pub fn why(&self, key: Option<&KeyLimitUse>) -> HeldBy {
        if self.paused {
            return HeldBy::Paused;
        }
        if let Some(k) = key {
            if let Some(why) =
                Blocked::of(&k.limit, k.leased, k.started_in_window, k.pushed_back_until)
            {
                return HeldBy::Key(why);
            }
        }
        match self.queue_blocked() {
            Some(why) => HeldBy::Queue(why),
            None => HeldBy::NoWorker,
        }
    }
}

impl RedisQueue {
    /// `queue`'s limits with the one key `key` (its limit and use, whatever
    /// its state), read in one call without listing the others: what a
    /// held job's detail reads to say why it is held
    /// ([`QueueLimits::why`]).
    pub async fn limits_of_key(&self, queue: &str, key: &str) -> Result<QueueLimits, QueueError> {
        super::check_limit_key(key)?;
        self.limits_page(queue, Some(key)).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_push_back_comes_first_then_the_concurrency_then_the_rate() {
        let limit = Limit::concurrency(2).and_rate(5, Duration::from_secs(1));
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(10);
        assert_eq!(
            Blocked::of(&limit, 2, 5, Some(at)),
            Some(Blocked::PushedBack(at))
        );
        assert_eq!(
            Blocked::of(&limit, 2, 5, None),
            Some(Blocked::Concurrency { leased: 2, of: 2 })
        );
        assert_eq!(
            Blocked::of(&limit, 1, 5, None),
            Some(Blocked::Rate { started: 5, of: 5 })
        );
        assert_eq!(Blocked::of(&limit, 1, 4, None), None);
        assert_eq!(Blocked::of(&Limit::none(), 100, 100, None), None);
        assert_eq!(
            HeldBy::Queue(Blocked::Rate { started: 2, of: 2 }).to_string(),
            "the queue-wide limit: its rate window is full (2/2 started)"
        );
        assert_eq!(
            HeldBy::NoWorker.to_string(),
            "ready: no worker claimed them"
        );
    }
}
