//! `redq limits list|set|clear` as the real binary against a real Redis:
//! what it prints and returns, that `-o json` says the same, that a bad
//! spec is refused in one sentence (exit 2) with nothing written, and that
//! `--shards` splits a queue-wide limit.

use std::process::Output;

use crate::seed::*;
use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

/// Exit 0 and exactly `text` on stdout.
#[track_caller]
fn assert_prints(out: &Output, text: &str) {
    assert_exit(out, 0);
    assert_eq!(stdout(out), text);
}

async fn digest(server: &RedisServer) -> String {
    let reply = server.cmd(&["DEBUG", "DIGEST"]).await;
    reply.as_string().expect("DEBUG DIGEST is a string")
}

/// A server (DEBUG DIGEST allowed) with queue `emails` holding one job of
/// limit key `acme`.
async fn emails_with_a_keyed_job() -> (RedisServer, String, String) {
    let server = RedisServer::builder().enable_debug().start();
    let (url, ns) = (server.url(), unique_namespace("limits_cli"));
    let q = connect(&url, &ns).await;
    q.add(
        "emails",
        NewJob::new(serde_json::json!(1)).limit_key("acme"),
    )
    .await
    .unwrap();
    (server, url, ns)
}

#[tokio::test]
async fn limits_are_set_listed_and_cleared_from_the_command_line() {
    let (_server, url, ns) = emails_with_a_keyed_job().await;
    let run = |args: &[&str]| redq(&url, &ns, args);
    let set = [
        "limits",
        "set",
        "emails",
        "--concurrency",
        "5",
        "--rate",
        "100/1s",
    ];
    assert_prints(
        &run(&set),
        "emails: the queue-wide limit is now 5 at once, 100/1s\n",
    );
    assert_prints(
        &run(&set),
        "emails: the queue-wide limit was already 5 at once, 100/1s\n",
    );
    let each = [
        "limits",
        "set",
        "emails",
        "--each-key",
        "--concurrency",
        "2",
    ];
    assert_prints(&run(&each), "emails: the each-key limit is now 2 at once\n");
    let acme = [
        "limits", "set", "emails", "--key", "acme", "--rate", "10/500ms",
    ];
    assert_prints(
        &run(&acme),
        "emails: the key \"acme\" limit is now 10/500ms (was the each-key default, 2 at once)\n",
    );

    let listed = json(&run(&["limits", "list", "-o", "json"]));
    let emails = &listed[0];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(emails["queue"], "emails");
    assert_eq!(emails["limit"]["concurrency"], 5);
    assert_eq!(emails["limit"]["rate"]["max"], 100);
    assert_eq!(emails["limit"]["rate"]["per_ms"], 1000);
    assert_eq!(emails["limit"]["rate"]["text"], "100/1s");
    assert_eq!(emails["each_key"]["concurrency"], 2);
    assert_eq!(emails["each_key"]["rate"], serde_json::Value::Null);
    assert_eq!(emails["held"], 1, "{emails}");
    let key = &emails["keys"][0];
    assert_eq!(key["key"], "acme");
    assert_eq!(key["overridden"], true);
    assert_eq!(key["limit"]["rate"]["text"], "10/500ms");
    assert_eq!(key["limit"]["concurrency"], serde_json::Value::Null);
    assert_eq!(key["held"], 1);
    assert_eq!(
        json(&run(&["limits", "list", "emails", "-o", "json"])),
        listed
    );

    let table = run(&["limits", "list"]);
    assert_exit(&table, 0);
    let text = stdout(&table);
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?}:\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(line("QUEUE").starts_with("QUEUE SCOPE KEY LIMIT IN USE STARTED HELD PUSHED BACK WHY"));
    assert_eq!(
        line("100/1s"),
        "emails queue — 5 at once, 100/1s 0/5 0/100 0 — —"
    );
    assert_eq!(line("each key"), "emails each key — 2 at once — — — — —");
    assert_eq!(
        line("acme"),
        "emails key, own acme 10/500ms 0 0/10 1 — ready: no worker claimed them"
    );

    // The held job is listed with its key.
    let held = json(&run(&[
        "jobs", "list", "emails", "--state", "held", "-o", "json",
    ]));
    assert_eq!(held["total"], 1, "{held}");
    assert_eq!(held["jobs"][0]["state"], "held");
    assert_eq!(held["jobs"][0]["limit_key"], "acme");
    let table = stdout(&run(&["jobs", "list", "emails", "--state", "held"]));
    let header = table.lines().next().unwrap_or_default();
    assert!(header.split_whitespace().any(|w| w == "KEY"), "{table}");
    assert!(
        table.lines().nth(1).is_some_and(|l| l.contains(" acme ")),
        "{table}"
    );

    let clear = ["limits", "clear", "emails", "--key", "acme"];
    assert_prints(&run(&clear), "emails: the key \"acme\" limit is cleared\n");
    assert_prints(
        &run(&clear),
        "emails: there was no key \"acme\" limit to clear\n",
    );
    let all = run(&["limits", "clear", "emails", "--all"]);
    assert_exit(&all, 2);
    assert_eq!(
        stderr(&all),
        "redq: clear --all lifts every limit of emails (2 limits); add --yes to do it\n"
    );
    let cleared = json(&run(&[
        "limits", "clear", "emails", "--all", "--yes", "-o", "json",
    ]));
    assert_eq!(cleared["cleared"], 2, "{cleared}");
    let after = json(&run(&["limits", "list", "-o", "json"]));
    assert_eq!(after[0]["limit"]["concurrency"], serde_json::Value::Null);
    assert_eq!(after[0]["each_key"]["concurrency"], serde_json::Value::Null);
    assert_eq!(
        after[0]["held"], 1,
        "clearing limits keeps the held count exact"
    );

    // Held jobs go like any others: cancelled (or deleted) by state.
    let cancel = [
        "jobs", "cancel", "--queue", "emails", "--state", "held", "--yes",
    ];
    assert_exit(&run(&cancel), 0);
    let after = json(&run(&["limits", "list", "emails", "-o", "json"]));
    assert_eq!(after[0]["held"], 0, "{after}");
}

