//! A job's record is stored lean (`lua/lib/job_record.lua`): without its
//! trailing fields at their defaults, and with a not_before equal to its
//! enqueued_at (due when enqueued) stored as 0. Every reader sees the whole
//! record with the real due time: inspect, the claim, the wait metrics,
//! the driver's decoder. Records of the whole layout, as earlier versions
//! stored every job, read and behave the same.

use std::time::Duration;

use fred::interfaces::HashesInterface;
use fred::types::Value;
use redq::metrics::MetricsWindow;
use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{lua, RedisServer};
use serde_json::json;

/// The oldest record length the scripts read (`OLDEST_JOB_LEN`).
const OLDEST: usize = redq::lua::OLDEST_JOB_RECORD_LEN;
/// Positions (from 0) of lua/lib/job_record.lua's M used here.
const LEASE_ID: usize = 0;
const ENQUEUED_AT: usize = 10;
const NOT_BEFORE: usize = 11;
/// The text fields among the 27, from 0 (every other field is a number).
const TEXT_FIELDS: [usize; 10] = [2, 4, 5, 7, 15, 16, 22, 23, 24, 26];

/// The stored record of job `id` (also read by `compact_records`).
pub(crate) async fn stored(server: &RedisServer, queue: &RedisQueue, id: &str) -> Vec<u8> {
    let client = server.client().await;
    let jobs = redq::keys::Keys::new(queue.namespace()).jobs();
    client.hget(&jobs, id).await.unwrap()
}

/// A stored record's fields as msgpack decodes them, and its meta's length
/// in bytes (what comes before the payload).
fn fields_of(raw: &[u8]) -> (Vec<rmpv::Value>, usize) {
    let mut rest = raw;
    let rmpv::Value::Array(fields) = rmpv::decode::read_value(&mut rest).unwrap() else {
        panic!("a record starts with an array");
    };
    (fields, raw.len() - rest.len())
}

fn bytes(v: &Value) -> &[u8] {
    match v {
        Value::Bytes(b) => b,
        other => panic!("expected bytes, got {other:?}"),
    }
}

/// The wait the claim filed under `name` (the sum over its jobs).
async fn filed_wait_ms(queue: &RedisQueue, name: &str) -> u64 {
    let metrics = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    metrics.names[name].wait.sum_ms
}

