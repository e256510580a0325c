//! What a job's detail (`redq jobs show`) says of flow control: why a held
//! job is held (which limit has no room: its key's, the queue's, a
//! push-back, a pause, or none and no worker has claimed it), and the
//! handler's push-backs of it, from its `pushed_back` events.
//!
//! A push-back is not stored on the job (it counts no attempt and records
//! no error: a 429 is not a failure); its limiter's push-back is, and each
//! one is a `pushed_back` event on the traffic stream, which is what this
//! reads (the stream keeps about its last 10 000 entries).

use std::time::SystemTime;

use redq::events::{EventKind, EventStream};
use redq::{JobRecord, JobState, QueueError};

use crate::aggregate::Target;
use crate::clock;
use crate::failure::Failure;
use crate::text::inert;

/// The most push-backs of one job the detail reads back.
const PUSHBACKS_READ: usize = 1000;

/// `(label, text)` lines for a job's detail: `held by` for a held job (or
/// `waits on` for an unkeyed due job a queue-wide limit blocks), then
/// `pushed back` with how many times and the latest one. Nothing for a job
/// that is not due, or of a queue without limits.
pub async fn detail_lines(
    queue: &Target,
    job: &JobRecord,
    now: SystemTime,
) -> Result<Vec<(&'static str, String)>, Failure> {
    if !under_limits(queue, job).await? {
        return Ok(Vec::new());
    }
    let mut lines = why(queue, job).await?;
    lines.extend(pushed_back(queue, job, now).await?);
    Ok(lines)
}

/// Only why the job is held or waits (`held by`, `waits on`): a read of its
/// limits, cheap enough for the console's detail to repeat at each refresh
/// (the push-backs are read from the events, which it does not).
pub async fn why_lines(
    queue: &Target,
    job: &JobRecord,
) -> Result<Vec<(&'static str, String)>, QueueError> {
    if !under_limits(queue, job).await? {
        return Ok(Vec::new());
    }
    why(queue, job).await
}

/// Whether `job` is due and its queue has limits: only then may a limit
/// hold it.
async fn under_limits(queue: &Target, job: &JobRecord) -> Result<bool, QueueError> {
    Ok(matches!(job.state, JobState::Held | JobState::Waiting)
        && queue.limited_queues().await?.contains(&job.queue))
}

async fn why(queue: &Target, job: &JobRecord) -> Result<Vec<(&'static str, String)>, QueueError> {
    let mut lines = Vec::new();
    match (&job.state, job.limit_key.as_deref()) {
        (JobState::Held, Some(key)) => {
            let limits = queue.limits_of_key(&job.queue, key).await?;
            let row = limits.keys.iter().find(|k| k.key == key);
            lines.push(("held by", limits.why(row).to_string()));
        }
        (JobState::Waiting, None) => {
            let limits = queue.limits_up_to(&job.queue, 1).await?;
            if limits.paused || limits.queue_blocked().is_some() {
                lines.push(("waits on", limits.why(None).to_string()));
            }
        }
        _ => {}
    }
    Ok(lines)
}

/// `pushed back` with how many times and the latest one, from the job's
/// `pushed_back` events; `None` when it never was.
async fn pushed_back(
    queue: &Target,
    job: &JobRecord,
    now: SystemTime,
) -> Result<Option<(&'static str, String)>, Failure> {
    let id = job.id.as_str();
    let pushed = queue
        .events_matching_in(&[EventStream::Traffic], PUSHBACKS_READ, |e| {
            e.job_id == id && EventKind::of(&e.kind) == Some(EventKind::PushedBack)
        })
        .await?;
    let Some(last) = pushed.first() else {
        return Ok(None);
    };
    let times = match pushed.len() {
        1 => "once".to_owned(),
        n => format!("{n} times"),
    };
    Ok(Some((
        "pushed back",
        format!(
            "{times}, last {}: {}",
            clock::short(last.at, now),
            inert(last.detail.as_deref().unwrap_or("—"))
        ),
    )))
}
