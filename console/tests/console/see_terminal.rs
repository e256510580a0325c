//! The keys for seeing, end to end: the real binary in tmux against a real
//! Redis. `i` reaches tmux's clipboard through OSC 52 (`set-clipboard on`);
//! `f` freezes what the screen shows while the data moves; help scrolls at
//! 80×24; `o` sorts.

use std::time::Duration;

use crate::seed::tmux::Tmux;
use crate::seed::*;
use redq_tests::{unique_namespace, RedisServer};

const DEADLINE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_freeze_help_and_sort_in_a_real_terminal() {
    let server = RedisServer::start();
    let ns = unique_namespace("see-e2e");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let ids = dead_letters(&q, "webhooks", 2, "HTTP 503 from upstream").await;
    q.add("emails", redq::NewJob::new(serde_json::json!({"n": 1})))
        .await
        .unwrap();

    let term = Tmux::start(
        &format!("{BIN} --refresh 250ms; echo REDQ-EXITED-$?; sleep 60"),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    term.command(&["set", "-s", "set-clipboard", "on"]);
    term.wait_for("Queues (2)", DEADLINE);

    // `i` on a dead letter: the id is in tmux's clipboard buffer.
    term.keys(&["3"]);
    term.wait_for("HTTP 503 from upstream", DEADLINE);
    term.keys(&["i"]);
    let said = term.wait_for("to the clipboard (OSC 52)", DEADLINE);
    let copied = term.command(&["show-buffer"]);
    assert!(
        ids.contains(&copied),
        "copied {copied:?}; ids {ids:?}\n{said}"
    );
    assert!(said.contains(&format!("copied job id {copied}")), "{said}");

    // `f`: frozen, and a new queue does not show until `f` again.
    term.keys(&["1", "f"]);
    term.wait_for("FROZEN since", DEADLINE);
    q.add("reports", redq::NewJob::new(serde_json::json!({"n": 2})))
        .await
        .unwrap();
    // Several refreshes pass (the clock in the header ticks each second)
    // and the list stays as it was.
    let frozen = term.wait_for("Queues (2)", DEADLINE);
    let clock = |s: &str| s.lines().next().unwrap_or("").to_owned();
    term.wait_until(DEADLINE, "the header clock to tick twice", |s| {
        clock(s) != clock(&frozen)
    });
    let later = term.screen();
    let later = term.wait_until(DEADLINE, "another tick", |s| clock(s) != clock(&later));
    assert!(
        later.contains("Queues (2)") && !later.contains("reports"),
        "{later}"
    );
    term.keys(&["f"]);
    term.wait_for("Queues (3)", DEADLINE);

    // `o` sorts by QUEUE ▲, again by WAITING ▲.
    term.keys(&["o"]);
    term.wait_for("QUEUE▲", DEADLINE);
    term.keys(&["o"]);
    term.wait_for("WAITING▲", DEADLINE);

    // Help at 80×24 scrolls to its end and any other key closes it.
    term.resize(80, 24);
    term.keys(&["?"]);
    term.wait_for("lines 1–", DEADLINE);
    term.keys(&["G"]);
    term.wait_for("top, end (Home, End)", DEADLINE);
    term.keys(&["x"]);
    term.wait_until(DEADLINE, "help to close", |s| !s.contains("lines "));
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
}
