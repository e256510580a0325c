//! One row per limiter, the way `redq limits list` and the console's
//! Limits screen show them: a queue's own limit, its each-key default,
//! then its keys. Plain data (no Redis, no clock), so both are pure
//! functions of these rows and a time.

use std::time::SystemTime;

use redq::flow::{HeldBy, Limit, LimitScope, QueueLimits};

use crate::clock;
use crate::text::inert;

/// Which limiter a row is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The queue as a whole.
    Queue,
    /// The default every limit key of the queue gets.
    EachKey,
    /// One limit key.
    Key {
        /// The key.
        key: String,
        /// Whether it has a limit of its own (else the each-key default
        /// applies to it).
        overridden: bool,
    },
}

/// One limiter and its use now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimiterRow {
    /// The queue.
    pub queue: String,
    /// Which limiter.
    pub scope: Scope,
    /// The limit in force (a key's own, else the each-key default).
    pub limit: Limit,
    /// Jobs leased now; `None` for the each-key default, which is a rule
    /// for keys rather than a count of its own.
    pub leased: Option<u64>,
    /// Jobs started in the current rate window; `None` as for `leased`.
    pub started: Option<u64>,
    /// Jobs held back by this limiter: on the queue row the due jobs its
    /// own limit blocks (unkeyed ones, and those of keys with room of
    /// their own), on a key row the key's held jobs (whichever limit holds
    /// them: see `why`).
    pub held: Option<u64>,
    /// On the queue row, every job of the queue waiting on a limit: held
    /// by a key, or blocked by the queue's own.
    pub held_in_all: Option<u64>,
    /// Nothing starts before this (a handler's push-back after a 429).
    pub pushed_back_until: Option<SystemTime>,
    /// WHY: what holds the row's jobs, in words (`the queue-wide limit: at
    /// its concurrency (5/5 running)`, `ready: no worker claimed them`,
    /// `paused`, `split over 3 shards: 4, 3, 3 at once`), `—` for nothing.
    pub why: Vec<String>,
}

impl LimiterRow {
    /// A key that follows the rows when they move (the console's cursor).
    pub fn row_key(&self) -> String {
        match &self.scope {
            Scope::Queue => format!("{}\nqueue", self.queue),
            Scope::EachKey => format!("{}\neach", self.queue),
            Scope::Key { key, .. } => format!("{}\nkey\n{key}", self.queue),
        }
    }

    /// The limit key of a key row.
    pub fn key(&self) -> Option<&str> {
        match &self.scope {
            Scope::Key { key, .. } => Some(key),
            _ => None,
        }
    }

    /// SCOPE: `queue`, `each key`, `key` (the default applies), `key, own`.
    pub fn scope_text(&self) -> &'static str {
        match &self.scope {
            Scope::Queue => "queue",
            Scope::EachKey => "each key",
            Scope::Key {
                overridden: false, ..
            } => "key",
            Scope::Key {
                overridden: true, ..
            } => "key, own",
        }
    }

    /// KEY: the limit key, `—` for the queue's rows.
    pub fn key_text(&self) -> String {
        self.key().unwrap_or("—").to_owned()
    }

    /// LIMIT: `5 at once, 100/1s`; `as each key` for a key the default
    /// covers (its numbers are in IN USE and STARTED); `none`.
    pub fn limit_text(&self) -> String {
        if matches!(
            self.scope,
            Scope::Key {
                overridden: false,
                ..
            }
        ) && !self.limit.is_none()
        {
            return "as each key".to_owned();
        }
        self.limit.to_string()
    }

    /// IN USE: `3/5` (leased of the concurrency), `3` without one.
    pub fn in_use_text(&self) -> String {
        used_of(self.leased, self.limit.concurrency)
    }

    /// STARTED: `87/100` (in the window of the rate), `—` without a rate.
    pub fn started_text(&self) -> String {
        match self.limit.rate {
            Some(rate) => used_of(self.started, Some(rate.max)),
            None => "—".to_owned(),
        }
    }

    /// HELD.
    pub fn held_text(&self) -> String {
        self.held.map_or("—".to_owned(), |n| n.to_string())
    }

    /// WHY: its reasons joined, `—` for none.
    pub fn why_text(&self) -> String {
        match self.why.is_empty() {
            true => "—".to_owned(),
            false => self.why.join("; "),
        }
    }

    /// PUSHED BACK: `for 12s` while it lasts, else `—`.
    pub fn pushed_back_text(&self, now: SystemTime) -> String {
        match self.pushed_back_until {
            Some(until) if until > now => {
                let left = until.duration_since(now).unwrap_or_default();
                format!("for {}", clock::compact(left))
            }
            _ => "—".to_owned(),
        }
    }
}

/// A scope as sentences say it, the CLI's and the console's alike:
/// `queue-wide`, `each-key`, `key "acme"` (as in "the each-key limit").
pub fn scope_text(scope: &LimitScope) -> String {
    match scope {
        LimitScope::Queue => "queue-wide".to_owned(),
        LimitScope::EachKey => "each-key".to_owned(),
        LimitScope::Key(key) => format!("key {}", inert(&format!("{key:?}"))),
    }
}

