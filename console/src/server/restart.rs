//! The restart notice: a server run that is not the one read before, and
//! what became of the jobs it holds. With `--shards` the shards may live on
//! several servers (a Redis Cluster's primaries): a notice is one server's,
//! names its shards and counts only their jobs, since a sum over every
//! shard hides one that came back empty behind the others.

use std::time::{Duration, SystemTime};

use redq::QueueCounts;

use crate::clock;

/// Every job in `counts`, dead letters included: what a restart without
/// persistence takes away.
pub fn jobs(counts: &QueueCounts) -> u64 {
    let c = counts;
    c.waiting + c.scheduled + c.leased + c.dead + c.blocked + c.held + c.awaiting
}

/// A restart seen while watching: a server run that is not the one read
/// before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    /// When the new run started (Redis clock: its time less its uptime).
    pub at: SystemTime,
    /// The new run's uptime when it was first read.
    pub up: Duration,
    /// The shards the restarted server holds, by index (`--shards`); empty
    /// with one namespace.
    pub shards: Vec<usize>,
    /// Jobs of those shards, or of the namespace (every state, dead letters
    /// included), in the last snapshot read before the restart.
    pub jobs_before: u64,
    /// Jobs in the first snapshot read after it.
    pub jobs_after: u64,
}

impl Restart {
    /// Whether jobs were there before and none are now: a restart without
    /// persistence, or with it lost.
    pub fn lost_data(&self) -> bool {
        self.jobs_before > 0 && self.jobs_after == 0
    }

    /// The notice: when, and what became of the jobs.
    pub fn text(&self) -> String {
        let head = format!(
            "Redis restarted at {} UTC (a new server run; up {})",
            clock::short(self.at, self.at),
            clock::compact(self.up)
        );
        let (whose, holds) = match self.shards.as_slice() {
            [] => ("the namespace".to_owned(), "holds"),
            [one] => (format!("shard {one}"), "holds"),
            several => (format!("shards {}", super::listed(several)), "hold"),
        };
        let jobs = |n: u64| crate::tui::state::plural(n as usize, "job");
        match (self.jobs_before, self.jobs_after) {
            (0, 0) => format!("{head}; {whose} held no jobs before and {holds} none now"),
            (before, 0) => format!(
                "{head}: {whose} held {} before and {holds} none now; data lost?",
                jobs(before)
            ),
            (before, after) => format!(
                "{head}; data reloaded: {whose} held {} before and {holds} {after} now",
                jobs(before)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn restart(shards: Vec<usize>, before: u64, after: u64) -> Restart {
        Restart {
            at: SystemTime::UNIX_EPOCH + Duration::from_secs(11 * 3600 + 31 * 60 + 47),
            up: Duration::from_secs(3),
            shards,
            jobs_before: before,
            jobs_after: after,
        }
    }

    #[test]
    fn a_restart_says_whether_the_jobs_came_back() {
        assert_eq!(
            restart(vec![], 37, 0).text(),
            "Redis restarted at 11:31:47 UTC (a new server run; up 3s): the namespace \
             held 37 jobs before and holds none now; data lost?"
        );
        assert!(restart(vec![], 37, 0).lost_data());
        let reloaded = restart(vec![], 37, 35);
        assert!(!reloaded.lost_data());
        assert!(
            reloaded.text().contains("data reloaded"),
            "{}",
            reloaded.text()
        );
    }

    #[test]
    fn a_server_of_shards_names_them() {
        assert!(restart(vec![2], 250, 0)
            .text()
            .ends_with(": shard 2 held 250 jobs before and holds none now; data lost?"));
        assert!(restart(vec![0, 1, 2], 887, 887)
            .text()
            .ends_with("; data reloaded: shards 0, 1 and 2 held 887 jobs before and hold 887 now"));
        assert!(restart(vec![0, 2], 0, 0)
            .text()
            .ends_with("; shards 0 and 2 held no jobs before and hold none now"));
    }
}
