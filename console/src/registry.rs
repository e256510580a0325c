//! Workers and schedules, from the driver's worker registry
//! (`RedisQueue::workers`) and schedule store (`RedisQueue::list_schedules`),
//! turned into the console's own rows. This adapter is the only place that
//! knows the driver's shapes, so the screens stay plain data.
//!
//! Both return `Option` so a driver without a registry could be shown
//! honestly as "not reported" rather than as an empty list; with this
//! driver they are always `Some`.

use redq::schedule::{tick_job_id, ScheduleInfo as Stored};
use redq::{QueueError, RedisQueue};

use crate::tui::state::{ScheduleInfo, WorkerInfo};

/// Live workers (heartbeat within the driver's worker TTL), then the gone
/// ones the registry still lists (`redq::worker::GONE_KEPT`).
pub async fn workers(queue: &RedisQueue) -> Result<Option<Vec<WorkerInfo>>, QueueError> {
    let workers = queue.workers().await?;
    Ok(Some(
        workers
            .into_iter()
            .map(|w| WorkerInfo {
                id: w.id,
                node: w.node,
                instance: w.instance,
                host: w.host,
                pid: w.pid,
                started_at: w.started_at,
                queues: w.queues,
                in_flight: w.in_flight,
                processed: w.processed,
                failed: w.failed,
                last_heartbeat: w.last_heartbeat,
                shards: Vec::new(),
                gone_shards: Vec::new(),
                state: w.state,
                gone: w.gone,
                wake_ups: w.wake_ups,
                version: w.version,
                handoffs_lost: w.handoffs_lost,
                claims_lost: w.claims_lost,
            })
            .collect(),
    ))
}

/// Every schedule of the namespace, sorted by name.
pub async fn schedules(queue: &RedisQueue) -> Result<Option<Vec<ScheduleInfo>>, QueueError> {
    let schedules = queue.list_schedules().await?;
    Ok(Some(
        schedules.iter().map(|s| schedule_row(s, None)).collect(),
    ))
}

/// A stored schedule as a row of the console's (`shard`: the shard that
/// stores it, with several). LAST is the last tick, not the last enqueue:
/// a manual trigger enqueues too, and must not read as the tick that ran.
pub fn schedule_row(s: &Stored, shard: Option<usize>) -> ScheduleInfo {
    ScheduleInfo {
        name: s.name.clone(),
        queue: s.queue.clone(),
        expression: s.expression.clone(),
        timezone: s.timezone.clone(),
        next_run: s.next_run,
        last_run: s.last_tick,
        paused: s.paused,
        shard,
    }
}

/// Whether the schedule's last tick enqueued its job (`Some(true)`) or was
/// skipped by the skip misfire policy (`Some(false)`); `None` before its
/// first tick.
pub fn last_tick_fired(s: &Stored) -> Option<bool> {
    let tick = s.last_tick?;
    Some(s.last_skipped != Some(tick))
}

/// Whether the schedule's last enqueue (`last_run`, `last_job_id`) was a
/// manual trigger (`Some(true)`) or a tick (`Some(false)`): a tick's job id
/// is derived from the schedule name and the tick, a trigger's is a fresh
/// ULID. `None` before anything was enqueued.
pub fn last_enqueue_was_trigger(s: &Stored) -> Option<bool> {
    let id = s.last_job_id.as_deref()?;
    let tick_id = tick_job_id(&s.name, std::time::UNIX_EPOCH);
    let prefix = tick_id.trim_end_matches('0');
    Some(!id.starts_with(prefix))
}
