//! Searching a queue's payloads in Redis, in bounded steps
//! (`lua/search_jobs.lua`): each call walks one HSCAN step of the
//! namespace's jobs hash and returns the queue's jobs whose payload
//! contains the text, so a search of millions of jobs is many short script
//! runs that never hold Redis for long.

use serde::Serialize;

use crate::limits;
use crate::meta::Meta;
use crate::scripts::{num, reply, text, Op};
use crate::{JobRecord, JobState, QueueError, RedisQueue};

/// Records one search call asks HSCAN for (its COUNT).
pub const SEARCH_STEP: usize = 500;

/// The most records one search call examines: HSCAN returns about COUNT
/// records, a few more when a hash bucket holds several (they come
/// together), so one step stays well within twice its COUNT. One exception:
/// a jobs hash small enough for Redis to store compactly
/// (`hash-max-listpack-entries`, 128 by default) comes back whole.
pub const SEARCH_BOUND: usize = 2 * SEARCH_STEP;

/// Longest search text, in bytes.
pub const MAX_SEARCH_TEXT: usize = 1024;

/// One step of a search: the matches it found and where the next starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchPage {
    /// The queue's jobs found in this step whose payload contains the text
    /// (any live state; kept finished jobs are not searched). A job may come
    /// up in two steps when Redis rehashes the jobs hash meanwhile: drop
    /// repeats by id.
    pub jobs: Vec<JobRecord>,
    /// How many records this step examined (of every queue of the
    /// namespace): at most [`SEARCH_BOUND`].
    pub examined: u64,
    /// The cursor of the next step, `None` when the search is done.
    pub next: Option<String>,
}

/// Where a search starts.
pub const SEARCH_START: &str = "0";

impl RedisQueue {
    /// One step of a search of `queue`'s live jobs for those whose payload
    /// contains `needle` (plain text, case-sensitive), from `cursor`
    /// ([`SEARCH_START`] first, then each page's `next` until it is
    /// `None`). A job present for the whole search is found at least once.
    pub async fn search(
        &self,
        queue: &str,
        needle: &str,
        cursor: &str,
    ) -> Result<SearchPage, QueueError> {
        check_search(needle, cursor)?;
        let args = vec![text(cursor), text(needle), num(SEARCH_STEP as u64)];
        let items = reply::array(self.run(Op::SearchJobs, queue, args).await?)?;
        let mut it = items.into_iter();
        let (Some(next), Some(examined), Some(_now)) = (it.next(), it.next(), it.next()) else {
            return Err(QueueError::Protocol("search_jobs reply is short".into()));
        };
        let next = reply::text(next)?;
        let examined = reply::int(&examined)?.max(0) as u64;
        let mut jobs = Vec::new();
        while let (Some(id), Some(state), Some(meta), Some(payload), Some(score)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        {
            let state = reply::text(state)?;
            let state = JobState::parse(&state)
                .ok_or_else(|| QueueError::Protocol(format!("unknown job state {state}")))?;
            jobs.push(JobRecord::from_parts(
                self.namespace(),
                reply::text(id)?,
                state,
                &reply::bytes(payload)?,
                Meta::decode(&reply::bytes(meta)?)?,
                reply::score(&score).ok(),
            ));
        }
        Ok(SearchPage {
            jobs,
            examined,
            next: (next != SEARCH_START).then_some(next),
        })
    }
}

fn check_search(needle: &str, cursor: &str) -> Result<(), QueueError> {
    if needle.is_empty() {
        return Err(QueueError::invalid(
            "search text",
            "",
            "some text to look for",
        ));
    }
    limits::check_limit("search text length", needle.len(), MAX_SEARCH_TEXT)?;
    if cursor.is_empty() || !cursor.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QueueError::invalid(
            "search cursor",
            cursor,
            "the next cursor of an earlier search page, or 0 to start",
        ));
    }
    Ok(())
}
