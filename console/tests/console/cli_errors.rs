//! What the CLI says when something is wrong, run as the real binary
//! against real redis-servers: one plain sentence on stderr (what failed,
//! on which URL without its password, what to try), exit 2 for a command
//! line that cannot work, exit 1 for what failed, and nothing written.

use std::process::{Command, Output};

use crate::seed::tmux::Tmux;
use crate::seed::*;
use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

const SECRET: &str = "s3cret-canary";

/// `redq ARGS` with only these variables of ours set.
fn run(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("REDIS_URL")
        .env_remove("REDQ_NAMESPACE")
        .env_remove("REDQ_SHARDS")
        .env_remove("REDQ_LOG");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("running redq")
}

/// Exit `code`, nothing on stdout, and exactly `line` on stderr.
#[track_caller]
fn assert_says(out: &Output, code: i32, line: &str) {
    assert_exit(out, code);
    assert_eq!(stderr(out), format!("redq: {line}\n"));
    assert_eq!(stdout(out), "", "nothing on stdout");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

async fn digest(server: &RedisServer) -> String {
    let reply = server.cmd(&["DEBUG", "DIGEST"]).await;
    reply.as_string().expect("DEBUG DIGEST is a string")
}

#[test]
fn connection_failures_name_the_url_without_its_password_and_what_to_try() {
    let port = free_port();
    let url = format!("redis://:{SECRET}@127.0.0.1:{port}");
    for out in [
        run(&[("REDIS_URL", &url)], &["queues"]),
        run(&[], &["--url", &url, "queues"]),
    ] {
        assert_says(
            &out,
            1,
            &format!(
                "cannot connect to redis://127.0.0.1:{port}: connection refused; check that \
                 Redis is running there and that the URL (--url or REDIS_URL) and its password \
                 are right"
            ),
        );
    }
    // A host that does not resolve: the resolver's words, not Rust's Debug
    // text (`Custom { kind: Uncategorized, … }`).
    let out = run(
        &[(
            "REDIS_URL",
            &format!("redis://ops:{SECRET}@nosuchhost.invalid:6379"),
        )],
        &["queues"],
    );
    assert_exit(&out, 1);
    let text = stderr(&out);
    assert!(
        text.starts_with("redq: cannot connect to redis://ops@nosuchhost.invalid:6379: "),
        "{text}"
    );
    for debug in ["{", "}", "kind:", "Custom", "Os "] {
        assert!(!text.contains(debug), "Rust Debug text {debug:?}: {text}");
    }
    assert!(!text.contains(SECRET), "{text}");
}

/// The advice after a failed connect fits what failed: a database number
/// the server does not have, or a Redis that accepts but does not answer
/// (paused), is not a wrong password.
#[tokio::test]
async fn a_missing_database_and_a_paused_redis_get_their_own_advice() {
    let server = RedisServer::start();
    let url = format!("redis://127.0.0.1:{}/99", server.port());
    let out = run(&[("REDIS_URL", &url)], &["queues"]);
    assert_exit(&out, 1);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(said.contains("DB index is out of range"), "{said}");
    assert!(
        said.contains("`databases` setting (16 by default"),
        "{said}"
    );
    assert!(!said.contains("password"), "{said}");

    server.cmd(&["CLIENT", "PAUSE", "8000", "ALL"]).await;
    let url = format!("redis://127.0.0.1:{}", server.port());
    let out = run(&[("REDIS_URL", &url)], &["queues"]);
    assert_exit(&out, 1);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        said.contains("did not answer: Redis may be paused"),
        "{said}"
    );
    assert!(!said.contains("password"), "{said}");
    server.cmd(&["CLIENT", "UNPAUSE"]).await;
}

#[tokio::test]
async fn a_wrong_password_says_so_and_never_shows_it() {
    let server = RedisServer::builder().password("right-password").start();
    let url = format!("redis://:{SECRET}@127.0.0.1:{}", server.port());
    let out = run(&[("REDIS_URL", &url)], &["queues"]);
    assert_says(
        &out,
        1,
        &format!(
            "cannot connect to redis://127.0.0.1:{}: authentication failed: WRONGPASS invalid \
             username-password pair or user is disabled; the user or password in the URL (--url \
             or REDIS_URL) is not accepted",
            server.port()
        ),
    );
}

