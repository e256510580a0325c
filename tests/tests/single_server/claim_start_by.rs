//! A claim that starts after its caller gave up on it leases nothing
//! (`lua/claim.lua`'s start_by_ms, `driver/src/redis_clock.rs`): Redis held
//! the call past the caller's timeout (here `CLIENT PAUSE WRITE`), and a
//! job leased then would wait out its lease, an attempt counted, with no
//! one to run it.

use std::time::Duration;

use fred::types::Value;
use redq::{JobState, NewJob, RedisQueue};
use redq_tests::fixtures::{self, script_calls};
use redq_tests::lua::{compose, evalsha, load, source};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

const LEASE: Duration = Duration::from_secs(60);

/// The script's side: past its start-by moment a claim answers only the
/// time and writes nothing; before it, it leases as ever; a start-by that
/// is not a time is refused, naming it, with nothing written.
#[tokio::test]
async fn a_claim_past_its_start_by_moment_leases_nothing_and_writes_nothing() {
    let server = fixtures::server();
    let ns = unique_namespace("claim-start-by");
    let queue = fixtures::handle(&server, &ns).await;
    let id = queue.add("work", NewJob::new(json!(1))).await.unwrap();
    let admin = server.client().await;
    let claim = load(&admin, &compose(source("claim"))).await;
    let claim_by = async |start_by: &str| {
        let args: Vec<Value> = ["1", "60000", "9", "1", start_by]
            .into_iter()
            .map(Value::from)
            .collect();
        evalsha(&admin, &claim, &ns, "work", &args).await
    };

    let before = fixtures::digest(&server).await;
    let late = claim_by("1").await.unwrap();
    let Value::Array(late) = late else {
        panic!("not an array: {late:?}");
    };
    assert_eq!(late.len(), 1, "only the time: {late:?}");
    assert_eq!(fixtures::digest(&server).await, before, "nothing written");

    let refused = claim_by("soon").await.expect_err("not a time");
    assert!(
        refused.to_string().contains("claim start_by_ms"),
        "{refused}"
    );
    assert_eq!(fixtures::digest(&server).await, before, "nothing written");

    let in_time = claim_by("140737488355327").await.unwrap();
    let Value::Array(in_time) = in_time else {
        panic!("not an array: {in_time:?}");
    };
    assert_eq!(in_time.len(), 3, "the time, then the job: {in_time:?}");
    let job = queue.inspect(id.id()).await.unwrap().expect("the job");
    assert_eq!(job.state, JobState::Leased);
}

/// The whole way: a handle whose calls give up after 400 ms claims while
/// Redis holds writes. The claim times out; once Redis lets it run, it
/// finds its moment past and leases nothing, so the job is there for the
/// next claim, on its first attempt.
#[tokio::test]
async fn a_claim_held_past_its_callers_timeout_leaves_the_job_waiting() {
    // A first claim shows the handle where Redis's clock stands.
    held_claim_leaves_the_job_waiting(true).await;
}

/// The same for a handle's very first claim: before it, the handle reads
/// Redis's clock (`TIME`, which a write pause does not hold), so it carries
/// a moment too.
#[tokio::test]
async fn a_handles_first_claim_held_past_its_callers_timeout_leaves_the_job_waiting() {
    held_claim_leaves_the_job_waiting(false).await;
}

async fn held_claim_leaves_the_job_waiting(claimed_before: bool) {
    let server = RedisServer::start();
    let ns = unique_namespace("claim-held");
    let producer = fixtures::handle(&server, &ns).await;
    let impatient = RedisQueue::builder(&server.url())
        .namespace(ns.as_str())
        .script_calls(script_calls())
        .command_timeout(Duration::from_millis(400))
        .connect()
        .await
        .unwrap();
    if claimed_before {
        assert!(impatient.claim("work", 1, LEASE).await.unwrap().is_empty());
    }
    let id = producer.add("work", NewJob::new(json!(1))).await.unwrap();

    server.cmd(&["CLIENT", "PAUSE", "30000", "WRITE"]).await;
    let held = impatient.claim("work", 1, LEASE).await;
    assert!(held.is_err(), "timed out while Redis held it: {held:?}");
    // Redis runs the held claim before it answers the unpause.
    server.cmd(&["CLIENT", "UNPAUSE"]).await;

    let job = producer.inspect(id.id()).await.unwrap().expect("the job");
    assert_eq!(
        (job.state, job.attempts),
        (JobState::Waiting, 0),
        "the late claim leased nothing"
    );
    let claimed = impatient.claim("work", 1, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!((claimed[0].id.as_str(), claimed[0].attempts), (id.id(), 0));
}
