//! `redq jobs promote|retry|delete|edit` against a real Redis: by id and in
//! bulk, text and `-o json`, the confirmation a bulk form asks for, and the
//! exit codes (0 done, 1 refused or not found, 2 a wrong command line).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::seed::*;
use redq::{JobState, NewJob};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

const LATER: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn promote_and_retry_by_id_report_each_job_and_refuse_the_wrong_state() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-promote");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let delayed = q
        .add("emails", NewJob::new(value!(1)).delay(LATER))
        .await
        .unwrap();
    let waiting = q.add("emails", NewJob::new(value!(2))).await.unwrap();

    let out = redq(&url, &ns, &["jobs", "promote", delayed.id(), "-o", "json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(report["action"], "promote");
    assert_eq!(report["jobs"][0]["id"], delayed.id());
    assert_eq!(report["jobs"][0]["outcome"], "promoted");
    assert_eq!(q.counts("emails").await.unwrap().waiting, 2);

    // Already due: refused, said on stderr, exit 1.
    let out = redq(&url, &ns, &["jobs", "promote", waiting.id()]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("cannot promote job"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("waiting"), "{}", stderr(&out));

    // Retry now of a dead job requeues it.
    let dead = dead_letters(&q, "hooks", 1, "boom").await;
    let out = redq(&url, &ns, &["jobs", "retry", &dead[0]]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).starts_with("requeued (was dead)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(q.counts("hooks").await.unwrap().waiting, 1);

    let out = redq(&url, &ns, &["jobs", "retry", "01NOSUCHJOB"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no job 01NOSUCHJOB"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn delete_refuses_a_running_job_without_force_and_deletes_it_with() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-delete");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!(1))).await.unwrap();
    let held = q.claim("emails", 1, LATER).await.unwrap().remove(0);

    let out = redq(&url, &ns, &["jobs", "delete", &held.id]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("leased"), "{}", stderr(&out));
    assert_eq!(
        q.inspect(&held.id).await.unwrap().unwrap().state,
        JobState::Leased
    );

    let out = redq(
        &url,
        &ns,
        &["jobs", "delete", "--force", &held.id, "-o", "json"],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["jobs"][0]["outcome"], "deleted");
    assert!(q.inspect(&held.id).await.unwrap().is_none());
}

/// An id that cannot be a job id is said once, by its own sentence, and
/// the exit's line sums up how many were unusable (it repeated the same
/// sentence).
#[tokio::test]
async fn an_unusable_id_is_said_once() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-bad-id");
    let url = server.url();
    let long = "x".repeat(70);
    let out = redq(&url, &ns, &["jobs", "delete", &long]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert_eq!(said.matches("invalid job id").count(), 1, "{said}");
    assert!(
        said.contains("the id given is not usable as a job id"),
        "{said}"
    );
}

#[tokio::test]
async fn a_bulk_form_asks_for_yes_first_and_then_works_in_batches() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-bulk");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let jobs = (0..7)
        .map(|i| NewJob::new(value!(i)).delay(LATER))
        .collect();
    q.add_batch("emails", jobs).await.unwrap();

    // Without --yes: a usage error naming what it would do; nothing moves.
    let out = redq(&url, &ns, &["jobs", "promote", "--queue", "emails"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("7 scheduled jobs"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    assert_eq!(q.counts("emails").await.unwrap().scheduled, 7);

    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "promote", "--queue", "emails", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], 7);

    let out = redq(
        &url,
        &ns,
        &["jobs", "delete", "--queue", "emails", "--state", "waiting"],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("would delete all 7 waiting jobs"),
        "{}",
        stderr(&out)
    );
    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "delete", "--queue", "emails", "--state", "waiting", "--yes",
        ],
    );
    assert_exit(&out, 0);
    assert!(
        stdout(&out).starts_with("deleted 7 jobs of emails"),
        "{}",
        stdout(&out)
    );
    assert_eq!(q.counts("emails").await.unwrap().waiting, 0);

    // Leased jobs need --force as well.
    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "delete", "--queue", "emails", "--state", "leased", "--yes",
        ],
    );
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
}

