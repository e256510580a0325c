//! The record format `compact+detached:N` (`driver/src/record_format.rs`):
//! an enqueued job whose payload is N bytes or more is stored detached, a
//! smaller fresh job that fits the compact record compact, any other job
//! whole; a schedule's jobs detach alike but are never compact (compact
//! records are an enqueue's alone). Every kind claims and acks alike and
//! leaves nothing behind.

use redq::schedule::{Schedule, Triggered};
use redq::{NewJob, RecordFormat};
use redq_tests::fixtures::*;
use serde_json::Value;

use super::compact_records::STANDARD;
use super::detached_records::{detached_count, detached_payload, payload, DETACHED, FROM};
use super::lean_record::stored;

/// Whether stored record `raw` is compact: a msgpack fixarray (the
/// standard and detached layouts start with array16 and array32 headers).
fn is_compact(raw: &[u8]) -> bool {
    raw[0] & 0xf0 == 0x90
}

#[tokio::test]
async fn large_payloads_detach_small_fresh_jobs_go_compact_and_all_run_alike() {
    let server = server();
    let format = RecordFormat::CompactDetached { min_bytes: FROM };
    let queue = queue_in_format(&server, "compact-detached", format).await;
    assert_eq!(queue.record_format(), format);
    let large = payload("large", FROM as usize);
    let small = payload("small", 1);
    let sent: Vec<(NewJob, &Value, &str)> = vec![
        (NewJob::new(large.clone()).name("big"), &large, "detached"),
        (NewJob::new(small.clone()).name("tiny"), &small, "compact"),
        // A priority does not fit the compact record: stored whole.
        (NewJob::new(small.clone()).priority(3), &small, "whole"),
        (NewJob::new(large.clone()).priority(3), &large, "detached"),
    ];
    let mut ids = Vec::new();
    for (job, payload, kind) in sent {
        let id = queue.add("q", job).await.unwrap().id().to_owned();
        let raw = stored(&server, &queue, &id).await;
        match kind {
            "detached" => {
                assert_eq!(raw[0], DETACHED, "{id}: detached");
                assert_eq!(
                    detached_payload(&server, &queue, &id).await.as_ref(),
                    Some(payload)
                );
            }
            "compact" => assert!(is_compact(&raw), "{id}: compact, got {:#x}", raw[0]),
            _ => assert_eq!(raw[0], STANDARD, "{id}: whole"),
        }
        ids.push((id, payload.clone()));
    }
    assert_eq!(detached_count(&server, &queue).await, 2);

    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    assert_eq!(claimed.len(), ids.len());
    for (id, payload) in &ids {
        let job = claimed.iter().find(|j| &j.id == id).expect("claimed");
        assert_eq!(&job.payload, payload, "{id} claimed with its payload");
    }
    let leases: Vec<_> = claimed.iter().map(|job| job.lease()).collect();
    for outcome in queue.ack_batch(&leases).await.unwrap() {
        assert_eq!(outcome.unwrap(), redq::Acked::Completed);
    }
    assert_eq!(detached_count(&server, &queue).await, 0);
    assert_eq!(hlen(&server, &queue, "jobs").await, 0);
}

/// A schedule's triggered jobs detach a large payload and store a small
/// one whole, not compact: the schedule scripts read the combined format.
#[tokio::test]
async fn a_schedules_jobs_detach_under_compact_and_detached_but_are_never_compact() {
    let server = server();
    let format = RecordFormat::CompactDetached { min_bytes: FROM };
    let queue = queue_in_format(&server, "compact-detached-schedules", format).await;
    let large = payload("large", FROM as usize);
    let small = payload("small", 1);
    for (name, sent) in [("large", &large), ("small", &small)] {
        queue
            .upsert_schedule(Schedule::new(name, "ticks", "0 0 1 1 *").payload(sent.clone()))
            .await
            .unwrap();
        let Triggered::Enqueued(id) = queue.trigger_schedule(name).await.unwrap() else {
            panic!("trigger of {name}");
        };
        let first = stored(&server, &queue, &id).await[0];
        let expected = if sent == &large { DETACHED } else { STANDARD };
        assert_eq!(first, expected, "{name}");
        queue.delete_schedule(name).await.unwrap();
    }
}

/// One call whose jobs share their options, small and large mixed: the
/// small ones stored compact, the large ones detached with a whole meta,
/// each read back as sent. (A call's record template was made compact or
/// whole by its first job; the detached jobs once took a compact one and
/// were stored unreadable, which the reliability run found.)
#[tokio::test]
async fn a_batch_of_like_jobs_small_and_large_stores_each_in_its_own_kind() {
    let server = server();
    let format = RecordFormat::CompactDetached { min_bytes: FROM };
    let queue = queue_in_format(&server, "compact-detached-batch", format).await;
    let large = payload("large", FROM as usize);
    let small = payload("small", 1);
    let sent = [&small, &large, &small, &large];
    let jobs = sent
        .iter()
        .map(|payload| {
            NewJob::new((*payload).clone())
                .name("mixed")
                .max_attempts(3)
        })
        .collect();
    let ids: Vec<String> = queue
        .add_batch("q", jobs)
        .await
        .unwrap()
        .iter()
        .map(|added| added.id().to_owned())
        .collect();
    for (id, payload) in ids.iter().zip(sent) {
        let raw = stored(&server, &queue, id).await;
        if payload == &large {
            assert_eq!(raw[0], DETACHED, "{id}: detached");
        } else {
            assert!(is_compact(&raw), "{id}: compact, got {:#x}", raw[0]);
        }
        let job = queue.inspect(id).await.unwrap().expect("readable");
        assert_eq!(&job.payload, payload, "{id}");
    }
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    let got: Vec<(&str, &Value)> = claimed
        .iter()
        .map(|j| (j.id.as_str(), &j.payload))
        .collect();
    let expected: Vec<(&str, &Value)> = ids.iter().map(String::as_str).zip(sent).collect();
    assert_eq!(got, expected);
    for job in &claimed {
        assert_eq!(job.name.as_deref(), Some("mixed"));
        assert_eq!(job.max_attempts, 3);
    }
}
