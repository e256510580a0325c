//! What the subcommands say to an operator: the questions of the bulk forms
//! name the command and flags that exist, refusals say what was wrong and
//! what is accepted, and nothing asks for --yes when there is nothing to do.

use std::time::Duration;

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

use crate::seed::*;

const LATER: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn a_bulk_question_names_the_real_command_and_flags() {
    let server = RedisServer::start();
    let ns = unique_namespace("wording-bulk");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!(1)).delay(LATER))
        .await
        .unwrap();
    for i in 0..4 {
        q.add("emails", NewJob::new(value!(i))).await.unwrap();
    }

    let out = redq(&url, &ns, &["jobs", "promote", "--queue", "emails"]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(!said.contains("--all"), "{said}");
    assert!(
        said.contains(
            "redq: jobs promote --queue emails would make the 1 scheduled job of emails due now; add --yes to do it"
        ),
        "{said}"
    );

    let out = redq(
        &url,
        &ns,
        &["jobs", "delete", "--queue", "emails", "--state", "waiting"],
    );
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(!said.contains("--all"), "{said}");
    assert!(
        said.contains(
            "redq: jobs delete --queue emails --state waiting would delete all 4 waiting jobs of emails for good; add --yes to do it"
        ),
        "{said}"
    );

    // The one scheduled job never failed: nothing backs off, so there is
    // nothing to confirm, and the delayed job is not called a retry.
    let out = redq(&url, &ns, &["jobs", "retry", "--queue", "emails"]);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(!said.contains("--all"), "{said}");
    assert!(
        said.contains("no job of emails is backing off after a failure"),
        "{said}"
    );

    // Nothing moved.
    let counts = q.counts("emails").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (4, 1));
}

#[tokio::test]
async fn retention_bounds_are_refused_in_plain_words_and_sizes_take_units() {
    let server = RedisServer::start();
    let ns = unique_namespace("wording-retention");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!(1))).await.unwrap();

    // A count of 0 bounds nothing: said so, with what is accepted; exit 2,
    // nothing written.
    let out = redq(
        &url,
        &ns,
        &["retention", "set", "emails", "--max-count", "0"],
    );
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(
        said.contains("0 is no count bound") && said.contains("1 to 4294967295"),
        "{said}"
    );
    assert!(!said.contains("no bound\""), "{said}");
    let out = redq(&url, &ns, &["retention", "show", "emails", "-o", "json"]);
    assert_eq!(json(&out)["keeps"], false);

    // A size with its unit, as the help documents it.
    let out = redq(
        &url,
        &ns,
        &["retention", "set", "emails", "--max-bytes", "1GB"],
    );
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["retention", "show", "emails", "-o", "json"]);
    assert_eq!(json(&out)["max_bytes"], 1u64 << 30);
    let out = redq(
        &url,
        &ns,
        &["retention", "set", "emails", "--max-bytes", "512MB"],
    );
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["retention", "show", "emails", "-o", "json"]);
    assert_eq!(json(&out)["max_bytes"], 512u64 << 20);

    // A size it cannot read: the accepted forms, not a Rust parse error.
    for refused in ["1.5GB", "1PB", "lots"] {
        let out = redq(
            &url,
            &ns,
            &["retention", "set", "emails", "--max-bytes", refused],
        );
        assert_exit(&out, 2);
        let said = stderr(&out);
        assert!(
            said.contains("is not a size") && said.contains("KB, MB, GB or TB"),
            "{refused}: {said}"
        );
        assert!(!said.contains("invalid digit"), "{refused}: {said}");
    }
    let out = redq(
        &url,
        &ns,
        &["retention", "set", "emails", "--max-age", "0s"],
    );
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("1ms to 10 years"), "{}", stderr(&out));
    // What was set stays.
    let out = redq(&url, &ns, &["retention", "show", "emails", "-o", "json"]);
    assert_eq!(json(&out)["max_bytes"], 512u64 << 20);
}

#[tokio::test]
async fn clearing_every_limit_of_a_queue_with_none_asks_nothing() {
    let server = RedisServer::start();
    let ns = unique_namespace("wording-limits");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!(1))).await.unwrap();

    // No limit: said so, exit 0, no --yes asked.
    let out = redq(&url, &ns, &["limits", "clear", "emails", "--all"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim_end(),
        "emails has no limit to clear; nothing changed"
    );
    let out = redq(
        &url,
        &ns,
        &["limits", "clear", "emails", "--all", "-o", "json"],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["cleared"], 0);

    // With one, --yes is still asked for.
    let out = redq(
        &url,
        &ns,
        &["limits", "set", "emails", "--concurrency", "2"],
    );
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["limits", "clear", "emails", "--all"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("add --yes"), "{}", stderr(&out));
    let out = redq(&url, &ns, &["limits", "clear", "emails", "--all", "--yes"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("cleared 1 limit"), "{}", stdout(&out));
}

/// The one-line summary of `jobs` in `redq --help`.
fn jobs_summary(help: &str) -> &str {
    help.lines()
        .find(|l| l.trim_start().starts_with("jobs "))
        .unwrap_or_else(|| panic!("no jobs line in:\n{help}"))
}

#[test]
fn the_jobs_summary_names_what_its_subcommands_do() {
    let top = redq("redis://127.0.0.1:1", "unused", &["--help"]);
    assert_exit(&top, 0);
    let top = stdout(&top);
    let summary = jobs_summary(&top);
    let jobs = redq("redis://127.0.0.1:1", "unused", &["jobs", "--help"]);
    assert_exit(&jobs, 0);
    let jobs = stdout(&jobs);
    let first = jobs.lines().next().unwrap_or("");
    for does in [
        "list", "show", "search", "promote", "retry", "edit", "delete", "cancel",
    ] {
        assert!(summary.contains(does), "redq --help: {summary}");
        assert!(first.contains(does), "redq jobs --help: {first}");
    }
}

#[tokio::test]
async fn a_batch_member_whose_queue_is_not_known_shows_none_not_blank() {
    use redq::workflow::Batch;
    let server = RedisServer::start();
    let ns = unique_namespace("wording-members");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let pages = (1..=2).map(|n| NewJob::new(value!({"page": n}))).collect();
    let batch = Batch::new()
        .jobs("pages", pages)
        .on_complete("pdf", NewJob::new(value!({"report": 7})));
    let id = q.enqueue_batch(batch).await.unwrap().id.to_string();
    // One completes in a queue that keeps nothing: its record is gone, and
    // with it what queue it was of. The other is still running, in pages.
    let jobs = q.claim("pages", 2, LATER).await.unwrap();
    assert_eq!(jobs.len(), 2);
    q.ack(&jobs[0].lease()).await.unwrap();
    let (done, running) = (jobs[0].id.clone(), jobs[1].id.clone());

    let out = redq(&url, &ns, &["batches", "show", &id, "-o", "json"]);
    assert_exit(&out, 0);
    let shown = json(&out);
    let members = shown["members"]["members"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let member = |id: &str| {
        members
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no member {id}: {shown}"))
    };
    assert_eq!(member(&done)["state"], "completed", "{shown}");
    assert_eq!(member(&done)["queue"], serde_json::Value::Null, "{shown}");
    assert_eq!(member(&running)["queue"], "pages", "{shown}");

    let out = redq(&url, &ns, &["batches", "show", &id]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.starts_with(done.as_str()))
        .unwrap_or_else(|| panic!("no row for {done}:\n{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells.get(1), Some(&"-"), "{text}");
    assert_eq!(cells.get(2), Some(&"completed"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with(running.as_str()))
        .unwrap_or_default();
    assert!(row.contains(" pages "), "{text}");
}
