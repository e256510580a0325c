//! A canary password in the Redis URL must never appear: not on any screen,
//! not in any subcommand's output or errors, not in the log file.

use std::time::Duration;

use crate::seed::tmux::Tmux;
use crate::seed::*;
use redq_tests::{unique_namespace, RedisServer};

fn canary() -> String {
    format!("canary-{:016x}", rand::random::<u64>())
}

fn assert_clean(canary: &str, what: &str, text: &str) {
    assert!(
        !text.contains(canary),
        "the password leaked into {what}:\n{text}"
    );
}

#[tokio::test]
async fn subcommands_never_print_or_log_the_password() {
    let secret = canary();
    let server = RedisServer::builder().password(&secret).start();
    let url = server.url_with_password();
    assert!(url.contains(&secret));
    let ns = unique_namespace("canary-cmd");
    let q = connect(&url, &ns).await;
    let ids = dead_letters(&q, "webhooks", 3, "boom").await;
    let log = tempfile::NamedTempFile::new().unwrap();
    let log_path = log.path().to_str().unwrap().to_owned();

    // Each run with the exit code and a text it must show, so a run that
    // failed early (and so printed nothing to leak) cannot pass as clean.
    let runs: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["queues"], 0, "webhooks"),
        (vec!["queues", "-o", "json"], 0, "webhooks"),
        (vec!["stats"], 0, "webhooks"),
        (vec!["jobs", "webhooks", "--state", "dead"], 0, &ids[0]),
        (vec!["dead", "list", "-o", "json"], 0, &ids[1]),
        (vec!["dead", "show", &ids[0]], 0, &ids[0]),
        (vec!["dead", "requeue", "webhooks", &ids[0]], 0, "requeued"),
        (vec!["dead", "delete", "webhooks", &ids[1]], 0, "deleted"),
        (vec!["dead", "purge", "webhooks", "--yes"], 0, "webhooks"),
        (vec!["pause", "webhooks"], 0, "paused"),
        (vec!["resume", "webhooks"], 0, "resumed"),
        (vec!["enqueue", "webhooks", "{}"], 0, ""),
        (vec!["workers"], 0, ""),
        (vec!["schedules"], 0, ""),
        (vec!["--read-only", "pause", "webhooks"], 1, "read-only"),
        (vec!["--help"], 0, "Usage"),
        (vec!["dead", "--help"], 0, "Usage"),
        (vec!["--refresh", "1ms", "queues"], 2, "250ms"),
    ];
    for (args, code, shows) in runs {
        let mut all = vec!["--log-file", log_path.as_str()];
        all.extend(&args);
        let out = redq(&url, &ns, &all);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?} did not run as intended:\n{stdout}{stderr}"
        );
        assert!(
            stdout.contains(shows) || stderr.contains(shows),
            "{args:?} does not show {shows:?}:\n{stdout}{stderr}"
        );
        assert_clean(&secret, &format!("stdout of {args:?}"), &stdout);
        assert_clean(&secret, &format!("stderr of {args:?}"), &stderr);
    }
    // The writing runs did write: one requeued, one deleted, one purged,
    // one enqueued, and the queue resumed.
    let counts = q.counts("webhooks").await.unwrap();
    assert_eq!(
        (counts.dead, counts.waiting, counts.paused),
        (0, 2, false),
        "{counts:?}"
    );
    // Failing connections: a wrong password, nothing listening, a bad URL.
    let wrong = format!("redis://:{secret}@127.0.0.1:{}", server.port());
    let closed = format!("redis://:{secret}@127.0.0.1:1");
    let unparseable = format!("redis://:{secret}@127.0.0.1:notaport");
    // A URL that cannot work is a usage error (exit 2), the others failures.
    for (bad, code) in [
        (wrong.replace("canary", "wrong-canary"), 1),
        (closed, 1),
        (unparseable, 2),
    ] {
        let out = std::process::Command::new(BIN)
            .args(["--log-file", &log_path, "queues"])
            .env("REDIS_URL", &bad)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_clean(
            &secret,
            "a connection error",
            &String::from_utf8_lossy(&out.stderr),
        );
        assert!(!out.stderr.is_empty(), "the failure is explained");
        // The flag form too (it is visible in `ps`, but never echoed by us).
        let out = std::process::Command::new(BIN)
            .args(["--url", &bad, "--log-file", &log_path, "queues"])
            .env_remove("REDIS_URL")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "the failure is explained");
        assert_clean(
            &secret,
            "a connection error",
            &String::from_utf8_lossy(&out.stderr),
        );
    }
    let logged = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        logged.contains("connected"),
        "the log is written:\n{logged}"
    );
    assert_clean(&secret, "the log file", &logged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_screen_shows_the_password() {
    let secret = canary();
    let server = RedisServer::builder().password(&secret).start();
    let url = server.url_with_password();
    let ns = unique_namespace("canary-tui");
    let q = connect(&url, &ns).await;
    dead_letters(&q, "webhooks", 1, "boom").await;
    q.add("emails", redq::NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    q.claim("emails", 1, Duration::from_secs(60)).await.unwrap();
    let log = tempfile::NamedTempFile::new().unwrap();
    let command = format!(
        "{BIN} --refresh 250ms --log-file {}; echo REDQ-EXITED-$?; sleep 60",
        log.path().display()
    );
    let term = Tmux::start(
        &command,
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    let deadline = Duration::from_secs(20);
    let first = term.wait_for("Queues (2)", deadline);
    assert!(
        first.contains(&format!("redis://127.0.0.1:{}", server.port())),
        "{first}"
    );
    assert_clean(&secret, "the queues screen", &first);
    let visits: &[(&[&str], &str)] = &[
        (&["2"], "Leases (1)"),
        // "Dead letters (1)" is also in the tab bar: wait for the row itself
        // (its error), so Enter does not land on a list still loading.
        (&["3"], "boom"),
        (&["Enter"], "payload"),
        (&["Escape"], "Dead letters (1)"),
        (&["4"], "no schedules"),
        (&["5"], "no workers registered"),
        (&["6"], "Events: latest"),
        (&["?"], "Help"),
        (&["x", "1", "Enter"], "waiting jobs"),
    ];
    for (keys, shows) in visits {
        term.keys(keys);
        let screen = term.wait_for(shows, deadline);
        assert_clean(&secret, &format!("the screen after {keys:?}"), &screen);
    }
    term.keys(&["q"]);
    let last = term.wait_for("REDQ-EXITED-0", deadline);
    assert_clean(&secret, "the terminal after exit", &last);
    let logged = std::fs::read_to_string(log.path()).unwrap();
    assert_clean(&secret, "the log file", &logged);
}
