//! `redq jobs list|show` (and the bare `redq jobs QUEUE`) against a real
//! Redis: the listing either way, one job's detail, exit codes.

use crate::seed::*;
use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

#[tokio::test]
async fn jobs_list_and_the_bare_form_print_the_same_page() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-list");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "ada"})).max_attempts(5),
    )
    .await
    .unwrap();
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "bob"})).delay(std::time::Duration::from_secs(600)),
    )
    .await
    .unwrap();

    for state in ["waiting", "scheduled"] {
        let long = redq(
            &url,
            &ns,
            &["jobs", "list", "emails", "--state", state, "-o", "json"],
        );
        assert_exit(&long, 0);
        let bare = redq(
            &url,
            &ns,
            &["jobs", "emails", "--state", state, "-o", "json"],
        );
        assert_exit(&bare, 0);
        let (long, bare) = (json(&long), json(&bare));
        assert_eq!(long["total"], 1, "{state}: {long}");
        assert_eq!(long["jobs"][0]["state"], state);
        assert_eq!(long, bare, "{state}: the two forms differ");
    }
    // The table writes tries as the console and `jobs show` do: of the
    // most allowed, not a bare count.
    let table = stdout(&redq(&url, &ns, &["jobs", "list", "emails"]));
    let row = table
        .lines()
        .find(|l| l.contains("waiting"))
        .unwrap_or_default();
    assert!(row.split_whitespace().any(|cell| cell == "0/5"), "{table}");
    // A queue nobody enqueued to is refused either way.
    for args in [&["jobs", "list", "nosuch"][..], &["jobs", "nosuch"][..]] {
        let out = redq(&url, &ns, args);
        assert_exit(&out, 1);
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

#[tokio::test]
async fn jobs_show_prints_one_job_as_text_and_json() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-show");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let id = q
        .add(
            "emails",
            NewJob::new(serde_json::json!({"to": "ada"})).name("welcome"),
        )
        .await
        .unwrap()
        .id()
        .to_owned();

    let out = redq(&url, &ns, &["jobs", "show", &id, "-o", "json"]);
    assert_exit(&out, 0);
    let job = json(&out);
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["state"], "waiting");
    assert_eq!(job["name"], "welcome");
    assert_eq!(job["payload"]["to"], "ada");

    let out = redq(&url, &ns, &["jobs", "show", &id]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains(&id), "{text}");
    assert!(text.contains("welcome"), "{text}");
    assert!(text.contains("ada"), "{text}");

    let out = redq(&url, &ns, &["jobs", "show", "no-such-job"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no job no-such-job"),
        "{}",
        stderr(&out)
    );
}

