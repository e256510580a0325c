//! The Redis server itself, as the console, `redq queues`, `redq stats` and
//! the exporter say it: how full its memory is against `maxmemory`, and
//! whether it restarted (a new `run_id`) while the console watched.
//!
//! Both are read from `INFO` ([`redq::ServerStats`]), on every shard's
//! server. A user whose ACL refuses `INFO` (some managed Redis services)
//! gets nothing said and nothing failed: every reading here is optional.

mod restart;

use std::time::Duration;

use redq::ServerStats;

pub use restart::{jobs, Restart};

/// From this share of `maxmemory` on, memory is said to be nearly full.
pub const NEAR_FULL: f64 = 0.9;

/// The `INFO` of each shard's server, in shard order (one entry without
/// shards); `None` where it could not be read within `within` (refused by
/// an ACL, or Redis unreachable, which the other reads report).
pub async fn read(target: &redq::Operator, within: Duration) -> Vec<Option<ServerStats>> {
    let reads = target.shards().iter().map(|shard| async move {
        match tokio::time::timeout(within, shard.server_stats()).await {
            Ok(Ok(stats)) => Some(stats),
            Ok(Err(error)) => {
                tracing::debug!(%error, "INFO not read");
                None
            }
            Err(_) => None,
        }
    });
    futures::future::join_all(reads).await
}

/// How full a server's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fill {
    /// No `maxmemory`, or below [`NEAR_FULL`] of it.
    Fine,
    /// At [`NEAR_FULL`] of `maxmemory` or more.
    Near,
    /// At `maxmemory` or past it: writes are refused (`noeviction`) or
    /// keys evicted.
    Full,
}

impl Fill {
    /// The word `-o json` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Fill::Fine => "ok",
            Fill::Near => "near_full",
            Fill::Full => "full",
        }
    }
}

/// The memory Redis compares with `maxmemory`: `used_memory` less its
/// replication and AOF buffers, as Redis itself counts before refusing a
/// write or evicting.
fn counted(stats: &ServerStats) -> u64 {
    stats
        .used_memory_bytes
        .saturating_sub(stats.not_counted_for_evict_bytes)
}

/// How full `stats`'s server is.
pub fn fill(stats: &ServerStats) -> Fill {
    let limit = stats.maxmemory_bytes;
    if limit == 0 {
        return Fill::Fine;
    }
    let used = counted(stats);
    if used >= limit {
        Fill::Full
    } else if used as f64 >= limit as f64 * NEAR_FULL {
        Fill::Near
    } else {
        Fill::Fine
    }
}

/// The fullest of the servers read: the highest share of its `maxmemory`
/// (a server without a limit counts as empty), `None` when none was read.
pub fn fullest(servers: &[Option<ServerStats>]) -> Option<&ServerStats> {
    let share = |s: &ServerStats| match s.maxmemory_bytes {
        0 => 0.0,
        limit => counted(s) as f64 / limit as f64,
    };
    servers
        .iter()
        .flatten()
        .max_by(|a, b| share(a).total_cmp(&share(b)))
}

/// Bytes in the units Redis's own `maxmemory 2mb` uses (a MB is 1024 KB):
/// `512 B`, `2 MB`, `4.1 MB`.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let tenths = (value * 10.0).round() / 10.0;
    if unit == 0 || tenths.fract() == 0.0 {
        format!("{tenths:.0} {}", UNITS[unit])
    } else {
        format!("{tenths:.1} {}", UNITS[unit])
    }
}

/// What the policy does to redq's keys once memory is full.
fn at_the_limit(policy: &str) -> &'static str {
    match policy {
        "noeviction" | "" => "enqueues and retries are refused",
        p if p.starts_with("volatile") => {
            "keys with an expiry are evicted, and writes are refused once none is left"
        }
        _ => "keys are evicted to make room, and an evicted key is lost jobs",
    }
}

/// The one sentence about the servers' memory, with how full the fullest
/// is, when it is nearly full or full: what the console's banner, `redq
/// queues` and `redq stats` say. With shards on several servers it names
/// the shards the fullest server holds, the ones whose enqueues fail first.
pub fn memory_notice(servers: &[Option<ServerStats>]) -> Option<(Fill, String)> {
    let stats = fullest(servers)?;
    let read: Vec<&ServerStats> = servers.iter().flatten().collect();
    let its_shards: Vec<usize> = servers
        .iter()
        .enumerate()
        .filter(|(_, s)| s.as_ref().is_some_and(|s| s.run_id == stats.run_id))
        .map(|(shard, _)| shard)
        .collect();
    // Every shard read on one server: there is only "Redis" to speak of.
    let whose = match its_shards.as_slice() {
        _ if its_shards.len() == read.len() => String::new(),
        [one] => format!(" on the server of shard {one}"),
        several => format!(" on the server of shards {}", listed(several)),
    };
    memory_note(stats, &whose).map(|text| (fill(stats), text))
}