#[test]
fn a_bad_url_is_a_usage_error_that_never_echoes_a_password() {
    let unparseable = format!("redis://:{SECRET}@127.0.0.1:99999");
    let out = run(&[("REDIS_URL", &unparseable)], &["queues"]);
    assert_says(
        &out,
        2,
        "the Redis URL from --url or REDIS_URL (not shown, in case it holds a password) is not \
         a valid URL: invalid port; the accepted forms are listed under --url in redq --help",
    );
    let out = run(
        &[],
        &[
            "--url",
            &format!("redis://:{SECRET}@127.0.0.1:6379/abc"),
            "queues",
        ],
    );
    assert_says(
        &out,
        2,
        "the Redis URL redis://127.0.0.1:6379/abc is not usable: invalid integer string; the \
         accepted forms are listed under --url in redq --help",
    );
    let out = run(
        &[("REDIS_URL", &format!("http://:{SECRET}@127.0.0.1:1"))],
        &["pause", "emails"],
    );
    assert_says(
        &out,
        2,
        "the Redis URL http://127.0.0.1:1/ is not usable: unsupported scheme; accepted: \
         redis://, rediss:// (TLS), redis+unix://, redis-cluster://, rediss-cluster://, \
         redis-sentinel://, rediss-sentinel://",
    );
    // A password with an unencoded '/' ends the host early: the rest of it
    // would read as the URL's path and be shown.
    let early = format!("redis://admin:6379/{SECRET}@127.0.0.1:6379");
    let out = run(&[("REDIS_URL", &early)], &["queues"]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(!said.contains(SECRET), "{said}");
    assert!(
        said.contains("percent-encode the password's '/', '?' and '#'"),
        "{said}"
    );
}

#[tokio::test]
async fn unknown_queues_are_refused_naming_the_known_ones_and_nothing_is_written() {
    let server = RedisServer::builder().enable_debug().start();
    let ns = unique_namespace("unknown-queue");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap();
    dead_letters(&q, "webhooks", 1, "HTTP 503").await;
    let before = digest(&server).await;

    let known =
        format!("in namespace {ns} (known: emails, webhooks); check the name and --namespace");
    let refusals: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["pause", "emials"],
            format!(
                "no queue named emials {known}; to pause it before its first job, add \
                 --allow-unknown"
            ),
        ),
        (
            vec!["resume", "emials"],
            format!("no queue named emials {known}"),
        ),
        (
            vec!["stats", "nosuch"],
            format!("no queue named nosuch {known}"),
        ),
        (
            vec!["jobs", "nosuch", "--state", "dead"],
            format!("no queue named nosuch {known}"),
        ),
        (
            vec!["dead", "list", "nosuch"],
            format!("no queue named nosuch {known}"),
        ),
        (
            vec!["dead", "requeue", "nosuch", "--all"],
            format!("no queue named nosuch {known}"),
        ),
        (
            vec!["dead", "purge", "nosuch", "--yes"],
            format!("no queue named nosuch {known}"),
        ),
        (
            vec!["dead", "delete", "nosuch", "01JDQ2X7K5M3N8P9R2S4T6V8ZZ"],
            format!("no queue named nosuch {known}"),
        ),
    ];
    for (args, line) in &refusals {
        let mut all = args.clone();
        all.extend(["-o", "json"]);
        for args in [args.clone(), all] {
            let out = redq(&url, &ns, &args);
            assert_says(&out, 1, line);
        }
    }
    assert_eq!(digest(&server).await, before, "a refusal wrote nothing");

    // A queue about to be used may be paused before its first job, when
    // that is asked for; paused, it is known, so it can be resumed.
    let out = redq(&url, &ns, &["pause", "reports", "--allow-unknown"]);
    assert_exit(&out, 0);
    assert!(q.counts("reports").await.unwrap().paused);
    let out = redq(&url, &ns, &["resume", "reports"]);
    assert_exit(&out, 0);
    assert!(!q.counts("reports").await.unwrap().paused);
}

#[tokio::test]
async fn usage_lines_show_the_arguments_in_order_and_not_what_the_environment_gave() {
    let server = RedisServer::start();
    let url = server.url();
    let env = [
        ("REDIS_URL", url.as_str()),
        ("REDQ_NAMESPACE", "billing-ns"),
    ];

    let out = run(&env, &["dead", "requeue"]);
    assert_exit(&out, 2);
    let text = stderr(&out);
    assert!(
        text.contains(
            "Usage: redq dead requeue [OPTIONS] <QUEUE> <IDS>...\n       \
             redq dead requeue [OPTIONS] <QUEUE> --all --yes\n"
        ),
        "{text}"
    );
    let out = run(&env, &["pause"]);
    assert_exit(&out, 2);
    let text = stderr(&out);
    assert!(text.contains("Usage: redq pause <QUEUE>\n"), "{text}");
    for flag in ["--url", "--namespace"] {
        assert!(!text.contains(flag), "{flag} shown as required:\n{text}");
    }

    // Unset variables are not shown as set to nothing.
    let out = run(&[], &["--help"]);
    assert_exit(&out, 0);
    let help = stdout(&out);
    assert!(!help.contains("=]"), "{help}");
    assert!(help.contains("Default: the REDIS_URL variable"), "{help}");

    // `jobs` lists waiting jobs unless told otherwise, and says so.
    let help = stdout(&run(&[], &["jobs", "--help"]));
    assert!(help.contains("[default: waiting]"), "{help}");
}

