//! Two conditions of the Redis server itself that the console, `redq
//! queues`, `redq stats` and the exporter say, against real servers:
//!
//! - a restart (a new `run_id`) while the console watches: without
//!   persistence the namespace comes back empty, which otherwise reads as
//!   "everything drained"; with it, the data is reloaded, and the restart
//!   is said all the same;
//! - a Redis at its `maxmemory`, which refuses enqueues (`noeviction`) or
//!   evicts keys, while counts alone read as a quiet period.
//!
//! A user whose ACL refuses `INFO` (a managed Redis) gets neither said and
//! nothing failed.

use std::time::{Duration, SystemTime};

use redq::{NewJob, RedisQueue, ServerStats};
use redq_console::aggregate::Target;
use redq_console::tui::source;
use redq_console::tui::state::{Action, State, Update};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::common::{loaded, now, settings};
use crate::metrics::Exporter;
use crate::outage::screen_at;
use crate::seed::{assert_exit, connect, dead_letters, json, redq, stderr};

const DEADLINE: Duration = Duration::from_secs(20);

/// The console's I/O task on `url`'s namespace `ns`, as `redq` runs it,
/// feeding a state the test reads.
pub(crate) struct Console {
    pub(crate) state: State,
    updates: mpsc::UnboundedReceiver<Update>,
    cancel: CancellationToken,
    _requests: mpsc::UnboundedSender<source::Request>,
}

impl Console {
    async fn start(url: &str, ns: &str) -> Console {
        Console::start_sharded(url, ns, 1).await
    }

    /// As `redq --shards n` runs it.
    pub(crate) async fn start_sharded(url: &str, ns: &str, n: usize) -> Console {
        let (url, ns) = (url.to_owned(), ns.to_owned());
        let connect: source::Connector = std::sync::Arc::new(move || {
            let (url, ns) = (url.clone(), ns.clone());
            Box::pin(async move { Target::connect(RedisQueue::builder(&url), &ns, n).await })
        });
        let first = connect().await.unwrap();
        let (requests_tx, requests) = mpsc::unbounded_channel();
        let (updates_tx, updates) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        tokio::spawn(source::run(
            source::Link::new(Some(first), connect),
            Duration::from_millis(250),
            requests,
            updates_tx,
            cancel.clone(),
        ));
        let mut state = State::new(settings());
        state.apply(Action::Resize(100, 30));
        Console {
            state,
            updates,
            cancel,
            _requests: requests_tx,
        }
    }

    /// Apply every update that arrived.
    fn take(&mut self) {
        while let Ok(update) = self.updates.try_recv() {
            self.state.apply(Action::Received(update));
        }
    }

    /// Until `condition` holds of the state, within [`DEADLINE`].
    pub(crate) async fn until(&mut self, what: &str, condition: impl Fn(&State) -> bool) {
        wait_until(DEADLINE, what, async || {
            self.take();
            condition(&self.state)
        })
        .await;
    }

