//! What the console keeps about the Redis server itself (`INFO`, read with
//! each refresh; see [`crate::server`]): the memory note of the latest
//! reading, and the restart notices, each of which stays for the session
//! once a server run that is not the one read before answers.
//!
//! A restart is found by its `run_id`: the console's client reconnects by
//! itself, and a Redis that came back empty otherwise reads as a quiet,
//! drained namespace. The notice compares the jobs in the last snapshot
//! read before the new run with the first one read after it; with shards,
//! only the jobs of the shards that server holds (shards answered by one
//! run are one server), one notice per restarted server.

use std::time::{Duration, SystemTime};

use redq::ServerStats;

use super::{Level, Snapshot, State};
use crate::server::{jobs, memory_notice, Fill, Restart};

/// The server as the console last read it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerWatch {
    /// Each shard's server run as last read (`None` where `INFO` was never
    /// read: refused, say).
    run_ids: Vec<Option<String>>,
    /// Each shard's jobs in the snapshot before the latest, and in the
    /// latest.
    jobs_before: Option<Vec<u64>>,
    jobs_latest: Option<Vec<u64>>,
    /// Redis's clock at the latest snapshot.
    redis_now: Option<SystemTime>,
    /// The latest restart of each server seen, in shard order, said until
    /// the console quits (a later restart of the same shards replaces it).
    pub restarts: Vec<Restart>,
    /// How full the fullest server's memory is, with its sentence; `None`
    /// when it is fine or `INFO` could not be read.
    pub memory: Option<(Fill, String)>,
    /// Names in the queue index that redq refuses as queue names (anyone
    /// with write access can add one), as stored; every listing skips them.
    pub refused_queue_names: Vec<String>,
}

/// Every job each shard holds; the queues' sum as one shard when the
/// snapshot was not read shard by shard.
fn shard_jobs(snapshot: &Snapshot) -> Vec<u64> {
    match snapshot.shard_jobs.is_empty() {
        true => vec![snapshot.queues.iter().map(|r| jobs(&r.counts)).sum()],
        false => snapshot.shard_jobs.clone(),
    }
}

/// The jobs of `shards` in `each` (of `n` shards), or of all of them when
/// `each` was not read shard by shard.
fn jobs_of(each: Option<&Vec<u64>>, shards: &[usize], n: usize) -> u64 {
    match each {
        None => 0,
        Some(each) if each.len() == n => shards.iter().filter_map(|&i| each.get(i)).sum(),
        Some(each) => each.iter().sum(),
    }
}

/// A new run: its uptime and the shards it answers for.
struct NewRun {
    run_id: String,
    up: Duration,
    shards: Vec<usize>,
}

impl ServerWatch {
    /// A snapshot arrived (frozen or not: the server's notices are not
    /// screen data).
    pub(super) fn snapshot(&mut self, snapshot: &Snapshot) {
        self.jobs_before = self.jobs_latest.take();
        self.jobs_latest = Some(shard_jobs(snapshot));
        self.redis_now = Some(snapshot.redis_now);
        // A notice stays for the session: it says how many jobs are there
        // now once that is not what it found just after the restart.
        let n = self.run_ids.len().max(1);
        for restart in &mut self.restarts {
            restart.jobs_now = match restart.shards.is_empty() {
                true => self.jobs_latest.iter().flatten().sum(),
                false => jobs_of(self.jobs_latest.as_ref(), &restart.shards, n),
            };
        }
    }

    /// The servers as read just before the latest snapshot.
    pub(super) fn read(&mut self, servers: &[Option<ServerStats>]) {
        if self.run_ids.len() < servers.len() {
            self.run_ids.resize(servers.len(), None);
        }
        let mut new_runs: Vec<NewRun> = Vec::new();
        for (shard, (known, read)) in self.run_ids.iter_mut().zip(servers).enumerate() {
            let Some(read) = read else { continue };
            if known.as_ref().is_some_and(|run| *run != read.run_id) {
                match new_runs.iter_mut().find(|r| r.run_id == read.run_id) {
                    Some(run) => run.shards.push(shard),
                    None => new_runs.push(NewRun {
                        run_id: read.run_id.clone(),
                        up: Duration::from_secs(read.uptime_s),
                        shards: vec![shard],
                    }),
                }
            }
            *known = Some(read.run_id.clone());
        }
        let now = self.redis_now.unwrap_or(SystemTime::UNIX_EPOCH);
        let n = servers.len();
        for run in new_runs {
            let jobs_after = jobs_of(self.jobs_latest.as_ref(), &run.shards, n);
            let restart = Restart {
                at: now.checked_sub(run.up).unwrap_or(now),
                up: run.up,
                jobs_before: jobs_of(self.jobs_before.as_ref(), &run.shards, n),
                jobs_after,
                jobs_now: jobs_after,
                // One namespace says "the namespace", as it always has.
                shards: if n > 1 { run.shards } else { Vec::new() },
            };
            self.restarts.retain(|r| {
                !r.shards.is_empty() && !r.shards.iter().any(|s| restart.shards.contains(s))
            });
            self.restarts.push(restart);
        }
        self.restarts.sort_by_key(|r| r.shards.first().copied());
        self.memory = memory_notice(servers);
    }
}

impl State {
    /// The banner lines about the server: the restarts seen, then its
    /// memory while live (a reading from before an outage may be stale).
    pub fn server_notices(&self) -> Vec<(Level, String)> {
        let mut notices = Vec::new();
        for restart in &self.server.restarts {
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
        if !self.server.refused_queue_names.is_empty() {
            notices.push((
                Level::Info,
                refused_names_notice(&self.server.refused_queue_names),
            ));
        }
        notices
    }
}

/// The notice for names in the queue index that no queue may have: each
/// escaped (one may hold terminal escapes) and shortened, so that an
/// operator can find and remove it.
fn refused_names_notice(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                "\"{}\"",
                crate::text::truncate(&crate::text::inert(name), 40)
            )
        })
        .collect();
    format!(
        "the queue index holds {} that redq refuses as a queue name and skips (shown escaped): \
         {}; remove with SREM if no one meant it",
        if names.len() == 1 { "a name" } else { "names" },
        shown.join(", ")
    )
}
