//! Reading a queue's limits and their use now: [`QueueLimits`] and
//! [`KeyLimitUse`], decoded from `lua/limits_get.lua`, which answers one
//! atomic page at a time.

use std::collections::BTreeMap;
use std::time::SystemTime;

use fred::interfaces::HashesInterface;
use fred::types::Value;
use serde::Serialize;

use super::{Limit, MAX_LISTED_KEYS};
use crate::job::ms_to_time;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{QueueError, RedisQueue};

/// How many keys one `limits_get` call reads (its most).
const KEYS_PER_CALL: u64 = 1000;

/// A queue's limits and their use, as [`RedisQueue::limits`] reads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueLimits {
    /// The queue.
    pub queue: String,
    /// The queue-wide limit ([`Limit::none`] when unset). Over shards: the
    /// shares added back up.
    pub limit: Limit,
    /// The default limit of every limit key of the queue.
    pub each_key: Limit,
    /// Jobs of the queue leased now (keyed or not, counted while the queue
    /// is flow-aware).
    pub leased: u64,
    /// Starts recorded in the queue-wide rate's current window (0 without
    /// a queue-wide rate).
    pub started_in_window: u64,
    /// The queue's own push-back, while it lasts (a rate-limited job
    /// without a limit key).
    pub pushed_back_until: Option<SystemTime>,
    /// Jobs held back by their key's limits.
    pub held: u64,
    /// The queue's due jobs without a limit key, waiting to be claimed.
    pub waiting: u64,
    /// The jobs the queue's own limit (or its push-back) holds back now:
    /// its unkeyed due jobs and the held jobs of its keys that have room of
    /// their own, while the queue-wide limit has none (see
    /// [`QueueLimits::queue_blocked`]); 0 while it has room. Over the keys
    /// listed (all of them unless the listing was capped).
    pub held_by_queue: u64,
    /// The queue is paused (over shards: on any shard).
    pub paused: bool,
    /// Every limit key with use, held jobs, a push-back or an override,
    /// sorted by key (at most [`MAX_LISTED_KEYS`]).
    pub keys: Vec<KeyLimitUse>,
    /// Over shards, each shard's part in shard order (its share of the
    /// queue-wide limit and its use); empty on one Redis.
    pub shards: Vec<ShardLimit>,
}

/// One shard's part of a sharded queue's limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShardLimit {
    /// Its share of the queue-wide limit.
    pub limit: Limit,
    /// Its jobs leased now.
    pub leased: u64,
    /// Its starts in the queue-wide rate's current window.
    pub started_in_window: u64,
    /// Its jobs held by their keys.
    pub held: u64,
    /// The jobs its share holds back (as [`QueueLimits::held_by_queue`]).
    pub held_by_queue: u64,
    /// It is paused.
    pub paused: bool,
    /// What stops its share starting anything now, if anything.
    pub blocked: Option<super::Blocked>,
}

/// One limit key's limit and use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyLimitUse {
    /// The limit key.
    pub key: String,
    /// The limit that applies to it: its override, else the each-key default.
    pub limit: Limit,
    /// Whether it has an override of its own.
    pub overridden: bool,
    /// Its jobs leased now.
    pub leased: u64,
    /// Its jobs held back now.
    pub held: u64,
    /// Its starts in its rate's current window.
    pub started_in_window: u64,
    /// Its push-back, while it lasts.
    pub pushed_back_until: Option<SystemTime>,
    /// It has held jobs and room: the next claim takes its best one.
    pub ready: bool,
}

impl QueueLimits {
    fn empty(queue: &str) -> QueueLimits {
        QueueLimits {
            queue: queue.to_owned(),
            limit: Limit::none(),
            each_key: Limit::none(),
            leased: 0,
            started_in_window: 0,
            pushed_back_until: None,
            held: 0,
            waiting: 0,
            held_by_queue: 0,
            paused: false,
            keys: Vec::new(),
            shards: Vec::new(),
        }
    }

    /// Fill in what follows from the figures read: what blocks the queue,
    /// and so the jobs its own limit holds back.
    fn settle(&mut self) {
        self.held_by_queue = match self.queue_blocked() {
            Some(_) => {
                let ready: u64 = self.keys.iter().filter(|k| k.ready).map(|k| k.held).sum();
                self.waiting + ready
            }
            None => 0,
        };
    }
}

impl RedisQueue {
    /// `queue`'s limits and their use now: the queue-wide limit, the
    /// each-key default, and every key with use, held jobs, a push-back or
    /// an override (sorted by key, at most [`MAX_LISTED_KEYS`]). Read in
    /// pages of 1000 keys, each an atomic snapshot; a queue without limits
    /// reads as [`Limit::none`] everywhere and no keys.
    pub async fn limits(&self, queue: &str) -> Result<QueueLimits, QueueError> {
        self.limits_up_to(queue, MAX_LISTED_KEYS).await
    }

