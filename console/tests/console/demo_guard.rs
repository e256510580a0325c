//! `redq demo` never writes to a Redis it did not start, even with
//! `REDIS_URL` exported or `--url` given (an operator's shell often points
//! at production); only `--into-existing URL --yes-write-demo-traffic`
//! fills an existing Redis. The real binary in tmux, against a real,
//! password-protected redis-server whose digest is compared.

use std::time::Duration;

use crate::seed::tmux::Tmux;
use crate::seed::*;
use redq_tests::{wait_until, RedisServer};

const DEADLINE: Duration = Duration::from_secs(30);
const PASSWORD: &str = "demo-guard-canary";

/// A user's Redis holding one key of its own.
async fn users_redis() -> RedisServer {
    let server = RedisServer::builder()
        .password(PASSWORD)
        .enable_debug()
        .start();
    server.cmd(&["SET", "user:config", "precious"]).await;
    server
}

/// What the server holds, as one value: any write changes it.
async fn contents(server: &RedisServer) -> (String, i64) {
    let digest = server.cmd(&["DEBUG", "DIGEST"]).await;
    let size = server.cmd(&["DBSIZE"]).await;
    (
        digest.as_string().expect("a digest"),
        size.as_i64().expect("a count"),
    )
}

/// The port of the Redis named in the console's title.
fn title_port(screen: &str) -> u16 {
    screen
        .split("redis://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no redis URL in the title:\n{screen}"))
}

/// Run the demo in tmux until its workers show, then quit it.
fn run_demo_until_its_workers_show(command: &str, env: &[(&str, &str)]) -> String {
    let term = Tmux::start(&format!("{command}; echo REDQ-EXITED-$?; sleep 60"), env);
    let screen = term.wait_until(DEADLINE, "demo queues with traffic", |s| {
        s.contains("emails") && s.contains("thumbnails") && s.contains("webhooks")
    });
    // Workers registered: the demo has been writing for a while.
    term.keys(&["5"]);
    term.wait_for("Workers (2)", DEADLINE);
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_ignores_redis_url_and_url_and_writes_only_to_its_own_redis() {
    let server = users_redis().await;
    let url = server.url_with_password();
    let before = contents(&server).await;

    let exported = run_demo_until_its_workers_show(
        &format!("{BIN} demo --refresh 250ms"),
        &[("REDIS_URL", url.as_str())],
    );
    let flagged =
        run_demo_until_its_workers_show(&format!("{BIN} --url '{url}' demo --refresh 250ms"), &[]);
    assert_eq!(
        contents(&server).await,
        before,
        "the demo wrote to the user's Redis"
    );
    for screen in [&exported, &flagged] {
        assert_ne!(title_port(screen), server.port(), "{screen}");
        assert!(!screen.contains(PASSWORD), "{screen}");
    }
}

#[tokio::test]
async fn into_existing_without_the_confirmation_is_refused_and_writes_nothing() {
    let server = users_redis().await;
    let url = server.url_with_password();
    let before = contents(&server).await;
    let out = std::process::Command::new(BIN)
        .args(["demo", "--into-existing", &url])
        .env_remove("REDIS_URL")
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "redq: redq demo --into-existing writes demo jobs, workers and schedules into \
             redis://127.0.0.1:{} and leaves them there; add --yes-write-demo-traffic to do \
             it, or drop --into-existing for a private Redis\n",
            server.port()
        )
    );
    assert_eq!(contents(&server).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn into_existing_with_the_confirmation_fills_that_redis() {
    let server = users_redis().await;
    let url = server.url_with_password();
    let before = contents(&server).await;
    let term = Tmux::start(
        &format!(
            "{BIN} demo --refresh 250ms --into-existing '{url}' --yes-write-demo-traffic; \
             echo REDQ-EXITED-$?; sleep 60"
        ),
        &[],
    );
    let screen = term.wait_until(DEADLINE, "demo queues with traffic", |s| {
        s.contains("emails") && s.contains("thumbnails") && s.contains("webhooks")
    });
    // A pause from the demo's console is the console's on the event stream,
    // as it is from `redq` itself; the demo's own services are the demo's.
    term.keys(&["p"]);
    term.wait_for("Pause queue", DEADLINE);
    term.keys(&["y"]);
    term.wait_for("paused", DEADLINE);
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
    assert_eq!(title_port(&screen), server.port(), "{screen}");
    assert!(!screen.contains(PASSWORD), "{screen}");
    let queue = connect(&url, redq::DEFAULT_NAMESPACE).await;
    wait_until(
        DEADLINE,
        "the demo's queues in the user's Redis",
        async || queue.queues().await.unwrap().contains(&"emails".to_owned()),
    )
    .await;
    assert_ne!(contents(&server).await, before);
    let by = |kind: &str, events: &[redq::QueueEvent]| {
        let event = events.iter().find(|e| e.kind == kind);
        let by = event.and_then(|e| e.by.clone()).unwrap_or_default();
        by.split(' ').next().unwrap_or_default().to_owned()
    };
    let events = queue.events(500).await.unwrap();
    assert_eq!(by("paused", &events), "console", "{events:?}");
    assert_eq!(by("schedule_created", &events), "demo", "{events:?}");
}
