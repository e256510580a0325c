//! What the review of workflows found, through the real binary: `redq
//! batches cancel` of a tree reaches every level and says so; of a done
//! batch it cancels the held callbacks its question named; a held waiter an
//! operator cancelled reads as theirs; `redq deps release` of a job that is
//! no waiter says what it is; a deleted callback reads as deleted; a
//! callback's id finds its batch; an on_complete waiter's ON FAILURE is `-`.

use std::time::Duration;

use crate::seed::*;
use redq::workflow::{Batch, Condition, OnFailure, Tree};
use redq::{IfLeased, NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as j;

/// The line of `text` containing `needle`.
#[track_caller]
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{text}"))
}

/// Claim `queue`'s jobs now and acknowledge them; how many.
async fn run_all(q: &RedisQueue, queue: &str) -> usize {
    let jobs = q.claim(queue, 100, Duration::from_secs(60)).await.unwrap();
    for job in &jobs {
        q.ack(&job.lease()).await.unwrap();
    }
    jobs.len()
}

#[tokio::test]
async fn cancelling_a_tree_from_the_command_line_stops_every_level() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("wf_fix_tree"));
    let q = connect(&url, &ns).await;
    let run = |args: &[&str]| redq(&url, &ns, args);
    let mid2 = Tree::new("zip", NewJob::new(j!("mid2"))).child("thumbs", NewJob::new(j!(2)));
    let mid = Tree::new("zip", NewJob::new(j!("mid")))
        .child("thumbs", NewJob::new(j!(1)))
        .subtree(mid2);
    let tree = Tree::new("zip", NewJob::new(j!("root")))
        .child("thumbs", NewJob::new(j!(0)))
        .subtree(mid);
    let root = q.add_tree(tree).await.unwrap().root.id().to_owned();

    let asks = run(&["batches", "cancel", &root]);
    assert_exit(&asks, 2);
    assert!(
        stderr(&asks).contains("and its subtrees' jobs at every level); add --yes"),
        "{}",
        stderr(&asks)
    );
    let cancel = run(&["-o", "json", "batches", "cancel", &root, "--yes"]);
    assert_exit(&cancel, 0);
    let said = json(&cancel);
    assert_eq!(
        (
            said["members_cancelled"].as_u64(),
            said["subtrees_cancelled"].as_u64()
        ),
        (Some(5), Some(2)),
        "{said}"
    );
    assert_eq!(q.counts("thumbs").await.unwrap().waiting, 0);
    assert_eq!(run_all(&q, "thumbs").await, 0);
    assert_eq!(run_all(&q, "zip").await, 0, "no parent is released");
    assert_eq!(q.counts("zip").await.unwrap().awaiting, 0);
}

#[tokio::test]
async fn cancelling_a_done_batch_cancels_its_held_callbacks_and_says_whose_cancel_it_was() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("wf_fix_held"));
    let q = connect(&url, &ns).await;
    let run = |args: &[&str]| redq(&url, &ns, args);
    let held = || NewJob::new(j!("callback"));
    let batch = Batch::new()
        .job("work", NewJob::new(j!("kaput")))
        .callback("after", held(), Condition::AllSucceeded, OnFailure::Hold)
        .callback("after", held(), Condition::AllSucceeded, OnFailure::Hold)
        .on_complete("after", NewJob::new(j!("always")));
    let handle = q.enqueue_batch(batch).await.unwrap();
    let id = handle.id.to_string();
    let (first, second, always) = (
        handle.callbacks[0].id().to_owned(),
        handle.callbacks[1].id().to_owned(),
        handle.callbacks[2].id().to_owned(),
    );
    let job = q
        .claim("work", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    q.dead_letter(&job.lease(), "kaput").await.unwrap();
    assert_eq!(run_all(&q, "after").await, 1, "on_complete runs");

    // An on_complete waiter has no failure policy: `-`.
    let text = stdout(&run(&["batches", "show", &id]));
    let row = line_with(&text, &always);
    assert!(row.contains(" - ") && !row.contains("cancel"), "{row}");

    // One held callback cancelled by hand reads as an operator's cancel.
    assert_exit(&run(&["jobs", "cancel", &first]), 0);
    let text = stdout(&run(&["batches", "show", &id]));
    let row = line_with(&text, &first);
    assert!(row.contains("cancelled by an operator"), "{row}");

    let asks = run(&["batches", "cancel", &id]);
    assert_exit(&asks, 2);
    assert!(
        stderr(&asks).contains("the 1 job held for an operator waiting on batch"),
        "{}",
        stderr(&asks)
    );
    let cancel = run(&["batches", "cancel", &id, "--yes"]);
    assert_exit(&cancel, 0);
    assert_eq!(
        stdout(&cancel),
        format!("{id} was done: 1 job held for an operator cancelled\n")
    );
    assert!(q.inspect(&second).await.unwrap().is_none());
    assert_eq!(q.counts("after").await.unwrap().awaiting, 0);
    let again = run(&["batches", "cancel", &id, "--yes"]);
    assert_exit(&again, 1);
    assert!(
        stderr(&again).contains("is done already, with no job held waiting on it"),
        "{}",
        stderr(&again)
    );
}

