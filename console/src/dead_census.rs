//! Dead letters counted by error signature over a whole queue, not over a
//! window of its newest: the groups of the console's Dead letters screen
//! (`s`) and of `redq dead groups`, and the counts their `r`, `K` and
//! `--group` act on.
//!
//! A queue's dead letters are read a page of [`PAGE`] at a time, newest
//! first, on each shard in turn (a shard's offsets are its own, so a dead
//! set larger than the driver's merge window is still read whole). Only
//! the tallies are kept, never the records. The CLI reads every dead
//! letter; the console reads at most [`SCREEN_BOUND`] a queue (and shard)
//! each refresh, and says so when a queue holds more: its groups' counts
//! are then lower bounds ("≥600").

use std::collections::{BTreeMap, HashSet};
use std::time::SystemTime;

use redq::{JobRecord, JobState, QueueError};
use serde::Serialize;

use crate::aggregate::Target;
use crate::canary::DEFAULT_CANARIES;
use crate::signature::signature;

/// Dead letters read a call.
pub const PAGE: usize = 500;

/// Most dead letters the console reads a queue (per shard) each refresh to
/// count its groups: 20 reads of [`PAGE`]. A larger dead set is counted
/// as far as that, and the screen says the counts are lower bounds.
pub const SCREEN_BOUND: usize = 10_000;

/// One error signature's dead letters in one queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupTally {
    /// The queue.
    pub queue: String,
    /// The error signature (`crate::signature`).
    pub signature: String,
    /// How many of the dead letters read have it.
    pub count: u64,
    /// The newest death among them.
    #[serde(serialize_with = "crate::output::ser_opt_time")]
    pub newest: Option<SystemTime>,
    /// The oldest death among them.
    #[serde(serialize_with = "crate::output::ser_opt_time")]
    pub oldest: Option<SystemTime>,
    /// The newest one's error, as it was recorded.
    pub example: String,
    /// The lowest max attempts among them, unlimited ones (0) aside: the
    /// bound a requeue's attempt count stays below.
    #[serde(skip)]
    pub lowest_max_attempts: Option<u32>,
    /// The newest few ids ([`DEFAULT_CANARIES`]), newest first: the
    /// console's canaries.
    #[serde(skip)]
    pub newest_ids: Vec<(Option<SystemTime>, String)>,
}

/// A queue's dead letters by error signature.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueCensus {
    /// The queue.
    pub queue: String,
    /// Its groups, biggest first (ties by signature).
    pub groups: Vec<GroupTally>,
    /// How many dead letters were read.
    pub counted: u64,
    /// Whether every dead letter was read; `false` when a bound stopped
    /// the reading (the counts are lower bounds).
    pub complete: bool,
}

/// Counts dead letters into groups as they are read.
#[derive(Debug, Default)]
pub struct Tally {
    queue: String,
    groups: BTreeMap<String, GroupTally>,
    // A dead letter read twice (the set moved between pages) counts once.
    seen: HashSet<String>,
}

impl Tally {
    /// An empty tally of `queue`.
    pub fn new(queue: &str) -> Tally {
        Tally {
            queue: queue.to_owned(),
            ..Tally::default()
        }
    }

    /// Count `job` (once, however often it is read).
    pub fn add(&mut self, job: &JobRecord) {
        if !self.seen.insert(job.id.clone()) {
            return;
        }
        let error = job.last_error.as_deref().unwrap_or("");
        let group = self
            .groups
            .entry(signature(error))
            .or_insert_with_key(|signature| GroupTally {
                queue: self.queue.clone(),
                signature: signature.clone(),
                count: 0,
                newest: None,
                oldest: None,
                example: error.to_owned(),
                lowest_max_attempts: None,
                newest_ids: Vec::new(),
            });
        group.count += 1;
        if let Some(died) = job.died_at {
            if group.newest.is_none_or(|newest| died > newest) {
                group.newest = Some(died);
                group.example = error.to_owned();
            }
            if group.oldest.is_none_or(|oldest| died < oldest) {
                group.oldest = Some(died);
            }
        }
        if job.max_attempts > 0 {
            let lowest = group.lowest_max_attempts.get_or_insert(job.max_attempts);
            *lowest = (*lowest).min(job.max_attempts);
        }
        group.newest_ids.push((job.died_at, job.id.clone()));
        group
            .newest_ids
            .sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        group.newest_ids.truncate(DEFAULT_CANARIES);
    }