    /// [`RedisQueue::limits`] reading at most about `max_keys` keys (whole
    /// pages of 1000): what a screen that refreshes every second can afford
    /// on a queue with very many limit keys. The queue-wide figures and
    /// `held` are whole either way.
    pub async fn limits_up_to(
        &self,
        queue: &str,
        max_keys: usize,
    ) -> Result<QueueLimits, QueueError> {
        self.read_limits(queue, max_keys, None).await
    }

    /// One page with the one key `only` (see [`RedisQueue::limits_of_key`]).
    pub(crate) async fn limits_page(
        &self,
        queue: &str,
        only: Option<&str>,
    ) -> Result<QueueLimits, QueueError> {
        self.read_limits(queue, 1, only).await
    }

    async fn read_limits(
        &self,
        queue: &str,
        max_keys: usize,
        only: Option<&str>,
    ) -> Result<QueueLimits, QueueError> {
        let max_keys = max_keys.clamp(1, MAX_LISTED_KEYS);
        let mut limits = QueueLimits::empty(queue);
        let mut keys: BTreeMap<String, KeyLimitUse> = BTreeMap::new();
        let mut cursor = "0".to_owned();
        let mut first = true;
        loop {
            let mut args = vec![text(cursor.as_str()), num(KEYS_PER_CALL)];
            if let Some(key) = only {
                args.push(text(key));
            }
            let items = reply::array(self.run(Op::LimitsGet, queue, args).await?)?;
            let page = Page::decode(items)?;
            if first {
                limits.limit = page.queue_limit;
                limits.each_key = page.each_key;
                limits.leased = page.leased;
                limits.started_in_window = page.started_in_window;
                limits.pushed_back_until = page.pushed_back_until;
                limits.waiting = page.waiting;
                limits.paused = page.paused;
                first = false;
            }
            for key in page.keys {
                // A key can come twice: once as an override, once from the
                // scan of the use counters (which may repeat an entry).
                let key = KeyLimitUse {
                    limit: key.override_limit.unwrap_or(limits.each_key),
                    overridden: key.override_limit.is_some(),
                    key: key.key,
                    leased: key.leased,
                    held: key.held,
                    started_in_window: key.started_in_window,
                    pushed_back_until: key.pushed_back_until,
                    ready: key.ready,
                };
                keys.insert(key.key.clone(), key);
            }
            cursor = page.next_cursor;
            if cursor == "0" || keys.len() >= max_keys {
                break;
            }
        }
        let complete = cursor == "0";
        limits.keys = keys.into_values().take(max_keys).collect();
        // Only keyed jobs are held, each counted under its key; past the
        // listing's cap the queue's own count is asked for.
        limits.held = if complete || only.is_some() {
            limits.keys.iter().map(|k| k.held).sum()
        } else {
            self.counts(queue).await?.held
        };
        limits.settle();
        Ok(limits)
    }

    /// Every queue of this namespace that has limits, sorted: those with a
    /// limit set, and those that became flow-aware without one (a keyed
    /// enqueue, a push-back; see the [module docs](super)).
    pub async fn limited_queues(&self) -> Result<Vec<String>, QueueError> {
        let fields: Vec<String> = self
            .client()
            .hkeys(self.inner.keys.limits())
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        // Overrides are "<queue>\n<key>"; queue names hold no control chars.
        let mut queues: Vec<String> = fields.into_iter().filter(|f| !f.contains('\n')).collect();
        queues.sort();
        Ok(queues)
    }
}

/// One page of `lua/limits_get.lua`'s reply.
struct Page {
    queue_limit: Limit,
    each_key: Limit,
    leased: u64,
    started_in_window: u64,
    pushed_back_until: Option<SystemTime>,
    next_cursor: String,
    waiting: u64,
    paused: bool,
    keys: Vec<KeyPage>,
}

struct KeyPage {
    key: String,
    override_limit: Option<Limit>,
    leased: u64,
    held: u64,
    started_in_window: u64,
    pushed_back_until: Option<SystemTime>,
    ready: bool,
}

/// The head of the reply, before the keys.
const HEAD: usize = 9;
/// Entries per key.
const PER_KEY: usize = 7;