    pub(crate) fn screen(&self) -> String {
        screen_at(&self.state, SystemTime::now())
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Jobs in three states and dead letters: 7 jobs.
async fn some_jobs(q: &RedisQueue) {
    for n in 0..3 {
        q.add("emails", NewJob::new(serde_json::json!({ "n": n })))
            .await
            .unwrap();
    }
    q.add(
        "reports",
        NewJob::new(serde_json::json!({})).delay(Duration::from_secs(3600)),
    )
    .await
    .unwrap();
    q.add("reports", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    dead_letters(q, "webhooks", 2, "boom").await;
}

fn total_jobs(state: &State) -> u64 {
    let c = state.data.queues.iter().map(|r| &r.counts);
    c.map(|c| c.waiting + c.scheduled + c.leased + c.dead).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_lost_the_data_is_said_until_the_console_quits() {
    // The review's case: Redis killed and started again without
    // persistence. The console reconnected by itself and showed "● live"
    // over an empty namespace, which read as "everything drained".
    let mut server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("restart_lost"));
    let q = connect(&url, &ns).await;
    some_jobs(&q).await;
    let mut console = Console::start(&url, &ns).await;
    console
        .until("the jobs and the server read", |s| {
            total_jobs(s) == 7 && s.server_notices().is_empty() && s.data.loaded
        })
        .await;
    // A few refreshes with the same run: no restart said.
    console
        .until("three more refreshes", {
            let seen = console.state.data.updated_at;
            move |s| s.data.updated_at > seen
        })
        .await;
    assert!(console.state.server.restarts.is_empty());

    server.restart();
    console
        .until("the restart to be said", |s| !s.server.restarts.is_empty())
        .await;
    let restart = console.state.server.restarts[0].clone();
    assert_eq!((restart.jobs_before, restart.jobs_after), (7, 0));
    let text = restart.text();
    assert!(
        text.starts_with("Redis restarted at ")
            && text.ends_with("the namespace held 7 jobs before and holds none now; data lost?"),
        "{text}"
    );
    assert!(restart.up < Duration::from_secs(10), "{restart:?}");
    let shown = console.screen();
    assert!(shown.contains("● live"), "{shown}");
    assert!(
        shown.contains(" Redis restarted at ") && shown.contains("data lost?"),
        "{shown}"
    );

    // It stays: more refreshes of the new run do not take it away.
    let seen = console.state.data.updated_at;
    console
        .until("more refreshes", move |s| s.data.updated_at > seen)
        .await;
    assert_eq!(console.state.server.restarts, vec![restart]);
    assert!(console.screen().contains("data lost?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_persistence_is_said_with_the_data_reloaded() {
    let mut server = RedisServer::builder().appendonly_always().start();
    let (url, ns) = (server.url(), unique_namespace("restart_kept"));
    let q = connect(&url, &ns).await;
    some_jobs(&q).await;
    let mut console = Console::start(&url, &ns).await;
    console.until("the jobs", |s| total_jobs(s) == 7).await;
    server.restart();
    console
        .until("the restart to be said", |s| !s.server.restarts.is_empty())
        .await;
    let restart = console.state.server.restarts[0].clone();
    assert_eq!((restart.jobs_before, restart.jobs_after), (7, 7));
    assert!(!restart.lost_data());
    let text = restart.text();
    assert!(
        text.contains("; data reloaded: the namespace held 7 jobs before and holds 7 now"),
        "{text}"
    );
    assert!(console.screen().contains("data reloaded"));
}

/// `maxmemory` set below what the server uses, with `noeviction`: every
/// write that grows memory is refused.
async fn fill_up(server: &RedisServer, q: &RedisQueue) -> ServerStats {
    let used = q.server_stats().await.unwrap().used_memory_bytes;
    let limit = (used / 2).to_string();
    server
        .cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"])
        .await;
    server.cmd(&["CONFIG", "SET", "maxmemory", &limit]).await;
    let full = q.server_stats().await.unwrap();
    assert_eq!(full.maxmemory_bytes, used / 2);
    let refused = q.add("emails", NewJob::new(serde_json::json!({}))).await;
    assert!(
        matches!(refused, Err(redq::QueueError::OutOfMemory)),
        "{refused:?}"
    );
    full
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_redis_is_said_by_the_console_queues_stats_and_the_exporter() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("full"));
    let q = connect(&url, &ns).await;
    some_jobs(&q).await;
    let exporter = Exporter::start(&url, &ns, &[]).await;
    let full = fill_up(&server, &q).await;
    let limit = full.maxmemory_bytes;

    let mut console = Console::start(&url, &ns).await;
    console
        .until("the memory note", |s| s.server.memory.is_some())
        .await;
    let (_, note) = console.state.server.memory.clone().unwrap();
    assert!(
        note.starts_with("Redis is out of memory: ")
            && note.ends_with(&format!(
                "used of maxmemory {} (noeviction): enqueues and retries are refused",
                redq_console::server::bytes_text(limit)
            )),
        "{note}"
    );
    let shown = console.screen();
    assert!(
        shown.contains(" Redis is out of memory: ") && shown.contains("(noeviction): enqueues"),
        "{shown}"
    );
    // Once there is room again, it goes.
    server.cmd(&["CONFIG", "SET", "maxmemory", "0"]).await;
    console
        .until("the memory note to go", |s| s.server.memory.is_none())
        .await;
    assert!(!console.screen().contains("out of memory"));
    server
        .cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()])
        .await;

    for command in [&["queues"][..], &["stats"]] {
        let out = redq(&url, &ns, command);
        assert_exit(&out, 0);
        let said = stderr(&out);
        assert!(
            said.starts_with("redq: Redis is out of memory: ")
                && said.contains("(noeviction): enqueues and retries are refused"),
            "{command:?}: {said}"
        );
        let mut args = command.to_vec();
        args.extend(["-o", "json"]);
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 0);
        assert!(
            stderr(&out).contains("Redis is out of memory"),
            "{command:?}"
        );
        let rows = json(&out);
        let server_json = &rows[0]["server"];
        assert_eq!(server_json["maxmemory"], limit, "{command:?}: {rows}");
        assert_eq!(server_json["maxmemory_policy"], "noeviction");
        assert_eq!(server_json["memory"], "full");
        assert!(server_json["used_memory"].as_u64().unwrap() > limit);
    }

    let page = exporter.scrape().await;
    assert_eq!(page.value("redq_redis_maxmemory_bytes", &[]), limit as f64);
    assert!(page.value("redq_redis_used_memory_bytes", &[]) > limit as f64);
    let uptime = page.value("redq_redis_uptime_seconds", &[]);
    assert!((0.0..60.0).contains(&uptime), "{uptime}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_info_is_refused_nothing_is_said_and_nothing_fails() {
    let server = RedisServer::start();
    let ns = unique_namespace("no_info");
    let q = connect(&server.url(), &ns).await;
    some_jobs(&q).await;
    fill_up(&server, &q).await;
    // The viewer's ACL refuses INFO (it is in @dangerous), as some managed
    // services refuse it to every user.
    redq_tests::acl::set_user(&server, &redq_tests::acl::viewer_acl(&ns, "s3cret")).await;
    let url = redq_tests::acl::user_url(&server, "viewer", "s3cret");
    let viewer = connect(&url, &ns).await;
    assert!(viewer.server_stats().await.is_err(), "INFO is refused");

    for command in [&["queues"][..], &["stats"], &["queues", "-o", "json"]] {
        let out = redq(&url, &ns, command);
        assert_exit(&out, 0);
        assert_eq!(stderr(&out), "", "{command:?}");
    }
    let rows = json(&redq(&url, &ns, &["queues", "-o", "json"]));
    assert_eq!(rows[0]["server"], serde_json::Value::Null);

    let mut console = Console::start(&url, &ns).await;
    console.until("two refreshes", |s| total_jobs(s) == 7).await;
    let seen = console.state.data.updated_at;
    console
        .until("another refresh", move |s| s.data.updated_at > seen)
        .await;
    assert!(console.state.server_notices().is_empty());
    assert!(console.screen().contains("● live"));

    let exporter = Exporter::start(&url, &ns, &[]).await;
    let page = exporter.scrape().await;
    assert_eq!(page.value("redq_up", &[]), 1.0);
    assert!(!page.has("redq_redis_used_memory_bytes"));
}

/// The notices as drawn: under the tabs, above the screen, one line each.
#[test]
fn the_notices_sit_under_the_tabs() {
    let mut state = loaded();
    let server = |run_id: &str, uptime_s: u64| ServerStats {
        run_id: run_id.into(),
        uptime_s,
        used_memory_bytes: 4_300_000,
        maxmemory_bytes: 2 << 20,
        maxmemory_policy: "noeviction".into(),
        ..ServerStats::default()
    };
    state.apply(Action::Received(Update::Server(vec![Some(server(
        "a", 600,
    ))])));
    // The next refresh reads a new run over an empty namespace.
    let empty = redq_console::tui::state::Snapshot {
        queues: Vec::new(),
        ..crate::common::snapshot()
    };
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(empty),
        received_at: now() + Duration::from_secs(1),
    }));
    state.apply(Action::Received(Update::Server(vec![Some(server("b", 3))])));
    insta::assert_snapshot!(screen_at(&state, now() + Duration::from_secs(1)));
}
