//! `redq jobs list|show` (and the bare `redq jobs QUEUE`) against a real
//! Redis: the listing either way, one job's detail, exit codes.

use crate::seed::*;
use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test]
async fn jobs_list_and_the_bare_form_print_the_same_page() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-list");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
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
}
