//! Payloads come back exactly as they went in: through claim, inspect,
//! listings and dead letters.

use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::RedisServer;
use serde_json::{json, Value};

/// Enqueue `payload`, then read it back every way there is.
async fn round_trip(server: &RedisServer, queue: &RedisQueue, payload: Value) {
    let id = queue.add("q", NewJob::new(payload.clone())).await.unwrap();
    let listed = queue
        .list_jobs("q", JobState::Waiting, 0, 1)
        .await
        .unwrap()
        .items
        .remove(0);
    assert_same(&listed.payload, &payload, "list_jobs");
    let job = claim_n(queue, "q", 1).await.remove(0);
    assert_eq!(job.id, id.id());
    assert_same(&job.payload, &payload, "claim");
    assert_same(
        &queue.inspect(&job.id).await.unwrap().unwrap().payload,
        &payload,
        "inspect",
    );
    queue.dead_letter(&job.lease(), "check").await.unwrap();
    let dead = queue.dead_letters("q", 0, 1).await.unwrap().items.remove(0);
    assert_same(&dead.payload, &payload, "dead_letters");
    queue.purge_dead("q", |_, _| {}).await.unwrap();
    assert_eq!(stored_payloads(server, queue).await, 0);
}

/// Equal as JSON values and as JSON text (which also tells -0.0 from 0.0).
#[track_caller]
fn assert_same(got: &Value, want: &Value, via: &str) {
    assert_eq!(got, want, "payload changed via {via}");
    assert_eq!(
        serde_json::to_string(got).unwrap(),
        serde_json::to_string(want).unwrap(),
        "payload text changed via {via}"
    );
}

#[tokio::test]
async fn unicode_payloads_round_trip_unchanged() {
    let server = server();
    let queue = queue(&server, "unicode").await;
    for payload in [
        json!("héllo wörld — ✓ 日本語 한국어 العربية עברית"),
        json!("emoji 👩‍👩‍👧‍👦 🏳️‍🌈 and combining e\u{301}"),
        json!("control \u{0} \u{1} \n \r \t \u{7f} and quotes \" \\ '"),
        json!("\u{FEFF}bom and \u{FFFF} and \u{10FFFF}"),
        json!({"ключ": "значение", "🔑": ["🔒", "🔓"], "": ""}),
        json!("{}:[]\n{redq}:q:evil:waiting"),
        json!(""),
    ] {
        round_trip(&server, &queue, payload).await;
    }
}

#[tokio::test]
async fn scalar_and_nested_payloads_round_trip_unchanged() {
    let server = server();
    let queue = queue(&server, "nested").await;
    let deep = nested(redq::limits::MAX_PAYLOAD_DEPTH);
    for payload in [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!("42"),
        json!([]),
        json!({}),
        json!([1, "two", 3.5, null, [[]], {"a": {"b": {"c": [1, 2, {"d": null}]}}}]),
        deep,
    ] {
        round_trip(&server, &queue, payload).await;
    }
}

/// Arrays and objects nested `depth` levels deep.
fn nested(depth: usize) -> Value {
    let mut value = json!("bottom");
    for level in 0..depth {
        value = if level % 2 == 0 {
            json!([value])
        } else {
            json!({ "level": level, "next": value })
        };
    }
    value
}

#[tokio::test]
async fn a_payload_nested_too_deeply_to_read_back_is_refused_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "too-deep").await;
    let before = digest(&server).await;
    let deepest = redq::limits::MAX_PAYLOAD_DEPTH;
    for depth in [deepest + 1, deepest + 2, 1000] {
        let result = queue.add("q", NewJob::new(nested(depth))).await;
        assert_invalid(result, "payload");
    }
    let err = queue
        .add("q", NewJob::new(nested(deepest + 1)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("127"), "{err}");
    assert_eq!(digest(&server).await, before);
    // The deepest accepted payload comes back unchanged.
    round_trip(&server, &queue, nested(deepest)).await;
}

#[tokio::test]
async fn numbers_at_the_edges_round_trip_unchanged() {
    let server = server();
    let queue = queue(&server, "numbers").await;
    let payload = json!({
        "i64_min": i64::MIN,
        "i64_max": i64::MAX,
        "u64_max": u64::MAX,
        "two_53_plus_1": 9_007_199_254_740_993_u64,
        "neg_two_53_minus_1": -9_007_199_254_740_993_i64,
        "big": 1e308,
        "f64_max": f64::MAX,
        "f64_min_positive": f64::MIN_POSITIVE,
        "subnormal": 5e-324,
        "neg_zero": -0.0,
        "tenth": 0.1,
        "sum": 0.1 + 0.2,
        "third": 1.0 / 3.0,
        "pi": std::f64::consts::PI,
    });
    round_trip(&server, &queue, payload.clone()).await;
    // Each number individually, as a top-level payload too.
    for (_, value) in payload.as_object().unwrap() {
        round_trip(&server, &queue, value.clone()).await;
    }
    queue
        .add("q", NewJob::new(json!({"neg_zero": -0.0, "u": u64::MAX})))
        .await
        .unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    let neg_zero = job.payload["neg_zero"].as_f64().unwrap();
    assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
    assert_eq!(job.payload["u"].as_u64(), Some(u64::MAX));
}

#[tokio::test]
async fn a_900_kib_payload_round_trips_unchanged() {
    let server = server();
    let queue = queue(&server, "large").await;
    // Varied content, so a truncation or shuffle anywhere would show.
    let text: String = (0..900 * 1024 / 8)
        .map(|i| format!("{:07x}|", i * 2_654_435_761_u64 % 0xfff_ffff))
        .collect();
    let payload = json!({ "blob": text, "tail": "é✓" });
    let size = serde_json::to_string(&payload).unwrap().len();
    assert!(
        size > 900 * 1024 && size < redq::DEFAULT_PAYLOAD_LIMIT,
        "{size}"
    );
    round_trip(&server, &queue, payload).await;
}

#[tokio::test]
async fn the_default_limit_accepts_one_mib_and_refuses_more() {
    let server = server();
    let queue = queue(&server, "default-limit").await;
    let limit = redq::DEFAULT_PAYLOAD_LIMIT;
    let exact = json!("a".repeat(limit - 2));
    queue.add("q", NewJob::new(exact.clone())).await.unwrap();
    assert_eq!(claim_n(&queue, "q", 1).await[0].payload, exact);
    let before = digest(&server).await;
    match queue
        .add("q", NewJob::new(json!("a".repeat(limit - 1))))
        .await
    {
        Err(redq::QueueError::PayloadTooLarge { size, limit: l }) => {
            assert_eq!((size, l), (limit + 1, limit));
        }
        other => panic!("expected PayloadTooLarge, got {other:?}"),
    }
    assert_eq!(digest(&server).await, before);
}
