//! Detached job records (`driver/src/record_format.rs`,
//! `lua/lib/job_record.lua`): in a namespace whose marker says
//! `detached:N`, an enqueued job whose payload is N bytes or more is stored
//! as its meta alone (msgpack array32) with its payload in `{ns}:detached`;
//! smaller ones stay whole. Every reader sees the same job either way, the
//! paths that change the meta leave the payload where it is, and every
//! path that removes the job removes its payload.

use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::Value as Wire;
use redq::surgery::IfLeased;
use redq::worker::{TypedJob, WorkOptions};
use redq::{JobState, NewJob, RecordFormat, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::jobs::{recorded_runs, Recorded};
use redq_tests::{lua, wait_until, RedisServer};
use serde_json::{json, Value};

use super::compact_records::STANDARD;
use super::handoff::{job, park_record, start, wait_parked};
use super::lean_record::stored;

/// A detached record's first byte: msgpack array32.
pub(crate) const DETACHED: u8 = 0xdd;

/// The smallest payload the tests' namespaces detach.
pub(crate) const FROM: u32 = 64;

pub(crate) async fn detached_queue(server: &RedisServer, test: &str) -> RedisQueue {
    queue_in_format(server, test, RecordFormat::Detached { min_bytes: FROM }).await
}

/// A payload whose JSON text is `size` bytes or a few more.
pub(crate) fn payload(tag: &str, size: usize) -> Value {
    json!({ "tag": tag, "pad": "x".repeat(size) })
}

/// The payload `{ns}:detached` holds for job `id`, if any.
pub(crate) async fn detached_payload(
    server: &RedisServer,
    queue: &RedisQueue,
    id: &str,
) -> Option<Value> {
    let key = redq::keys::Keys::new(queue.namespace()).detached();
    let raw: Option<String> = server.cmd(&["HGET", &key, id]).await.convert().unwrap();
    raw.map(|text| serde_json::from_str(&text).expect("a detached payload is JSON"))
}

pub(crate) async fn detached_count(server: &RedisServer, queue: &RedisQueue) -> i64 {
    hlen(server, queue, "detached").await
}

#[tokio::test]
async fn large_payloads_are_kept_apart_small_ones_whole_and_both_claim_and_ack_alike() {
    let server = server();
    let queue = detached_queue(&server, "detached-store").await;
    let small = payload("small", 1);
    let large = payload("large", FROM as usize);
    let ids = queue
        .add_batch(
            "q",
            vec![NewJob::new(small.clone()), NewJob::new(large.clone())],
        )
        .await
        .unwrap();
    let (small_id, large_id) = (ids[0].id(), ids[1].id());
    // The lone enqueue is a path of its own in enqueue.lua.
    let lone = payload("lone", 4096);
    let lone_id = queue
        .add("q", NewJob::new(lone.clone()).name("send"))
        .await
        .unwrap()
        .id()
        .to_owned();

    assert_eq!(stored(&server, &queue, small_id).await[0], STANDARD);
    for (id, sent) in [(large_id, &large), (lone_id.as_str(), &lone)] {
        let raw = stored(&server, &queue, id).await;
        assert_eq!(raw[0], DETACHED, "{id}: stored detached");
        let (_, rest) = redq::lua::JobMeta::decode_record(&raw).unwrap();
        assert!(rest.is_empty(), "{id}: the record holds the meta alone");
        assert_eq!(
            detached_payload(&server, &queue, id).await.as_ref(),
            Some(sent)
        );
    }
    assert_eq!(detached_payload(&server, &queue, small_id).await, None);
    assert_eq!(detached_count(&server, &queue).await, 2);

    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    let got: Vec<(&str, &Value)> = claimed
        .iter()
        .map(|j| (j.id.as_str(), &j.payload))
        .collect();
    assert_eq!(
        got,
        [
            (small_id, &small),
            (large_id, &large),
            (lone_id.as_str(), &lone)
        ]
    );
    assert_eq!(claimed[2].name.as_deref(), Some("send"));
    // Leased, the record stays detached and the payload where it was.
    assert_eq!(stored(&server, &queue, large_id).await[0], DETACHED);
    assert_eq!(detached_count(&server, &queue).await, 2);

    for job in &claimed {
        queue.ack(&job.lease()).await.unwrap();
    }
    assert_eq!(hlen(&server, &queue, "jobs").await, 0);
    assert_eq!(
        detached_count(&server, &queue).await,
        0,
        "acked, no payload left"
    );
}

/// The paths that change a job's meta alone (a nack, an extend, a dead
/// letter and its requeue) keep its record detached and its payload
/// untouched; the reads show the payload; the surgery replaces it apart.
#[tokio::test]
async fn a_detached_job_fails_dies_is_requeued_read_edited_and_searched_like_a_whole_one() {
    let server = server();
    let queue = detached_queue(&server, "detached-life").await;
    let sent = payload("life", 200);
    let id = queue
        .add("q", NewJob::new(sent.clone()).max_attempts(2))
        .await
        .unwrap()
        .id()
        .to_owned();

    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue.extend(&job.lease(), LONG).await.unwrap();
    queue
        .nack(&job.lease(), Duration::ZERO, "once")
        .await
        .unwrap();
    let again = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!((again.attempts, &again.payload), (1, &sent));
    queue
        .nack(&again.lease(), Duration::ZERO, "twice")
        .await
        .unwrap();
    let dead = queue.dead_letters("q", 0, 10).await.unwrap();
    assert_eq!(dead.items.len(), 1);
    assert_eq!(dead.items[0].payload, sent);
    assert_eq!(stored(&server, &queue, &id).await[0], DETACHED);
    queue
        .requeue_dead("q", std::slice::from_ref(&id))
        .await
        .unwrap();

    let record = queue.inspect(&id).await.unwrap().expect("the job");
    assert_eq!((record.state, &record.payload), (JobState::Waiting, &sent));
    let page = queue
        .list_jobs("q", JobState::Waiting, 0, 10)
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].payload, sent);
    let found = queue.search("q", "\"tag\":\"life\"", "0").await.unwrap();
    let ids: Vec<&str> = found.jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, [id.as_str()], "search matches a detached payload");
    assert_eq!(found.jobs[0].payload, sent);

    // An edit replaces the payload apart, whatever the new one's size.
    let edited = json!({ "tag": "edited" });
    assert_eq!(
        queue.edit_payload(&id, &edited).await.unwrap(),
        JobState::Waiting
    );
    assert_eq!(stored(&server, &queue, &id).await[0], DETACHED);
    assert_eq!(
        detached_payload(&server, &queue, &id).await,
        Some(edited.clone())
    );
    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!((job.attempts, job.payload), (0, edited));
}

