//! `redq batches list|show|cancel` and `redq deps show|release|fail` as the
//! real binary against a real Redis: what they print while a batch runs
//! and once it is decided, that `-o json` says the same, and that a wrong
//! id or a job not held is refused in one sentence, nothing changed.

use std::time::Duration;

use crate::seed::*;
use redq::kept::Completion;
use redq::workflow::{Batch, OnFailure};
use redq::{JobState, NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};

/// The line of `text` containing `needle`.
#[track_caller]
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{text}"))
}

/// Claim `queue`'s jobs (deciding its waiters whose gate is done) and hand
/// them back.
async fn claim_all(q: &RedisQueue, queue: &str) -> Vec<redq::Job> {
    q.claim(queue, 100, Duration::from_secs(60)).await.unwrap()
}

#[tokio::test]
async fn batches_and_deps_are_shown_and_decided_from_the_command_line() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("workflows_cli"));
    let q = connect(&url, &ns).await;
    let run = |args: &[&str]| redq(&url, &ns, args);

    let pages = (1..=3)
        .map(|n| NewJob::new(serde_json::json!({"page": n})))
        .collect();
    let batch = Batch::new()
        .label("render report 7")
        .jobs("pages", pages)
        .on_complete("pdf", NewJob::new(serde_json::json!({"report": 7})))
        .on_success("pdf", NewJob::new(serde_json::json!({"mail": 7})));
    let handle = q.enqueue_batch(batch).await.unwrap();
    let id = handle.id.to_string();
    let (on_complete, on_success) = (
        handle.callbacks[0].id().to_owned(),
        handle.callbacks[1].id().to_owned(),
    );
    let charge = q
        .add("payments", NewJob::new(serde_json::json!({"order": 9})))
        .await
        .unwrap();
    let receipt = q
        .add(
            "mail",
            NewJob::new(serde_json::json!({"receipt": 9}))
                .after([charge.id()])
                .on_dependency_failure(OnFailure::Hold),
        )
        .await
        .unwrap();
    let receipt = receipt.id().to_owned();

    // The charge, before it finishes: the receipt's dependencies wait on it.
    let deps = json(&run(&["-o", "json", "deps", "show", charge.id()]));
    assert_eq!(deps["waited_on_by"][0]["id"], receipt.as_str(), "{deps}");
    let text = stdout(&run(&["deps", "show", charge.id()]));
    assert!(text.contains("== what waits on it"), "{text}");

    // While it runs: the list, the batch, and why its callbacks wait.
    let list = run(&["batches", "list"]);
    assert_exit(&list, 0);
    let text = stdout(&list);
    let row = line_with(&text, &id);
    for cell in ["batch", "sealed", "0/3", "2 pending", "render report 7"] {
        assert!(row.contains(cell), "{cell} missing: {row}");
    }
    assert!(line_with(&text, &receipt).contains("deps"), "{text}");
    let listed = json(&run(&["-o", "json", "batches", "list"]));
    let first = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id.as_str())
        .expect("the batch is listed");
    assert_eq!(
        (
            first["kind"].as_str(),
            first["total"].as_u64(),
            first["pending"].as_u64()
        ),
        (Some("batch"), Some(3), Some(3))
    );
    assert_eq!(first["waiters"][0]["why"], "waiting for 3 of 3");

    let show = run(&["batches", "show", &id]);
    assert_exit(&show, 0);
    let text = stdout(&show);
    assert!(
        text.starts_with(&format!("batch {id} \"render report 7\": sealed\n")),
        "{text}"
    );
    assert!(
        text.contains("0 of 3 finished (0 succeeded, 0 failed), 3 pending"),
        "{text}"
    );
    let waiter = line_with(&text, &on_complete);
    assert!(
        waiter.contains("all finished") && waiter.contains("waiting for 3 of 3"),
        "{waiter}"
    );
    assert_eq!(text.matches(" waiting").count(), 3 + 2, "{text}");

    // Two pages complete (one with a result), the third is cancelled; the
    // charge is cancelled, so the receipt is held.
    let jobs = claim_all(&q, "pages").await;
    assert_eq!(jobs.len(), 3);
    let done = Completion::new()
        .result(&serde_json::json!({"pdf_bytes": 512}))
        .unwrap();
    q.ack_with(&jobs[0].lease(), done).await.unwrap();
    q.ack(&jobs[1].lease()).await.unwrap();
    let third = jobs[2].id.clone();
    q.cancel(&third, "test").await.unwrap();
    q.cancel(charge.id(), "test").await.unwrap();
    // Their queues' next claims decide the waiters.
    let released = claim_all(&q, "pdf").await;
    assert_eq!(
        released.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        vec![on_complete.clone()],
        "on_complete runs, on_success is cancelled"
    );
    assert!(
        claim_all(&q, "mail").await.is_empty(),
        "the receipt is held"
    );

    let text = stdout(&run(&["batches", "show", &id]));
    assert!(
        text.contains(&format!("batch {id} \"render report 7\": done")),
        "{text}"
    );
    assert!(
        line_with(&text, &on_complete).contains("released: all 3 finished, 1 failed"),
        "{text}"
    );
    let success = line_with(&text, &on_success);
    assert!(
        success.contains("cancelled: dependency") && success.contains(&third),
        "{success}"
    );
    assert!(
        line_with(&text, &jobs[0].id).contains(r#"{"pdf_bytes":512}"#),
        "the result is shown: {text}"
    );
    assert!(line_with(&text, &third).contains("cancelled"), "{text}");
    let shown = json(&run(&["-o", "json", "batches", "show", &id]));
    assert_eq!(shown["state"], "done");
    assert_eq!(
        (shown["succeeded"].as_u64(), shown["failed"].as_u64()),
        (Some(2), Some(1))
    );
    let members = shown["members"]["members"].as_array().unwrap();
    let with_result = members
        .iter()
        .find(|m| m["id"] == jobs[0].id.as_str())
        .unwrap();
    assert_eq!(with_result["result"]["pdf_bytes"], 512);

    // The held receipt: deps show says why; release lets it run.
    let text = stdout(&run(&["deps", "show", &receipt]));
    assert!(
        text.starts_with(&format!("job {receipt}: awaiting\n")),
        "{text}"
    );
    let why = line_with(&text, "held: dependency");
    assert!(
        why.contains(charge.id()) && why.contains("cancelled"),
        "{why}"
    );
    let deps = json(&run(&["-o", "json", "deps", "show", &receipt]));
    assert_eq!(deps["awaits"]["waiters"][0]["decision"], "held");
    assert_eq!(
        deps["awaits"]["members"]["members"][0]["state"],
        "cancelled"
    );
    // A callback shows the batch it waited on, and how it was decided.
    let text = stdout(&run(&["deps", "show", &on_complete]));
    assert!(
        text.starts_with(&format!("job {on_complete}: leased\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("batch {id} \"render report 7\": done")),
        "{text}"
    );
    // A member gone without a kept record has nothing to show.
    let gone = run(&["deps", "show", &jobs[0].id]);
    assert_exit(&gone, 1);
    assert!(
        stderr(&gone).starts_with(&format!(
            "redq: job {} is not in this namespace",
            jobs[0].id
        )),
        "{}",
        stderr(&gone)
    );

    let awaiting = run(&["jobs", "mail", "--state", "awaiting"]);
    assert_exit(&awaiting, 0);
    assert!(
        stdout(&awaiting).contains(&receipt),
        "{}",
        stdout(&awaiting)
    );

    let read_only = run(&["--read-only", "deps", "release", &receipt]);
    assert_exit(&read_only, 1);
    assert!(
        stderr(&read_only).contains("--read-only"),
        "{}",
        stderr(&read_only)
    );
    let release = run(&["deps", "release", &receipt]);
    assert_exit(&release, 0);
    assert_eq!(
        stdout(&release),
        format!("released {receipt}: it enters its queue and runs\n")
    );
    let job = q
        .inspect(&receipt)
        .await
        .unwrap()
        .expect("the receipt is kept");
    assert_eq!(job.state, JobState::Waiting);
    // Released already: refused in one sentence, exit 1, nothing changed.
    let again = run(&["deps", "fail", &receipt]);
    assert_exit(&again, 1);
    let said = stderr(&again);
    assert!(
        said.contains(&format!("{receipt} was not released or failed:"))
            && said.lines().count() == 1,
        "{said}"
    );
    assert_eq!(
        q.inspect(&receipt).await.unwrap().unwrap().state,
        JobState::Waiting
    );
}

