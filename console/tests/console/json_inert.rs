//! `-o json` is as inert on a terminal as the tables: DEL and the C1
//! controls (U+009B starts a control sequence on many terminals) come out
//! as `\u` escapes, and the JSON still reads back to what was stored.

use std::time::Duration;

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::{assert_exit, connect, json, redq};

/// Whether `bytes` holds `c` as UTF-8, raw.
fn holds_raw(bytes: &[u8], c: char) -> bool {
    let mut buf = [0; 4];
    let raw = c.encode_utf8(&mut buf).as_bytes();
    bytes.windows(raw.len()).any(|w| w == raw)
}

#[tokio::test]
async fn json_output_escapes_c1_controls_and_reads_back_the_same() {
    let server = RedisServer::start();
    let ns = unique_namespace("json_inert");
    let q = connect(&server.url(), &ns).await;
    let payload = serde_json::json!({"subject": "\u{9b}31mred\u{85}next line"});
    let job = q
        .add(
            "emails",
            NewJob::new(payload.clone()).name("mail").max_attempts(1),
        )
        .await
        .unwrap();
    let lease = q
        .claim("emails", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0)
        .lease();
    q.nack(&lease, Duration::ZERO, "refused \u{9b}2J")
        .await
        .unwrap();

    let out = redq(
        &server.url(),
        &ns,
        &["jobs", "show", job.id(), "-o", "json"],
    );
    assert_exit(&out, 0);
    for c in ['\u{9b}', '\u{85}'] {
        assert!(!holds_raw(&out.stdout, c), "{c:?} printed raw");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r"\u009b31mred\u0085next line"), "{text}");
    let shown = json(&out);
    assert_eq!(shown["payload"], payload);
    assert_eq!(shown["last_error"], "refused \u{9b}2J");

    // `redq events -o json`, one object a line, the same.
    let out = redq(&server.url(), &ns, &["events", "-o", "json"]);
    assert_exit(&out, 0);
    assert!(!holds_raw(&out.stdout, '\u{9b}'), "U+009B printed raw");
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["error"], "refused \u{9b}2J");
}
