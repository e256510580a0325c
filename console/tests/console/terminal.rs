//! End to end: the real binary in tmux against a real Redis.

use std::time::Duration;

use crate::seed::tmux::Tmux;
use crate::seed::*;
use redq_tests::{unique_namespace, wait_until, RedisServer};

const DEADLINE: Duration = Duration::from_secs(20);

fn console_command(extra: &str) -> String {
    // The echo shows the exit status once the terminal is restored.
    format!("{BIN} --refresh 250ms {extra}; echo REDQ-EXITED-$?; sleep 60")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_one_then_all_with_keystrokes() {
    let server = RedisServer::start();
    let ns = unique_namespace("e2e");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let ids = dead_letters(&q, "webhooks", 4, "HTTP 503 from upstream").await;

    let term = Tmux::start(
        &console_command(""),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    term.wait_for("Queues (1)", DEADLINE);
    term.keys(&["3"]);
    term.wait_for("Dead letters (4)", DEADLINE);
    term.wait_for("HTTP 503 from upstream", DEADLINE);

    term.keys(&["r"]);
    let prompt = term.wait_for("Confirm [y/N]", DEADLINE);
    // The prompt names the job it will requeue (the selected, newest one).
    // Only the confirmation box counts (it opens with its "Confirm [y/N]"
    // title): the list above it shows every id too.
    let (_, dialog) = prompt
        .split_once("Confirm [y/N]")
        .expect("the screen waited for holds the prompt");
    let chosen = ids
        .iter()
        .find(|id| dialog.contains(id.as_str()))
        .unwrap_or_else(|| panic!("the prompt names no job:\n{prompt}"))
        .clone();
    term.keys(&["y"]);
    term.wait_for("requeued 1 dead letter", DEADLINE);
    wait_until(DEADLINE, "one job waiting again", async || {
        let c = q.counts("webhooks").await.unwrap();
        (c.waiting, c.dead) == (1, 3)
    })
    .await;
    let requeued = q.inspect(&chosen).await.unwrap().unwrap();
    assert_eq!(
        (requeued.state, requeued.attempts),
        (redq::JobState::Waiting, 0)
    );

    // "No" is the default: any other key cancels.
    term.keys(&["R"]);
    term.wait_for("Requeue all 3 dead letters in queue webhooks?", DEADLINE);
    term.keys(&["Enter"]);
    term.wait_for("cancelled: nothing was changed", DEADLINE);
    assert_eq!(q.counts("webhooks").await.unwrap().dead, 3);

    term.keys(&["R"]);
    term.wait_for("Requeue all 3 dead letters in queue webhooks?", DEADLINE);
    term.keys(&["y"]);
    term.wait_for("requeued 3 dead letters", DEADLINE);
    wait_until(DEADLINE, "all jobs waiting again", async || {
        let c = q.counts("webhooks").await.unwrap();
        (c.waiting, c.dead) == (4, 0)
    })
    .await;
    term.wait_for("no dead letters", DEADLINE);

    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeps_the_last_data_while_redis_is_down_and_recovers() {
    let mut server = RedisServer::start();
    let ns = unique_namespace("reconnect");
    let url = server.url();
    let q = connect(&url, &ns).await;
    dead_letters(&q, "webhooks", 2, "boom").await;
    drop(q);

    let term = Tmux::start(
        &console_command(""),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    term.wait_for("Queues (1)", DEADLINE);
    server.kill9();
    let screen = term.wait_for("reconnecting since", DEADLINE);
    assert!(
        screen.contains("webhooks"),
        "the last data stays:\n{screen}"
    );
    server.restart();
    term.wait_until(DEADLINE, "the banner to go", |s| {
        !s.contains("reconnecting since") && s.contains("● live")
    });
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_terminals_and_read_only_are_explained() {
    let server = RedisServer::start();
    let ns = unique_namespace("small");
    let url = server.url();
    let q = connect(&url, &ns).await;
    dead_letters(&q, "webhooks", 1, "boom").await;
    let term = Tmux::start(
        &console_command("--read-only --no-color"),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    term.wait_for("READ-ONLY", DEADLINE);
    term.keys(&["3"]);
    term.wait_for("boom", DEADLINE);
    term.keys(&["r"]);
    term.wait_for("read-only: requeue refused", DEADLINE);
    assert_eq!(q.counts("webhooks").await.unwrap().dead, 1);
    term.resize(70, 20);
    term.wait_for("the full console needs 80×24", DEADLINE);
    term.wait_for("w0 l0 d1", DEADLINE);
    term.resize(100, 30);
    term.wait_for("Dead letters (1)", DEADLINE);
    term.keys(&["C-c"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
}

/// The pid of the `redq` process whose arguments include `marker`.
fn redq_pid(marker: &str) -> u32 {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.first().map(String::as_str) == Some(BIN) && args.iter().any(|a| a == marker) {
            return pid;
        }
    }
    panic!("no redq process with {marker} in its arguments");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_quits_and_restores_the_terminal() {
    let server = RedisServer::start();
    let ns = unique_namespace("sigterm");
    let url = server.url();
    let term = Tmux::start(
        &console_command(&format!("--namespace {ns}")),
        &[("REDIS_URL", url.as_str())],
    );
    term.wait_for("no queues yet", DEADLINE);
    let pid = redq_pid(&ns);
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let screen = term.wait_for("REDQ-EXITED-0", DEADLINE);
    assert!(
        !screen.contains("no queues yet"),
        "the alternate screen was left:\n{screen}"
    );
}

#[test]
fn the_demo_runs_traffic_and_quitting_stops_its_redis() {
    let term = Tmux::start(
        &format!("{BIN} demo --refresh 250ms; echo REDQ-EXITED-$?; sleep 60"),
        &[],
    );
    let screen = term.wait_until(DEADLINE, "demo queues with traffic", |s| {
        s.contains("emails") && s.contains("thumbnails") && s.contains("webhooks")
    });
    let port: u16 = screen
        .split("redis://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no private redis URL in the title:\n{screen}"));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    term.keys(&["5"]);
    term.wait_for("Workers (2)", DEADLINE);
    term.keys(&["4"]);
    term.wait_for("digest-every-minute", DEADLINE);
    term.keys(&["2"]);
    term.wait_for("render_thumbnail", DEADLINE);
    // The demo's workflows: a batch with callbacks, a tree, a dependent.
    term.keys(&["8"]);
    term.wait_until(DEADLINE, "the demo's batch, tree and dependent", |s| {
        s.contains("Workflows (3)") && s.contains(" batch ") && s.contains(" tree ")
    });
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the demo's redis-server outlived the demo"
    );
}
