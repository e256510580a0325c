//! `redq retention set` replaces a queue's policy whole: its reply says what
//! it replaced, names each bound no longer set with the command that keeps
//! it, and a size bound that keeps nothing is refused with the smallest
//! accepted. `retention show` and `jobs list --state completed` count no
//! kept job past its age bound, in a queue no ack has trimmed since.

use std::time::Duration;

use crate::seed::*;
use redq::{Completion, NewJob};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json as value;

#[tokio::test]
async fn retention_set_says_what_it_replaced_and_which_bounds_are_gone() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-retention-replace");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("q", NewJob::new(value!(1))).await.unwrap();

    let out = redq(
        &url,
        &ns,
        &[
            "retention",
            "set",
            "q",
            "--max-count",
            "10",
            "--max-bytes",
            "1KB",
        ],
    );
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.starts_with(
            "q now keeps finished jobs at most 10 of each outcome, within 1024 bytes; \
             tombstones last 1d\n"
        ),
        "{said}"
    );
    assert!(!said.contains("was"), "nothing was replaced: {said}");

    let out = redq(&url, &ns, &["retention", "set", "q", "--max-age", "7d"]);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains(
            "q now keeps finished jobs for 7d; tombstones last 1d \
             (was at most 10 of each outcome, within 1024 bytes); \
             the count and size bounds are no longer set: a set replaces the whole policy \
             (to keep them: redq retention set q --max-age 7d --max-count 10 --max-bytes 1024)"
        ),
        "{said}"
    );
    assert!(said.contains("kept now: 0 completed"), "{said}");

    // The command it suggests brings them back, and says nothing is gone.
    let out = redq(
        &url,
        &ns,
        &[
            "retention",
            "set",
            "q",
            "--max-age",
            "7d",
            "--max-count",
            "10",
            "--max-bytes",
            "1024",
        ],
    );
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(said.contains("(was for 7d)"), "{said}");
    assert!(!said.contains("no longer"), "{said}");

    // The same again: nothing replaced.
    let out = redq(
        &url,
        &ns,
        &[
            "retention",
            "set",
            "q",
            "--max-age",
            "7d",
            "--max-count",
            "10",
            "--max-bytes",
            "1024",
        ],
    );
    assert_exit(&out, 0);
    assert!(
        stdout(&out).starts_with("q already keeps finished jobs at most 10 of each outcome"),
        "{}",
        stdout(&out)
    );

    // JSON: what it was, and the options no longer set.
    let out = redq(
        &url,
        &ns,
        &["-o", "json", "retention", "set", "q", "--max-bytes", "2KB"],
    );
    assert_exit(&out, 0);
    let reply = json(&out);
    assert_eq!(reply["max_bytes"], 2048, "{reply}");
    assert_eq!(reply["was"]["max_count"], 10, "{reply}");
    assert_eq!(reply["was"]["max_age_ms"], 7 * 86_400_000u64, "{reply}");
    assert_eq!(
        reply["no_longer_bounded_by"],
        value!(["--max-count", "--max-age"]),
        "{reply}"
    );
}

#[tokio::test]
async fn a_size_bound_that_keeps_nothing_is_refused_with_the_smallest_accepted() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-retention-tiny");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("q", NewJob::new(value!(1))).await.unwrap();
    let out = redq(&url, &ns, &["retention", "set", "q", "--max-bytes", "1"]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(said.contains("at least 1024 bytes (1KB)"), "{said}");
    let out = redq(&url, &ns, &["retention", "show", "q"]);
    assert!(
        stdout(&out).contains("q keeps no finished jobs"),
        "{}",
        stdout(&out)
    );
    let out = redq(&url, &ns, &["retention", "set", "q", "--max-bytes", "1KB"]);
    assert_exit(&out, 0);
}

#[tokio::test]
async fn a_kept_job_past_its_age_is_not_counted_or_listed_by_the_cli() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-retention-expired");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("q", NewJob::new(value!(1))).await.unwrap();
    let out = redq(&url, &ns, &["retention", "set", "q", "--max-age", "1d"]);
    assert_exit(&out, 0);
    let held = q
        .claim("q", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    let done = Completion::new()
        .result(&value!({ "secret": "pii" }))
        .unwrap();
    q.ack_with(&held.lease(), done).await.unwrap();
    let listed = |out: &std::process::Output| stdout(out).contains(&held.id);
    let list = ["jobs", "list", "q", "--state", "completed", "-o", "json"];
    assert!(listed(&redq(&url, &ns, &list)));

    // The age bound drops to 1 ms; nothing acks or cancels after it.
    let out = redq(&url, &ns, &["retention", "set", "q", "--max-age", "1ms"]);
    assert_exit(&out, 0);
    wait_until(
        Duration::from_secs(10),
        "the kept job to pass its age",
        async || {
            let out = redq(&url, &ns, &["-o", "json", "retention", "show", "q"]);
            json(&out)["expired"] == 1
        },
    )
    .await;
    let out = redq(&url, &ns, &["-o", "json", "retention", "show", "q"]);
    assert_eq!(json(&out)["completed"], 0);
    let out = redq(&url, &ns, &["retention", "show", "q"]);
    let said = stdout(&out);
    assert!(
        said.contains(
            "kept now: 0 completed, 0 cancelled, \
             "
        ) && said.contains(
            "(1 job past the age bound, no longer shown, holds its memory until the \
             queue's next ack or cancel frees it)"
        ),
        "{said}"
    );
    let out = redq(&url, &ns, &list);
    assert_exit(&out, 0);
    assert!(!listed(&out), "{}", stdout(&out));
    assert!(!stdout(&out).contains("pii"), "{}", stdout(&out));
}