#[tokio::test]
async fn a_fresh_job_is_stored_lean_and_every_view_reads_it_due_when_enqueued() {
    let server = server();
    let queue = queue(&server, "lean-fresh").await;
    let id = queue
        .add("q", NewJob::new(json!({"i": 1})).name("n"))
        .await
        .unwrap();
    let id = id.id().to_owned();

    let raw = stored(&server, &queue, &id).await;
    let (fields, meta_len) = fields_of(&raw);
    assert_eq!(fields.len(), OLDEST, "{fields:?}");
    assert_eq!(fields[NOT_BEFORE].as_u64(), Some(0), "{fields:?}");
    // Header 3, lease 4, queue "q" 2, four key and priority fields, seq 1,
    // enqueued_at 9, not_before 1, attempts to retry_window 3, name "n" 2,
    // error, died_at and resolved_lease 3. The whole layout took 47.
    assert_eq!(meta_len, 32);
    assert_eq!(&raw[meta_len..], br#"{"i":1}"#);
    let enqueued_at = fields[ENQUEUED_AT].as_u64().unwrap();

    let decoded = redq::lua::JobMeta::decode(&raw).unwrap();
    assert_eq!(
        (decoded.enqueued_at_ms, decoded.not_before_ms),
        (enqueued_at, enqueued_at)
    );

    // inspect.lua's meta, and the claim's record, as the driver reads them.
    let client = server.client().await;
    let ns = queue.namespace();
    let inspect = lua::load(&client, &lua::compose(lua::source("inspect"))).await;
    let Value::Array(reply) = lua::evalsha(&client, &inspect, ns, "q", &[Value::from(id.as_str())])
        .await
        .unwrap()
    else {
        panic!("inspect replied no array");
    };
    assert_eq!(reply[0].as_str().as_deref(), Some("waiting"));
    let inspected = redq::lua::JobMeta::decode(bytes(&reply[1])).unwrap();
    assert_eq!(inspected.not_before_ms, enqueued_at);
    let record = queue.inspect(&id).await.unwrap().unwrap();
    assert_eq!((record.state, record.due_at), (JobState::Waiting, None));

    let claim = lua::load(&client, &lua::compose(lua::source("claim"))).await;
    let args = [1, 60_000, 7, 9].map(Value::from);
    let Value::Array(claimed) = lua::evalsha(&client, &claim, ns, "q", &args).await.unwrap() else {
        panic!("claim replied no array");
    };
    let (leased, payload) = redq::lua::JobMeta::decode_record(bytes(&claimed[2])).unwrap();
    assert_eq!(payload, br#"{"i":1}"#);
    assert_eq!(leased.not_before_ms, enqueued_at);
    assert!(leased.lease_id > 0);
    // The lease is spliced in: the record stays lean.
    let (fields, _) = fields_of(&stored(&server, &queue, &id).await);
    assert_eq!(fields.len(), OLDEST);
    assert_eq!(fields[LEASE_ID].as_u64(), Some(leased.lease_id));
    // The wait counts from enqueued_at (from 0 it would be 56 years).
    assert!(filed_wait_ms(&queue, "n").await < 60_000);
}

/// `id`'s record rewritten in the whole layout every job had before lean
/// records: 27 fields, not_before its due time in full.
async fn store_whole(server: &RedisServer, queue: &RedisQueue, id: &str) -> u64 {
    let raw = stored(server, queue, id).await;
    let (mut fields, meta_len) = fields_of(&raw);
    let enqueued_at = fields[ENQUEUED_AT].as_u64().unwrap();
    if fields[NOT_BEFORE].as_u64() == Some(0) {
        fields[NOT_BEFORE] = rmpv::Value::from(enqueued_at);
    }
    for at in fields.len()..27 {
        fields.push(if TEXT_FIELDS.contains(&at) {
            rmpv::Value::from("")
        } else {
            rmpv::Value::from(0)
        });
    }
    let mut whole = Vec::new();
    rmpv::encode::write_value(&mut whole, &rmpv::Value::Array(fields)).unwrap();
    whole.extend_from_slice(&raw[meta_len..]);
    let client = server.client().await;
    let jobs = redq::keys::Keys::new(queue.namespace()).jobs();
    let _: i64 = client.hset(&jobs, (id, whole)).await.unwrap();
    enqueued_at
}

#[tokio::test]
async fn a_record_of_the_whole_layout_inspects_claims_and_acks_as_before() {
    let server = server();
    let queue = queue(&server, "lean-whole").await;
    let id = queue
        .add("q", NewJob::new(json!({"old": true})).name("old"))
        .await
        .unwrap();
    let id = id.id().to_owned();
    let enqueued_at = store_whole(&server, &queue, &id).await;
    let raw = stored(&server, &queue, &id).await;
    let (fields, _) = fields_of(&raw);
    assert_eq!(
        (fields.len(), fields[NOT_BEFORE].as_u64()),
        (27, Some(enqueued_at))
    );
    let decoded = redq::lua::JobMeta::decode(&raw).unwrap();
    assert_eq!(decoded.not_before_ms, enqueued_at);

    let record = queue.inspect(&id).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Waiting);
    assert_eq!(record.name.as_deref(), Some("old"));
    assert_eq!(
        record.enqueued_at,
        std::time::UNIX_EPOCH + Duration::from_millis(enqueued_at)
    );

    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(
        (job.id.as_str(), &job.payload, job.name.as_deref()),
        (id.as_str(), &json!({"old": true}), Some("old"))
    );
    // Spliced as before: the whole record keeps its layout, with the lease.
    let (fields, _) = fields_of(&stored(&server, &queue, &id).await);
    assert_eq!(fields.len(), 27);
    assert_eq!(fields[LEASE_ID].as_u64(), Some(job.lease_id));
    assert_eq!(fields[NOT_BEFORE].as_u64(), Some(enqueued_at));
    assert!(filed_wait_ms(&queue, "old").await < 60_000);

    // A release rewrites it: lean, due again now (not_before its own).
    queue.release(&job.lease()).await.unwrap();
    let (fields, _) = fields_of(&stored(&server, &queue, &id).await);
    assert_eq!(fields.len(), OLDEST);
    assert!(fields[NOT_BEFORE].as_u64().unwrap() >= enqueued_at);

    store_whole(&server, &queue, &id).await;
    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(job.id, id);
    queue.ack(&job.lease()).await.unwrap();
    assert!(queue.inspect(&id).await.unwrap().is_none());
}

/// Re-encodes a stored record with `encode_record` after `split_record`
/// (lua/lib/job_record.lua): what any script rewriting it would store.
pub(crate) const REENCODE: &str = "-- include: keys job_record
local raw = redis.call('HGET', K.jobs, ARGV[3])
local m, payload = split_record(raw)
return encode_record(m, payload)
";

#[tokio::test]
async fn the_spliced_records_of_a_call_are_the_bytes_encode_record_gives_their_fields() {
    let server = server();
    let queue = queue(&server, "lean-splice").await;
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let jobs = vec![
        NewJob::new(json!(0)),
        NewJob::new(json!(1)),
        NewJob::new(json!(2)).priority(3),
        NewJob::new(json!(3)).delay(Duration::from_secs(60)),
        NewJob::new(json!(4)).ordering_key("o"),
        NewJob::new(json!(5)).dedup_key("d"),
        NewJob::new(json!(6)).name("n").max_attempts(4),
        NewJob::new(json!(7)).limit_key("tenant"),
        NewJob::new(json!(8)).trace_parent(trace),
        NewJob::new(json!(9)),
    ];
    let ids = queue.add_batch("q", jobs).await.unwrap();
    let client = server.client().await;
    let reencode = lua::load(&client, &lua::compose(REENCODE)).await;
    let mut lengths = Vec::new();
    for id in &ids {
        let id = id.id();
        let raw = stored(&server, &queue, id).await;
        let again = lua::evalsha(
            &client,
            &reencode,
            queue.namespace(),
            "q",
            &[Value::from(id)],
        )
        .await
        .unwrap();
        assert!(bytes(&again) == raw.as_slice(), "job {id}");
        let (fields, _) = fields_of(&raw);
        lengths.push((fields.len(), fields[NOT_BEFORE].as_u64() == Some(0)));
    }
    // Lean: as long as the last field set (limit_key 23, trace 24), the
    // delayed job's due time in full.
    let lean = (OLDEST, true);
    assert_eq!(
        lengths,
        [
            lean,
            lean,
            lean,
            (OLDEST, false),
            lean,
            lean,
            lean,
            (23, true),
            (24, true),
            lean
        ]
    );
}

/// A job's sequence number and lease id are stored as cmsgpack.pack packs
/// them at every width, through the enqueue's splice of a batch's records
/// and the lease's splice of each (both pack those numbers on their own,
/// lib/job_record.lua and lib/lease.lua): across 2^7, 2^8, 2^16, a block of
/// 256, 2^24 and 2^32.
#[tokio::test]
async fn sequence_numbers_and_lease_ids_of_every_width_are_packed_as_cmsgpack_packs_them() {
    use fred::interfaces::{KeysInterface, LuaInterface};
    let server = server();
    let queue = queue(&server, "lean-widths").await;
    let client = server.client().await;
    let jobs = redq::keys::Keys::new(queue.namespace()).jobs();
    let tag = jobs.trim_end_matches(":jobs").to_owned();
    let repack: String = client
        .script_load(crate::enqueue_wire::REPACK)
        .await
        .unwrap();
    let starts: [u64; 10] = [
        0,
        100,
        120,
        250,
        1_000,
        65_500,
        65_530,
        65_790,
        16_777_200,
        4_294_967_280,
    ];
    for (round, start) in starts.into_iter().enumerate() {
        let q = format!("q{round}");
        let _: () = client
            .set(format!("{tag}:seq"), start, None, None, false)
            .await
            .unwrap();
        let _: () = client
            .set(format!("{tag}:lease:seq"), start, None, None, false)
            .await
            .unwrap();
        let added = queue
            .add_batch(
                &q,
                (0..40)
                    .map(|i| NewJob::new(json!({"i": i})).name("n"))
                    .collect(),
            )
            .await
            .unwrap();
        let ids: Vec<String> = added.iter().map(|e| e.id().to_owned()).collect();
        let check = |stage: &'static str, field: usize| {
            let (client, repack, jobs, ids) = (&client, &repack, &jobs, &ids);
            async move {
                for (i, id) in ids.iter().enumerate() {
                    let raw: Vec<u8> = client.hget(jobs, id).await.unwrap();
                    let repacked: Vec<u8> = client
                        .evalsha(repack, vec![jobs.clone()], vec![id.clone()])
                        .await
                        .unwrap();
                    assert!(
                        raw == repacked,
                        "from {start}, {stage}, job {i}: stored {raw:?}, cmsgpack packs {repacked:?}"
                    );
                    let (fields, _) = fields_of(&raw);
                    assert_eq!(
                        fields[field].as_u64(),
                        Some(start + 1 + i as u64),
                        "from {start}, {stage}, job {i}"
                    );
                }
            }
        };
        check("enqueued: seq", 9).await;
        let claimed = queue.claim(&q, 40, LONG).await.unwrap();
        let order: Vec<&str> = claimed.iter().map(|job| job.id.as_str()).collect();
        assert_eq!(
            order,
            ids.iter().map(String::as_str).collect::<Vec<_>>(),
            "from {start}"
        );
        check("leased: lease id", LEASE_ID).await;
    }
}
