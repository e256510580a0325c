//! Compact job records (`driver/src/record_format.rs`, `lua/lib/job_record.lua`):
//! in a namespace whose marker says `compact`, a fresh job with no options
//! but a name and max_attempts, due at once, is stored as a 3-to-5-field
//! array; every other job, and every job once leased, in the standard one.
//! Every reader (the scripts, the driver, the surgery) sees the same job
//! either way, and the marker is read at connect, an unknown one refused.

use std::time::Duration;

use fred::types::Value;
use redq::surgery::IfLeased;
use redq::{Backoff, JobState, NewJob, QueueError, RecordFormat, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{lua, unique_namespace, RedisServer};
use serde_json::json;

use super::lean_record::{stored, REENCODE};

/// The standard header: msgpack array16 (0xdc), then the field count.
pub(crate) const STANDARD: u8 = 0xdc;
/// A compact record's first byte: fixarray of 3, 4 or 5 fields.
const COMPACT_3: u8 = 0x93;
const COMPACT_4: u8 = 0x94;
const COMPACT_5: u8 = 0x95;

async fn compact_queue(server: &RedisServer, test: &str) -> RedisQueue {
    queue_in_format(server, test, RecordFormat::Compact).await
}

#[tokio::test]
async fn a_compact_namespace_stores_the_fresh_jobs_that_fit_compact_and_the_rest_whole() {
    let server = server();
    let queue = compact_queue(&server, "compact-store").await;
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let jobs = vec![
        (NewJob::new(json!(0)), COMPACT_3),
        (NewJob::new(json!(1)).name("send"), COMPACT_4),
        (
            NewJob::new(json!(2)).name("send").max_attempts(5),
            COMPACT_5,
        ),
        // max_attempts without a name stores the name at its default.
        (NewJob::new(json!(3)).max_attempts(5), COMPACT_5),
        (NewJob::new(json!(4)).priority(3), STANDARD),
        (
            NewJob::new(json!(5)).delay(Duration::from_secs(60)),
            STANDARD,
        ),
        (NewJob::new(json!(6)).ordering_key("o"), STANDARD),
        (NewJob::new(json!(7)).dedup_key("d"), STANDARD),
        (NewJob::new(json!(8)).limit_key("tenant"), STANDARD),
        (NewJob::new(json!(9)).trace_parent(trace), STANDARD),
        (NewJob::new(json!(10)).name("send").attempts(1), STANDARD),
        // Options sent at their defaults change nothing (the chaos runs' jobs).
        (
            NewJob::new(json!(11))
                .max_attempts(2)
                .reclaim_backoff(Backoff::exponential(Duration::ZERO, Duration::ZERO)),
            COMPACT_5,
        ),
        (
            NewJob::new(json!(12)).reclaim_backoff(Backoff::exponential(
                Duration::from_millis(200),
                Duration::from_millis(800),
            )),
            STANDARD,
        ),
    ];
    let expected: Vec<u8> = jobs.iter().map(|(_, first)| *first).collect();
    let ids = queue
        .add_batch("q", jobs.into_iter().map(|(job, _)| job).collect())
        .await
        .unwrap();
    let mut firsts = Vec::new();
    for id in &ids {
        firsts.push(stored(&server, &queue, id.id()).await[0]);
    }
    assert_eq!(firsts, expected);

    // A lone enqueue (its own path in enqueue.lua) stores compact too.
    let lone = queue
        .add("q", NewJob::new(json!({"i": 1})).name("send"))
        .await
        .unwrap();
    assert_eq!(stored(&server, &queue, lone.id()).await[0], COMPACT_4);

    // Every view reads a compact job whole, due when enqueued.
    let record = queue.inspect(lone.id()).await.unwrap().expect("the job");
    assert_eq!(record.state, JobState::Waiting);
    assert_eq!(
        (record.queue.as_str(), record.name.as_deref()),
        ("q", Some("send"))
    );
    assert_eq!(
        (record.attempts, record.max_attempts, record.priority),
        (0, 0, 0)
    );
    assert_eq!(record.payload, json!({"i": 1}));
    assert_eq!(record.due_at, None, "due at once");
    let record = queue.inspect(ids[2].id()).await.unwrap().unwrap();
    assert_eq!(
        (record.name.as_deref(), record.max_attempts),
        (Some("send"), 5)
    );
    let counts = queue.counts("q").await.unwrap();
    // The limit-keyed job is held by its key (lib/flow.lua), the delayed one scheduled.
    assert_eq!((counts.waiting, counts.held, counts.scheduled), (12, 1, 1));
    let page = queue
        .list_jobs("q", JobState::Waiting, 0, 100)
        .await
        .unwrap();
    assert_eq!(page.items.len(), 12);
    let found = queue.search("q", "\"i\":1", "0").await.unwrap();
    assert!(found.jobs.iter().any(|j| j.id == lone.id()), "{found:?}");

    // Claimed in enqueue order (the compact and the whole alike), priority first.
    let claimed = queue.claim("q", 100, LONG).await.unwrap();
    let order: Vec<&str> = claimed.iter().map(|j| j.id.as_str()).collect();
    let mut fifo: Vec<&str> = ids.iter().map(|e| e.id()).collect();
    fifo.retain(|id| *id != ids[4].id() && *id != ids[5].id());
    fifo.insert(0, ids[4].id());
    fifo.push(lone.id());
    assert_eq!(order, fifo);
    let named = claimed.iter().find(|j| j.id == ids[2].id()).unwrap();
    assert_eq!(
        (named.name.as_deref(), named.max_attempts),
        (Some("send"), 5)
    );
    assert_eq!((named.attempts, named.payload.clone()), (0, json!(2)));
}

/// Jobs of one call that share their options share a template, and from
/// its second job on what follows the sequence number is packed once: each
/// job still reads back with its own payload and claims in its own order.
#[tokio::test]
async fn the_jobs_of_a_batch_that_share_their_options_are_each_stored_compact_and_read_back_as_sent(
) {
    let server = server();
    let queue = compact_queue(&server, "compact-batch").await;
    let jobs = (0..4)
        .map(|i| NewJob::new(json!({ "i": i })).name("send"))
        .collect();
    let ids = queue.add_batch("q", jobs).await.unwrap();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(stored(&server, &queue, id.id()).await[0], COMPACT_4);
        let record = queue.inspect(id.id()).await.unwrap().expect("the job");
        assert_eq!(
            (record.payload, record.name.as_deref(), record.due_at),
            (json!({ "i": i }), Some("send"), None),
            "{}",
            id.id()
        );
    }
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    let payloads: Vec<_> = claimed.iter().map(|j| j.payload.clone()).collect();
    assert_eq!(
        payloads,
        (0..4).map(|i| json!({ "i": i })).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn leasing_a_compact_record_stores_the_standard_bytes_of_its_fields() {
    let server = server();
    // Long texts: a queue name and job names past a fixstr (str8, str16).
    let queue_name = "q".repeat(40);
    let queue = compact_queue(&server, "compact-lease").await;
    let names = ["", "n", &"m".repeat(40), &"x".repeat(256)];
    let mut ids = Vec::new();
    for (i, name) in names.iter().enumerate() {
        for max_attempts in [0, 3, 70_000] {
            let mut job = NewJob::new(json!({"i": i, "max": max_attempts}));
            if !name.is_empty() {
                job = job.name(*name);
            }
            let id = queue
                .add(&queue_name, job.max_attempts(max_attempts))
                .await
                .unwrap();
            assert!(
                (COMPACT_3..=COMPACT_5).contains(&stored(&server, &queue, id.id()).await[0]),
                "stored compact"
            );
            ids.push((id.id().to_owned(), name.to_string(), max_attempts, i));
        }
    }
    let claimed = queue.claim(&queue_name, 100, LONG).await.unwrap();
    assert_eq!(claimed.len(), ids.len());
    let client = server.client().await;
    let reencode = lua::load(&client, &lua::compose(REENCODE)).await;
    for ((id, name, max_attempts, i), job) in ids.iter().zip(&claimed) {
        assert_eq!(&job.id, id);
        let expected_name = (!name.is_empty()).then(|| name.clone());
        assert_eq!(job.name, expected_name, "{id}");
        assert_eq!(job.max_attempts, *max_attempts, "{id}");
        assert_eq!(job.payload, json!({"i": i, "max": max_attempts}));
        let raw = stored(&server, &queue, id).await;
        assert_eq!(
            raw[..3],
            [STANDARD, 0, redq::lua::OLDEST_JOB_RECORD_LEN as u8],
            "a leased job is stored whole, of the oldest length"
        );
        let again = lua::evalsha(
            &client,
            &reencode,
            queue.namespace(),
            &queue_name,
            &[Value::from(id.as_str())],
        )
        .await
        .unwrap();
        let Value::Bytes(again) = again else {
            panic!("{again:?}")
        };
        assert!(again == raw.as_slice(), "job {id}: the standard encoding");
        let meta = redq::lua::JobMeta::decode(&raw).unwrap();
        assert_eq!(meta.lease_id, job.lease_id);
        assert_eq!(meta.not_before_ms, meta.enqueued_at_ms);
    }
}

#[tokio::test]
async fn surgery_and_failures_on_compact_jobs_behave_as_on_whole_ones() {
    let server = server();
    let queue = compact_queue(&server, "compact-surgery").await;
    let add = |n: i64| {
        let queue = queue.clone();
        async move {
            let job = NewJob::new(json!({ "n": n })).name("kind").max_attempts(2);
            queue.add("q", job).await.unwrap().id().to_owned()
        }
    };
    let (edited, deleted, cancelled, failed) =
        (add(1).await, add(2).await, add(3).await, add(4).await);

    assert_eq!(
        queue
            .edit_payload(&edited, &json!({"n": 10}))
            .await
            .unwrap(),
        JobState::Waiting
    );
    let record = queue.inspect(&edited).await.unwrap().unwrap();
    assert_eq!(record.payload, json!({"n": 10}));
    assert_eq!(
        (record.name.as_deref(), record.max_attempts),
        (Some("kind"), 2)
    );

    queue.delete_job(&deleted, IfLeased::Refuse).await.unwrap();
    assert!(queue.inspect(&deleted).await.unwrap().is_none());
    queue.cancel(&cancelled, "test").await.unwrap();
    assert!(queue.inspect(&cancelled).await.unwrap().is_none());

    // Fails twice: retried once, then dead (max_attempts 2 kept), then requeued.
    let job = queue.claim("q", 2, LONG).await.unwrap();
    let ids: Vec<&str> = job.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, [edited.as_str(), failed.as_str()]);
    queue.ack(&job[0].lease()).await.unwrap();
    queue
        .nack(&job[1].lease(), Duration::ZERO, "once")
        .await
        .unwrap();
    let again = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!((again.id.as_str(), again.attempts), (failed.as_str(), 1));
    queue
        .nack(&again.lease(), Duration::ZERO, "twice")
        .await
        .unwrap();
    let dead = queue.dead_letters("q", 0, 10).await.unwrap();
    assert_eq!(dead.items.len(), 1);
    assert_eq!((dead.items[0].attempts, dead.items[0].max_attempts), (2, 2));
    queue
        .requeue_dead("q", std::slice::from_ref(&failed))
        .await
        .unwrap();
    let last = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!((last.id.as_str(), last.attempts), (failed.as_str(), 0));
    assert_eq!(last.name.as_deref(), Some("kind"));
}

#[tokio::test]
async fn the_marker_is_read_at_connect_and_one_this_version_does_not_know_is_refused() {
    let server = server();
    let ns = unique_namespace("compact-marker");
    let first = handle(&server, &ns).await;
    assert_eq!(first.record_format(), RecordFormat::Standard);
    let standard = first.add("q", NewJob::new(json!(1))).await.unwrap();
    assert_eq!(stored(&server, &first, standard.id()).await[0], STANDARD);

    first
        .set_record_format(RecordFormat::Compact)
        .await
        .unwrap();
    let second = handle(&server, &ns).await;
    assert_eq!(second.record_format(), RecordFormat::Compact);
    assert_eq!(
        second.stored_record_format().await.unwrap(),
        RecordFormat::Compact
    );
    let compact = second.add("q", NewJob::new(json!(2))).await.unwrap();
    assert_eq!(stored(&server, &second, compact.id()).await[0], COMPACT_3);

    // Back to standard: new jobs whole, the compact one still read.
    second
        .set_record_format(RecordFormat::Standard)
        .await
        .unwrap();
    let third = handle(&server, &ns).await;
    assert_eq!(third.record_format(), RecordFormat::Standard);
    let whole = third.add("q", NewJob::new(json!(3))).await.unwrap();
    assert_eq!(stored(&server, &third, whole.id()).await[0], STANDARD);
    let claimed = third.claim("q", 10, LONG).await.unwrap();
    let payloads: Vec<_> = claimed.iter().map(|j| j.payload.clone()).collect();
    assert_eq!(payloads, [json!(1), json!(2), json!(3)]);

    // A format of a later version: refused at connect, naming it.
    let marker = redq::keys::Keys::new(&ns).record_format();
    server.cmd(&["SET", &marker, "v9"]).await;
    let before = digest(&server).await;
    let refused = RedisQueue::builder(&server.url())
        .namespace(&ns)
        .connect()
        .await
        .map(|_| ())
        .expect_err("an unknown record format");
    let said = refused.to_string();
    assert!(matches!(refused, QueueError::Config(_)), "{refused:?}");
    assert!(
        said.contains("\"v9\"") && said.contains("upgrade redq"),
        "{said}"
    );
    assert_eq!(digest(&server).await, before, "the refusal wrote nothing");
}
