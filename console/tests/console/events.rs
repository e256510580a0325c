//! Following `{ns}:events` on a real Redis: the driver's subscription
//! blocks in `XREAD` (a follower waiting before a dead letter is told
//! within a round trip, and the server ran one `XREAD` for it), resumes
//! exactly after an id, and `redq events` prints one line (or one JSON
//! object) per event, following until interrupted. The stream carries every
//! kind of transition (`tests/tests/event_kinds.rs`); these tests watch the
//! dead letters among them.

use std::time::{Duration, Instant};

use futures::StreamExt;
use redq::events::{EventCursor, EVENT_BLOCK};
use redq::{Job, NewJob, QueueEvent, RedisQueue};
use redq_tests::{unique_namespace, wait_until, RedisServer};

use crate::seed::{connect, dead_letters, redq};
use crate::spawned::Spawned;

/// Clients blocked in a command on the server (`INFO clients`).
async fn blocked_clients(server: &RedisServer) -> i64 {
    let info: String = server.cmd(&["INFO", "clients"]).await.convert().unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO clients has blocked_clients")
}

/// `n` jobs of `queue` enqueued and leased, to dead-letter later with
/// [`fail`]: their dead letters are then the only events after that point.
async fn leased(q: &RedisQueue, queue: &str, n: usize) -> Vec<Job> {
    for i in 0..n {
        let job = NewJob::new(serde_json::json!({ "n": i }))
            .name("deliver_webhook")
            .max_attempts(1);
        q.add(queue, job).await.unwrap();
    }
    let jobs = q.claim(queue, n, Duration::from_secs(60)).await.unwrap();
    assert_eq!(jobs.len(), n);
    jobs
}

/// Dead-letter the leased `jobs` with `error`; their ids.
async fn fail(q: &RedisQueue, jobs: Vec<Job>, error: &str) -> Vec<String> {
    for job in &jobs {
        q.nack(&job.lease(), Duration::ZERO, error).await.unwrap();
    }
    jobs.into_iter().map(|j| j.id).collect()
}

fn dead(events: Vec<QueueEvent>) -> Vec<QueueEvent> {
    events.into_iter().filter(|e| e.kind == "dead").collect()
}

fn calls(seen: &redq_tests::SeenByServer, command: &str) -> i64 {
    seen.commands
        .iter()
        .find(|(name, _)| name == command)
        .map_or(0, |(_, n)| *n)
}

#[tokio::test]
async fn a_follower_waiting_before_a_dead_letter_sees_it_from_one_blocked_read() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_block");
    let q = connect(&server.url(), &ns).await;
    dead_letters(&q, "earlier", 1, "before").await;
    let jobs = leased(&q, "webhooks", 1).await;
    let mut feed = q.follow_events(EventCursor::Now).await.unwrap();
    server.reset_stats().await;
    let follower = tokio::spawn(async move {
        let batch = feed.next_batch().await.unwrap();
        (batch, feed)
    });
    wait_until(
        Duration::from_secs(5),
        "the follower to block in XREAD",
        async || blocked_clients(&server).await == 1,
    )
    .await;
    let started = Instant::now();
    let ids = fail(&q, jobs, "HTTP 503 from upstream").await;
    let (batch, feed) = tokio::time::timeout(Duration::from_secs(5), follower)
        .await
        .expect("the follower was told within 5 s")
        .unwrap();
    assert!(
        started.elapsed() < EVENT_BLOCK,
        "answered by the entry, not the block's end"
    );
    assert_eq!(batch.len(), 1, "only the event after Now: {batch:?}");
    let event = &batch[0];
    assert_eq!(
        (
            event.kind.as_str(),
            event.queue.as_str(),
            event.job_id.as_str()
        ),
        ("dead", "webhooks", ids[0].as_str())
    );
    assert_eq!(event.error, "HTTP 503 from upstream");
    assert_eq!(event.namespace, ns);
    assert_eq!(feed.position(), event.event_id);
    let seen = server.seen_since_reset().await;
    assert_eq!(
        calls(&seen, "xread"),
        1,
        "one blocking read, no polling: {seen:?}"
    );
}

