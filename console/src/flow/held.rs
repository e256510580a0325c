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
use redq::{JobRecord, JobState};

use crate::aggregate::Target;
use crate::clock;
use crate::failure::Failure;
use crate::text::inert;

/// The most push-backs of one job the detail reads back.
const PUSHBACKS_READ: usize = 1000;

/// `(label, text)` lines for a job's detail: `held by` for a held job (or
/// `waits on` for an unkeyed due job a queue-wide limit blocks), then
/// `pushed back` with how many times and the latest one.
pub async fn detail_lines(
    queue: &Target,
    job: &JobRecord,
    now: SystemTime,
) -> Result<Vec<(&'static str, String)>, Failure> {
    if !matches!(job.state, JobState::Held | JobState::Waiting) {
        return Ok(Vec::new());
    }
    if !queue.limited_queues().await?.contains(&job.queue) {
        return Ok(Vec::new());
    }
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
    let id = job.id.as_str();
    let pushed = queue
        .events_matching_in(&[EventStream::Traffic], PUSHBACKS_READ, |e| {
            e.job_id == id && EventKind::of(&e.kind) == Some(EventKind::PushedBack)
        })
        .await?;
    if let Some(last) = pushed.first() {
        let times = match pushed.len() {
            1 => "once".to_owned(),
            n => format!("{n} times"),
        };
        lines.push((
            "pushed back",
            format!(
                "{times}, last {}: {}",
                clock::short(last.at, now),
                inert(last.detail.as_deref().unwrap_or("—"))
            ),
        ));
    }
    Ok(lines)
}
