//! `redq events` shows every kind of event, one line (or one JSON object)
//! each, and the CLI's own operator actions name it as who did them
//! (`cli <user>@<host>`).

use std::time::Duration;

use redq_tests::{unique_namespace, RedisServer};

use crate::seed::{connect, dead_letters, redq};

fn json_lines(out: std::process::Output) -> Vec<serde_json::Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test]
async fn redq_events_prints_every_kind_and_who_did_the_clis_actions() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_kinds_cli");
    let q = connect(&server.url(), &ns).await;
    let ids = dead_letters(&q, "webhooks", 2, "HTTP 410").await;
    let done = q
        .add("webhooks", redq::NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let job = q
        .claim("webhooks", 1, Duration::from_secs(60))
        .await
        .unwrap();
    q.ack(&job[0].lease()).await.unwrap();
    for args in [
        &["pause", "webhooks"][..],
        &["resume", "webhooks"],
        &["dead", "purge", "webhooks", "--yes"],
    ] {
        let out = redq(&server.url(), &ns, args);
        assert!(
            out.status.success(),
            "redq {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The main stream: the traffic's enqueued and completed are apart.
    let lines = json_lines(redq(&server.url(), &ns, &["events", "-o", "json"]));
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["dead", "dead", "paused", "resumed", "purged"],
        "{lines:#?}"
    );
    assert_eq!(lines[0]["job_id"], ids[0].as_str());
    assert_eq!(lines[4]["count"], 2);
    for line in &lines[2..] {
        let by = line["by"].as_str().unwrap_or_default();
        assert!(by.starts_with("cli ") && by.contains('@'), "{line}");
    }
    assert!(lines[..2].iter().all(|l| l["by"].is_null()), "{lines:#?}");

    // With --traffic, both streams merged by time: the same main events in
    // their order, and the traffic's (the order across the two streams
    // within one millisecond is not known, so it is not checked).
    let both = json_lines(redq(
        &server.url(),
        &ns,
        &["events", "--traffic", "-o", "json"],
    ));
    let main: Vec<&serde_json::Value> = both
        .iter()
        .filter(|l| !matches!(l["kind"].as_str(), Some("enqueued" | "completed")))
        .collect();
    assert_eq!(
        main.iter().map(|l| &l["event_id"]).collect::<Vec<_>>(),
        lines.iter().map(|l| &l["event_id"]).collect::<Vec<_>>()
    );
    let mut traffic: Vec<&str> = both
        .iter()
        .filter_map(|l| l["kind"].as_str())
        .filter(|k| matches!(*k, "enqueued" | "completed"))
        .collect();
    traffic.sort();
    assert_eq!(traffic, ["completed", "enqueued", "enqueued", "enqueued"]);
    // --kind reads the stream that holds the kind.
    let completed = json_lines(redq(
        &server.url(),
        &ns,
        &["events", "--kind", "completed", "-o", "json"],
    ));
    assert_eq!(completed.len(), 1, "{completed:#?}");
    assert_eq!(completed[0]["job_id"], done.id());
    assert_eq!(completed[0]["count"], 1);
    assert!(completed[0]["by"].is_null());

    // The table form: one line each, who did it as by=, placeholders kept.
    let out = redq(&server.url(), &ns, &["events"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let table: Vec<&str> = text.lines().collect();
    assert_eq!(table.len(), lines.len());
    let paused: Vec<&str> = table[2].split("  ").collect();
    assert_eq!(&paused[2..5], ["paused", "webhooks", "-"]);
    assert!(table[2].contains("  by=cli "), "{}", table[2]);
    assert!(table[4].contains("  count=2  "), "{}", table[4]);
    // Only the fields that say something: a dead letter's attempts and
    // error, none on a pause (no job, no error) nor on a purge.
    assert!(
        table[0].contains("  attempts=1  ") && table[0].ends_with("  error=HTTP 410"),
        "{}",
        table[0]
    );
    for line in [table[2], table[4]] {
        assert!(
            !line.contains("attempts=") && !line.contains("error="),
            "{line}"
        );
    }
}

#[tokio::test]
async fn redq_events_kind_keeps_the_kinds_named_and_refuses_an_unknown_one() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_kind_filter");
    let q = connect(&server.url(), &ns).await;
    q.upsert_schedule(redq::schedule::Schedule::new("digest", "mail", "@daily"))
        .await
        .unwrap();
    for args in [
        &["schedules", "pause", "digest"][..],
        &["pause", "mail", "--allow-unknown"],
        &["retention", "set", "mail", "--max-count", "10"],
    ] {
        let out = redq(&server.url(), &ns, args);
        assert!(
            out.status.success(),
            "redq {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let lines = json_lines(redq(
        &server.url(),
        &ns,
        &[
            "events",
            "--kind",
            "schedule_paused,retention_set",
            "-o",
            "json",
        ],
    ));
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["schedule_paused", "retention_set"], "{lines:#?}");
    // job_id names only a job: the schedule is in `schedule`.
    assert_eq!(lines[0]["job_id"], serde_json::Value::Null);
    assert_eq!(lines[0]["schedule"], "digest");
    assert_eq!(lines[0]["queue"], "mail");
    assert_eq!(lines[1]["detail"], "count 10, tombstones 1d");
    // A schedule's event names the schedule where a job's would name the
    // job: still no attempts of a job on its line.
    let out = redq(&server.url(), &ns, &["events", "--kind", "schedule_paused"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  schedule_paused  mail  digest  ") && !text.contains("attempts="),
        "{text}"
    );
    for line in &lines {
        let by = line["by"].as_str().unwrap_or_default();
        assert!(by.starts_with("cli ") && by.contains('@'), "{line}");
    }

    let out = redq(&server.url(), &ns, &["events", "--kind", "schedule_pause"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("\"schedule_pause\" is not a kind of event")
            && err.contains("accepted: enqueued,")
            && err.contains("schedule_paused")
            && err.contains("retention_cleared"),
        "{err}"
    );
}

#[tokio::test]
async fn a_requeue_of_many_says_the_attempts_its_jobs_restart_at() {
    // No one job, yet its attempt count is the counter every requeued job
    // restarts at: the text line keeps it.
    let server = RedisServer::start();
    let ns = unique_namespace("events_requeued_text");
    let q = connect(&server.url(), &ns).await;
    dead_letters(&q, "webhooks", 2, "HTTP 410").await;
    let out = redq(
        &server.url(),
        &ns,
        &["dead", "requeue", "webhooks", "--all", "--yes"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = redq(&server.url(), &ns, &["events", "--kind", "requeued"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().next().unwrap_or_default();
    assert!(
        line.contains("  requeued  webhooks  -  attempts=0  count=2  ") && !line.contains("error="),
        "{text}"
    );
}

/// `redq events -o json`: every line has the same fields; one the event
/// does not have is `null`, never `""` (a worker's or a namespace's event
/// has no queue); `attempts` only on the kinds that carry a count (a
/// failed attempt, a requeue); `job_id` is only ever a job's id, the
/// schedule a schedule's event is about in `schedule`, the gate in `gate`.
/// The text lines print `attempts=` on the same kinds only.
#[tokio::test]
async fn events_json_says_absent_fields_as_null_and_names_schedules_and_gates_apart() {
    use redq::workflow::Batch;
    use redq::NewJob;

    let server = RedisServer::start();
    let ns = unique_namespace("events_json_fields");
    let q = connect(&server.url(), &ns).await;
    q.set_record_format(redq::RecordFormat::Compact)
        .await
        .unwrap();
    let ids = dead_letters(&q, "webhooks", 1, "HTTP 410").await;
    q.pause("webhooks").await.unwrap();
    q.upsert_schedule(redq::schedule::Schedule::new("digest", "mail", "@daily"))
        .await
        .unwrap();
    let batch = Batch::new()
        .jobs("pages", vec![NewJob::new(serde_json::json!({"page": 1}))])
        .on_complete("pdf", NewJob::new(serde_json::json!({"report": 7})));
    let gate = q.enqueue_batch(batch).await.unwrap().id.to_string();
    let page = q.claim("pages", 1, Duration::from_secs(60)).await.unwrap();
    q.ack(&page[0].lease()).await.unwrap();

    let lines = json_lines(redq(&server.url(), &ns, &["events", "-o", "json"]));
    let of = |kind: &str| {
        lines
            .iter()
            .find(|l| l["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {lines:#?}"))
            .clone()
    };
    let fields = |l: &serde_json::Value| {
        let mut keys: Vec<String> = l.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    for line in &lines {
        assert_eq!(
            fields(line),
            fields(&lines[0]),
            "the same fields on every line"
        );
        for (key, value) in line.as_object().unwrap() {
            assert_ne!(value, "", "{key} is \"\", not null: {line}");
        }
    }
    let null = serde_json::Value::Null;
    let dead = of("dead");
    assert_eq!(
        (&dead["job_id"], &dead["attempts"], &dead["error"]),
        (
            &serde_json::json!(ids[0]),
            &serde_json::json!(1),
            &serde_json::json!("HTTP 410")
        )
    );
    assert_eq!((&dead["schedule"], &dead["gate"]), (&null, &null));
    let paused = of("paused");
    assert_eq!(paused["queue"], "webhooks");
    for key in ["job_id", "attempts", "error", "detail", "schedule", "gate"] {
        assert_eq!(paused[key], null, "{key}: {paused}");
    }
    let format = of("record_format_set");
    assert_eq!(
        (&format["queue"], &format["attempts"]),
        (&null, &null),
        "{format}"
    );
    let created = of("schedule_created");
    assert_eq!(
        (
            &created["job_id"],
            &created["schedule"],
            &created["attempts"]
        ),
        (&null, &serde_json::json!("digest"), &null),
        "{created}"
    );
    let done = of("gate_done");
    assert_eq!(
        (&done["job_id"], &done["gate"], &done["attempts"]),
        (&null, &serde_json::json!(gate), &null),
        "{done}"
    );

    // The text lines: attempts= on the dead letter only.
    let out = redq(&server.url(), &ns, &["events"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines() {
        assert_eq!(
            line.contains("attempts="),
            line.contains("  dead  "),
            "{line}"
        );
    }
}

/// A lapsed lease's dead letter names its holder as `redq workers` lists
/// it and `redq workers stop` takes it (`NODE-INSTANCE`), in the error of
/// the job, its event and `redq dead list`.
#[tokio::test]
async fn a_reclaimed_dead_letter_names_its_holder_as_redq_workers_does() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_reclaimed_holder");
    let q = redq::RedisQueue::builder(&server.url())
        .namespace(&ns)
        .identity(7_544_887_412_332_135_592, 3)
        .connect()
        .await
        .unwrap();
    q.add(
        "webhooks",
        redq::NewJob::new(serde_json::json!(1)).max_attempts(1),
    )
    .await
    .unwrap();
    let leased = q
        .claim("webhooks", 1, Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(leased.len(), 1);
    redq_tests::wait_until(
        Duration::from_secs(10),
        "the lapsed lease to be reclaimed",
        async || q.reclaim("webhooks", 10).await.unwrap().dead_lettered == 1,
    )
    .await;
    let want = "lease expired (held by worker 7544887412332135592-3)";
    let lines = json_lines(redq(
        &server.url(),
        &ns,
        &["events", "--kind", "dead", "-o", "json"],
    ));
    assert_eq!(lines[0]["error"], want, "{lines:#?}");
    let out = redq(
        &server.url(),
        &ns,
        &["dead", "list", "webhooks", "-o", "json"],
    );
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(listed.contains(want), "{listed}");
}
