//! `redq record-format` shows the namespace's job record format and sets it
//! (`standard`, `compact`, `detached` or `detached:BYTES`), against a real
//! redis-server: a producer that connects afterwards writes what it set.

use redq::{NewJob, RecordFormat};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

#[tokio::test]
async fn record_format_shows_sets_and_refuses_what_it_does_not_know() {
    let server = RedisServer::start();
    let ns = unique_namespace("record-format-cli");
    let url = server.url();

    let shown = redq(&url, &ns, &["record-format", "-o", "json"]);
    assert_exit(&shown, 0);
    assert_eq!(json(&shown)["record_format"], "standard");

    // Refused read-only, and an unknown format refused by name: nothing set.
    let refused = redq(&url, &ns, &["--read-only", "record-format", "compact"]);
    assert_exit(&refused, 1);
    let unknown = redq(&url, &ns, &["record-format", "tiny"]);
    assert_exit(&unknown, 2);
    let said = String::from_utf8_lossy(&unknown.stderr).into_owned();
    assert!(said.contains(redq::RecordFormat::ACCEPTED), "{said}");
    let too_small = redq(&url, &ns, &["record-format", "detached:0"]);
    assert_exit(&too_small, 2);
    let said = String::from_utf8_lossy(&too_small.stderr).into_owned();
    assert!(said.contains("\"detached:0\""), "{said}");
    assert_eq!(
        connect(&url, &ns).await.record_format(),
        RecordFormat::Standard
    );

    let set = redq(&url, &ns, &["record-format", "compact"]);
    assert_exit(&set, 0);
    let said = String::from_utf8_lossy(&set.stdout).into_owned();
    assert_eq!(
        said.trim(),
        "record format: compact (producers write it from their next connect; \
         every driver on this namespace must be this version or later)"
    );
    let producer = connect(&url, &ns).await;
    assert_eq!(producer.record_format(), RecordFormat::Compact);
    let id = producer
        .add("mail", NewJob::new(serde_json::json!({"to": "a"})))
        .await
        .unwrap();
    let jobs = redq::keys::Keys::new(&ns).jobs();
    let stored = server.cmd(&["HGET", &jobs, id.id()]).await;
    let stored: Vec<u8> = stored.convert().unwrap();
    assert_eq!(stored[0], 0x93, "the producer wrote a compact record");

    let shown = redq(&url, &ns, &["record-format"]);
    assert_exit(&shown, 0);
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout).trim(),
        "record format: compact"
    );
    // Detached: 4 KB unless a size is given; a payload of that size or
    // more is kept apart from its record, a smaller one stays in it.
    let set = redq(&url, &ns, &["record-format", "detached", "-o", "json"]);
    assert_exit(&set, 0);
    assert_eq!(json(&set)["record_format"], "detached:4096");
    let set = redq(&url, &ns, &["record-format", "detached:100"]);
    assert_exit(&set, 0);
    let said = String::from_utf8_lossy(&set.stdout).into_owned();
    assert!(
        said.contains(
            "record format: detached:100 (producers keep payloads of 100 bytes or more apart"
        ),
        "{said}"
    );
    let producer = connect(&url, &ns).await;
    assert_eq!(
        producer.record_format(),
        RecordFormat::Detached { min_bytes: 100 }
    );
    let large = serde_json::json!({ "body": "b".repeat(100) });
    let id = producer
        .add("mail", NewJob::new(large.clone()))
        .await
        .unwrap();
    let stored: Vec<u8> = server
        .cmd(&["HGET", &jobs, id.id()])
        .await
        .convert()
        .unwrap();
    assert_eq!(stored[0], 0xdd, "the producer wrote a detached record");
    let detached = redq::keys::Keys::new(&ns).detached();
    let apart: String = server
        .cmd(&["HGET", &detached, id.id()])
        .await
        .convert()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&apart).unwrap(),
        large
    );

    // Compact and detached: a large payload kept apart, a small fresh job
    // stored compact.
    let set = redq(&url, &ns, &["record-format", "compact+detached:100"]);
    assert_exit(&set, 0);
    let said = String::from_utf8_lossy(&set.stdout).into_owned();
    assert!(
        said.contains("record format: compact+detached:100 (producers keep payloads of 100 bytes or more apart from their records and store the smaller fresh jobs that fit it compact"),
        "{said}"
    );
    let producer = connect(&url, &ns).await;
    assert_eq!(
        producer.record_format(),
        RecordFormat::CompactDetached { min_bytes: 100 }
    );
    let first_byte = |id: String| {
        let jobs = jobs.clone();
        let server = &server;
        async move {
            let stored: Vec<u8> = server.cmd(&["HGET", &jobs, &id]).await.convert().unwrap();
            stored[0]
        }
    };
    let large_id = producer.add("mail", NewJob::new(large)).await.unwrap();
    assert_eq!(first_byte(large_id.id().to_owned()).await, 0xdd, "detached");
    let small = NewJob::new(serde_json::json!({"to": "b"}));
    let small_id = producer.add("mail", small).await.unwrap();
    assert_eq!(first_byte(small_id.id().to_owned()).await, 0x93, "compact");

    let back = redq(&url, &ns, &["record-format", "standard", "-o", "json"]);
    assert_exit(&back, 0);
    assert_eq!(json(&back)["record_format"], "standard");
    assert_eq!(
        connect(&url, &ns).await.record_format(),
        RecordFormat::Standard
    );
}

