//! What the console keeps about the Redis server itself (`INFO`, read with
//! each refresh; see [`crate::server`]): the memory note of the latest
//! reading, and the restart notice, which stays for the session once a
//! server run that is not the one read before answers.
//!
//! A restart is found by its `run_id`: the console's client reconnects by
//! itself, and a Redis that came back empty otherwise reads as a quiet,
//! drained namespace. The notice compares the namespace's jobs in the last
//! snapshot read before the new run with the first one read after it.

use std::time::{Duration, SystemTime};

use redq::ServerStats;

use super::{Level, QueueRow, Snapshot, State};
use crate::server::{fill, fullest, memory_note, Fill, Restart};

/// The server as the console last read it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerWatch {
    /// Each shard's server run as last read (`None` where `INFO` was never
    /// read: refused, say).
    run_ids: Vec<Option<String>>,
    /// Jobs in the snapshot before the latest, and in the latest.
    jobs_before: Option<u64>,
    jobs_latest: Option<u64>,
    /// Redis's clock at the latest snapshot.
    redis_now: Option<SystemTime>,
    /// The latest restart seen, said until the console quits.
    pub restart: Option<Restart>,
    /// How full the fullest server's memory is, with its sentence; `None`
    /// when it is fine or `INFO` could not be read.
    pub memory: Option<(Fill, String)>,
}

/// Every job the namespace holds, dead letters included: what a restart
/// without persistence takes away.
fn jobs(rows: &[QueueRow]) -> u64 {
    rows.iter()
        .map(|r| {
            let c = &r.counts;
            c.waiting + c.scheduled + c.leased + c.dead + c.blocked + c.held + c.awaiting
        })
        .sum()
}

impl ServerWatch {
    /// A snapshot arrived (frozen or not: the server's notices are not
    /// screen data).
    pub(super) fn snapshot(&mut self, snapshot: &Snapshot) {
        self.jobs_before = self.jobs_latest;
        self.jobs_latest = Some(jobs(&snapshot.queues));
        self.redis_now = Some(snapshot.redis_now);
    }

    /// The servers as read just before the latest snapshot.
    pub(super) fn read(&mut self, servers: &[Option<ServerStats>]) {
        if self.run_ids.len() < servers.len() {
            self.run_ids.resize(servers.len(), None);
        }
        let mut restarted: Option<Duration> = None;
        for (known, read) in self.run_ids.iter_mut().zip(servers) {
            let Some(read) = read else { continue };
            if known.as_ref().is_some_and(|run| *run != read.run_id) {
                let up = Duration::from_secs(read.uptime_s);
                restarted = Some(restarted.map_or(up, |u| u.min(up)));
            }
            *known = Some(read.run_id.clone());
        }
        if let Some(up) = restarted {
            let now = self.redis_now.unwrap_or(SystemTime::UNIX_EPOCH);
            self.restart = Some(Restart {
                at: now.checked_sub(up).unwrap_or(now),
                up,
                jobs_before: self.jobs_before.unwrap_or(0),
                jobs_after: self.jobs_latest.unwrap_or(0),
            });
        }
        self.memory = fullest(servers).and_then(|s| memory_note(s).map(|text| (fill(s), text)));
    }
}

impl State {
    /// The banner lines about the server: the restart seen, then its
    /// memory while live (a reading from before an outage may be stale).
    pub fn server_notices(&self) -> Vec<(Level, String)> {
        let mut notices = Vec::new();
        if let Some(restart) = &self.server.restart {
            let level = match restart.lost_data() {
                true => Level::Error,
                false => Level::Info,
            };
            notices.push((level, restart.text()));
        }
        if let (Some((fill, text)), super::Connection::Live) =
            (&self.server.memory, &self.connection)
        {
            let level = match fill {
                Fill::Full => Level::Error,
                _ => Level::Info,
            };
            notices.push((level, text.clone()));
        }
        notices
    }
}
