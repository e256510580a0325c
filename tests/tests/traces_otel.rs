//! Traces with the driver's `opentelemetry` feature (run by `./test` as
//! `cargo test -p redq-tests --features opentelemetry --test traces_otel`):
//! a typed push stores the producer's context, and the worker's
//! `redq.process` span continues it, as its child on the first attempt and
//! linked to it on the retry, per the OpenTelemetry messaging conventions.
//! Spans go to the SDK's in-memory exporter.

use std::sync::OnceLock;

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use redq::worker::{Pushed, Registry, TypedJob, WorkOptions, Worker};
use redq::JobState;
use redq_tests::fixtures::{self, DEADLINE};
use redq_tests::jobs::FailsOnce;
use redq_tests::running::RunningWorker;
use redq_tests::{wait_until, RedisServer};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// The spans of this test binary, exported as each ends (one subscriber
/// for the process: the worker's tasks run on the runtime's threads).
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("redq-tests"));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("the only subscriber of this test binary");
        exporter
    })
}

fn finished() -> Vec<SpanData> {
    exporter().get_finished_spans().expect("the exported spans")
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn is_attempt_of(span: &SpanData, id: &str, attempt: i64) -> bool {
    span.name == "redq.process"
        && attribute(span, "messaging.message.id") == Some(&Value::from(id.to_owned()))
        && attribute(span, "redq.job.attempt") == Some(&Value::I64(attempt))
}

const QUEUE: &str = FailsOnce::QUEUE;

#[tokio::test]
async fn the_worker_span_is_the_producers_child_first_and_linked_to_it_on_a_retry() {
    exporter();
    let server = RedisServer::start();
    let queue = fixtures::queue(&server, "otel").await;

    // The application's own span around the push.
    let checkout = tracing::info_span!("checkout");
    let pushed = queue.push(&FailsOnce).instrument(checkout).await;
    let Ok(Pushed::Queued { id }) = pushed else {
        panic!("the push was not queued: {pushed:?}");
    };
    let stored = queue.inspect(&id).await.unwrap().expect("the job");
    let trace = stored
        .trace_parent
        .expect("the push stored its trace context");

    let mut registry = Registry::new();
    registry.add_job::<FailsOnce>();
    let options = WorkOptions::new().queues([QUEUE]).schedules(false);
    let worker = RunningWorker::spawn(Worker::new(queue.clone(), registry, options).unwrap());
    wait_until(
        DEADLINE,
        "both attempts' spans ended and the job completed",
        async || {
            let spans = finished();
            spans.iter().any(|s| is_attempt_of(s, &id, 1))
                && spans.iter().any(|s| is_attempt_of(s, &id, 2))
                && (queue.inspect(&id).await.expect("inspect"))
                    .is_none_or(|job| job.state == JobState::Completed)
        },
    )
    .await;
    worker.shutdown().await;

    let spans = finished();
    let named = |name: &str| -> &SpanData {
        let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "one {name} span: {found:#?}");
        found[0]
    };
    let checkout = named("checkout");
    let publish = named("redq.publish");
    assert_eq!(publish.span_kind, SpanKind::Producer);
    assert_eq!(publish.parent_span_id, checkout.span_context.span_id());
    assert_eq!(
        publish.span_context.trace_id(),
        checkout.span_context.trace_id()
    );
    // What was stored is the publish span's context, as the W3C propagator writes it.
    assert_eq!(
        trace,
        format!(
            "00-{}-{}-01",
            publish.span_context.trace_id(),
            publish.span_context.span_id()
        )
    );

    let first = spans.iter().find(|s| is_attempt_of(s, &id, 1)).unwrap();
    assert_eq!(first.span_kind, SpanKind::Consumer);
    assert_eq!(
        first.span_context.trace_id(),
        publish.span_context.trace_id()
    );
    assert_eq!(first.parent_span_id, publish.span_context.span_id());
    assert!(first.parent_span_is_remote, "the parent came through Redis");
    for (key, value) in [
        ("messaging.system", "redq"),
        ("messaging.operation.type", "process"),
        ("messaging.destination.name", QUEUE),
        ("redq.job.name", FailsOnce::NAME),
    ] {
        assert_eq!(
            attribute(first, key),
            Some(&Value::from(value)),
            "{key} of {first:#?}"
        );
    }

    // The retry is a trace of its own, linked to the producer's.
    let retry = spans.iter().find(|s| is_attempt_of(s, &id, 2)).unwrap();
    assert_ne!(
        retry.span_context.trace_id(),
        publish.span_context.trace_id()
    );
    let links: Vec<_> = retry
        .links
        .links
        .iter()
        .map(|link| (link.span_context.trace_id(), link.span_context.span_id()))
        .collect();
    assert_eq!(
        links,
        [(
            publish.span_context.trace_id(),
            publish.span_context.span_id()
        )]
    );
}
