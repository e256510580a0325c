//! Canary requeue of a dead-letter group: requeue a few of the dead letters
//! that share an error signature, watch what becomes of them, and only then
//! requeue the rest. A fix that did not work shows as a few jobs dead again,
//! not as the whole group back in the dead-letter set. The CLI
//! (`redq dead requeue QUEUE --group SIG --canary N`) and the console's `K`
//! on a group both use this.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use redq::{JobRecord, JobResult, JobState, QueueError};
use serde::Serialize;

use crate::aggregate::Target;
use crate::signature::signature;

/// Canaries a group requeue sends when not told otherwise.
pub const DEFAULT_CANARIES: usize = 3;

/// Dead letters read per page while collecting a group.
const PAGE: usize = 500;

/// What became of a requeued canary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
pub enum Fate {
    /// No longer in the queue and not dead: it completed (a queue that
    /// keeps no results cannot tell this from a delete).
    Completed,
    /// Back in the dead-letter set, with its new error.
    DeadAgain {
        /// The error it died of this time.
        error: String,
    },
    /// Still waiting, backing off or running.
    Pending {
        /// Its state now.
        state: String,
    },
}

impl Fate {
    /// Whether it has settled (completed or dead again).
    pub fn settled(&self) -> bool {
        !matches!(self, Fate::Pending { .. })
    }

    /// How a person reads it.
    pub fn text(&self) -> String {
        match self {
            Fate::Completed => "completed".to_owned(),
            Fate::DeadAgain { error } => format!("dead again: {}", crate::text::inert(error)),
            Fate::Pending { state } => format!("still {state}"),
        }
    }
}

/// The ids of `queue`'s dead letters whose error has signature `group`,
/// newest first: every one, read a page at a time on each shard in turn
/// (a shard's offsets are its own, so a group beyond the driver's merge
/// window is read whole too).
pub async fn group_ids(
    target: &Target,
    queue: &str,
    group: &str,
) -> Result<Vec<String>, QueueError> {
    let mut found: Vec<(Option<SystemTime>, String)> = Vec::new();
    // A dead letter read twice (the set moved between pages) counts once.
    let mut seen = HashSet::new();
    for shard in target.shards() {
        let mut offset = 0;
        loop {
            let page = shard.list_jobs(queue, JobState::Dead, offset, PAGE).await?;
            let read = page.items.len();
            for job in &page.items {
                if in_group(job, group) && seen.insert(job.id.clone()) {
                    found.push((job.died_at, job.id.clone()));
                }
            }
            offset += read as u64;
            if read < PAGE || offset >= page.total {
                break;
            }
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    Ok(found.into_iter().map(|(_, id)| id).collect())
}

/// Whether a dead letter belongs to the group with signature `group`.
pub fn in_group(job: &JobRecord, group: &str) -> bool {
    signature(job.last_error.as_deref().unwrap_or("")) == group
}

/// What became of requeued job `id`.
pub async fn fate(target: &Target, id: &str) -> Result<Fate, QueueError> {
    if let Some(job) = target.inspect(id).await? {
        return Ok(match job.state {
            JobState::Dead => Fate::DeadAgain {
                error: job.last_error.unwrap_or_default(),
            },
            JobState::Completed => Fate::Completed,
            other => Fate::Pending {
                state: other.as_str().to_owned(),
            },
        });
    }
    Ok(match target.result(id).await? {
        JobResult::Live => Fate::Pending {
            state: "live".to_owned(),
        },
        _ => Fate::Completed,
    })
}

/// The fates of `ids`, re-read until every one has settled or `patience`
/// has passed (then the unsettled ones are still pending).
pub async fn watch(
    target: &Target,
    ids: &[String],
    patience: Duration,
) -> Result<Vec<(String, Fate)>, QueueError> {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let mut fates = Vec::with_capacity(ids.len());
        for id in ids {
            fates.push((id.clone(), fate(target, id).await?));
        }
        if fates.iter().all(|(_, f)| f.settled()) || tokio::time::Instant::now() >= deadline {
            return Ok(fates);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What a canary requeue's fates prove. The rest of a group is worth
/// requeueing only on evidence: a canary that completed, and none that
/// died again. Canaries still waiting prove nothing (a paused queue, or
/// one no worker serves, leaves them all waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At least one completed and none died again.
    Held,
    /// At least one died again: the fix did not hold.
    DiedAgain,
    /// None completed or died within the watch.
    Unproven,
}

impl Verdict {
    /// The verdict on these fates.
    pub fn of(fates: &[(String, Fate)]) -> Verdict {
        if fates
            .iter()
            .any(|(_, f)| matches!(f, Fate::DeadAgain { .. }))
        {
            Verdict::DiedAgain
        } else if fates.iter().any(|(_, f)| *f == Fate::Completed) {
            Verdict::Held
        } else {
            Verdict::Unproven
        }
    }
}

/// Why canaries that all still wait prove nothing, for queues `queues`
/// watched for `watch`: "no canary finished within 2s (is orders paused,
/// or does no worker serve it?); nothing proves the fix yet".
pub fn unproven_text(queues: &[String], watch: Duration) -> String {
    let shown: Vec<String> = queues.iter().map(|q| crate::text::inert(q)).collect();
    let question = match shown.as_slice() {
        [one] => format!("is {one} paused, or does no worker serve it?"),
        many => format!(
            "are {} paused, or does no worker serve them?",
            many.join(", ")
        ),
    };
    format!(
        "no canary finished within {} ({question}); nothing proves the fix yet",
        crate::clock::compact(watch)
    )
}
