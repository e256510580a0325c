//! The console as an ACL-restricted viewer (docs/reliability.md): a Redis
//! user that may read the namespace but run no write command. Every read
//! subcommand works; with `--read-only` every mutation is refused by the
//! console before anything reaches Redis; without it, Redis's NOPERM comes
//! back as a clear error. The password shows nowhere.

use std::process::Output;

use crate::seed::*;
use redq::NewJob;
use redq_tests::acl::{acl_refused, set_user, user_url, viewer_acl};
use redq_tests::{unique_namespace, RedisServer};

#[tokio::test]
async fn a_viewer_user_reads_with_the_console_and_its_mutations_are_refused_clearly() {
    let server = RedisServer::builder().enable_debug().start();
    let ns = unique_namespace("console-viewer");
    let password = format!("canary-{:016x}", rand::random::<u64>());
    set_user(&server, &viewer_acl(&ns, &password)).await;
    let logs = tempfile::tempdir().unwrap();
    let log_file = logs.path().join("redq.log");
    let log_file = log_file.to_str().unwrap();

    // Content made by the default user.
    let admin = connect(&server.url(), &ns).await;
    let dead = dead_letters(&admin, "webhooks", 2, "HTTP 503 from upstream").await;
    admin
        .add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap();
    let digest = async || format!("{:?}", server.cmd(&["DEBUG", "DIGEST"]).await);
    let before = digest().await;

    let viewer = user_url(&server, "viewer", &password);
    let mut outputs: Vec<Output> = Vec::new();
    let mut run = |args: &[&str]| {
        let mut all = vec!["--log-file", log_file];
        all.extend(args);
        let out = redq(&viewer, &ns, &all);
        outputs.push(out.clone());
        out
    };

    // Reads work, with and without --read-only.
    for read_only in [false, true] {
        let flag: &[&str] = if read_only { &["--read-only"] } else { &[] };
        fn with<'a>(flag: &[&'a str], args: &[&'a str]) -> Vec<&'a str> {
            [flag, args, &["-o", "json"]].concat()
        }
        let read = |args: &[&'static str]| with(flag, args);
        let out = run(&read(&["queues"]));
        assert_exit(&out, 0);
        let queues = json(&out);
        assert_eq!(queues[0]["queue"], "emails");
        assert_eq!(queues[0]["waiting"], 1);
        assert_eq!(queues[1]["queue"], "webhooks");
        assert_eq!(queues[1]["dead"], 2);
        let out = run(&read(&["stats", "webhooks"]));
        assert_exit(&out, 0);
        assert_eq!(json(&out)[0]["failed_15m"], 2);
        let out = run(&read(&["jobs", "emails", "--state", "waiting"]));
        assert_exit(&out, 0);
        assert_eq!(json(&out)["total"], 1);
        let out = run(&read(&["dead", "list", "webhooks"]));
        assert_exit(&out, 0);
        assert_eq!(json(&out)["jobs"].as_array().unwrap().len(), 2);
        let out = run(&with(flag, &["dead", "show", &dead[0]]));
        assert_exit(&out, 0);
        assert_eq!(json(&out)["last_error"], "HTTP 503 from upstream");
        for args in [["workers"], ["schedules"]] {
            let out = run(&read(&args));
            assert_exit(&out, 0);
            assert!(json(&out).is_array(), "{args:?}: {}", stdout(&out));
        }
    }
    // Only the optional probes at connect were refused (fred's INFO, the
    // driver's CONFIG GET maxmemory-policy); every read the console makes
    // was allowed.
    let after_reads = acl_refused(&server).await;
    for object in after_reads.keys() {
        assert!(
            ["info", "config|get"].contains(&object.as_str()),
            "the viewer was refused {object}: {after_reads:?}"
        );
    }

    // Each mutation, with the name the console gives it.
    let mutations: Vec<(&str, Vec<&str>)> = vec![
        (
            "dead requeue",
            vec!["dead", "requeue", "webhooks", "--all", "--yes"],
        ),
        (
            "dead requeue",
            vec!["dead", "requeue", "webhooks", &dead[0]],
        ),
        ("dead delete", vec!["dead", "delete", "webhooks", &dead[0]]),
        ("dead purge", vec!["dead", "purge", "webhooks", "--yes"]),
        ("pause", vec!["pause", "webhooks"]),
        ("resume", vec!["resume", "webhooks"]),
        ("enqueue", vec!["enqueue", "webhooks", "{}"]),
    ];

    // --read-only: the console refuses before anything reaches Redis (the
    // viewer's refused writes would show in ACL LOG).
    for (what, args) in &mutations {
        let out = run(&[&["--read-only"], args.as_slice()].concat());
        assert_exit(&out, 1);
        assert_eq!(
            stderr(&out).trim(),
            format!("redq: refused: {what} changes Redis, and --read-only is set"),
            "{args:?}"
        );
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
    assert_eq!(
        acl_refused(&server).await,
        after_reads,
        "a refused mutation reached Redis"
    );
    assert_eq!(digest().await, before);

    // Without --read-only, Redis refuses the viewer's writes: a clear
    // error naming the missing permission, exit 1, nothing written.
    for (_, args) in &mutations {
        let before_run = acl_refused(&server).await;
        let out = run(args);
        assert_exit(&out, 1);
        let message = stderr(&out);
        println!("{args:?}: {message}");
        for said in [
            "Redis refused: the user in the URL lacks the ACL permission for this (NOPERM: ",
            "--read-only to only look",
        ] {
            assert!(message.contains(said), "{args:?}: {message}");
        }
        assert!(!message.contains("@user_script"), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{args:?}: {message}");
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
        let refused = acl_refused(&server).await;
        assert!(
            refused.iter().any(
                |(object, n)| !["info", "config|get"].contains(&object.as_str())
                    && before_run.get(object) < Some(n)
            ),
            "{args:?}: Redis did not refuse a write: {refused:?}"
        );
    }
    assert_eq!(digest().await, before, "a refused mutation wrote");

    let logged = std::fs::read_to_string(log_file).unwrap();
    assert!(logged.contains("connected"), "the log file was written");
    for out in &outputs {
        assert!(!stdout(out).contains(&password), "{}", stdout(out));
        assert!(!stderr(out).contains(&password), "{}", stderr(out));
    }
    assert!(!logged.contains(&password), "the log file has the password");
}
