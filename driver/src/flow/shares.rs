//! Queue-wide limits over the shards of a `ShardedQueue`: split into one
//! share per shard on the way in, added back up on the way out (see
//! "Sharded queues" in the [module docs](super)).
//!
//! Shard `i` of `S` gets `N / S`, and one more when `i < N % S`, so the
//! shares sum to exactly `N` and differ by at most one. A limit below `S`
//! is refused: some shard would get a share of 0, which the scripts read as
//! "no limit".

use std::collections::BTreeMap;

use super::{Limit, QueueLimits, Rate};
use crate::QueueError;

impl Limit {
    /// This queue-wide limit split over `shards` shards: one limit per
    /// shard, in shard order, whose concurrencies (and rate maxima, over the
    /// same interval) sum to this limit's. Refused when a bound is smaller
    /// than `shards`. One shard gets the limit itself.
    ///
    /// ```
    /// use redq::flow::Limit;
    /// let shares = Limit::concurrency(10).shares(3).unwrap();
    /// let sizes: Vec<u32> = shares.iter().map(|l| l.concurrency.unwrap()).collect();
    /// assert_eq!(sizes, [4, 3, 3]);
    /// assert!(Limit::concurrency(2).shares(3).is_err());
    /// ```
    pub fn shares(&self, shards: usize) -> Result<Vec<Limit>, QueueError> {
        self.validate()?;
        let shards = shards.max(1);
        let concurrency = self
            .concurrency
            .map(|n| split("concurrency", n, shards))
            .transpose()?;
        let rate = self
            .rate
            .map(|rate| split("rate", rate.max, shards).map(|maxes| (maxes, rate.per)))
            .transpose()?;
        Ok((0..shards)
            .map(|i| Limit {
                concurrency: concurrency.as_ref().map(|shares| shares[i]),
                rate: rate.as_ref().map(|(maxes, per)| Rate {
                    max: maxes[i],
                    per: *per,
                }),
            })
            .collect())
    }
}

/// `total` in `shards` shares summing to it, the larger ones first.
fn split(what: &'static str, total: u32, shards: usize) -> Result<Vec<u32>, QueueError> {
    let n = shards as u32;
    if total < n {
        return Err(QueueError::invalid(
            if what == "rate" {
                "queue-wide rate"
            } else {
                "queue-wide concurrency"
            },
            total.to_string(),
            format!(
                "a queue-wide {what} of {total} cannot be split over {shards} shards; at least {shards} (each shard enforces its share)"
            ),
        ));
    }
    Ok((0..n)
        .map(|i| total / n + u32::from(i < total % n))
        .collect())
}

/// The sum of two limits' bounds: what the shards enforce together. A bound
/// set on neither stays unset; the interval is the first one found.
fn added(a: Limit, b: Limit) -> Limit {
    let sum = |x: Option<u32>, y: Option<u32>| match (x, y) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        (x, y) => x.or(y),
    };
    Limit {
        concurrency: sum(a.concurrency, b.concurrency),
        rate: match (a.rate, b.rate) {
            (Some(x), Some(y)) => Some(Rate {
                max: x.max.saturating_add(y.max),
                per: x.per,
            }),
            (x, y) => x.or(y),
        },
    }
}

