//! The lines of the job detail view. Shared by the view (to draw them) and
//! the state (to bound scrolling), so both agree on how long it is.

use std::time::SystemTime;

use redq::JobRecord;

use crate::clock;
use crate::text::{inert, inert_multiline};
use crate::tui::view::facts;

/// Label and value lines of a job, then its full error and pretty payload.
/// With several `shards` (their namespaces), a `shard` line says which one
/// holds the job. Every piece of text from Redis is made inert.
pub fn detail_lines(job: &JobRecord, shards: &[String], now: SystemTime) -> Vec<String> {
    let mut lines = Vec::new();
    let mut field = |label: &str, value: String| lines.push(format!("{label:<14}{value}"));
    field("id", inert(&job.id));
    field("queue", inert(&job.queue));
    if !shards.is_empty() {
        let index = crate::aggregate::shard_index(shards, &job.namespace)
            .map(|i| i.to_string())
            .unwrap_or_else(|| "?".into());
        field(
            "shard",
            format!("{index} of {} ({})", shards.len(), inert(&job.namespace)),
        );
    }
    field("state", job.state.to_string());
    field(
        "name",
        job.name.as_deref().map(inert).unwrap_or_else(|| "—".into()),
    );
    field(
        "attempts",
        facts::tries(job.attempts, Some(job.max_attempts)),
    );
    field("priority", job.priority.to_string());
    field(
        "enqueued",
        format!(
            "{} UTC ({} ago)",
            clock::datetime(job.enqueued_at),
            clock::compact(clock::age(job.enqueued_at, now))
        ),
    );
    if let Some(due) = job.due_at {
        field("due", format!("{} UTC", clock::datetime(due)));
    }
    if let Some(died) = job.died_at {
        field(
            "died",
            format!(
                "{} UTC ({} ago)",
                clock::datetime(died),
                clock::compact(clock::age(died, now))
            ),
        );
    }
    if let (Some(lease), Some(expires)) = (job.lease_id, job.lease_expires_at) {
        field(
            "lease",
            format!("{lease}, lapses {} UTC", clock::datetime(expires)),
        );
    }
    if let Some((node, instance)) = job.holder {
        field("holder", facts::worker(node, instance));
    }
    if let Some(key) = &job.ordering_key {
        field("ordering key", inert(key));
    }
    if let Some(key) = &job.dedup_key {
        field("dedup key", inert(key));
    }
    if let Some(window) = job.retry_window {
        field("retry window", clock::compact(window));
    }
    lines.push(String::new());
    lines.push("error".into());
    match &job.last_error {
        Some(error) => lines.extend(inert_multiline(error).lines().map(|l| format!("  {l}"))),
        None => lines.push("  —".into()),
    }
    lines.push(String::new());
    lines.push("payload".into());
    lines.extend(payload_lines(&job.payload));
    lines
}

/// The payload as pretty JSON; a payload that was not JSON (the driver
/// hands it over as a string) is shown as escaped text.
pub fn payload_lines(payload: &serde_json::Value) -> Vec<String> {
    // serde_json escapes control characters inside JSON strings (\u001b),
    // so pretty JSON is inert already; inert() guards the rest.
    let pretty = serde_json::to_string_pretty(payload).unwrap_or_else(|_| payload.to_string());
    pretty
        .lines()
        .map(|l| format!("  {}", inert_multiline(l)))
        .collect()
}
