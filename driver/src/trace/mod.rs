//! Traces: the producer's W3C trace context travels with the job (record
//! field `trace`, a `traceparent` of 55 bytes), and each job runs in a
//! `tracing` span named by the OpenTelemetry messaging conventions.
//!
//! Always, feature or not: every `add`/`add_batch` runs in a `redq.publish`
//! span and every job a Worker runs in a `redq.process` span, with the
//! conventions' fields (`messaging.system`, `messaging.operation.type`,
//! `messaging.destination.name`, `messaging.message.id`) and redq's own
//! (`redq.job.name`, `redq.job.attempt`). A producer may set the context
//! itself with [`crate::NewJob::trace_parent`].
//!
//! With the `opentelemetry` feature, an enqueue with no context of its own
//! stores the `redq.publish` span's OpenTelemetry context (so the current
//! span's trace, through `tracing-opentelemetry`), and the worker makes the
//! stored context the parent of `redq.process` on the first attempt and a
//! link on a retry, as the conventions say for a consumer: a retry is a new
//! trace of its own, linked to the one that sent the job. Without the
//! feature nothing is captured or restored, and a job without a context
//! costs one empty ARGV entry and one empty record field.

mod parent;

#[cfg(feature = "opentelemetry")]
mod otel;

pub(crate) use parent::check_trace_parent;

use crate::Job;

/// The span around one `add` or `add_batch` call (`count` jobs to `queue`).
pub(crate) fn publish_span(queue: &str, count: usize) -> tracing::Span {
    tracing::info_span!(
        "redq.publish",
        otel.kind = "producer",
        messaging.system = "redq",
        messaging.operation.type = "send",
        messaging.destination.name = queue,
        // i64: tracing-opentelemetry keeps signed integers as numbers, but
        // writes unsigned ones as text.
        messaging.batch.message_count = count as i64,
    )
}

/// The traceparent an enqueue stores for a job that brings none: the
/// current span's OpenTelemetry context with the feature on (none when that
/// span is not traced), never any without it.
pub(crate) fn current_trace_parent() -> Option<String> {
    #[cfg(feature = "opentelemetry")]
    {
        otel::current_trace_parent()
    }
    #[cfg(not(feature = "opentelemetry"))]
    {
        None
    }
}

/// The span a Worker runs `job` in; with the feature on, the producer's
/// stored context is its parent on the first attempt and a link on a retry.
pub(crate) fn process_span(job: &Job) -> tracing::Span {
    let span = tracing::info_span!(
        "redq.process",
        otel.kind = "consumer",
        messaging.system = "redq",
        messaging.operation.type = "process",
        messaging.destination.name = %job.queue,
        messaging.message.id = %job.id,
        redq.job.name = job.name.as_deref().unwrap_or(""),
        redq.job.attempt = i64::from(job.attempts) + 1,
    );
    #[cfg(feature = "opentelemetry")]
    if let Some(trace) = &job.trace_parent {
        otel::restore(&span, trace, job.attempts);
    }
    span
}
