//! `redq jobs cancel` and `redq retention` against a real Redis: by id and
//! in bulk, text and `-o json`, the confirmations, and the exit codes (0
//! done, 1 refused or not found, 2 a wrong command line).

use std::time::Duration;

use crate::seed::*;
use redq::kept::Outcome;
use redq::{JobResult, JobState, NewJob};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

#[tokio::test]
async fn cancel_by_id_reports_the_state_it_left_and_refuses_what_is_gone() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-cancel");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let delayed = q
        .add(
            "emails",
            NewJob::new(value!(1)).delay(Duration::from_secs(3600)),
        )
        .await
        .unwrap();

    let out = redq(
        &url,
        &ns,
        &[
            "jobs",
            "cancel",
            delayed.id(),
            "--by",
            "alice",
            "-o",
            "json",
        ],
    );
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(report["id"], delayed.id());
    assert_eq!(report["outcome"], "cancelled");
    assert_eq!(report["from"], "scheduled");
    assert!(report["at"].is_string(), "{report}");
    assert_eq!(q.counts("emails").await.unwrap().scheduled, 0);

    // Again: already cancelled, still exit 0, said in words.
    let out = redq(&url, &ns, &["jobs", "cancel", delayed.id()]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("was already cancelled"),
        "{}",
        stdout(&out)
    );

    // No such job: exit 1, said on stderr.
    let out = redq(&url, &ns, &["jobs", "cancel", "01NOSUCHJOB"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no job 01NOSUCHJOB"),
        "{}",
        stderr(&out)
    );

    // Neither an id nor a queue: a usage error.
    let out = redq(&url, &ns, &["jobs", "cancel"]);
    assert_exit(&out, 2);
}

#[tokio::test]
async fn a_bulk_cancel_asks_for_yes_then_empties_the_state() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-cancel-all");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add_batch("emails", (0..30).map(|n| NewJob::new(value!(n))).collect())
        .await
        .unwrap();

    let out = redq(
        &url,
        &ns,
        &["jobs", "cancel", "--queue", "emails", "--state", "waiting"],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("cancels all 30 waiting jobs of emails"),
        "{}",
        stderr(&out)
    );
    assert_eq!(q.counts("emails").await.unwrap().waiting, 30);

    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "cancel", "--queue", "emails", "--state", "waiting", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(
        (report["done"].clone(), report["left"].clone()),
        (value!(30), value!(0))
    );
    assert_eq!(q.counts("emails").await.unwrap().waiting, 0);
}

#[tokio::test]
async fn retention_set_show_and_clear_change_what_a_queue_keeps() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-retention");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!(1))).await.unwrap();

    let out = redq(&url, &ns, &["retention", "show", "emails"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("keeps no finished jobs"),
        "{}",
        stdout(&out)
    );

    let out = redq(&url, &ns, &["retention", "set", "emails"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("at least one bound"),
        "{}",
        stderr(&out)
    );

    let out = redq(
        &url,
        &ns,
        &[
            "retention",
            "set",
            "emails",
            "--max-count",
            "5",
            "--max-age",
            "1d",
            "-o",
            "json",
        ],
    );
    assert_exit(&out, 0);
    let shown = json(&out);
    assert_eq!(shown["keeps"], true);
    assert_eq!(shown["max_count"], 5);
    assert_eq!(shown["max_age_ms"], 86_400_000);

    // A completed job is now kept, and listed.
    let job = q
        .claim("emails", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    q.ack(&job.lease()).await.unwrap();
    let out = redq(
        &url,
        &ns,
        &[
            "jobs",
            "list",
            "emails",
            "--state",
            "completed",
            "-o",
            "json",
        ],
    );
    assert_exit(&out, 0);
    assert!(stdout(&out).contains(&job.id), "{}", stdout(&out));

    let out = redq(&url, &ns, &["retention", "clear", "emails"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("forgets 1 kept job"),
        "{}",
        stderr(&out)
    );
    let out = redq(&url, &ns, &["retention", "clear", "emails", "--yes"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("forgot 1 kept job"),
        "{}",
        stdout(&out)
    );
    assert!(matches!(
        q.result(&job.id).await.unwrap(),
        JobResult::Tombstone(t) if t.outcome == Outcome::Completed
    ));
    assert_eq!(
        q.list_jobs("emails", JobState::Completed, 0, 10)
            .await
            .unwrap()
            .total,
        0
    );

    // --read-only refuses the changes.
    let out = redq(
        &url,
        &ns,
        &[
            "--read-only",
            "retention",
            "set",
            "emails",
            "--max-count",
            "1",
        ],
    );
    assert_exit(&out, 1);
}

/// A queue about to be used may keep its jobs from the first one (jobs
/// other jobs will name as dependencies must leave a trace): refused
/// without --allow-unknown, as a typo would be, and kept with it.
#[tokio::test]
async fn retention_set_on_a_queue_before_its_first_job_needs_allow_unknown() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-retention-first");
    let url = server.url();
    let set = ["retention", "set", "payments", "--max-count", "100"];
    let out = redq(&url, &ns, &set);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("add --allow-unknown"),
        "{}",
        stderr(&out)
    );

    let mut allowed = set.to_vec();
    allowed.push("--allow-unknown");
    assert_exit(&redq(&url, &ns, &allowed), 0);
    let q = connect(&url, &ns).await;
    let id = q
        .add("payments", NewJob::new(value!(1)))
        .await
        .unwrap()
        .id()
        .to_owned();
    let job = q
        .claim("payments", 1, Duration::from_secs(30))
        .await
        .unwrap()
        .remove(0);
    q.ack(&job.lease()).await.unwrap();
    assert!(
        matches!(q.result(&id).await.unwrap(), JobResult::Kept(_)),
        "the first job was not kept"
    );
}