#[tokio::test]
async fn cancelling_a_batch_asks_for_yes_and_an_unknown_id_is_refused() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("workflows_cancel"));
    let q = connect(&url, &ns).await;
    let run = |args: &[&str]| redq(&url, &ns, args);
    let jobs = (0..4)
        .map(|n| NewJob::new(serde_json::json!({"row": n})))
        .collect();
    let batch = Batch::new().jobs("imports", jobs).on_complete(
        "reports",
        NewJob::new(serde_json::json!({"import": "done"})),
    );
    let id = q.enqueue_batch(batch).await.unwrap().id.to_string();

    let unknown = run(&["batches", "show", "01JDQ0000000000000000NOPE0"]);
    assert_exit(&unknown, 1);
    assert!(
        stderr(&unknown)
            .starts_with("redq: no batch, dependencies or tree 01JDQ0000000000000000NOPE0"),
        "{}",
        stderr(&unknown)
    );
    let asks = run(&["batches", "cancel", &id]);
    assert_exit(&asks, 2);
    assert!(
        stderr(&asks).contains("(4 jobs pending, 1 job waiting on it); add --yes"),
        "{}",
        stderr(&asks)
    );
    assert_eq!(
        q.counts("imports").await.unwrap().waiting,
        4,
        "nothing changed"
    );

    let cancel = run(&["-o", "json", "batches", "cancel", &id, "--yes"]);
    assert_exit(&cancel, 0);
    let said = json(&cancel);
    assert_eq!(said["outcome"], "cancelled");
    assert_eq!(said["members_cancelled"], 4);
    assert_eq!(q.counts("imports").await.unwrap().waiting, 0);
    let again = run(&["batches", "cancel", &id, "--yes"]);
    assert_exit(&again, 1);
    assert_eq!(
        stderr(&again).trim_end(),
        format!("redq: {id} is cancelled already: nothing was cancelled")
    );
    let text = stdout(&run(&["batches", "show", &id]));
    assert!(text.contains(": cancelled\n"), "{text}");
}