/// The rows of one queue: its own limit, its each-key default (when one
/// is set), then its keys, most held first (then by key), since those are
/// what an operator looks for.
pub fn rows_of(limits: &QueueLimits) -> Vec<LimiterRow> {
    let blocked = limits.queue_blocked();
    let mut rows = vec![LimiterRow {
        queue: limits.queue.clone(),
        scope: Scope::Queue,
        limit: limits.limit,
        leased: Some(limits.leased),
        started: Some(limits.started_in_window),
        held: Some(limits.held_by_queue),
        held_in_all: Some(limits.held + blocked.map_or(0, |_| limits.waiting)),
        pushed_back_until: limits.pushed_back_until,
        why: queue_why(limits),
    }];
    if !limits.each_key.is_none() {
        rows.push(LimiterRow {
            queue: limits.queue.clone(),
            scope: Scope::EachKey,
            limit: limits.each_key,
            leased: None,
            started: None,
            held: None,
            held_in_all: None,
            pushed_back_until: None,
            why: Vec::new(),
        });
    }
    let mut keys: Vec<_> = limits.keys.iter().collect();
    keys.sort_by(|a, b| b.held.cmp(&a.held).then(a.key.cmp(&b.key)));
    rows.extend(keys.into_iter().map(|k| {
        LimiterRow {
            queue: limits.queue.clone(),
            scope: Scope::Key {
                key: k.key.clone(),
                overridden: k.overridden,
            },
            limit: k.limit,
            leased: Some(k.leased),
            started: Some(k.started_in_window),
            held: Some(k.held),
            held_in_all: None,
            pushed_back_until: k.pushed_back_until,
            why: limits
                .why_key_held(k)
                .map(|why| vec![why.to_string()])
                .unwrap_or_default(),
        }
    }));
    rows
}

/// The queue row's WHY: paused; what blocks its own limit; its unkeyed due
/// jobs ready with no worker to claim them; over shards, the shares and
/// each shard whose share has no room.
fn queue_why(limits: &QueueLimits) -> Vec<String> {
    let mut why = Vec::new();
    if limits.paused {
        why.push("paused".to_owned());
    }
    let blocked = limits.queue_blocked();
    if let (false, Some(b)) = (limits.paused, blocked) {
        why.push(b.to_string());
    }
    if !limits.paused && blocked.is_none() && limits.waiting > 0 && limits.leased == 0 {
        why.push(HeldBy::NoWorker.to_string());
    }
    if let Some(split) = split_text(limits) {
        why.push(split);
    }
    for (i, shard) in limits.shards.iter().enumerate() {
        if let (Some(b), false) = (shard.blocked, limits.limit.is_none()) {
            why.push(format!("shard {i}: {b}"));
        }
    }
    why
}

/// `split over 3 shards: 4, 3, 3 at once; 2, 2, 1 per 1s`: each shard's
/// share of the queue-wide limit, which it enforces on its own.
pub fn split_text(limits: &QueueLimits) -> Option<String> {
    if limits.shards.is_empty() || limits.limit.is_none() {
        return None;
    }
    let list = |f: &dyn Fn(&Limit) -> Option<u32>| {
        let shares: Option<Vec<String>> = limits
            .shards
            .iter()
            .map(|s| f(&s.limit).map(|n| n.to_string()))
            .collect();
        shares.map(|s| s.join(", "))
    };
    let mut parts = Vec::new();
    if let Some(c) = list(&|l: &Limit| l.concurrency) {
        parts.push(format!("{c} at once"));
    }
    if let (Some(r), Some(rate)) = (list(&|l: &Limit| l.rate.map(|r| r.max)), limits.limit.rate) {
        let per = rate.to_string();
        let per = per.split_once('/').map_or("", |(_, per)| per).to_owned();
        parts.push(format!("{r} per {per}"));
    }
    Some(format!(
        "split over {} shards: {}",
        limits.shards.len(),
        parts.join("; ")
    ))
}

fn used_of(used: Option<u64>, of: Option<u32>) -> String {
    match (used, of) {
        (None, _) => "—".to_owned(),
        (Some(n), Some(max)) => format!("{n}/{max}"),
        (Some(n), None) => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn row(scope: Scope, limit: Limit) -> LimiterRow {
        LimiterRow {
            queue: "emails".into(),
            scope,
            limit,
            leased: Some(3),
            started: Some(87),
            held: Some(12),
            held_in_all: Some(12),
            pushed_back_until: None,
            why: Vec::new(),
        }
    }

    const BOTH: Limit = Limit {
        concurrency: Some(5),
        rate: Some(redq::flow::Rate {
            max: 100,
            per: Duration::from_secs(1),
        }),
    };

    #[test]
    fn cells_say_the_limit_and_its_use() {
        let queue = row(Scope::Queue, BOTH);
        assert_eq!(queue.scope_text(), "queue");
        assert_eq!(queue.key_text(), "—");
        assert_eq!(queue.limit_text(), "5 at once, 100/1s");
        assert_eq!(queue.in_use_text(), "3/5");
        assert_eq!(queue.started_text(), "87/100");
        assert_eq!(queue.held_text(), "12");
        let open = row(Scope::Queue, Limit::none());
        assert_eq!(open.limit_text(), "none");
        assert_eq!(open.in_use_text(), "3");
        assert_eq!(open.started_text(), "—");
    }

    #[test]
    fn a_key_says_whether_its_limit_is_its_own() {
        let key = |overridden| Scope::Key {
            key: "acme".into(),
            overridden,
        };
        let default = row(key(false), BOTH);
        assert_eq!(default.scope_text(), "key");
        assert_eq!(default.limit_text(), "as each key");
        assert_eq!(default.in_use_text(), "3/5");
        let own = row(key(true), BOTH);
        assert_eq!(own.scope_text(), "key, own");
        assert_eq!(own.limit_text(), "5 at once, 100/1s");
        assert_eq!(own.key_text(), "acme");
        assert_eq!(row(key(false), Limit::none()).limit_text(), "none");
    }

    #[test]
    fn a_push_back_shows_while_it_lasts() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let mut r = row(Scope::Queue, BOTH);
        r.pushed_back_until = Some(now + Duration::from_secs(12));
        assert_eq!(r.pushed_back_text(now), "for 12s");
        assert_eq!(r.pushed_back_text(now + Duration::from_secs(12)), "—");
    }
}