/// Every way a job leaves for good takes its detached payload with it.
#[tokio::test]
async fn a_detached_job_deleted_cancelled_or_purged_leaves_no_payload_behind() {
    let server = server();
    let queue = detached_queue(&server, "detached-gone").await;
    let add = |tag: &'static str| {
        let queue = queue.clone();
        async move {
            let job = NewJob::new(payload(tag, 100)).max_attempts(1);
            queue.add("q", job).await.unwrap().id().to_owned()
        }
    };
    let (deleted, cancelled, dead, purged) = (
        add("d").await,
        add("c").await,
        add("x").await,
        add("p").await,
    );
    assert_eq!(detached_count(&server, &queue).await, 4);

    queue.delete_job(&deleted, IfLeased::Refuse).await.unwrap();
    assert_eq!(detached_payload(&server, &queue, &deleted).await, None);
    queue.cancel(&cancelled, "test").await.unwrap();
    assert_eq!(detached_payload(&server, &queue, &cancelled).await, None);
    assert_eq!(detached_count(&server, &queue).await, 2);

    // Both die at their first failure; one is deleted, the other purged.
    for job in queue.claim("q", 2, LONG).await.unwrap() {
        queue
            .nack(&job.lease(), Duration::ZERO, "fatal")
            .await
            .unwrap();
    }
    queue
        .delete_dead("q", std::slice::from_ref(&dead))
        .await
        .unwrap();
    assert_eq!(detached_payload(&server, &queue, &dead).await, None);
    assert!(detached_payload(&server, &queue, &purged).await.is_some());
    queue.purge_dead("q", |_, _| {}).await.unwrap();
    assert_eq!(hlen(&server, &queue, "jobs").await, 0);
    assert_eq!(detached_count(&server, &queue).await, 0);
}

