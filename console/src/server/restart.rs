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
    /// Jobs in the latest snapshot: the notice stays for the session, and
    /// "holds none now" nine minutes on, over refilled queues, read as a
    /// current fact when it was the state just after the restart.
    pub jobs_now: u64,
}

impl Restart {
    /// Whether jobs were there before and none are now: a restart without
    /// persistence, or with it lost.
    pub fn lost_data(&self) -> bool {
        self.jobs_before > 0 && self.jobs_after == 0
    }

    /// The notice: when, and what became of the jobs. Its figures are of
    /// the moment the restart was noticed (the uptime then, the jobs just
    /// after), and once the jobs have changed since it says how many are
    /// there now, so that a notice left up reads as history, not as now.
    pub fn text(&self) -> String {
        let head = format!(
            "Redis restarted at {} UTC (a new server run; up {} when noticed)",
            clock::short(self.at, self.at),
            clock::compact(self.up)
        );
        let (whose, holds) = match self.shards.as_slice() {
            [] => ("the namespace".to_owned(), "holds"),
            [one] => (format!("shard {one}"), "holds"),
            several => (format!("shards {}", super::listed(several)), "hold"),
        };
        let jobs = |n: u64| crate::tui::state::plural(n as usize, "job");
        let before = match self.jobs_before {
            0 => "no jobs".to_owned(),
            n => jobs(n),
        };
        // What it holds: still the figure read just after, or that and
        // how many now.
        let after = match (self.jobs_after, self.jobs_now) {
            (0, 0) => format!("{holds} none now"),
            (after, now) if after == now => format!("{holds} {after} now"),
            (0, now) => format!("none just after, {now} now"),
            (after, now) => format!("{after} just after, {now} now"),
        };
        let told = format!("{whose} held {before} before and {after}");
        match (self.jobs_before, self.jobs_after) {
            (0, _) if self.jobs_after == 0 => format!("{head}; {told}"),
            (_, 0) => format!("{head}: {told}; data lost?"),
            _ => format!("{head}; data reloaded: {told}"),
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
            jobs_now: after,
        }
    }

    #[test]
    fn a_restart_says_whether_the_jobs_came_back() {
        assert_eq!(
            restart(vec![], 37, 0).text(),
            "Redis restarted at 11:31:47 UTC (a new server run; up 3s when noticed): the \
             namespace held 37 jobs before and holds none now; data lost?"
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
    fn a_notice_left_up_says_its_figures_were_of_then_and_what_is_there_now() {
        // Nine minutes on, the queues refilled: "holds none now" would be
        // false, and "up 3s" read as the server's uptime now.
        let refilled = Restart {
            jobs_now: 1512,
            ..restart(vec![], 37, 0)
        };
        assert_eq!(
            refilled.text(),
            "Redis restarted at 11:31:47 UTC (a new server run; up 3s when noticed): the \
             namespace held 37 jobs before and none just after, 1512 now; data lost?"
        );
        assert!(refilled.lost_data());
        let reloaded = Restart {
            jobs_now: 40,
            ..restart(vec![1], 37, 35)
        };
        assert!(
            reloaded.text().ends_with(
                "; data reloaded: shard 1 held 37 jobs before and 35 just after, 40 now"
            ),
            "{}",
            reloaded.text()
        );
        let quiet = Restart {
            jobs_now: 2,
            ..restart(vec![], 0, 0)
        };
        assert!(
            quiet
                .text()
                .ends_with("; the namespace held no jobs before and none just after, 2 now"),
            "{}",
            quiet.text()
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