/// [`memory_notice`]'s sentence for one server; `whose` names its shards
/// (` on the server of shard 2`), or is empty.
fn memory_note(stats: &ServerStats, whose: &str) -> Option<String> {
    let (used, limit) = (stats.used_memory_bytes, stats.maxmemory_bytes);
    let policy = match stats.maxmemory_policy.as_str() {
        "" => String::new(),
        p => format!(" ({})", crate::text::inert(p)),
    };
    let then = at_the_limit(&stats.maxmemory_policy);
    match fill(stats) {
        Fill::Fine => None,
        Fill::Full if stats.maxmemory_policy == "noeviction" => Some(format!(
            "Redis is out of memory{whose}: {} used of maxmemory {}{policy}: {then}",
            bytes_text(used),
            bytes_text(limit)
        )),
        Fill::Full => Some(format!(
            "Redis is at its maxmemory{whose}: {} used of {}{policy}: {then}",
            bytes_text(used),
            bytes_text(limit)
        )),
        Fill::Near => Some(format!(
            "Redis memory is nearly full{whose}: {} used of maxmemory {} ({:.0} %){policy}; \
             once full, {then}",
            bytes_text(used),
            bytes_text(limit),
            counted(stats) as f64 * 100.0 / limit as f64,
        )),
    }
}

/// Shard indexes in words: `0`, `0 and 2`, `0, 1 and 2`.
fn listed(shards: &[usize]) -> String {
    let words: Vec<String> = shards.iter().map(usize::to_string).collect();
    match words.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The servers' figures as `-o json` gives them beside each row: the
/// fullest server's, or `null` when `INFO` could not be read.
pub fn json(servers: &[Option<ServerStats>]) -> serde_json::Value {
    match fullest(servers) {
        None => serde_json::Value::Null,
        Some(s) => serde_json::json!({
            "used_memory": s.used_memory_bytes,
            "maxmemory": s.maxmemory_bytes,
            "maxmemory_policy": s.maxmemory_policy,
            "memory": fill(s).as_str(),
            "uptime_seconds": s.uptime_s,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(used: u64, limit: u64, policy: &str) -> ServerStats {
        ServerStats {
            used_memory_bytes: used,
            maxmemory_bytes: limit,
            maxmemory_policy: policy.into(),
            ..ServerStats::default()
        }
    }

    #[test]
    fn bytes_are_said_in_redis_units() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(2 << 20), "2 MB");
        assert_eq!(bytes_text(4_300_000), "4.1 MB");
        assert_eq!(bytes_text(3 << 30), "3 GB");
    }

    fn on(run_id: &str, used: u64) -> Option<ServerStats> {
        Some(ServerStats {
            run_id: run_id.into(),
            ..stats(used, 2 << 20, "noeviction")
        })
    }

    #[test]
    fn a_full_server_of_some_shards_is_named_by_its_shards() {
        // Shards 0 and 2 on one server, nearly empty; shard 1 alone and full.
        let servers = [on("a", 1 << 10), on("b", 4_300_000), on("a", 1 << 10)];
        let (fill, text) = memory_notice(&servers).unwrap();
        assert_eq!(fill, Fill::Full);
        assert!(
            text.starts_with("Redis is out of memory on the server of shard 1: 4.1 MB"),
            "{text}"
        );
        // The full server holds two of three shards; one was not read.
        let servers = [on("b", 4_300_000), None, on("b", 4_300_000), on("a", 0)];
        let (_, text) = memory_notice(&servers).unwrap();
        assert!(text.contains(" on the server of shards 0 and 2:"), "{text}");
        // Every shard read is on the full server: nothing to tell apart.
        let servers = [on("b", 1_950_000), None, on("b", 1_950_000)];
        let (fill, text) = memory_notice(&servers).unwrap();
        assert_eq!(fill, Fill::Near);
        assert!(
            text.starts_with("Redis memory is nearly full: 1.9 MB"),
            "{text}"
        );
        assert_eq!(memory_notice(&[on("a", 0), on("b", 0)]), None);
    }

    #[test]
    fn memory_is_said_from_90_percent_and_in_the_words_of_its_policy() {
        assert_eq!(memory_note(&stats(4_300_000, 0, "noeviction"), ""), None);
        assert_eq!(
            memory_note(&stats(1 << 20, 2 << 20, "noeviction"), ""),
            None
        );
        assert_eq!(
            memory_note(&stats(4_300_000, 2 << 20, "noeviction"), "").as_deref(),
            Some(
                "Redis is out of memory: 4.1 MB used of maxmemory 2 MB (noeviction): \
                 enqueues and retries are refused"
            )
        );
        let near = memory_note(&stats(1_950_000, 2 << 20, "noeviction"), "").unwrap();
        assert!(
            near.starts_with("Redis memory is nearly full: 1.9 MB"),
            "{near}"
        );
        assert!(near.contains("(93 %)"), "{near}");
        let evicting = memory_note(&stats(2 << 20, 2 << 20, "allkeys-lru"), "").unwrap();
        assert!(
            evicting.contains("an evicted key is lost jobs"),
            "{evicting}"
        );
        // Replication and AOF buffers are not what Redis compares.
        let mut buffered = stats(2 << 20, 2 << 20, "noeviction");
        buffered.not_counted_for_evict_bytes = 1 << 20;
        assert_eq!(fill(&buffered), Fill::Fine);
    }
}
