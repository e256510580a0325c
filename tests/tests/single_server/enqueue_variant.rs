//! enqueue.lua's variant `plain` (its header): the same script declaring
//! only the 13 keys of a call with no gate, no dedup, ordering or limit
//! key and no payload stored detached, where the whole script declares 32
//! (each declared key costs the
//! server about 1 200 instructions a call). The driver sends plain calls to
//! it and every other call to the whole script; the variant refuses a call
//! that needs a key it lacks before writing anything.

use fred::interfaces::ClientLike;
use fred::types::Value;
use redq::NewJob;
use redq_tests::fixtures::*;
use redq_tests::{lua, unique_namespace};
use serde_json::json;

/// enqueue.lua's entries for one job with the options at `(code, value)`.
fn job(id: &str, options: &[(usize, &str)]) -> Vec<Value> {
    let mut all: [String; 14] = Default::default();
    for (code, value) in options {
        all[code - 1] = (*value).to_owned();
    }
    lua::enqueue_entries(id, "{}", all)
}

/// enqueue.lua's arguments after the queue and channel: payload limit,
/// count, gate id and kind, record format, then the jobs'.
fn call(gate: (&str, &str), jobs: &[Vec<Value>]) -> Vec<Value> {
    let mut args = vec![
        Value::from(1 << 20),
        Value::from(jobs.len() as i64),
        Value::from(gate.0),
        Value::from(gate.1),
        Value::from(""),
    ];
    args.extend(jobs.iter().flatten().cloned());
    args
}

#[tokio::test]
async fn the_plain_variant_refuses_a_call_that_needs_a_key_it_lacks_before_writing() {
    let server = server();
    let client = server.client().await;
    let body = lua::variant("enqueue_plain", 13);
    let sha = lua::load(&client, &body).await;
    let plain = job("plain", &[(9, "kind")]);
    let cases = [
        ("a gate", call(("G", "batch"), std::slice::from_ref(&plain))),
        (
            "a dedup key",
            call(("", ""), &[plain.clone(), job("d", &[(4, "once")])]),
        ),
        (
            "an ordering key",
            call(("", ""), &[job("o", &[(1, "3"), (6, "customer-7")])]),
        ),
        (
            "a limit key",
            call(("", ""), &[plain.clone(), job("l", &[(13, "tenant")])]),
        ),
        ("a detached payload", {
            // Every payload of one byte or more stored detached.
            let mut args = call(("", ""), &[plain.clone(), job("big", &[])]);
            args[4] = Value::from("detached:1");
            args
        }),
    ];
    let before = digest(&server).await;
    for (needs, args) in cases {
        let err = lua::evalsha(&client, &sha, "variant", "q", &args)
            .await
            .expect_err(needs);
        let expected = format!("this variant of enqueue takes no call with {needs}");
        assert!(err.details().contains(&expected), "{needs}: {err}");
        assert_eq!(digest(&server).await, before, "{needs}: nothing written");
    }
    // What it does take: priority, delay, a name, many jobs.
    let jobs = [
        plain,
        job("p", &[(1, "5")]),
        job("later", &[(2, "60000"), (7, "3")]),
    ];
    let reply = lua::evalsha(&client, &sha, "variant", "q", &call(("", ""), &jobs))
        .await
        .expect("a plain call");
    let created: Vec<String> = reply.convert().unwrap();
    assert_eq!(created, ["1", "plain", "1", "p", "1", "later"]);
    client.quit().await.ok();
}

#[tokio::test]
async fn plain_calls_run_the_variant_and_every_other_call_the_whole_script() {
    let server = server();
    let ns = unique_namespace("variant-routing");
    let queue = lazy_functions(&server, &ns).await;
    let plain = redq::lua::function_name("enqueue_plain")
        .unwrap()
        .to_owned();
    let whole = redq::lua::function_name("enqueue").unwrap().to_owned();

    queue.add("q", NewJob::new(json!({"i": 1}))).await.unwrap();
    let batch = vec![
        NewJob::new(json!({"i": 2})).priority(4),
        NewJob::new(json!({"i": 3})).delay(std::time::Duration::from_secs(60)),
    ];
    queue.add_batch("q", batch).await.unwrap();
    assert_eq!(
        server.function_libraries().await,
        std::slice::from_ref(&plain)
    );

    // One keyed job makes the batch the whole script's.
    let keyed = vec![
        NewJob::new(json!({"i": 4})),
        NewJob::new(json!({"i": 5})).dedup_key("once"),
    ];
    let first = queue.add_batch("q", keyed).await.unwrap();
    let again = queue
        .add("q", NewJob::new(json!({"i": 6})).dedup_key("once"))
        .await
        .unwrap();
    assert_eq!(
        again,
        redq::Enqueued::Duplicate(first[1].id().to_owned()),
        "the whole script found the key"
    );
    let mut loaded = server.function_libraries().await;
    loaded.sort();
    let mut expected = vec![plain, whole];
    expected.sort();
    assert_eq!(loaded, expected);

    // Both put their jobs in the one queue, in order.
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (4, 1), "{counts:?}");
    let claimed = queue
        .claim("q", 10, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    let order: Vec<i64> = claimed
        .iter()
        .map(|job| job.payload["i"].as_i64().unwrap())
        .collect();
    assert_eq!(order, [2, 1, 4, 5]);
}