#[tokio::test]
async fn jobs_without_a_state_lists_the_waiting_ones() {
    let server = RedisServer::start();
    let ns = unique_namespace("jobs-default");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let id = q
        .add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap()
        .id()
        .to_owned();
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "bob"})).delay(std::time::Duration::from_secs(600)),
    )
    .await
    .unwrap();
    let out = redq(&url, &ns, &["jobs", "emails", "-o", "json"]);
    assert_exit(&out, 0);
    let page = json(&out);
    assert_eq!(page["total"], 1);
    assert_eq!(page["jobs"][0]["id"], id.as_str());
    assert_eq!(page["jobs"][0]["state"], "waiting");
}

#[tokio::test]
async fn the_console_without_a_terminal_says_what_to_use_instead() {
    let server = RedisServer::start();
    let ns = unique_namespace("no-tty");
    for args in [vec![], vec!["--read-only"], vec!["demo"]] {
        let out = redq(&server.url(), &ns, &args);
        assert_says(
            &out,
            2,
            "the console needs a terminal; for scripts use a subcommand with -o json, e.g. \
             redq queues -o json (see redq --help)",
        );
    }
}

#[tokio::test]
async fn bulk_dead_letter_commands_report_what_was_done_and_what_is_left() {
    let server = RedisServer::start();
    let ns = unique_namespace("bulk-report");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let ids = dead_letters(&q, "webhooks", 3, "HTTP 503").await;

    let out = redq(&url, &ns, &["dead", "requeue", "webhooks", &ids[0]]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "requeued 1 dead letter of webhooks, 0 not found; 2 dead letters left\n"
    );
    let out = redq(&url, &ns, &["dead", "delete", "webhooks", &ids[1], &ids[0]]);
    assert_exit(&out, 1);
    assert_eq!(
        stdout(&out),
        "deleted 1 dead letter of webhooks, 1 not found; 1 dead letter left\n"
    );
    assert_eq!(
        stderr(&out),
        "redq: 1 of the ids is not a dead letter of that queue\n"
    );
    let out = redq(
        &url,
        &ns,
        &[
            "dead", "requeue", "webhooks", "--all", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(
        json(&out),
        serde_json::json!({
            "queue": "webhooks", "action": "requeued", "done": 1, "dead_left": 0, "waiting": 2,
        })
    );

    dead_letters(&q, "billing", 2, "declined").await;
    let out = redq(&url, &ns, &["dead", "purge", "billing"]);
    assert_says(
        &out,
        2,
        "purge deletes all 2 dead letters of billing for good; add --yes to do it",
    );
    let out = redq(
        &url,
        &ns,
        &["dead", "purge", "billing", "--yes", "-o", "json"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        json(&out),
        serde_json::json!({
            "queue": "billing", "action": "purged", "done": 2, "dead_left": 0, "waiting": 0,
        })
    );
    dead_letters(&q, "billing", 1, "declined").await;
    let out = redq(&url, &ns, &["dead", "purge", "billing", "--yes"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "purged 1 dead letter of billing; 0 dead letters left\n"
    );
}

/// The console's own start in a terminal: the same sentences and exit
/// codes as the subcommands (it opens while Redis is merely unreachable,
/// but a URL or password that retrying cannot fix is refused at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_a_terminal_refuses_a_bad_url_and_a_wrong_password_in_words() {
    let server = RedisServer::builder().password("right-password").start();
    let wrong = format!("redis://:{SECRET}@127.0.0.1:{}", server.port());
    let cases = [
        (
            format!("redis://:{SECRET}@127.0.0.1:99999"),
            "redq: the Redis URL from --url or REDIS_URL (not shown, in case it holds a \
             password) is not a valid URL: invalid port; the accepted forms are listed under \
             --url in redq --help"
                .to_owned(),
            2,
        ),
        (
            wrong,
            format!(
                "redq: cannot connect to redis://127.0.0.1:{}: authentication failed: WRONGPASS \
                 invalid username-password pair or user is disabled; the user or password in \
                 the URL (--url or REDIS_URL) is not accepted",
                server.port()
            ),
            1,
        ),
    ];
    for (url, line, code) in cases {
        let term = Tmux::start(
            &format!("{BIN}; echo REDQ-EXITED-$?; sleep 60"),
            &[("REDIS_URL", url.as_str())],
        );
        let screen = term.wait_for("REDQ-EXITED-", std::time::Duration::from_secs(20));
        // Long lines wrap at the terminal's width, anywhere in a word:
        // compare without whitespace.
        let bare = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let text = bare(&screen);
        assert!(text.contains(&bare(&line)), "{screen}");
        assert!(text.contains(&format!("REDQ-EXITED-{code}")), "{screen}");
        assert!(!text.contains(SECRET), "{screen}");
    }
}
