//! Workers and schedules, from the driver's registries once it has them.
//!
//! The driver does not report workers or schedules yet (they arrive with the
//! worker-runtime and recurring-schedules work). Until then these return
//! `None`, which the screens and subcommands show honestly as "not reported
//! by this driver version" rather than inventing data. When the driver grows
//! `RedisQueue::workers()` / `schedules()`, only this file changes.

use redq::{QueueError, RedisQueue};

use crate::tui::state::{ScheduleInfo, WorkerInfo};

/// Live workers, or `None` when the driver keeps no worker registry.
pub async fn workers(_queue: &RedisQueue) -> Result<Option<Vec<WorkerInfo>>, QueueError> {
    Ok(None)
}

/// Schedules, or `None` when the driver stores no schedules.
pub async fn schedules(_queue: &RedisQueue) -> Result<Option<Vec<ScheduleInfo>>, QueueError> {
    Ok(None)
}