#[tokio::test]
async fn edit_takes_the_payload_as_an_argument_a_file_or_standard_input() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-edit");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let id = q
        .add("emails", NewJob::new(value!({"to": "ada"})))
        .await
        .unwrap();
    let id = id.id();
    let payload = |q: redq::RedisQueue, id: String| async move {
        q.inspect(&id).await.unwrap().unwrap().payload
    };

    let out = redq(
        &url,
        &ns,
        &["jobs", "edit", id, r#"{"to": "bob"}"#, "-o", "json"],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["state"], "waiting");
    assert_eq!(
        payload(q.clone(), id.to_owned()).await,
        value!({"to": "bob"})
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("payload.json");
    std::fs::write(&file, r#"{"to": "cy"}"#).unwrap();
    let out = redq(
        &url,
        &ns,
        &["jobs", "edit", id, "--file", file.to_str().unwrap()],
    );
    assert_exit(&out, 0);
    assert!(
        stdout(&out).starts_with(&format!("edited {id} (waiting)")),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        payload(q.clone(), id.to_owned()).await,
        value!({"to": "cy"})
    );

    let mut child = Command::new(BIN)
        .args(["jobs", "edit", id, "-"])
        .env("REDIS_URL", &url)
        .env("REDQ_NAMESPACE", &ns)
        .env_remove("REDQ_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"to": "di"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert_eq!(
        payload(q.clone(), id.to_owned()).await,
        value!({"to": "di"})
    );

    // Not JSON: a usage error, and the payload is unchanged.
    let out = redq(&url, &ns, &["jobs", "edit", id, "{not json"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("not JSON"), "{}", stderr(&out));
    assert_eq!(
        payload(q.clone(), id.to_owned()).await,
        value!({"to": "di"})
    );
}

/// `redq jobs dead-letter ID... --reason TEXT` sets waiting and scheduled
/// jobs aside unrun, recording the reason and who did it (`cli user@host`),
/// reports each id, and refuses a running job with nothing changed (exit 1).
#[tokio::test]
async fn dead_letter_sets_jobs_aside_with_the_reason_and_refuses_a_running_one() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-dead-letter");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let running = q.add("pdf", NewJob::new(value!(1))).await.unwrap();
    q.claim("pdf", 1, LATER).await.unwrap();
    let waiting = q.add("pdf", NewJob::new(value!(2))).await.unwrap();
    let delayed = q
        .add("pdf", NewJob::new(value!(3)).delay(LATER))
        .await
        .unwrap();

    let out = redq(
        &url,
        &ns,
        &[
            "jobs",
            "dead-letter",
            waiting.id(),
            delayed.id(),
            "--reason",
            "crashes the renderer",
            "-o",
            "json",
        ],
    );
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(report["action"], "dead-letter");
    assert_eq!(report["jobs"][0]["outcome"], "dead-lettered waiting job");
    assert_eq!(report["jobs"][1]["outcome"], "dead-lettered scheduled job");
    assert_eq!(report["bound_deleted"], 0);
    let record = q.inspect(waiting.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Dead);
    let error = record.last_error.unwrap_or_default();
    assert!(
        error.starts_with("dead-lettered by an operator (cli ")
            && error.ends_with("): crashes the renderer"),
        "{error}"
    );
    assert_eq!(q.counts("pdf").await.unwrap().dead, 2);

    // A running job: refused, said on stderr, nothing changed.
    let out = redq(&url, &ns, &["jobs", "dead-letter", running.id()]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("cannot dead-letter job"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("cancel or delete a running job"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("redq: the job was not changed"),
        "{}",
        stderr(&out)
    );
    let record = q.inspect(running.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Leased);
}

/// In a queue with a dead-letter bound, a batch of dead-letters may push
/// its own first jobs out: the reply says how many the bound deleted and
/// names those of the batch, and an over-long reason is refused once,
/// before any id, as the reason's fault.
#[tokio::test]
async fn dead_letter_says_what_the_bound_deleted_and_refuses_a_long_reason_once() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-dead-letter-bound");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.set_dead_bound("pdf", &redq::kept::DeadBound::new().max_count(2))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..3 {
        let job = q.add("pdf", NewJob::new(value!(n))).await.unwrap();
        ids.push(job.id().to_owned());
    }
    let mut args = vec!["jobs", "dead-letter"];
    args.extend(ids.iter().map(String::as_str));
    let out = redq(&url, &ns, &args);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains(&format!(
            "the dead-letter bound deleted 1 older dead letter past it, among them 1 job \
             this command set aside: {}",
            ids[0]
        )),
        "{said}"
    );
    let long = "r".repeat(1025);
    let out = redq(
        &url,
        &ns,
        &["jobs", "dead-letter", &ids[1], &ids[2], "--reason", &long],
    );
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("the reason is 1025 bytes: at most 1024 are accepted"),
        "{err}"
    );
    assert!(!err.contains("job id"), "{err}");
}

/// Ending a batch member from the command line (delete, cancel,
/// dead-letter) says on stderr that its batch counts it failed, as the
/// console's question does; a job of no batch gets no such note.
#[tokio::test]
async fn ending_a_batch_member_notes_that_its_batch_counts_it_failed() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-member");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let batch =
        redq::workflow::Batch::new().jobs("pdf", (0..3).map(|n| NewJob::new(value!(n))).collect());
    let handle = q.enqueue_batch(batch).await.unwrap();
    let ids: Vec<String> = handle.jobs.iter().map(|j| j.id().to_owned()).collect();
    let gate = handle.id.as_str();
    for (command, id) in [
        (vec!["jobs", "delete"], &ids[0]),
        (vec!["jobs", "cancel"], &ids[1]),
        (vec!["jobs", "dead-letter"], &ids[2]),
    ] {
        let mut args = command.clone();
        args.push(id);
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 0);
        assert!(
            stderr(&out).contains(&format!(
                "note: job {id} was a member of {gate}: that counts it failed there"
            )),
            "{command:?}: {}",
            stderr(&out)
        );
    }
    let lone = q.add("pdf", NewJob::new(value!(9))).await.unwrap();
    let out = redq(&url, &ns, &["jobs", "delete", lone.id()]);
    assert_exit(&out, 0);
    assert!(!stderr(&out).contains("member of"), "{}", stderr(&out));
}
