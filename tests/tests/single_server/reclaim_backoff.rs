//! Reclaim with backoff: a job whose lease lapses (its worker died or hung)
//! comes back after its backoff policy's delay for the attempts so far, not
//! at once (typed jobs carry the job type's `BACKOFF`); and records written
//! in the layout before the policy existed still claim, ack and reclaim.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fred::interfaces::{HashesInterface, LuaInterface};
use redq::worker::{JobCx, JobError, JobQueue, TypedJob};
use redq::{Backoff, JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{wait_until, RedisServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The Redis clock, in unix ms.
async fn redis_now_ms(server: &RedisServer) -> u64 {
    let client = server.client().await;
    client
        .eval(
            "local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)",
            Vec::<String>::new(),
            Vec::<String>::new(),
        )
        .await
        .expect("TIME")
}

fn ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Claims everything in `q` under a short lease and waits for it to lapse.
async fn lapse_all(queue: &RedisQueue, q: &str, n: usize) {
    assert_eq!(queue.claim(q, 1000, SHORT).await.unwrap().len(), n);
    wait_until(DEADLINE, "every lease to lapse", async || {
        queue.counts(q).await.unwrap().lapsed == n as u64
    })
    .await;
}

#[tokio::test]
async fn a_lapsed_lease_comes_back_after_the_backoff_for_its_attempts_doubling_up_to_the_cap() {
    let server = server();
    let queue = queue(&server, "reclaim-backoff").await;
    let base = Duration::from_secs(10);
    let cap = Duration::from_secs(40);
    let prior_attempts = [0u32, 1, 2, 3, 6];
    let mut ids = Vec::new();
    for prior in prior_attempts {
        let job = NewJob::new(json!({ "prior": prior }))
            .attempts(prior)
            .reclaim_backoff(Backoff::exponential(base, cap));
        ids.push(queue.add("q", job).await.unwrap().id().to_owned());
    }
    lapse_all(&queue, "q", ids.len()).await;

    let before = redis_now_ms(&server).await;
    let reclaimed = queue.reclaim("q", 100).await.unwrap();
    let after = redis_now_ms(&server).await;
    assert_eq!(reclaimed.requeued, ids.len() as u64);

    for (id, prior) in ids.iter().zip(prior_attempts) {
        let record = queue.inspect(id).await.unwrap().unwrap();
        assert_eq!(record.state, JobState::Scheduled, "prior {prior}");
        assert_eq!(record.attempts, prior + 1);
        // Ceilings 10 s, 20 s, 40 s, then the cap; the delay is in [c/2, c].
        let ceiling = (base.as_millis() as u64 * (1 << prior)).min(cap.as_millis() as u64);
        let due = ms(record.due_at.expect("a scheduled job has a due time"));
        assert!(
            due >= before + ceiling / 2 && due <= after + ceiling,
            "prior {prior}: due {} ms after the reclaim, expected {}..={ceiling}",
            due.saturating_sub(before),
            ceiling / 2
        );
    }
    assert!(queue.claim("q", 10, LONG).await.unwrap().is_empty());
}

#[tokio::test]
async fn jobs_reclaimed_together_come_back_spread_out() {
    let server = server();
    let queue = queue(&server, "reclaim-jitter").await;
    let base = Duration::from_secs(60);
    let jobs: Vec<NewJob> = (0..20)
        .map(|n| NewJob::new(json!(n)).reclaim_backoff(Backoff::exponential(base, base)))
        .collect();
    queue.add_batch("q", jobs).await.unwrap();
    lapse_all(&queue, "q", 20).await;
    let before = redis_now_ms(&server).await;
    queue.reclaim("q", 100).await.unwrap();

    let page = queue
        .list_jobs("q", JobState::Scheduled, 0, 100)
        .await
        .unwrap();
    assert_eq!(page.items.len(), 20);
    let delays: std::collections::BTreeSet<u64> = page
        .items
        .iter()
        .map(|job| ms(job.due_at.unwrap()) - before)
        .collect();
    assert!(
        delays.len() >= 15,
        "20 jobs reclaimed together share {} due times: {delays:?}",
        delays.len()
    );
    assert!(
        delays.iter().all(|d| (29_000..=61_000).contains(d)),
        "{delays:?}"
    );
}

#[derive(Serialize, Deserialize)]
struct Flaky;

impl TypedJob for Flaky {
    const NAME: &'static str = "tests.flaky";
    const QUEUE: &'static str = "typed";
    const BACKOFF: Backoff = Backoff::exponential(Duration::from_secs(3), Duration::from_secs(30));

    async fn run(&self, _: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct Plain;

impl TypedJob for Plain {
    const NAME: &'static str = "tests.plain";
    const QUEUE: &'static str = "typed";

    async fn run(&self, _: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

#[tokio::test]
async fn typed_pushes_store_the_job_types_backoff_and_untyped_jobs_default_to_none() {
    let server = server();
    let queue = queue(&server, "reclaim-typed").await;
    let jobs = JobQueue::new(queue.clone());
    let flaky = jobs.push(&Flaky).await.unwrap();
    let plain = jobs.push(&Plain).await.unwrap();
    let untyped = queue.add("typed", NewJob::new(json!(1))).await.unwrap();

    let backoff = |id: String| {
        let queue = queue.clone();
        async move { queue.inspect(&id).await.unwrap().unwrap().reclaim_backoff }
    };
    assert_eq!(backoff(flaky.id().to_owned()).await, Flaky::BACKOFF);
    assert_eq!(
        backoff(plain.id().to_owned()).await,
        Backoff::exponential(Duration::from_secs(1), Duration::from_secs(3600))
    );
    assert_eq!(backoff(untyped.id().to_owned()).await, Backoff::NONE);

    // The untyped job is back at once; the typed one after its backoff.
    lapse_all(&queue, "typed", 3).await;
    queue.reclaim("typed", 10).await.unwrap();
    let back = queue.claim("typed", 10, LONG).await.unwrap();
    assert_eq!(
        back.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
        [untyped.id()]
    );
}

#[tokio::test]
async fn a_backoff_redis_cannot_hold_is_refused_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "reclaim-bad").await;
    let before = digest(&server).await;
    let huge = Duration::from_secs(u64::MAX / 4);
    let result = queue
        .add(
            "q",
            NewJob::new(json!(1)).reclaim_backoff(Backoff::exponential(huge, huge)),
        )
        .await;
    assert_invalid(result, "reclaim backoff base");
    assert_eq!(digest(&server).await, before);
}

/// The record of `id` rewritten in the layout before the reclaim backoff
/// (its first 19 fields, then the payload), as an older driver stored it.
async fn store_in_the_older_layout(server: &RedisServer, queue: &RedisQueue, id: &str) {
    let client = server.client().await;
    let jobs = redq::keys::Keys::new(queue.namespace()).jobs();
    let raw: Vec<u8> = client.hget(&jobs, id).await.unwrap();
    let mut rest = raw.as_slice();
    let rmpv::Value::Array(mut fields) = rmpv::decode::read_value(&mut rest).unwrap() else {
        panic!("a record starts with an array");
    };
    assert!(
        fields.len() >= redq::lua::OLDEST_JOB_RECORD_LEN,
        "a record of the oldest length or more"
    );
    fields.truncate(redq::lua::OLDEST_JOB_RECORD_LEN);
    let mut old = Vec::new();
    rmpv::encode::write_value(&mut old, &rmpv::Value::Array(fields)).unwrap();
    old.extend_from_slice(rest);
    let _: i64 = client.hset(&jobs, (id, old)).await.unwrap();
}

async fn stored_field_count(server: &RedisServer, queue: &RedisQueue, id: &str) -> usize {
    let client = server.client().await;
    let jobs = redq::keys::Keys::new(queue.namespace()).jobs();
    let raw: Vec<u8> = client.hget(&jobs, id).await.unwrap();
    match rmpv::decode::read_value(&mut raw.as_slice()).unwrap() {
        rmpv::Value::Array(fields) => fields.len(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn records_of_the_older_layout_claim_reclaim_and_ack() {
    let server = server();
    let queue = queue(&server, "reclaim-upgrade").await;
    let id = queue
        .add("q", NewJob::new(json!({"old": true})))
        .await
        .unwrap();
    let id = id.id().to_owned();
    store_in_the_older_layout(&server, &queue, &id).await;
    assert_eq!(
        stored_field_count(&server, &queue, &id).await,
        redq::lua::OLDEST_JOB_RECORD_LEN
    );

    let record = queue.inspect(&id).await.unwrap().unwrap();
    assert_eq!(
        (record.state, record.reclaim_backoff),
        (JobState::Waiting, Backoff::NONE)
    );
    // A lapsed lease of an old record is back at once (it has no policy)
    // and the reclaim stores it again, lean (lua/lib/job_record.lua): its
    // fields after the 19th are at their defaults.
    lapse_all(&queue, "q", 1).await;
    assert_eq!(queue.reclaim("q", 10).await.unwrap().requeued, 1);
    assert_eq!(
        stored_field_count(&server, &queue, &id).await,
        redq::lua::OLDEST_JOB_RECORD_LEN
    );
    let record = queue.inspect(&id).await.unwrap().unwrap();
    assert_eq!(record.reclaim_backoff, Backoff::NONE);

    store_in_the_older_layout(&server, &queue, &id).await;
    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!((job.id.as_str(), job.attempts), (id.as_str(), 1));
    assert_eq!(job.payload, json!({"old": true}));
    queue.ack(&job.lease()).await.unwrap();
    assert!(queue.inspect(&id).await.unwrap().is_none());
}