/// A parked worker is handed a fresh detached job (lib/handoff.lua sends
/// its meta and payload as two values) and runs it with its payload.
#[tokio::test]
async fn a_parked_worker_is_handed_a_detached_job_and_runs_it_with_its_payload() {
    let server = RedisServer::start();
    let client = server.client().await;
    let queue = detached_queue(&server, "detached-handoff").await;
    let ns = queue.namespace().to_owned();
    let running = start(&queue, &client, WorkOptions::new().concurrency(2));
    wait_parked(&client, &ns).await;
    let sent = job(&format!("handed-{}", "y".repeat(2 * FROM as usize)), 0);
    let job = NewJob::new(serde_json::to_value(&sent).unwrap()).name(<Recorded as TypedJob>::NAME);
    let id = queue.add("work", job).await.unwrap().id().to_owned();
    wait_until(
        DEADLINE,
        "the handed job to run and be acknowledged",
        async || queue.inspect(&id).await.unwrap().is_none(),
    )
    .await;
    assert_eq!(
        park_record(&client, &ns).await.expect("still parked")[5],
        1,
        "handed, not claimed"
    );
    assert_eq!(recorded_runs(&client, &sent.tag).await, vec![(id, 1)]);
    assert_eq!(detached_count(&server, &queue).await, 0);
    running.shutdown().await;
}

/// The marker's detached form is read at connect, with its size.
#[tokio::test]
async fn the_detached_marker_is_read_at_connect_with_its_size() {
    let server = server();
    let first = detached_queue(&server, "detached-marker").await;
    let second = handle(&server, first.namespace()).await;
    assert_eq!(
        second.record_format(),
        RecordFormat::Detached { min_bytes: FROM }
    );
    let marker = redq::keys::Keys::new(first.namespace()).record_format();
    let stored_marker: String = server.cmd(&["GET", &marker]).await.convert().unwrap();
    assert_eq!(stored_marker, format!("detached:{FROM}"));
}

/// In a detached namespace an enqueue with no payload to detach runs the
/// plain variant (each declared key costs about 1 200 instructions a call);
/// one with a payload to detach runs the variant `detached` (the plain
/// variant's keys and the payloads'), and only a job that needs more (here
/// a dedup key) the whole script; the handle's acks, of detached and whole
/// jobs alike, go to the ack's variant `detached`, not to the whole script.
#[tokio::test]
async fn a_detaching_handle_keeps_to_the_variants_with_the_payloads_key() {
    let server = server();
    let ns = redq_tests::unique_namespace("detached-variants");
    let queue = lazy_functions(&server, &ns).await;
    queue
        .set_record_format(RecordFormat::Detached { min_bytes: FROM })
        .await
        .unwrap();
    let name = |script: &str| redq::lua::function_name(script).unwrap().to_owned();
    // The enqueues' libraries, beside the one that set the format.
    let enqueues = async || {
        let mut loaded = server.function_libraries().await;
        loaded.retain(|l| *l != name("record_format"));
        loaded.sort();
        loaded
    };
    queue
        .add("q", NewJob::new(payload("small", 1)))
        .await
        .unwrap();
    assert_eq!(enqueues().await, [name("enqueue_plain")]);
    let large = payload("large", FROM as usize);
    let added = queue.add("q", NewJob::new(large.clone())).await.unwrap();
    let sorted = |mut names: Vec<String>| {
        names.sort();
        names
    };
    assert_eq!(
        enqueues().await,
        sorted(vec![name("enqueue_plain"), name("enqueue_detached")])
    );
    assert_eq!(stored(&server, &queue, added.id()).await[0], DETACHED);
    let keyed = NewJob::new(payload("keyed", FROM as usize)).dedup_key("once");
    queue.add("keyed", keyed).await.unwrap();
    assert_eq!(
        enqueues().await,
        sorted(vec![
            name("enqueue_plain"),
            name("enqueue_detached"),
            name("enqueue")
        ]),
        "a job with a dedup key goes to the whole script"
    );

    let claimed = queue.claim("q", 2, LONG).await.unwrap();
    assert_eq!(claimed[1].payload, large);
    for job in &claimed {
        assert_eq!(
            queue.ack(&job.lease()).await.unwrap(),
            redq::Acked::Completed
        );
    }
    let loaded = server.function_libraries().await;
    assert!(loaded.contains(&name("ack_detached")), "{loaded:?}");
    assert!(
        !loaded.contains(&name("ack")) && !loaded.contains(&name("ack_plain")),
        "neither the whole ack nor the plain variant ran: {loaded:?}"
    );
    assert_eq!(
        detached_count(&server, &queue).await,
        1,
        "only the keyed job's payload is left"
    );
    assert_eq!(
        detached_payload(&server, &queue, &claimed[1].id).await,
        None
    );
    for job in &claimed {
        assert!(queue.inspect(&job.id).await.unwrap().is_none(), "acked");
    }
}