#[tokio::test]
async fn resuming_after_an_id_sees_exactly_what_came_after_it() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_resume");
    let q = connect(&server.url(), &ns).await;
    let ids = dead_letters(&q, "webhooks", 4, "boom").await;
    let all = dead(q.operator().events_since(EventCursor::Start).await.unwrap());
    let seen: Vec<&str> = all.iter().map(|e| e.job_id.as_str()).collect();
    assert_eq!(seen, ids.iter().map(String::as_str).collect::<Vec<_>>());

    let mut feed = q
        .follow_events(EventCursor::After(all[1].event_id.clone()))
        .await
        .unwrap();
    let rest = feed.available().await.unwrap();
    let rest_ids: Vec<&str> = rest.iter().map(|e| e.job_id.as_str()).collect();
    assert_eq!(rest_ids, [ids[2].as_str(), ids[3].as_str()]);
    assert!(feed.available().await.unwrap().is_empty(), "caught up");

    // The stream form goes on from the same place when more happen.
    let more = dead_letters(&q, "later", 1, "later").await;
    let mut stream = Box::pin(feed.into_stream());
    let next = loop {
        let next = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(next.queue, "later", "only events after the position");
        if next.kind == "dead" {
            break next;
        }
    };
    assert_eq!(next.job_id, more[0]);

    // The CLI resumes from an id the same way, one JSON object a line.
    let out = redq(
        &server.url(),
        &ns,
        &["events", "--from", &all[1].event_id, "-o", "json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|l: &serde_json::Value| l["kind"] == "dead")
        .collect();
    let cli_ids: Vec<&str> = lines
        .iter()
        .map(|l| l["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        cli_ids,
        [ids[2].as_str(), ids[3].as_str(), more[0].as_str()]
    );
    assert_eq!(lines[0]["kind"], "dead");
    assert_eq!(lines[0]["queue"], "webhooks");
    assert_eq!(lines[0]["error"], "boom");
    assert_eq!(lines[0]["attempts"], 1);
    assert_eq!(lines[0]["event_id"], all[2].event_id);

    // A bad position is a usage error, said plainly.
    let out = redq(&server.url(), &ns, &["events", "--from", "yesterday"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("start, now, or an event id"), "{stderr}");
}

#[tokio::test]
async fn redq_events_follow_prints_new_events_until_interrupted() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_follow");
    let q: RedisQueue = connect(&server.url(), &ns).await;
    dead_letters(&q, "earlier", 2, "old").await;
    let jobs = leased(&q, "webhooks", 1).await;
    let mut follower = Spawned::start(
        &server.url(),
        &ns,
        &["events", "--follow", "--from", "now", "-o", "json"],
    );
    wait_until(
        Duration::from_secs(20),
        "redq events to block in XREAD",
        async || blocked_clients(&server).await == 1,
    )
    .await;
    let ids = fail(&q, jobs, "new one").await;
    let line = follower.stdout_line(Duration::from_secs(5)).await;
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        event["job_id"],
        ids[0].as_str(),
        "only the new event: {line}"
    );
    assert_eq!(event["error"], "new one");

    // The table form: the id first, then time, kind, queue, job.
    let out = redq(&server.url(), &ns, &["events", "--from", "start"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap();
    let fields: Vec<&str> = last.split("  ").collect();
    assert_eq!(fields[0], event["event_id"].as_str().unwrap());
    assert_eq!(&fields[2..5], ["dead", "webhooks", ids[0].as_str()]);
    assert!(last.ends_with("error=new one"), "{last}");

    follower.interrupt();
    let status = follower.exit(Duration::from_secs(5)).await;
    assert!(status.success(), "Ctrl-C ends it with 0: {status:?}");
}

#[tokio::test]
async fn a_feed_resumes_after_its_position_when_redis_comes_back() {
    let mut server = RedisServer::builder().appendonly_always().start();
    let ns = unique_namespace("events_reconnect");
    let q = connect(&server.url(), &ns).await;
    let before = dead_letters(&q, "before", 2, "before the restart").await;
    let mut feed = q.follow_events(EventCursor::Start).await.unwrap();
    let seen = dead(feed.available().await.unwrap());
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].job_id, before[1]);

    server.restart();
    wait_until(
        Duration::from_secs(20),
        "the driver to reconnect",
        async || q.counts("before").await.is_ok(),
    )
    .await;
    let after = dead_letters(&q, "after", 1, "after the restart").await;
    // Reads may fail while the feed's own connection comes back; each
    // failure leaves the position where it was.
    let mut got = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(30);
    while !got.iter().any(|e: &QueueEvent| e.kind == "dead") {
        assert!(Instant::now() < give_up, "no event after the restart");
        if let Ok(batch) = feed.next_batch().await {
            got.extend(batch);
        }
    }
    assert!(
        got.iter().all(|e| e.queue == "after"),
        "nothing from before the position: {got:?}"
    );
    let got = dead(got);
    let ids: Vec<&str> = got.iter().map(|e| e.job_id.as_str()).collect();
    assert_eq!(
        ids,
        [after[0].as_str()],
        "exactly what came after the position"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_a_follower_reads_the_node_of_its_stream() {
    let cluster = redq_tests::cluster::RedisCluster::shared();
    let ns = unique_namespace("events_cluster");
    let q = connect(&cluster.url(), &ns).await;
    let jobs = leased(&q, "webhooks", 1).await;
    let mut feed = q.follow_events(EventCursor::Now).await.unwrap();
    let follower = tokio::spawn(async move { feed.next_batch().await });
    let ids = fail(&q, jobs, "on a cluster").await;
    let batch = tokio::time::timeout(Duration::from_secs(EVENT_BLOCK.as_secs() + 5), follower)
        .await
        .expect("the follower answered")
        .unwrap()
        .unwrap();
    let got: Vec<&str> = batch.iter().map(|e| e.job_id.as_str()).collect();
    assert_eq!(got, [ids[0].as_str()]);
}

/// The Events screen shows the main stream: a dead letter stays in view
/// behind 300 enqueued and completed events (each its own, in the traffic
/// stream). A filter looks through the whole of both streams, not only the
/// latest 200 events: the dead letter behind 220 newer pauses and resumes
/// is found with `/kind:dead`, and the completions with `/kind:completed`.
#[tokio::test]
async fn the_events_filter_finds_a_dead_letter_behind_hundreds_of_newer_events() {
    use ratatui::crossterm::event::KeyCode;
    use redq_console::aggregate::Target;
    use redq_console::tui::state::Screen;

    use crate::live::{chars, console, press, refresh};

    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("events_filter_depth"));
    let q = connect(&url, &ns).await;
    let died = fail(&q, leased(&q, "webhooks", 1).await, "410 Gone").await;
    for i in 0..150 {
        q.add("mail", NewJob::new(serde_json::json!({ "n": i })))
            .await
            .unwrap();
        let job = q.claim("mail", 1, Duration::from_secs(60)).await.unwrap();
        q.ack(&job[0].lease()).await.unwrap();
    }
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    press(&mut state, &chars("6"));
    assert_eq!(state.screen(), Screen::Events);
    refresh(&target, &mut state).await;
    let shown: Vec<String> = dead(state.data.events.clone())
        .into_iter()
        .map(|e| e.job_id)
        .collect();
    assert_eq!(shown, died, "the traffic does not bury the dead letter");

    for _ in 0..110 {
        q.pause("mail").await.unwrap();
        q.resume("mail").await.unwrap();
    }
    refresh(&target, &mut state).await;
    assert_eq!(state.visible_events().len(), 200, "the latest 200");
    assert!(
        dead(state.data.events.clone()).is_empty(),
        "the dead letter is older"
    );

    press(&mut state, &chars("/kind:dead"));
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;
    let shown: Vec<&str> = state
        .visible_events()
        .iter()
        .map(|e| e.job_id.as_str())
        .collect();
    assert_eq!(shown, [died[0].as_str()]);

    // The traffic's kinds are found in their own stream.
    press(&mut state, &[KeyCode::Esc]);
    press(&mut state, &chars("/kind:completed"));
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;
    let kinds: Vec<&str> = state
        .visible_events()
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(kinds, ["completed"; 150]);
}

/// `redq events --follow --traffic` follows both streams, each in a
/// blocked read of its own: a new job's `enqueued` event and a dead
/// letter's `dead` each arrive as they happen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redq_events_follow_traffic_follows_both_streams() {
    let server = RedisServer::start();
    let ns = unique_namespace("events_follow_traffic");
    let q = connect(&server.url(), &ns).await;
    let mut follower = Spawned::start(
        &server.url(),
        &ns,
        &[
            "events",
            "--follow",
            "--traffic",
            "--from",
            "now",
            "-o",
            "json",
        ],
    );
    wait_until(
        Duration::from_secs(20),
        "redq events to block in one XREAD a stream",
        async || blocked_clients(&server).await == 2,
    )
    .await;
    let added = q
        .add("mail", NewJob::new(serde_json::json!({"to": "a"})))
        .await
        .unwrap();
    let line = follower.stdout_line(Duration::from_secs(5)).await;
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (event["kind"].as_str(), event["job_id"].as_str()),
        (Some("enqueued"), Some(added.id()))
    );
    let ids = fail(&q, leased(&q, "webhooks", 1).await, "gone").await;
    let mut kinds = Vec::new();
    for _ in 0..2 {
        let line = follower.stdout_line(Duration::from_secs(5)).await;
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        kinds.push((event["kind"].clone(), event["job_id"].clone()));
    }
    kinds.sort_by_key(|(kind, _)| kind.to_string());
    assert_eq!(
        kinds,
        [
            ("dead".into(), ids[0].as_str().into()),
            ("enqueued".into(), ids[0].as_str().into())
        ],
        "the dead letter, and its enqueue (one job: its id named)"
    );
    follower.interrupt();
    let status = follower.exit(Duration::from_secs(5)).await;
    assert!(status.success(), "Ctrl-C ends it with 0: {status:?}");
}

