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

/// Characters that show nothing but reorder or hide text (a bidi override,
/// line and paragraph separators, a soft hyphen, a byte order mark, zero
/// width joiners) are escaped in `-o json` as `\u` escapes, in the tables
/// as visible escapes, and the payload view writes every one of them, the
/// controls too, as JSON escapes: what it shows is JSON that reads back
/// to the payload.
#[tokio::test]
async fn hidden_format_characters_are_escaped_and_the_payload_view_stays_json() {
    use redq_console::text::is_hidden;
    use redq_console::tui::detail_text::payload_lines;

    let server = RedisServer::start();
    let ns = unique_namespace("json_inert_hidden");
    let q = connect(&server.url(), &ns).await;
    let payload = serde_json::json!({
        "n": "\u{2028}x\u{ad}\u{feff}",
        "file": "invoice\u{202e}fdp.exe",
        "esc": "\u{1b}[2J\u{9b}31m\u{200d}",
    });
    let job = q
        .add("emails", NewJob::new(payload.clone()).name("mail\u{202e}"))
        .await
        .unwrap();

    let out = redq(
        &server.url(),
        &ns,
        &["jobs", "show", job.id(), "-o", "json"],
    );
    assert_exit(&out, 0);
    for c in ['\u{202e}', '\u{2028}', '\u{ad}', '\u{feff}', '\u{200d}'] {
        assert!(!holds_raw(&out.stdout, c), "{c:?} printed raw");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r"\u2028x\u00ad\ufeff"), "{text}");
    assert!(text.contains(r"invoice\u202efdp.exe"), "{text}");
    assert_eq!(json(&out)["payload"], payload);

    // The table form: visible escapes.
    let out = redq(&server.url(), &ns, &["jobs", "list", "emails"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r"mail\u{202e}"), "{text}");
    assert!(!text.chars().any(is_hidden), "{text}");

    // The payload view: JSON escapes only, and JSON still.
    let shown = payload_lines(&payload).join("\n");
    assert!(
        !shown
            .chars()
            .any(|c| is_hidden(c) || (c.is_control() && c != '\n')),
        "{shown}"
    );
    for escape in [
        r"\u2028x\u00ad\ufeff",
        r"\u202e",
        r"\u001b[2J\u009b31m\u200d",
    ] {
        assert!(shown.contains(escape), "{escape} in {shown}");
    }
    assert!(!shown.contains(r"\x") && !shown.contains(r"\u{"), "{shown}");
    let read_back: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(read_back, payload);
}