#[tokio::test]
async fn bad_limit_specs_exit_2_with_one_sentence_and_write_nothing() {
    let (server, url, ns) = emails_with_a_keyed_job().await;
    let before = digest(&server).await;
    let set = |extra: &[&'static str]| {
        let mut args = vec!["limits", "set", "emails"];
        args.extend_from_slice(extra);
        args
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            set(&["--rate", "100"]),
            "rate must look like MAX/INTERVAL, e.g. 100/1s; got \"100\"",
        ),
        (
            set(&["--rate", "5/1d"]),
            "a rate's INTERVAL must be a whole number followed by ms, s, m or h, e.g. 1s or 500ms; got \"1d\"",
        ),
        (set(&["--rate", "5/25h"]), "a rate's INTERVAL must be 1ms to 24h; got \"25h\""),
        (set(&["--rate", "5/0s"]), "a rate's INTERVAL must be 1ms to 24h; got \"0s\""),
        (
            set(&["--rate", "0/1s"]),
            "a rate allows 1 to 100000 starts per interval; got 0",
        ),
        (set(&["--concurrency", "0"]), "invalid concurrency \"0\": a concurrency limit is 1 to 1000000"),
        (set(&["--concurrency", "2000000"]), "invalid concurrency \"2000000\""),
        (set(&["--concurrency", "-1"]), "--concurrency"),
        (set(&[]), "--concurrency"),
        (set(&["--key", "acme", "--each-key", "--concurrency", "1"]), "--each-key"),
        (set(&["--key", "", "--concurrency", "1"]), "limit key"),
        (vec!["limits", "clear", "emails", "--yes"], "--all"),
    ];
    for (args, says) in cases {
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("Error {") && !stderr(&out).contains("Duration"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    // An unknown queue is named, with the known ones; --allow-unknown
    // limits a queue before its first job.
    let out = redq(
        &url,
        &ns,
        &["limits", "set", "emials", "--concurrency", "1"],
    );
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no queue named emials") && stderr(&out).contains("emails"),
        "{}",
        stderr(&out)
    );
    // Read-only refuses every change.
    for args in [
        vec![
            "--read-only",
            "limits",
            "set",
            "emails",
            "--concurrency",
            "1",
        ],
        vec!["--read-only", "limits", "clear", "emails"],
        vec!["--read-only", "limits", "clear", "emails", "--all", "--yes"],
    ] {
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("refused: limits"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        digest(&server).await,
        before,
        "a refused command wrote something"
    );
    assert_exit(&redq(&url, &ns, &["--read-only", "limits", "list"]), 0);
    let early = [
        "limits",
        "set",
        "later",
        "--concurrency",
        "1",
        "--allow-unknown",
    ];
    assert_exit(&redq(&url, &ns, &early), 0);
}

#[tokio::test]
async fn over_shards_a_queue_wide_limit_is_split_and_read_back_whole() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("limits_shards"));
    let run = |args: &[&str]| {
        let mut all = vec!["--shards", "3"];
        all.extend_from_slice(args);
        redq(&url, &ns, &all)
    };
    let out = run(&[
        "limits",
        "set",
        "emails",
        "--concurrency",
        "2",
        "--allow-unknown",
    ]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("3 shards"), "{}", stderr(&out));
    let out = run(&[
        "limits",
        "set",
        "emails",
        "--concurrency",
        "10",
        "--rate",
        "30/1s",
        "--allow-unknown",
    ]);
    assert_exit(&out, 0);
    let listed = json(&run(&["limits", "list", "-o", "json"]));
    assert_eq!(listed[0]["limit"]["concurrency"], 10, "{listed}");
    assert_eq!(listed[0]["limit"]["rate"]["max"], 30, "{listed}");
}