/// `redq events --follow` through a SIGKILL of redis-server and a restart
/// without persistence: stderr says when Redis stops answering (its URL
/// without the password), when it answers again, and that the event
/// history restarted with what it lost; stdout keeps only the events, and
/// a dead letter after the restart is printed as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redq_events_follow_says_when_redis_is_gone_back_and_lost_its_history() {
    let password = "follow-secret-8821";
    let mut server = RedisServer::builder().password(password).start();
    let ns = unique_namespace("events_outage");
    let q = connect(&server.url_with_password(), &ns).await;
    let before = fail(&q, leased(&q, "webhooks", 1).await, "before").await;
    let mut follower = Spawned::start(
        &server.url_with_password(),
        &ns,
        &["events", "--follow", "--from", "start", "-o", "json"],
    );
    let line = follower.stdout_line(Duration::from_secs(10)).await;
    let shown: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(shown["job_id"], before[0].as_str(), "{line}");

    server.kill9();
    let down = follower
        .stderr_line("is not answering since", Duration::from_secs(15))
        .await;
    assert!(
        down.starts_with(&format!(
            "redq: Redis at redis://127.0.0.1:{}",
            server.port()
        )) && down.ends_with("; still following")
            && down.contains(" UTC ("),
        "{down}"
    );
    assert!(down.contains("refused"), "why, in words: {down}");
    server.restart();
    let back = follower
        .stderr_line("answers again after", Duration::from_secs(15))
        .await;
    assert!(
        back.starts_with("redq: Redis answers again after "),
        "{back}"
    );
    let lost = follower
        .stderr_line("the event history restarted", Duration::from_secs(15))
        .await;
    assert!(
        lost.contains("Redis lost its data")
            && lost.contains(&format!(
                "the last one shown was {}",
                shown["event_id"].as_str().unwrap()
            )),
        "{lost}"
    );

    // The follower goes on: a dead letter of the new history is printed.
    let q = connect(&server.url_with_password(), &ns).await;
    let after = fail(&q, leased(&q, "webhooks", 1).await, "after").await;
    let line = follower.stdout_line(Duration::from_secs(15)).await;
    let event: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["job_id"], after[0].as_str(), "{line}");

    follower.interrupt();
    assert!(follower.exit(Duration::from_secs(5)).await.success());
    let said = follower.stderr_seen.join("\n");
    assert!(!said.contains(password), "no password on stderr: {said}");
}