/// ack.lua's variant `detached` takes a call mixing detached and whole
/// records and deletes the detached payloads with their jobs; it refuses
/// what the plain variant refuses (here a job holding a dedup key) before
/// writing anything.
#[tokio::test]
async fn the_detached_ack_variant_acks_detached_and_whole_jobs_and_refuses_keyed_ones() {
    let server = server();
    let client = server.client().await;
    let queue = detached_queue(&server, "detached-ack-variant").await;
    let sha = lua::load(&client, &lua::variant("ack_detached", 11)).await;
    let large = payload("large", FROM as usize);
    let small = payload("small", 1);
    queue.add("q", NewJob::new(large)).await.unwrap();
    queue.add("q", NewJob::new(small)).await.unwrap();
    queue
        .add("q", NewJob::new(payload("keyed", 1)).dedup_key("once"))
        .await
        .unwrap();
    let held = queue.claim("q", 3, LONG).await.unwrap();
    assert_eq!(held.len(), 3);
    assert_eq!(stored(&server, &queue, &held[0].id).await[0], DETACHED);
    let args = |jobs: &[&redq::Job]| {
        let mut args = vec![Wire::from(jobs.len() as i64)];
        for job in jobs {
            args.push(Wire::from(job.id.as_str()));
            args.push(Wire::from(job.lease_id as i64));
        }
        args
    };

    let before = digest(&server).await;
    let err = lua::evalsha(&client, &sha, queue.namespace(), "q", &args(&[&held[2]]))
        .await
        .expect_err("a job holding a dedup key");
    assert!(
        err.details()
            .contains("variant refused: this variant of ack takes no call with a job holding a dedup or ordering key"),
        "{err}"
    );
    assert_eq!(digest(&server).await, before, "refused: nothing written");

    let reply = lua::evalsha(
        &client,
        &sha,
        queue.namespace(),
        "q",
        &args(&[&held[0], &held[1]]),
    )
    .await
    .expect("a detached and a whole job");
    assert_eq!(reply.convert::<Vec<i64>>().unwrap(), [1, 1]);
    assert_eq!(
        detached_count(&server, &queue).await,
        0,
        "the payload went with its job"
    );
    for job in &held[..2] {
        assert!(queue.inspect(&job.id).await.unwrap().is_none(), "acked");
    }
    client.quit().await.ok();
}

/// A claim of several detached records leaves their payloads out of its
/// reply, each record as `[meta]`, for the claimer to read after it
/// (`lua/lib/lease.lua` `claim_payloads`: from three records on); one or
/// two come with their payloads, `[meta, payload]`. The driver's claim reads
/// the payloads left apart, in the claim's order.
#[tokio::test]
async fn a_claim_of_several_detached_jobs_leaves_their_payloads_out_of_its_reply() {
    let server = server();
    let client = server.client().await;
    let queue = detached_queue(&server, "detached-apart").await;
    let sha = lua::load(&client, &lua::variant("claim_plain", 11)).await;
    let sent: Vec<Value> = (0..9)
        .map(|i| payload(&format!("p{i}"), FROM as usize))
        .collect();
    queue
        .add_batch("q", sent.iter().cloned().map(NewJob::new).collect())
        .await
        .unwrap();
    let claim = async |count: &str| -> Vec<Wire> {
        let args = [count, "60000", "7", "1"].map(Wire::from);
        let reply = lua::evalsha(&client, &sha, queue.namespace(), "q", &args).await;
        reply.expect("claim").convert().unwrap()
    };

    // One or two detached records come with their payloads.
    let (lone, two) = (claim("1").await, claim("2").await);
    for (record, sent) in [
        (&lone[2], &sent[0]),
        (&two[2], &sent[1]),
        (&two[4], &sent[2]),
    ] {
        let Wire::Array(pair) = record else {
            panic!("a detached record as an array: {record:?}")
        };
        assert_eq!(pair.len(), 2, "a detached record with its payload");
        let text = pair[1].as_bytes().expect("the payload");
        assert_eq!(&serde_json::from_slice::<Value>(text).unwrap(), sent);
    }

    let several = claim("3").await;
    assert_eq!(several.len(), 7, "now, then three ids and records");
    for record in [&several[2], &several[4], &several[6]] {
        let Wire::Array(meta) = record else {
            panic!("a detached record as an array: {record:?}")
        };
        assert_eq!(meta.len(), 1, "its meta alone, the payload left apart");
    }
    assert_eq!(
        detached_count(&server, &queue).await,
        9,
        "every payload still there"
    );

    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    let payloads: Vec<&Value> = claimed.iter().map(|job| &job.payload).collect();
    assert_eq!(
        payloads,
        sent[6..].iter().collect::<Vec<_>>(),
        "read apart, in order"
    );
}