/// One queue's limits read from every shard, as one: queue-wide limits and
/// use added up, the latest push-back, the each-key default of the first
/// shard (every shard has the same), and each key once (a key lives on one
/// shard; should it be on several, its use is added up).
pub(crate) fn merged(parts: Vec<QueueLimits>) -> Option<QueueLimits> {
    // Each shard's own part, kept beside the sum: a sum of 10 at once can
    // hide one shard at its share of 4 while the others idle.
    let shards: Vec<super::ShardLimit> = match parts.len() {
        0 | 1 => Vec::new(),
        _ => parts
            .iter()
            .map(|part| super::ShardLimit {
                limit: part.limit,
                leased: part.leased,
                started_in_window: part.started_in_window,
                held: part.held,
                held_by_queue: part.held_by_queue,
                paused: part.paused,
                blocked: part.queue_blocked(),
            })
            .collect(),
    };
    let mut parts = parts.into_iter();
    let mut total = parts.next()?;
    total.shards = shards;
    let mut keys: BTreeMap<String, super::KeyLimitUse> = BTreeMap::new();
    let mut add_keys = |list: Vec<super::KeyLimitUse>| {
        for key in list {
            match keys.get_mut(&key.key) {
                Some(seen) => {
                    seen.leased += key.leased;
                    seen.held += key.held;
                    seen.started_in_window += key.started_in_window;
                    seen.pushed_back_until = seen.pushed_back_until.max(key.pushed_back_until);
                    seen.ready |= key.ready;
                    seen.overridden |= key.overridden;
                }
                None => {
                    keys.insert(key.key.clone(), key);
                }
            }
        }
    };
    add_keys(std::mem::take(&mut total.keys));
    for part in parts {
        total.limit = added(total.limit, part.limit);
        total.leased += part.leased;
        total.started_in_window += part.started_in_window;
        total.pushed_back_until = total.pushed_back_until.max(part.pushed_back_until);
        total.held += part.held;
        total.waiting += part.waiting;
        total.held_by_queue += part.held_by_queue;
        total.paused |= part.paused;
        if total.each_key.is_none() {
            total.each_key = part.each_key;
        }
        add_keys(part.keys);
    }
    total.keys = keys.into_values().collect();
    Some(total)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::flow::KeyLimitUse;

    #[test]
    fn shares_sum_to_the_limit_and_differ_by_at_most_one() {
        for shards in 1..=8usize {
            for total in [shards as u32, 7, 10, 64, 999, 100_000] {
                if total < shards as u32 {
                    continue;
                }
                let limit = Limit::concurrency(total).and_rate(total, Duration::from_secs(1));
                let shares = limit.shares(shards).unwrap();
                assert_eq!(shares.len(), shards);
                let sizes: Vec<u32> = shares.iter().map(|l| l.concurrency.unwrap()).collect();
                let rates: Vec<u32> = shares.iter().map(|l| l.rate.unwrap().max).collect();
                assert_eq!(sizes.iter().sum::<u32>(), total, "{total} over {shards}");
                assert_eq!(rates, sizes);
                let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(max - min <= 1 && *min >= 1, "{sizes:?}");
                assert!(shares
                    .iter()
                    .all(|l| l.rate.unwrap().per == Duration::from_secs(1)));
            }
        }
    }

    #[test]
    fn a_limit_smaller_than_the_shard_count_is_refused() {
        let err = Limit::concurrency(2).shares(3).unwrap_err().to_string();
        assert!(
            err.contains("a queue-wide concurrency of 2 cannot be split over 3 shards; at least 3"),
            "{err}"
        );
        let err = Limit::rate(2, Duration::from_secs(1))
            .shares(3)
            .unwrap_err()
            .to_string();
        assert!(err.contains("queue-wide rate of 2"), "{err}");
        assert!(Limit::concurrency(3).shares(3).is_ok());
    }

    #[test]
    fn no_limit_splits_into_no_limit_everywhere_and_one_shard_keeps_it_whole() {
        assert_eq!(Limit::none().shares(4).unwrap(), vec![Limit::none(); 4]);
        let limit = Limit::concurrency(1).and_rate(1, Duration::from_millis(5));
        assert_eq!(limit.shares(1).unwrap(), vec![limit]);
        assert!(Limit::concurrency(0).shares(1).is_err(), "still validated");
    }

    fn part(leased: u64, keys: &[(&str, u64)]) -> QueueLimits {
        QueueLimits {
            queue: "q".into(),
            limit: Limit::concurrency(5),
            each_key: Limit::concurrency(2),
            leased,
            started_in_window: 1,
            pushed_back_until: None,
            held: keys.iter().map(|(_, h)| h).sum(),
            waiting: 0,
            held_by_queue: 0,
            paused: false,
            shards: Vec::new(),
            keys: keys
                .iter()
                .map(|(key, held)| KeyLimitUse {
                    key: (*key).into(),
                    limit: Limit::concurrency(2),
                    overridden: false,
                    leased: 1,
                    held: *held,
                    started_in_window: 0,
                    pushed_back_until: None,
                    ready: false,
                })
                .collect(),
        }
    }

    #[test]
    fn merged_shards_add_their_shares_and_list_each_key_once() {
        let later = SystemTime::UNIX_EPOCH + Duration::from_secs(9);
        let mut b = part(3, &[("b", 2), ("a", 1)]);
        b.pushed_back_until = Some(later);
        let total = merged(vec![part(2, &[("c", 4), ("a", 1)]), b]).unwrap();
        assert_eq!(total.limit, Limit::concurrency(10));
        assert_eq!(total.each_key, Limit::concurrency(2));
        assert_eq!(
            (total.leased, total.started_in_window, total.held),
            (5, 2, 8)
        );
        assert_eq!(total.pushed_back_until, Some(later));
        let keys: Vec<(&str, u64, u64)> = total
            .keys
            .iter()
            .map(|k| (k.key.as_str(), k.leased, k.held))
            .collect();
        assert_eq!(keys, [("a", 2, 2), ("b", 1, 2), ("c", 1, 4)]);
        assert!(merged(Vec::new()).is_none());
    }
}
