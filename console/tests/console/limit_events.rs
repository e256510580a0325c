//! A `limit_set` event's detail names only the bounds the limit sets: a
//! concurrency-only limit says nothing of a rate (a "rate 0 per 0 ms" read
//! as "nothing may start").

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

#[tokio::test]
async fn a_limit_set_event_names_only_the_bounds_set() {
    let server = RedisServer::start();
    let ns = unique_namespace("limit-events");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap();

    for args in [
        &["limits", "set", "emails", "--concurrency", "4"][..],
        &["limits", "set", "emails", "--each-key", "--rate", "10/1s"],
        &[
            "limits",
            "set",
            "emails",
            "--key",
            "acme",
            "--concurrency",
            "2",
            "--rate",
            "5/500ms",
        ],
    ] {
        let out = redq(&url, &ns, args);
        assert_exit(&out, 0);
    }

    let out = redq(&url, &ns, &["events", "--kind", "limit_set", "-o", "json"]);
    assert_exit(&out, 0);
    let details: Vec<String> = stdout(&out)
        .lines()
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            event["detail"].as_str().unwrap_or("").to_owned()
        })
        .collect();
    assert_eq!(
        details,
        [
            "queue: concurrency 4",
            "each_key: rate 10 per 1000 ms",
            "key acme: concurrency 2, rate 5 per 500 ms",
        ]
    );
    assert!(!details[0].contains("rate"), "{details:?}");

    // The text line says the same.
    let out = redq(&url, &ns, &["events", "--kind", "limit_set"]);
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.contains("queue: concurrency 4") && !first.contains("rate"),
        "{text}"
    );
}
