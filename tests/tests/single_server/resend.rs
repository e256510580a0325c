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
    ]);
    for (n, id) in ids.iter().enumerate() {
        let payload = json!({ "n": n }).to_string();
        let job = lua::EnqueueJob {
            id,
            payload: &payload,
            priority: 0,
            delay_ms: 0,
            dedup_key: "",
            ordering_key: "",
            max_attempts: 0,
            backoff_base_ms: 0,
            backoff_cap_ms: 0,
            limit_key: "",
        };
        args.extend(job.argv().iter().map(|f| f.as_string().expect("text")));
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