impl Page {
    /// `{ now, queue_spec, queue_leased, queue_started_in_window,
    /// queue_pushed_back_until, each_key_spec, next_cursor, waiting, paused,
    /// then per key:
    /// key, override, leased, held, started_in_window, pushed_back_until,
    /// ready }`.
    fn decode(items: Vec<Value>) -> Result<Page, QueueError> {
        if items.len() < HEAD || !(items.len() - HEAD).is_multiple_of(PER_KEY) {
            return Err(QueueError::Protocol(format!(
                "limits_get.lua replied {} entries, not 9 and then 7 per key",
                items.len()
            )));
        }
        let count = |i: usize| reply::count_at(&items, i);
        let until = |i: usize| -> Result<Option<SystemTime>, QueueError> {
            let ms = count(i)?;
            Ok((ms > 0).then(|| ms_to_time(ms)))
        };
        let spec_text = |i: usize| reply::text(items[i].clone());
        let queue_spec = numbers(&spec_text(1)?)?;
        let each_spec = numbers(&spec_text(5)?)?;
        // The queue's field holds six numbers (queue-wide, then each key);
        // the each-key part may also come on its own.
        let (queue_limit, each_from_field) = match queue_spec.as_slice() {
            [] => (Limit::none(), Limit::none()),
            [c, r, p] => (Limit::from_spec([*c, *r, *p]), Limit::none()),
            [c, r, p, kc, kr, kp] => (
                Limit::from_spec([*c, *r, *p]),
                Limit::from_spec([*kc, *kr, *kp]),
            ),
            other => return Err(bad_spec(other)),
        };
        let each_key = match each_spec.as_slice() {
            [] => each_from_field,
            [c, r, p] => Limit::from_spec([*c, *r, *p]),
            other => return Err(bad_spec(other)),
        };
        let mut keys = Vec::with_capacity((items.len() - HEAD) / PER_KEY);
        for start in (HEAD..items.len()).step_by(PER_KEY) {
            let override_limit = match numbers(&spec_text(start + 1)?)?.as_slice() {
                [] => None,
                [c, r, p] => Some(Limit::from_spec([*c, *r, *p])),
                other => return Err(bad_spec(other)),
            };
            keys.push(KeyPage {
                key: spec_text(start)?,
                override_limit,
                leased: count(start + 2)?,
                held: count(start + 3)?,
                started_in_window: count(start + 4)?,
                pushed_back_until: until(start + 5)?,
                ready: count(start + 6)? == 1,
            });
        }
        Ok(Page {
            queue_limit,
            each_key,
            leased: count(2)?,
            started_in_window: count(3)?,
            pushed_back_until: until(4)?,
            next_cursor: spec_text(6)?,
            waiting: count(7)?,
            paused: count(8)? == 1,
            keys,
        })
    }
}

/// The decimal numbers of a stored spec ("" is none).
fn numbers(spec: &str) -> Result<Vec<u64>, QueueError> {
    spec.split_whitespace()
        .map(|n| {
            n.parse()
                .map_err(|_| QueueError::Protocol(format!("a limit spec {spec:?} is not numbers")))
        })
        .collect()
}

fn bad_spec(numbers: &[u64]) -> QueueError {
    QueueError::Protocol(format!(
        "a limit spec of {} numbers (expected 3 or 6)",
        numbers.len()
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn s(text: &str) -> Value {
        Value::String(text.into())
    }

    fn n(value: i64) -> Value {
        Value::Integer(value)
    }

    #[test]
    fn a_page_reads_the_queue_part_and_each_key() {
        let items = vec![
            n(1_000),
            s("10 100 1000 2 0 0"),
            n(3),
            n(40),
            n(0),
            s("2 0 0"),
            s("0"),
            n(6),
            n(1),
            s("acme"),
            s("5 0 0"),
            n(4),
            n(9),
            n(0),
            n(2_000),
            n(0),
            s("zed"),
            s(""),
            n(1),
            n(0),
            n(0),
            n(0),
            n(1),
        ];
        let page = Page::decode(items).unwrap();
        assert_eq!(
            page.queue_limit,
            Limit::concurrency(10).and_rate(100, Duration::from_secs(1))
        );
        assert_eq!(page.each_key, Limit::concurrency(2));
        assert_eq!((page.leased, page.started_in_window), (3, 40));
        assert_eq!(page.pushed_back_until, None);
        assert_eq!(page.next_cursor, "0");
        assert_eq!((page.waiting, page.paused), (6, true));
        assert_eq!(page.keys.len(), 2);
        assert_eq!(page.keys[0].override_limit, Some(Limit::concurrency(5)));
        assert_eq!((page.keys[0].leased, page.keys[0].held), (4, 9));
        assert_eq!(page.keys[0].pushed_back_until, Some(ms_to_time(2_000)));
        assert_eq!(page.keys[1].override_limit, None);
        assert!(page.keys[1].ready);
    }

    #[test]
    fn a_queue_without_limits_reads_as_none_and_a_short_reply_is_a_protocol_error() {
        let items = vec![n(1), s(""), n(0), n(0), n(0), s(""), s("0"), n(0), n(0)];
        let page = Page::decode(items).unwrap();
        assert!(page.queue_limit.is_none() && page.each_key.is_none());
        assert!(page.keys.is_empty());
        assert!(matches!(
            Page::decode(vec![n(1), s("")]),
            Err(QueueError::Protocol(_))
        ));
        assert!(matches!(
            Page::decode(vec![
                n(1),
                s("1 2"),
                n(0),
                n(0),
                n(0),
                s(""),
                s("0"),
                n(0),
                n(0)
            ]),
            Err(QueueError::Protocol(_))
        ));
    }
}
