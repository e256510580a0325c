//! Workers and schedules, from the driver's worker registry
//! (`RedisQueue::workers`) and schedule store (`RedisQueue::list_schedules`),
//! turned into the console's own rows. This adapter is the only place that
//! knows the driver's shapes, so the screens stay plain data.
//!
//! Both return `Option` so a driver without a registry could be shown
//! honestly as "not reported" rather than as an empty list; with this
//! driver they are always `Some`.

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
        schedules
            .into_iter()
            .map(|s| ScheduleInfo {
                name: s.name,
                queue: s.queue,
                expression: s.expression,
                timezone: s.timezone,
                next_run: s.next_run,
                last_run: s.last_run,
                paused: s.paused,
                shard: None,
            })
            .collect(),
    ))
}
