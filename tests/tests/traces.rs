//! Traces without the driver's `opentelemetry` feature: every job a Worker
//! runs is in a `redq.process` span with the OpenTelemetry messaging fields,
//! every enqueue in a `redq.publish` span, and a producer's `traceparent`
//! is stored with the job and handed back by inspect and claim. With the
//! feature: `traces_otel.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use redq::worker::{Registry, TypedJob, WorkOptions, Worker};
use redq::{JobState, NewJob};
use redq_tests::fixtures::{self, assert_invalid, DEADLINE, LONG};
use redq_tests::jobs::FailsOnce;
use redq_tests::running::RunningWorker;
use redq_tests::{wait_until, RedisServer};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

const TRACE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// One span as a subscriber saw it open: its name and its fields as text.
#[derive(Debug, Clone)]
struct SeenSpan {
    name: &'static str,
    fields: HashMap<String, String>,
}

impl SeenSpan {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Every span opened in this test binary: one subscriber for the whole
/// process, since the worker's tasks run on the runtime's threads; each
/// test picks out its own spans by queue name.
fn seen() -> &'static Arc<Mutex<Vec<SeenSpan>>> {
    static SEEN: OnceLock<Arc<Mutex<Vec<SeenSpan>>>> = OnceLock::new();
    SEEN.get_or_init(|| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let layer = Recorder(seen.clone());
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("the only subscriber of this test binary");
        seen
    })
}

fn spans_of(name: &str, queue: &str) -> Vec<SeenSpan> {
    seen()
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.name == name && s.field("messaging.destination.name") == Some(queue))
        .cloned()
        .collect()
}

struct Recorder(Arc<Mutex<Vec<SeenSpan>>>);

impl<S: tracing::Subscriber> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _cx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        self.0.lock().unwrap().push(SeenSpan {
            name: attrs.metadata().name(),
            fields: fields.0,
        });
    }
}

#[derive(Default)]
struct Fields(HashMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

const QUEUE: &str = FailsOnce::QUEUE;

#[tokio::test]
async fn each_attempt_runs_in_a_redq_process_span_with_the_messaging_fields() {
    seen();
    let server = RedisServer::start();
    let queue = fixtures::queue(&server, "process-span").await;
    let id = queue
        .add(QUEUE, NewJob::new(json!(null)).name(FailsOnce::NAME))
        .await
        .expect("enqueue")
        .id()
        .to_owned();

    let mut registry = Registry::new();
    registry.add_job::<FailsOnce>();
    let options = WorkOptions::new().queues([QUEUE]).schedules(false);
    let worker = RunningWorker::spawn(Worker::new(queue.clone(), registry, options).unwrap());
    wait_until(
        DEADLINE,
        "both attempts ran and the job completed",
        async || {
            spans_of("redq.process", QUEUE).len() == 2
                && (queue.inspect(&id).await.expect("inspect"))
                    .is_none_or(|job| job.state == JobState::Completed)
        },
    )
    .await;
    worker.shutdown().await;

    let process = spans_of("redq.process", QUEUE);
    for (span, attempt) in process.iter().zip(["1", "2"]) {
        let expected = [
            ("messaging.system", "redq"),
            ("messaging.operation.type", "process"),
            ("messaging.destination.name", QUEUE),
            ("messaging.message.id", id.as_str()),
            ("redq.job.name", FailsOnce::NAME),
            ("redq.job.attempt", attempt),
            ("otel.kind", "consumer"),
        ];
        for (field, value) in expected {
            assert_eq!(span.field(field), Some(value), "{field} of {span:?}");
        }
    }
    let publish = spans_of("redq.publish", QUEUE);
    assert_eq!(publish.len(), 1, "{publish:?}");
    for (field, value) in [
        ("messaging.system", "redq"),
        ("messaging.operation.type", "send"),
        ("messaging.batch.message_count", "1"),
        ("otel.kind", "producer"),
    ] {
        assert_eq!(
            publish[0].field(field),
            Some(value),
            "{field} of {publish:?}"
        );
    }
}

#[tokio::test]
async fn a_trace_parent_is_stored_with_the_job_and_handed_to_its_worker() {
    let server = RedisServer::start();
    let queue = fixtures::queue(&server, "trace-round-trip").await;
    let traced = queue
        .add("q", NewJob::new(json!(1)).trace_parent(TRACE))
        .await
        .expect("enqueue")
        .id()
        .to_owned();
    let batch = queue
        .add_batch(
            "q",
            vec![
                NewJob::new(json!(2)),
                NewJob::new(json!(3)).trace_parent(TRACE),
            ],
        )
        .await
        .expect("enqueue a batch");
    let (untraced, traced_in_batch) = (batch[0].id().to_owned(), batch[1].id().to_owned());

    let record = |id: String| {
        let queue = queue.clone();
        async move { queue.inspect(&id).await.expect("inspect").expect("the job") }
    };
    assert_eq!(
        record(traced.clone()).await.trace_parent.as_deref(),
        Some(TRACE)
    );
    assert_eq!(
        record(traced_in_batch.clone())
            .await
            .trace_parent
            .as_deref(),
        Some(TRACE)
    );
    // Without the feature nothing is captured for a job that brings none.
    assert_eq!(record(untraced.clone()).await.trace_parent, None);

    let claimed = queue.claim("q", 10, LONG).await.expect("claim");
    let by_id: HashMap<&str, Option<&str>> = claimed
        .iter()
        .map(|job| (job.id.as_str(), job.trace_parent.as_deref()))
        .collect();
    assert_eq!(
        by_id,
        HashMap::from([
            (traced.as_str(), Some(TRACE)),
            (untraced.as_str(), None),
            (traced_in_batch.as_str(), Some(TRACE)),
        ])
    );
}

#[tokio::test]
async fn a_malformed_trace_parent_is_refused_and_nothing_is_written() {
    let server = fixtures::server();
    let queue = fixtures::queue(&server, "bad-trace").await;
    queue
        .add("q", NewJob::new(json!(0)))
        .await
        .expect("enqueue");
    let before = fixtures::digest(&server).await;

    let upper = TRACE.to_uppercase();
    for bad in [
        "",
        "traceparent",
        upper.as_str(),
        &TRACE[..54],
        &format!("{TRACE}-00"),
    ] {
        let job = NewJob::new(json!(1)).trace_parent(bad);
        let result = queue.add("q", job).await;
        assert_invalid(result, "trace parent");
        // One bad job refuses its whole batch.
        let batch = vec![
            NewJob::new(json!(2)),
            NewJob::new(json!(3)).trace_parent(bad),
        ];
        assert_invalid(queue.add_batch("q", batch).await, "trace parent");
    }
    let err = queue
        .add("q", NewJob::new(json!(1)).trace_parent("00-abc-def-01"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid trace parent \"00-abc-def-01\": a W3C traceparent: \
         version-traceid-parentid-flags in lowercase hex (55 characters, ids not all \
         zeros), such as 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    );
    assert_eq!(
        fixtures::digest(&server).await,
        before,
        "a refused enqueue wrote something"
    );
}
