//! claim.lua's variant `plain` (its header): the same script declaring only
//! the 11 keys of a claim that leases waiting jobs (detached payloads'
//! among them), where the whole script declares 37. The driver sends every claim there first; the variant
//! refuses a call with more to do (leases to reclaim, scheduled jobs or
//! ordering successors to promote, limits to keep) before writing
//! anything, and the driver sends it, and that queue's claims for a while
//! after, to the whole script.

use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::Value;
use redq::flow::{Limit, LimitScope};
use redq::{Acked, JobState, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{lua, unique_namespace, RedisServer};
use serde_json::json;

/// claim.lua's arguments after the queue and channel: one job, leased for
/// a minute, to worker node 7, instance 1.
fn claim_args() -> Vec<Value> {
    ["1", "60000", "7", "1"].map(Value::from).to_vec()
}

/// Move member `id` of queue `queue`'s sorted set `set` (`leased`,
/// `scheduled`) to score 1: as if its time had come long ago.
async fn came_due(server: &RedisServer, ns: &str, queue: &str, set: &str, id: &str) {
    let key = format!("{{{ns}}}:q:{queue}:{set}");
    server.cmd(&["ZADD", &key, "XX", "1", id]).await;
}

#[tokio::test]
async fn the_plain_variant_refuses_a_claim_with_more_to_do_before_writing() {
    let server = server();
    let client = server.client().await;
    let ns = unique_namespace("claim-variant");
    let queue = handle(&server, &ns).await;
    let sha = lua::load(&client, &lua::variant("claim_plain", 11)).await;

    // A lease that lapsed: its job is reclaimed first.
    queue.add("lapsed", NewJob::new(json!(1))).await.unwrap();
    let held = queue.claim("lapsed", 1, LONG).await.unwrap();
    came_due(&server, &ns, "lapsed", "leased", &held[0].id).await;
    // A delayed job whose time has come: promoted first.
    let delayed = queue
        .add("delayed", NewJob::new(json!(2)).delay(LONG))
        .await
        .unwrap();
    came_due(&server, &ns, "delayed", "scheduled", delayed.id()).await;
    // An ordering key's next job, released by its holder's ack.
    for i in 0..2 {
        let job = NewJob::new(json!(i)).ordering_key("k");
        queue.add("ordered", job).await.unwrap();
    }
    let first = queue.claim("ordered", 1, LONG).await.unwrap();
    assert_eq!(
        queue.ack(&first[0].lease()).await.unwrap(),
        Acked::Completed
    );
    // Limits.
    queue
        .set_limit("limited", LimitScope::Queue, Limit::concurrency(5))
        .await
        .unwrap();
    queue.add("limited", NewJob::new(json!(3))).await.unwrap();

    let cases = [
        ("lapsed", "lapsed leases to reclaim"),
        ("delayed", "scheduled jobs now due"),
        ("ordered", "ordering successors released"),
        ("limited", "a queue with limits"),
    ];
    let before = digest(&server).await;
    for (name, needs) in cases {
        let err = lua::evalsha(&client, &sha, &ns, name, &claim_args())
            .await
            .expect_err(needs);
        let expected = format!("variant refused: this variant of claim takes no call with {needs}");
        assert!(err.details().contains(&expected), "{name}: {err}");
        assert_eq!(digest(&server).await, before, "{name}: nothing written");
    }

    // What it does take: waiting jobs of a queue with none of the above.
    let added = queue.add("plain", NewJob::new(json!(4))).await.unwrap();
    let reply = lua::evalsha(&client, &sha, &ns, "plain", &claim_args())
        .await
        .expect("a plain claim");
    let reply: Vec<Value> = reply.convert().unwrap();
    assert_eq!(reply.len(), 3, "now, then the job's id and record");
    assert_eq!(reply[1].as_str().as_deref(), Some(added.id()));
    let job = queue.inspect(added.id()).await.unwrap().expect("the job");
    assert_eq!(job.state, JobState::Leased);
    assert_eq!(job.holder, Some((7, 1)));
    client.quit().await.ok();
}

#[tokio::test]
async fn claims_go_to_the_variant_and_a_queue_it_refuses_goes_whole_for_a_while() {
    let server = server();
    let ns = unique_namespace("claim-routing");
    let queue: RedisQueue = lazy_functions(&server, &ns).await;

    queue.add("plain", NewJob::new(json!(1))).await.unwrap();
    assert_eq!(queue.claim("plain", 1, LONG).await.unwrap().len(), 1);
    assert!(server.holds_library_of("claim_plain").await);
    assert!(
        !server.holds_library_of("claim").await,
        "a plain claim runs the variant only"
    );

    // A queue with limits: refused by the variant, claimed by the whole
    // script.
    queue
        .set_limit("limited", LimitScope::Queue, Limit::concurrency(5))
        .await
        .unwrap();
    queue.add("limited", NewJob::new(json!(2))).await.unwrap();
    assert_eq!(queue.claim("limited", 1, LONG).await.unwrap().len(), 1);
    assert!(server.holds_library_of("claim").await);
    // Its next claim goes straight to the whole script: with the variant's
    // library gone, it is not loaded again.
    server.delete_library_of("claim_plain").await;
    queue.add("limited", NewJob::new(json!(3))).await.unwrap();
    assert_eq!(queue.claim("limited", 1, LONG).await.unwrap().len(), 1);
    assert!(
        !server.holds_library_of("claim_plain").await,
        "the limited queue's claims go whole"
    );

    // A retry coming due on a plain queue: the claim that finds it due is
    // refused by the variant, and the whole script promotes and leases it.
    let added = queue.add("retried", NewJob::new(json!(4))).await.unwrap();
    let held = queue.claim("retried", 1, LONG).await.unwrap();
    assert!(
        server.holds_library_of("claim_plain").await,
        "another queue's claims go to the variant"
    );
    queue
        .nack(&held[0].lease(), Duration::from_millis(20), "once more")
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let again = loop {
        let jobs = queue.claim("retried", 1, LONG).await.unwrap();
        if let Some(job) = jobs.into_iter().next() {
            break job;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the retry was never claimed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(again.id, added.id());
    server.delete_library_of("claim_plain").await;
    assert!(queue.claim("retried", 1, LONG).await.unwrap().is_empty());
    assert!(
        !server.holds_library_of("claim_plain").await,
        "the queue's claims go whole after the refusal"
    );
}