/// A lease whose holder died lapses: `jobs show` and `jobs list` must not
/// read it as a job still running ("lapses" at a time already past).
#[tokio::test]
async fn a_lapsed_lease_reads_as_lapsed_in_show_and_list() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-lapsed");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("orders", NewJob::new(serde_json::json!({"n": 1})))
        .await
        .unwrap();
    let held = q
        .claim("orders", 1, std::time::Duration::from_millis(200))
        .await
        .unwrap();
    let id = held[0].id.clone();
    redq_tests::wait_until(
        std::time::Duration::from_secs(5),
        "the lease to lapse",
        async || q.counts("orders").await.unwrap().lapsed == 1,
    )
    .await;

    let out = redq(&url, &ns, &["jobs", "show", &id]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let lease = text.lines().find(|l| l.starts_with("lease")).unwrap_or("");
    assert!(lease.contains("LAPSED") && lease.contains(" ago"), "{text}");
    assert!(!lease.contains("lapses"), "{text}");

    let out = redq(&url, &ns, &["jobs", "list", "orders", "--state", "leased"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let row = text.lines().find(|l| l.starts_with(&id)).unwrap_or("");
    assert!(row.contains("lapsed"), "{text}");
}

#[test]
fn jobs_usage_errors_exit_2() {
    // Parsed before connecting: no server needed.
    for args in [
        &["jobs"][..],
        &["jobs", "list"][..],
        &["jobs", "show"][..],
        &["jobs", "emails", "show"][..],
        &["jobs", "list", "emails", "--state", "sideways"][..],
    ] {
        let out = redq("redis://127.0.0.1:1", "unused", args);
        assert_exit(&out, 2);
        assert!(stdout(&out).is_empty(), "{args:?} printed to stdout");
    }
    // A page size out of range names the flag and the range, before any
    // connect (it read "invalid page size" from the driver).
    for limit in ["0", "1001"] {
        let out = redq(
            "redis://127.0.0.1:1",
            "unused",
            &["jobs", "list", "emails", "--limit", limit],
        );
        assert_exit(&out, 2);
        let said = stderr(&out);
        assert!(
            said.contains("--limit") && said.contains("1..=1000"),
            "{said}"
        );
    }
}

/// Reports progress and a line with an escape sequence in it, then waits
/// for the test to let it finish.
#[derive(serde::Serialize, serde::Deserialize)]
struct Reporter;

impl redq::worker::TypedJob for Reporter {
    const NAME: &'static str = "reporter";
    const QUEUE: &'static str = "emails";
    async fn run(&self, cx: &redq::worker::JobCx) -> Result<(), redq::worker::JobError> {
        cx.progress(&serde_json::json!({"sent": 40, "of": 100}))?;
        cx.log("batch 1 sent");
        cx.log("subject \u{1b}[2Jwiped");
        cx.service::<std::sync::Arc<tokio::sync::Notify>>()
            .expect("gate")
            .notified()
            .await;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_show_prints_a_running_jobs_progress_and_log_lines_inert() {
    use redq::worker::{Registry, Services, WorkOptions, Worker};
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-show-notes");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let id = q.push(&Reporter).await.unwrap().id().to_owned();
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let mut registry = Registry::new();
    registry.add_job::<Reporter>();
    // A short lease: the heartbeat that carries the notes comes every 100 ms.
    let options = WorkOptions::new()
        .queues(["emails"])
        .lease(std::time::Duration::from_millis(300))
        .schedules(false);
    let worker = Worker::new(connect(&url, &ns).await, registry, options)
        .unwrap()
        .services(Services::new().with(gate.clone()));
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(worker.run(stop.clone()));

    redq_tests::wait_until(
        std::time::Duration::from_secs(10),
        "the running job's notes",
        async || {
            let out = redq(&url, &ns, &["jobs", "show", &id, "-o", "json"]);
            json(&out)["log"].as_array().is_some_and(|l| l.len() == 2)
        },
    )
    .await;
    let out = redq(&url, &ns, &["jobs", "show", &id, "-o", "json"]);
    assert_exit(&out, 0);
    let job = json(&out);
    assert_eq!(job["state"], "leased");
    assert_eq!(job["progress"], serde_json::json!({"sent": 40, "of": 100}));
    assert_eq!(job["log"][0], "batch 1 sent");

    let out = redq(&url, &ns, &["jobs", "show", &id]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let progress = text
        .lines()
        .find(|l| l.starts_with("progress"))
        .unwrap_or("");
    assert!(progress.contains(r#"{"of":100,"sent":40}"#), "{text}");
    assert!(text.contains("log (last 2)\n  batch 1 sent\n"), "{text}");
    assert!(text.contains(r"subject \x1b[2Jwiped"), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the terminal:\n{text}"
    );

    gate.notify_one();
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn jobs_show_prints_a_kept_jobs_outcome_result_and_run_time() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-show-kept");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.set_retention("emails", &redq::Retention::new().max_count(10))
        .await
        .unwrap();
    let completed = q
        .add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap()
        .id()
        .to_owned();
    let job = q
        .claim("emails", 1, std::time::Duration::from_secs(30))
        .await
        .unwrap()
        .remove(0);
    let done = redq::Completion::new()
        .result(&serde_json::json!({"message_id": "m-1\u{1b}[2J"}))
        .unwrap()
        .run_time(std::time::Duration::from_millis(1500));
    q.ack_with(&job.lease(), done).await.unwrap();
    let cancelled = q
        .add("emails", NewJob::new(serde_json::json!({"to": "bob"})))
        .await
        .unwrap()
        .id()
        .to_owned();
    q.cancel(&cancelled, "ops: wrong list").await.unwrap();

    let out = redq(&url, &ns, &["jobs", "show", &completed, "-o", "json"]);
    assert_exit(&out, 0);
    let kept = json(&out);
    assert_eq!(kept["state"], "completed");
    assert_eq!(kept["result"]["message_id"], "m-1\u{1b}[2J");
    assert_eq!(kept["run_time_ms"], 1500);
    // The same job as `jobs list --state completed -o json` words it: the
    // holder as {node, instance}, the same times; `kept` says it is no
    // tombstone (whose JSON says false).
    assert_eq!(kept["kept"], true);
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
    let listed = json(&out);
    let row = &listed["jobs"][0];
    assert!(kept["holder"]["node"].is_u64(), "{kept}");
    assert_eq!(kept["holder"], row["holder"], "{kept} {row}");
    assert_eq!(kept["finished_at"], row["finished_at"], "{kept} {row}");
    assert_eq!(kept["enqueued_at"], row["enqueued_at"], "{kept} {row}");

    let out = redq(&url, &ns, &["jobs", "show", &completed]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("run time      1.5s"), "{text}");
    // The successful attempt is said as such, beside the list's failed
    // tries (0 here), so the two do not read as a contradiction.
    assert!(text.contains("attempt       1 (the first run)"), "{text}");
    assert!(text.contains(r"m-1\u001b[2J"), "{text}");
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");

    let out = redq(&url, &ns, &["jobs", "show", &cancelled]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    let by = text
        .lines()
        .find(|l| l.starts_with("cancelled by"))
        .unwrap_or("");
    assert!(by.contains("ops: wrong list"), "{text}");
    assert!(text.contains("cancelled in  waiting"), "{text}");
    assert!(text.contains("failed tries  0"), "{text}");
    assert!(!text.contains("attempt "), "{text}");

    // Listed, a kept job's attempts are its failed ones, as every other
    // job's are (a first-run success failed none), and what is not kept
    // with it (its limit, its priority) is null, not a made-up default.
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
    let listed = json(&out);
    let row = &listed["jobs"][0];
    assert_eq!(row["id"], completed.as_str(), "{listed}");
    assert_eq!(row["attempts"], 0, "{listed}");
    assert!(
        row["max_attempts"].is_null() && row["priority"].is_null(),
        "{listed}"
    );
    let out = redq(
        &url,
        &ns,
        &["jobs", "list", "emails", "--state", "completed"],
    );
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with(&completed))
        .unwrap_or("");
    assert!(!line.contains('∞') && !line.contains("1/"), "{text}");
}