/// The way back: `--check` counts the records an older driver cannot
/// read, `standard --rewrite` sets the standard format and rewrites them;
/// a rewrite under another format, or read-only, is refused before
/// anything is written.
#[tokio::test]
async fn record_format_check_counts_and_rewrite_takes_records_back_to_standard() {
    let server = RedisServer::start();
    let ns = unique_namespace("record-format-rewrite");
    let url = server.url();
    assert_exit(
        &redq(&url, &ns, &["record-format", "compact+detached:100"]),
        0,
    );
    let producer = connect(&url, &ns).await;
    let large = serde_json::json!({ "body": "b".repeat(100) });
    let mut ids = Vec::new();
    for payload in [large.clone(), large, serde_json::json!({"to": "a"})] {
        ids.push(
            producer
                .add("mail", NewJob::new(payload))
                .await
                .unwrap()
                .id()
                .to_owned(),
        );
    }
    let first_bytes = || async {
        let jobs = redq::keys::Keys::new(&ns).jobs();
        let mut bytes = Vec::new();
        for id in &ids {
            let stored: Vec<u8> = server.cmd(&["HGET", &jobs, id]).await.convert().unwrap();
            bytes.push(stored[0]);
        }
        bytes
    };
    assert_eq!(first_bytes().await, [0xdd, 0xdd, 0x93]);

    let checked = redq(&url, &ns, &["record-format", "--check"]);
    assert_exit(&checked, 0);
    assert_eq!(
        stdout(&checked),
        "record format: compact+detached:100\n\
         3 records an older driver cannot read: 1 compact, 2 detached; \
         `redq record-format standard --rewrite` rewrites them\n\
         producers write compact+detached:100 records: set standard (and let them \
         reconnect) before an older driver joins\n"
    );
    for refused in [
        redq(&url, &ns, &["record-format", "--rewrite"]),
        redq(&url, &ns, &["record-format", "compact", "--rewrite"]),
    ] {
        assert_exit(&refused, 2);
        assert!(
            stderr(&refused).contains("standard"),
            "{}",
            stderr(&refused)
        );
    }
    let read_only = redq(&url, &ns, &["--read-only", "record-format", "--rewrite"]);
    assert_exit(&read_only, 1);
    assert_eq!(first_bytes().await, [0xdd, 0xdd, 0x93], "nothing rewritten");

    let rewritten = redq(
        &url,
        &ns,
        &["record-format", "standard", "--rewrite", "-o", "json"],
    );
    assert_exit(&rewritten, 0);
    let said = json(&rewritten);
    assert_eq!(said["record_format"], "standard");
    assert_eq!(
        said["rewritten"],
        serde_json::json!({ "compact": 1, "detached": 2, "left_leased": 0 })
    );
    assert_eq!(first_bytes().await, [0xdc, 0xdc, 0xdc], "all standard now");
    let checked = redq(&url, &ns, &["record-format", "--check", "-o", "json"]);
    assert_exit(&checked, 0);
    assert_eq!(json(&checked)["total"], 0);
    let again = redq(&url, &ns, &["record-format", "--rewrite"]);
    assert_exit(&again, 0);
    assert_eq!(
        stdout(&again),
        "record format: standard\nrewrote 0 records in the standard layout (0 compact, 0 detached)\n"
    );
}
