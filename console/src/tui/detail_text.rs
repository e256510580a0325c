//! The lines of the job detail view. Shared by the view (to draw them) and
//! the state (to bound scrolling), so both agree on how long it is.

use std::time::SystemTime;

use redq::{JobNotes, JobRecord};

use crate::clock;
use crate::text::{inert, inert_multiline};
use crate::tui::view::facts;

/// Label and value lines of a job, then its full error, its notes (the
/// progress and log lines its handler reported) and pretty payload. With
/// several `shards` (their namespaces), a `shard` line says which one holds
/// the job. Every piece of text from Redis is made inert.
pub fn detail_lines(
    job: &JobRecord,
    notes: &JobNotes,
    shards: &[String],
    now: SystemTime,
) -> Vec<String> {
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
    field("attempts", facts::tries(job.attempts, job.max_attempts));
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
        field(
            "due",
            format!(
                "{} UTC ({})",
                clock::datetime(due),
                clock::relative(due, now)
            ),
        );
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
        // A lease past its expiry is no running job: its holder is gone or
        // stuck, and a claim or a reclaim will take it back.
        let when = match expires.duration_since(now) {
            Ok(_) => format!("lapses {} UTC", clock::datetime(expires)),
            Err(_) => format!(
                "LAPSED {} ago, at {} UTC (a claim or a reclaim returns it)",
                clock::compact(clock::age(expires, now)),
                clock::datetime(expires)
            ),
        };
        field("lease", format!("{lease}, {when}"));
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
    if let Some(key) = &job.limit_key {
        field("limit key", inert(key));
    }
    if let Some(window) = job.retry_window {
        field("retry window", clock::compact(window));
    }
    if let Some(gate) = &job.gate {
        field("member of", inert(gate));
    }
    if let Some(progress) = &notes.progress {
        field("progress", progress_text(progress));
    }
    lines.push(String::new());
    lines.push("error".into());
    match &job.last_error {
        Some(error) => lines.extend(inert_multiline(error).lines().map(|l| format!("  {l}"))),
        None => lines.push("  —".into()),
    }
    if !notes.log.is_empty() {
        lines.push(String::new());
        lines.push(format!("log (last {})", notes.log.len()));
        lines.extend(notes.log.iter().map(|l| format!("  {}", inert(l))));
    }
    lines.push(String::new());
    lines.push("payload".into());
    lines.extend(payload_lines(&job.payload));
    lines
}

/// Progress on one line: a string as itself, anything else as compact JSON
/// (whose strings serde_json escapes), made inert either way.
pub fn progress_text(progress: &serde_json::Value) -> String {
    match progress {
        serde_json::Value::String(text) => inert(text),
        other => inert(&other.to_string()),
    }
}

/// The payload as pretty JSON, every character that could act on the
/// terminal or hide text written as a JSON escape (`\u001b`, `\u009b`,
/// `\u202e`: the CLI's `json_text`), so what is shown is still valid JSON
/// that reads back to the payload; a payload that was not JSON (the
/// driver hands it over as a string) is shown as a JSON string.
pub fn payload_lines(payload: &serde_json::Value) -> Vec<String> {
    crate::output::json_text(payload, true)
        .lines()
        .map(|l| format!("  {l}"))
        .collect()
}

/// The lines the detail view shows: how the job finished once it did and
/// its queue keeps it, else its record and notes.
pub fn view_lines(
    detail: &crate::tui::state::Detail,
    shards: &[String],
    now: SystemTime,
) -> Vec<String> {
    match &detail.finished {
        Some(kept) => finished_lines(kept, shards, now),
        None => {
            let mut lines = detail_lines(&detail.record, &detail.notes, shards, now);
            if detail.gone {
                // What it last was stays below; the state line says the truth.
                if let Some(line) = lines.iter_mut().find(|l| l.starts_with("state")) {
                    *line = format!(
                        "{:<14}gone: deleted, or finished and not kept (it was {})",
                        "state",
                        detail.record.state.as_str()
                    );
                }
            }
            // Why it is held, under the state line, as `redq jobs show` says.
            let state_at = lines.iter().position(|l| l.starts_with("state"));
            for (i, (label, text)) in detail.held.iter().enumerate() {
                let at = state_at.map_or(0, |a| a + 1 + i);
                lines.insert(at, format!("{label:<14}{}", inert(text)));
            }
            if let Some(line) = awaits_line(detail) {
                // Right under the identity and state lines it explains.
                let at = lines
                    .iter()
                    .position(|l| l.starts_with("state"))
                    .map_or(0, |i| i + 1);
                lines.insert(at, line);
            }
            lines
        }
    }
}

/// "awaits  batch G (7 of 10 finished): waiting for 3 of 10" for a job that
/// waits (or waited) on a gate; the gate's id alone until it was read.
fn awaits_line(detail: &crate::tui::state::Detail) -> Option<String> {
    let gate = detail.record.awaits.as_deref()?;
    let text = match &detail.awaits {
        Some(read) if read.id == gate => crate::workflow::why::awaits_line(read, &detail.record.id),
        _ => format!("{} (reading its progress…)", inert(gate)),
    };
    Some(format!("{:<14}{text}", "awaits"))
}

/// The lines of a finished job its queue keeps (completed or cancelled):
/// outcome, times, run time, holder, who cancelled it and in which state,
/// then its result as pretty JSON. Inert like [`detail_lines`].
pub fn finished_lines(kept: &redq::KeptJob, shards: &[String], now: SystemTime) -> Vec<String> {
    let mut lines = Vec::new();
    let mut field = |label: &str, value: String| lines.push(format!("{label:<14}{value}"));
    field("id", inert(&kept.id));
    field("queue", inert(&kept.queue));
    if !shards.is_empty() {
        let index = crate::aggregate::shard_index(shards, &kept.namespace)
            .map(|i| i.to_string())
            .unwrap_or_else(|| "?".into());
        field(
            "shard",
            format!("{index} of {} ({})", shards.len(), inert(&kept.namespace)),
        );
    }
    field("state", kept.outcome.as_str().into());
    field(
        "name",
        kept.name
            .as_deref()
            .map(inert)
            .unwrap_or_else(|| "—".into()),
    );
    // The driver counts a completed job's successful attempt (from 1) and a
    // cancelled job's failed ones: each is said as what it is, beside the
    // failed tries the job lists show.
    match kept.outcome {
        redq::kept::Outcome::Completed => field(
            "attempt",
            match kept.attempt.saturating_sub(1) {
                0 => format!("{} (the first run)", kept.attempt),
                failed => format!("{} ({failed} failed before it)", kept.attempt),
            },
        ),
        _ => field("failed tries", kept.attempt.to_string()),
    }
    field(
        "enqueued",
        format!("{} UTC", clock::datetime(kept.enqueued_at)),
    );
    field(
        kept.outcome.as_str(),
        format!(
            "{} UTC ({} ago)",
            clock::datetime(kept.finished_at),
            clock::compact(clock::age(kept.finished_at, now))
        ),
    );
    if let Some(run_time) = kept.run_time {
        field("run time", clock::run_time(run_time));
    }
    if let Some((node, instance)) = kept.holder {
        field("holder", facts::worker(node, instance));
    }
    if let Some(by) = kept.cancelled_by.as_deref().filter(|by| !by.is_empty()) {
        field("cancelled by", inert(by));
    }
    if let Some(state) = &kept.cancelled_in {
        field("cancelled in", inert(state));
    }
    if let Some(result) = &kept.result {
        lines.push(String::new());
        lines.push("result".into());
        lines.extend(payload_lines(result));
    }
    lines
}