#[tokio::test]
async fn deciding_a_job_that_is_no_waiter_says_what_it_is() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("wf_fix_decide"));
    let q = connect(&url, &ns).await;
    let run = |args: &[&str]| redq(&url, &ns, args);
    let waiting = q.add("mail", NewJob::new(j!(1))).await.unwrap();
    let id = waiting.id();
    let release = run(&["deps", "release", id]);
    assert_exit(&release, 1);
    assert_eq!(
        stderr(&release).trim_end(),
        format!(
            "redq: job {id} (queue mail, state waiting) waits on nothing: there is nothing to \
             release or fail"
        )
    );

    // A batch's on_success its batch's failure cancelled.
    let batch = Batch::new()
        .job("pages", NewJob::new(j!("p")))
        .on_success("pdf", NewJob::new(j!("pdf")));
    let handle = q.enqueue_batch(batch).await.unwrap();
    let job = q
        .claim("pages", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    q.dead_letter(&job.lease(), "kaput").await.unwrap();
    assert_eq!(run_all(&q, "pdf").await, 0);
    let callback = handle.callbacks[0].id();
    let release = run(&["deps", "release", callback]);
    assert_exit(&release, 1);
    let said = stderr(&release);
    assert!(
        said.contains("was cancelled") && said.contains("OnFailure::Hold"),
        "{said}"
    );
    assert!(!said.contains("not in this namespace"), "{said}");
}

#[tokio::test]
async fn a_deleted_callback_reads_as_deleted_and_a_callback_id_finds_its_batch() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("wf_fix_deleted"));
    let q = connect(&url, &ns).await;
    let run = |args: &[&str]| redq(&url, &ns, args);
    let batch = Batch::new()
        .job("work", NewJob::new(j!(1)))
        .on_complete("after", NewJob::new(j!("a")))
        .on_complete("after", NewJob::new(j!("b")));
    let handle = q.enqueue_batch(batch).await.unwrap();
    let id = handle.id.to_string();
    let (deleted, kept) = (handle.callbacks[0].id(), handle.callbacks[1].id());

    // show by a callback's id: its batch.
    let show = run(&["batches", "show", kept]);
    assert_exit(&show, 0);
    let text = stdout(&show);
    assert!(
        text.starts_with(&format!("job {kept} waits on batch {id}\n")),
        "{text}"
    );

    q.delete_job(deleted, IfLeased::Refuse).await.unwrap();
    let text = stdout(&run(&["batches", "show", &id]));
    assert!(
        line_with(&text, deleted).contains("deleted by an operator"),
        "{text}"
    );
    let list = stdout(&run(&["batches", "list"]));
    assert!(line_with(&list, &id).contains("deleted, pending"), "{list}");
    let shown = json(&run(&["-o", "json", "batches", "show", &id]));
    assert_eq!(shown["waiters"][0]["decision"], "deleted", "{shown}");

    // A job that is no gate and waits on none: the error says what to use.
    let member = handle.jobs[0].id();
    let show = run(&["batches", "show", member]);
    assert_exit(&show, 1);
    assert!(
        stderr(&show).contains("redq deps show ID"),
        "{}",
        stderr(&show)
    );
}
