//! fred resends in-flight commands after a dropped connection, so a script
//! may run twice. Enqueue carries client-made job ids so that a resent
//! enqueue finds its jobs and creates nothing; this runs the real script
//! twice, exactly as a resend would.

use fred::types::Value;
use redq_tests::fixtures::*;
use redq_tests::lua;
use serde_json::json;

/// The script as the driver composes it: shebang, shared helpers, body.
fn enqueue_script() -> String {
    lua::compose(lua::source("enqueue"))
}

#[tokio::test]
async fn a_resent_enqueue_creates_nothing_and_reports_the_same_ids() {
    let server = server();
    let queue = queue(&server, "resend").await;
    let script = enqueue_script();
    let keys = lua::queue_keys_of(&script, queue.namespace(), "q");
    let ids = ["01JRESENDRESENDRESEND00001", "01JRESENDRESENDRESEND00002"];
    let mut args: Vec<String> = vec![script, keys.len().to_string()];
    args.extend(
        keys.iter()
            .map(|k| k.as_str().expect("utf-8 key").to_owned()),
    );
    args.extend([
        "q".into(),
        queue.wake_channel(),
        "1048576".into(),
        "2".into(),
        "".into(), // no gate
        "".into(),
        "".into(), // standard records
    ]);
    for (n, id) in ids.iter().enumerate() {
        let fields = lua::enqueue_entries(id, &json!({ "n": n }).to_string(), Default::default());
        args.extend(fields.iter().map(|f| f.as_string().expect("text")));
    }
    let mut command = vec!["EVAL"];
    command.extend(args.iter().map(String::as_str));

    let first: Vec<Value> = server.cmd(&command).await.convert().unwrap();
    let resent: Vec<Value> = server.cmd(&command).await.convert().unwrap();
    let codes = |reply: &[Value]| -> Vec<(i64, String)> {
        reply
            .chunks(2)
            .map(|pair| (pair[0].as_i64().unwrap(), pair[1].as_string().unwrap()))
            .collect()
    };
    let expected_ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        codes(&first),
        vec![(1, expected_ids[0].clone()), (1, expected_ids[1].clone())]
    );
    assert_eq!(
        codes(&resent),
        vec![(2, expected_ids[0].clone()), (2, expected_ids[1].clone())],
        "a resend recognises its jobs"
    );
    assert_eq!(queue.counts("q").await.unwrap().waiting, 2);
    assert_eq!(hlen(&server, &queue, "jobs").await, 2);
    let jobs = claim_n(&queue, "q", 2).await;
    assert_eq!(numbers(&jobs), vec![0, 1]);
    assert_eq!(jobs[0].id, ids[0]);
}

/// The composed script `name`, loaded on a fresh connection of `server`.
async fn loaded(server: &redq_tests::RedisServer, name: &str) -> (fred::clients::Client, String) {
    let client = server.client().await;
    let sha = lua::load(&client, &lua::compose(lua::source(name))).await;
    (client, sha)
}

/// A lone enqueue of job `id` (no options), as the driver sends one.
fn lone_job(id: &str) -> Vec<Value> {
    let mut args: Vec<Value> = ["1048576", "1", "", "", ""].map(Value::from).to_vec();
    let payload = json!({ "lone": id }).to_string();
    args.extend(lua::enqueue_entries(id, &payload, Default::default()));
    args
}

/// A lone job is written with HSETNX instead of being looked up first
/// (enqueue.lua `unchecked`): its resend, after the job was claimed, still
/// finds it, reports it created earlier, and leaves it as it was: leased
/// under the same lease, not queued again.
#[tokio::test]
async fn a_resent_lone_enqueue_finds_its_claimed_job_and_changes_nothing() {
    let server = server();
    let queue = queue(&server, "resend-lone").await;
    let (client, enqueue) = loaded(&server, "enqueue").await;
    let id = "01JRESENDLONELONELONE00001";
    let send = async || -> Vec<Value> {
        lua::evalsha(&client, &enqueue, queue.namespace(), "q", &lone_job(id))
            .await
            .expect("enqueue")
            .convert()
            .unwrap()
    };
    let code = |reply: &[Value]| (reply[0].as_i64().unwrap(), reply[1].as_string().unwrap());
    assert_eq!(code(&send().await), (1, id.to_owned()));
    let claimed = claim_n(&queue, "q", 1).await;
    assert_eq!(claimed[0].id, id);

    assert_eq!(
        code(&send().await),
        (2, id.to_owned()),
        "a resend recognises its job"
    );
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 1), "not queued again");
    assert!(
        queue.claim("q", 1, LONG).await.unwrap().is_empty(),
        "nothing to claim a second time"
    );
    assert_eq!(
        queue.ack(&claimed[0].lease()).await.unwrap(),
        redq::Acked::Completed,
        "the first lease still holds the job"
    );
}

/// With a worker parked, a lone job is looked up before the hand-off (which
/// writes records without looking): a resend hands the parked worker
/// nothing, and the next new job is handed to it as before.
#[tokio::test]
async fn a_resent_lone_enqueue_hands_a_parked_worker_nothing() {
    let server = server();
    let queue = queue(&server, "resend-parked").await;
    let ns = queue.namespace().to_owned();
    let (client, enqueue) = loaded(&server, "enqueue").await;
    let (_, park) = loaded(&server, "park").await;
    let id = "01JRESENDPARKEDPARKED00001";
    let send = async |id: &str| -> i64 {
        let reply: Vec<Value> = lua::evalsha(&client, &enqueue, &ns, "q", &lone_job(id))
            .await
            .expect("enqueue")
            .convert()
            .unwrap();
        reply[0].as_i64().unwrap()
    };
    assert_eq!(send(id).await, 1);
    let claimed = claim_n(&queue, "q", 1).await;
    // token, node, instance, lease_ms, capacity 2, park_ms, park number
    let park_args: Vec<Value> = [4242u64, 9, 1, 30_000, 2, 30_000, 1]
        .iter()
        .map(|n| Value::from(n.to_string()))
        .collect();
    let parked: Vec<i64> = lua::evalsha(&client, &park, &ns, "q", &park_args)
        .await
        .expect("park")
        .convert()
        .unwrap();
    assert_eq!(parked[1], 1, "the worker parks: nothing waits");
    let handed = async || -> String {
        let record: String = server
            .cmd(&["GET", &format!("{{{ns}}}:q:q:parked")])
            .await
            .convert()
            .unwrap();
        record.rsplit(' ').next().unwrap().to_owned()
    };

    assert_eq!(send(id).await, 2, "a resend recognises its job");
    assert_eq!(handed().await, "0", "the resent job is not handed off");
    assert_eq!(queue.counts("q").await.unwrap().leased, 1);

    assert_eq!(send("01JRESENDPARKEDPARKED00002").await, 1);
    assert_eq!(handed().await, "1", "a new job is handed off");
    let counts = queue.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 2));
    assert_eq!(
        queue.ack(&claimed[0].lease()).await.unwrap(),
        redq::Acked::Completed
    );
}