    /// How many dead letters were counted.
    pub fn counted(&self) -> u64 {
        self.seen.len() as u64
    }

    /// The census, `complete` when every dead letter was read.
    pub fn finish(self, complete: bool) -> QueueCensus {
        let counted = self.counted();
        let mut groups: Vec<GroupTally> = self.groups.into_values().collect();
        groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
        QueueCensus {
            queue: self.queue,
            groups,
            counted,
            complete,
        }
    }
}

/// The census of records already read (whole), one per queue, by name.
pub fn of_records<'a>(jobs: impl IntoIterator<Item = &'a JobRecord>) -> Vec<QueueCensus> {
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    for job in jobs {
        tallies
            .entry(job.queue.clone())
            .or_insert_with(|| Tally::new(&job.queue))
            .add(job);
    }
    tallies.into_values().map(|t| t.finish(true)).collect()
}

/// Count `queue`'s dead letters by error signature: every one, or with
/// `bound` at most that many per shard (then `complete` says whether
/// that was all).
pub async fn census(
    target: &Target,
    queue: &str,
    bound: Option<usize>,
) -> Result<QueueCensus, QueueError> {
    census_until(target, queue, bound, None).await
}

/// [`census`], stopping (incomplete) at the first page boundary past
/// `deadline`.
async fn census_until(
    target: &Target,
    queue: &str,
    bound: Option<usize>,
    deadline: Option<std::time::Instant>,
) -> Result<QueueCensus, QueueError> {
    let mut tally = Tally::new(queue);
    let mut complete = true;
    for shard in target.shards() {
        let mut offset = 0u64;
        loop {
            let late = deadline.is_some_and(|d| std::time::Instant::now() >= d);
            if late || bound.is_some_and(|bound| offset >= bound as u64) {
                complete = false;
                break;
            }
            let page = shard.list_jobs(queue, JobState::Dead, offset, PAGE).await?;
            let read = page.items.len();
            for job in &page.items {
                tally.add(job);
            }
            offset += read as u64;
            if read < PAGE || offset >= page.total {
                break;
            }
        }
    }
    Ok(tally.finish(complete))
}

/// How long the console's census of a queue whose dead set only grew
/// stands before it is read again: counting reads up to [`SCREEN_BOUND`]
/// records with their payloads, which at each refresh (every second by
/// default) would weigh on the Redis an incident already strains. A dead
/// set that shrank (a requeue or a delete) is counted again at once, so
/// the groups an operator just acted on change on the next refresh.
pub const CENSUS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// A dead set whose size did not change is counted again after this long
/// (jobs may have died and been requeued in equal numbers meanwhile).
pub const CENSUS_UNCHANGED_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The console's censuses, by queue, kept between refreshes.
#[derive(Debug, Default)]
pub struct CensusCache {
    kept: std::collections::HashMap<String, Kept>,
}

#[derive(Debug)]
struct Kept {
    /// The queue's dead count when it was counted.
    counted: u64,
    /// Its dead count at the last refresh (counted or not): one lower
    /// than it is a dead set that shrank.
    seen: u64,
    at: std::time::Instant,
    census: QueueCensus,
}

impl CensusCache {
    /// `queue`'s census: the one kept while it stands (see
    /// [`CENSUS_EVERY`]), else a new count up to [`SCREEN_BOUND`] or
    /// `deadline`, whichever comes first (a refresh must not outlast its
    /// own timeout counting, or the console would read a slow count as a
    /// silent Redis).
    pub async fn census(
        &mut self,
        target: &Target,
        queue: &str,
        dead_now: u64,
        deadline: std::time::Instant,
    ) -> Result<QueueCensus, QueueError> {
        let now = std::time::Instant::now();
        if let Some(kept) = self.kept.get_mut(queue) {
            let age = now.duration_since(kept.at);
            let stands = if dead_now < kept.seen {
                false
            } else if dead_now == kept.counted {
                age < CENSUS_UNCHANGED_EVERY
            } else {
                age < CENSUS_EVERY
            };
            kept.seen = dead_now;
            if stands {
                return Ok(kept.census.clone());
            }
        }
        let census = census_until(target, queue, Some(SCREEN_BOUND), Some(deadline)).await?;
        self.kept.insert(
            queue.to_owned(),
            Kept {
                counted: dead_now,
                seen: dead_now,
                at: now,
                census: census.clone(),
            },
        );
        Ok(census)
    }
}
