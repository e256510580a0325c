//! The `opentelemetry` feature: the current span's OpenTelemetry context
//! written as a W3C `traceparent`, and a stored one made the parent or a
//! link of the worker's span. The text is what the W3C propagator
//! (`TraceContextPropagator`) injects and extracts, written here so the
//! driver needs the API crate only, not an SDK.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::Context;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The current span's context as a version-00 `traceparent`; `None` when
/// the span is not traced (no OpenTelemetry layer, or not sampled into one).
pub(super) fn current_trace_parent() -> Option<String> {
    let cx = tracing::Span::current().context();
    let span = cx.span();
    let context = span.span_context();
    context.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            context.trace_id(),
            context.span_id(),
            (context.trace_flags() & TraceFlags::SAMPLED).to_u8()
        )
    })
}

/// Make the producer's context (`trace`, as stored) the parent of `span` on
/// the first attempt (`attempts` failed so far: 0), a link on a retry.
pub(super) fn restore(span: &tracing::Span, trace: &str, attempts: u32) {
    let Some(producer) = parse(trace) else {
        // Stored by a writer that skipped the driver's check: nothing to restore.
        return;
    };
    if attempts == 0 {
        // Fails only when no OpenTelemetry layer records the span.
        let _ = span.set_parent(Context::new().with_remote_span_context(producer));
    } else {
        span.add_link(producer);
    }
}

fn parse(trace: &str) -> Option<SpanContext> {
    let mut parts = trace.split('-');
    let (_version, trace_id, span_id, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let context = SpanContext::new(
        TraceId::from_hex(trace_id).ok()?,
        SpanId::from_hex(span_id).ok()?,
        TraceFlags::new(u8::from_str_radix(flags, 16).ok()?) & TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    context.is_valid().then_some(context)
}
