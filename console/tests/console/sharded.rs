//! `redq --shards 3` against a queue spread by `ShardedQueue`: subcommands
//! sum and merge the shards, changes by id reach the shard that holds the
//! job, bulk changes and pause reach every shard, and the live console's
//! source shows the aggregate. Checked in Redis through the driver.

use std::collections::HashMap;
use std::time::Duration;

use crate::seed::*;
use redq::{JobState, NewJob, RedisQueue, ShardedQueue};
use redq_console::aggregate::Target;
use redq_console::tui::source;
use redq_console::tui::state::{Action, Focus, Screen, Settings, State, Update};
use redq_tests::cluster::RedisCluster;
use redq_tests::{unique_namespace, RedisServer};

/// Dead letters put on each shard: 1, 2 and 3, so a sum cannot come out
/// right by accident.
const DEAD_PER_SHARD: [usize; 3] = [1, 2, 3];

/// A 3-shard queue with 6 waiting `emails` (spread by the driver) and
/// dead `webhooks` on every shard. Returns each dead letter's shard.
async fn seed_sharded(url: &str, base: &str) -> (ShardedQueue, HashMap<String, usize>) {
    let q = ShardedQueue::connect(RedisQueue::builder(url), base, 3)
        .await
        .expect("connecting the sharded queue");
    for i in 0..6 {
        q.add("emails", NewJob::new(serde_json::json!({"n": i})))
            .await
            .unwrap();
    }
    let mut shard_of = HashMap::new();
    for (shard, n) in DEAD_PER_SHARD.into_iter().enumerate() {
        let error = format!("HTTP 503 on shard {shard}");
        for id in dead_letters(&q.shards()[shard], "webhooks", n, &error).await {
            shard_of.insert(id, shard);
        }
    }
    (q, shard_of)
}

fn sharded(url: &str, base: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--shards", "3"];
    all.extend_from_slice(args);
    redq(url, base, &all)
}

async fn state_of(q: &ShardedQueue, shard: usize, id: &str) -> Option<JobState> {
    q.shards()[shard]
        .inspect(id)
        .await
        .unwrap()
        .map(|j| j.state)
}

#[tokio::test]
async fn subcommands_sum_the_shards_and_route_changes_to_them() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("console_sharded");
    let (q, shard_of) = seed_sharded(&url, &base).await;
    let dead_total: usize = DEAD_PER_SHARD.iter().sum();

    // Sizes are summed per queue.
    let out = sharded(&url, &base, &["queues", "-o", "json"]);
    assert_exit(&out, 0);
    let queues = json(&out);
    assert_eq!(queues[0]["queue"], "emails");
    assert_eq!(queues[0]["waiting"], 6);
    assert_eq!(queues[1]["queue"], "webhooks");
    assert_eq!(queues[1]["dead"], dead_total);
    // Without --shards the console sees the base namespace, which is empty.
    assert_eq!(
        json(&redq(&url, &base, &["queues", "-o", "json"])),
        serde_json::json!([])
    );

    // Throughput is summed per bucket: every dead letter was a failed attempt.
    let out = sharded(&url, &base, &["stats", "webhooks", "-o", "json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)[0]["failed_15m"], dead_total);

    // Every dead letter, newest first, each saying where it lives.
    let out = sharded(&url, &base, &["dead", "list", "webhooks", "-o", "json"]);
    assert_exit(&out, 0);
    let list = json(&out);
    assert_eq!(list["total"], dead_total);
    let jobs = list["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), dead_total);
    let names = q.placement();
    for job in jobs {
        let shard = shard_of[job["id"].as_str().unwrap()];
        assert_eq!(job["shard"], shard, "{job}");
        assert_eq!(job["namespace"], names[shard].0.as_str());
        assert_eq!(job["last_error"], format!("HTTP 503 on shard {shard}"));
    }
    let died: Vec<&str> = jobs
        .iter()
        .map(|j| j["died_at"].as_str().unwrap())
        .collect();
    let mut newest_first = died.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(died, newest_first);
    // The table says it too.
    let out = sharded(&url, &base, &["dead", "list", "webhooks"]);
    assert!(stdout(&out).starts_with("ID"), "{}", stdout(&out));
    assert!(stdout(&out).lines().next().unwrap().contains("SHARD"));

    // `dead show` finds a job on any shard and names the shard.
    let on_2 = shard_of.iter().find(|(_, s)| **s == 2).unwrap().0.clone();
    let out = sharded(&url, &base, &["dead", "show", &on_2, "-o", "json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)["shard"], 2);
    let out = sharded(&url, &base, &["dead", "show", &on_2]);
    assert!(stdout(&out).contains(&format!("shard         2 of 3 ({})", names[2].0)));

    // The waiting jobs list merges the shards (6 in all, each tagged).
    let out = sharded(
        &url,
        &base,
        &["jobs", "emails", "--state", "waiting", "-o", "json"],
    );
    assert_exit(&out, 0);
    let page = json(&out);
    assert_eq!(page["total"], 6);
    assert_eq!(page["jobs"].as_array().unwrap().len(), 6);
    assert!(page["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|j| j["shard"].is_u64()));

    // Requeue by id: two ids on two different shards, one command.
    let on_1 = shard_of.iter().find(|(_, s)| **s == 1).unwrap().0.clone();
    let out = sharded(
        &url,
        &base,
        &["dead", "requeue", "webhooks", &on_1, &on_2, "-o", "json"],
    );
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(
        (report["done"].as_u64(), report["not_found"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(report["dead_left"], dead_total - 2);
    assert_eq!(state_of(&q, 1, &on_1).await, Some(JobState::Waiting));
    assert_eq!(state_of(&q, 2, &on_2).await, Some(JobState::Waiting));
    assert_eq!(
        state_of(&q, 0, &on_1).await,
        None,
        "not copied to another shard"
    );

    // Requeue all: every shard, summed.
    let out = sharded(
        &url,
        &base,
        &[
            "dead", "requeue", "webhooks", "--all", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], dead_total - 2);
    for (shard, n) in DEAD_PER_SHARD.into_iter().enumerate() {
        let counts = q.shards()[shard].counts("webhooks").await.unwrap();
        assert_eq!(
            (counts.dead, counts.waiting),
            (0, n as u64),
            "shard {shard}"
        );
    }
    for (id, shard) in &shard_of {
        assert_eq!(
            state_of(&q, *shard, id).await,
            Some(JobState::Waiting),
            "{id}"
        );
    }

    // Pause and resume reach every shard.
    assert_exit(&sharded(&url, &base, &["pause", "emails"]), 0);
    for shard in q.shards() {
        assert!(shard.counts("emails").await.unwrap().paused);
    }
    assert_eq!(
        json(&sharded(&url, &base, &["queues", "-o", "json"]))[0]["paused"],
        true
    );
    assert_exit(&sharded(&url, &base, &["resume", "emails"]), 0);
    for shard in q.shards() {
        assert!(!shard.counts("emails").await.unwrap().paused);
    }
}

#[tokio::test]
async fn an_id_no_shard_holds_fails_as_on_one_namespace() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("console_sharded_missing");
    let (q, shard_of) = seed_sharded(&url, &base).await;
    let missing = "01JDQ2X7K5M3N8P9R2S4T6V8ZZ";
    let on_0 = shard_of.iter().find(|(_, s)| **s == 0).unwrap().0.clone();

    // One id found (on shard 0), one on no shard: the found one is
    // requeued, the run fails with exit 1 and says how many were missing.
    let out = sharded(
        &url,
        &base,
        &["dead", "requeue", "webhooks", &on_0, missing, "-o", "json"],
    );
    assert_exit(&out, 1);
    let report = json(&out);
    assert_eq!(
        (report["done"].as_u64(), report["not_found"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(state_of(&q, 0, &on_0).await, Some(JobState::Waiting));

    // Exactly what one namespace says for an id it does not hold.
    let single = unique_namespace("console_single_missing");
    dead_letters(&connect(&url, &single).await, "webhooks", 1, "boom").await;
    let one = redq(&url, &single, &["dead", "requeue", "webhooks", missing]);
    let many = sharded(&url, &base, &["dead", "requeue", "webhooks", missing]);
    assert_exit(&one, 1);
    assert_exit(&many, 1);
    assert_eq!(stderr(&many), stderr(&one));
    assert!(stderr(&many).contains("1 of the ids is not a dead letter of that queue"));

    // Deleting works the same way, and `dead show` of a missing id fails.
    let out = sharded(&url, &base, &["dead", "delete", "webhooks", missing]);
    assert_exit(&out, 1);
    let out = sharded(&url, &base, &["dead", "show", missing]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("no job"), "{}", stderr(&out));
    // Nothing else changed: 6 dead letters, less the one requeued.
    let dead: u64 = q.counts("webhooks").await.unwrap().dead;
    assert_eq!(dead, 5);
}

#[test]
fn a_shard_count_outside_1_to_64_is_a_usage_error() {
    for bad in ["0", "65", "three", "-1"] {
        let flag = format!("--shards={bad}");
        let out = redq("redis://127.0.0.1:1", "redq", &[&flag, "queues"]);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("from 1 to 64"),
            "{bad}: {}",
            stderr(&out)
        );
    }
}

#[tokio::test]
async fn the_console_source_shows_the_shards_as_one_queue() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("console_sharded_tui");
    let (q, shard_of) = seed_sharded(&url, &base).await;
    let target = Target::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .unwrap();
    assert_eq!(
        target.shard_namespaces(),
        redq::shards::shard_namespaces(&base, 3).unwrap(),
        "the console watches exactly the namespaces ShardedQueue writes"
    );

    let snapshot = source::fetch(&target, &Focus::Dead).await.unwrap();
    let mut state = State::new(Settings {
        url: target.redacted_url().to_owned(),
        namespace: base.clone(),
        shards: target.shard_namespaces(),
        read_only: false,
        refresh: Duration::from_secs(1),
    });
    state.apply(Action::Resize(120, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: std::time::SystemTime::now(),
    }));
    let dead_total: usize = DEAD_PER_SHARD.iter().sum();
    let webhooks = &state.data.queues[1].counts;
    assert_eq!(
        (webhooks.queue.as_str(), webhooks.dead),
        ("webhooks", dead_total as u64)
    );
    assert_eq!(state.data.queues[0].counts.waiting, 6);

    // Queues screen: the summed sizes.
    let screen = render(&state, 120, 30);
    let emails = screen.lines().find(|l| l.contains("emails")).unwrap();
    assert!(emails.split_whitespace().any(|w| w == "6"), "{screen}");
    let row = screen.lines().find(|l| l.contains("webhooks")).unwrap();
    assert!(row.split_whitespace().any(|w| w == "6"), "{screen}");

    // Dead letters screen: all of them, with their shard.
    state.apply(Action::Show(Screen::Dead));
    let screen = render(&state, 120, 30);
    assert!(
        screen.contains(&format!("Dead letters ({dead_total})")),
        "{screen}"
    );
    assert!(screen.contains("SHARD"), "{screen}");
    for (id, shard) in &shard_of {
        let tail = &id[id.len() - 12..];
        let line = screen
            .lines()
            .find(|l| l.contains(tail))
            .unwrap_or_else(|| panic!("{id}:\n{screen}"));
        assert!(
            line.contains(&format!("HTTP 503 on shard {shard}")),
            "{line}"
        );
        let cells: Vec<&str> = line.split_whitespace().collect();
        let at = cells.iter().position(|c| c.contains(tail)).unwrap();
        assert_eq!(cells[at + 1], shard.to_string(), "{line}");
    }

    // The TUI's requeue of a selection reaches each job's shard.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ids: Vec<String> = shard_of.keys().cloned().collect();
    let mutation = redq_console::tui::state::Mutation::RequeueDead {
        ids: vec![("webhooks".into(), ids)],
        attempts: 0,
    };
    source::mutate(&target, mutation, &tx).await;
    let mut finished = None;
    while let Ok(update) = rx.try_recv() {
        if let Update::Finished { message, ok } = update {
            finished = Some((message, ok));
        }
    }
    assert_eq!(
        finished,
        Some((format!("requeued {dead_total} dead letters"), true))
    );
    for (id, shard) in &shard_of {
        assert_eq!(
            state_of(&q, *shard, id).await,
            Some(JobState::Waiting),
            "{id}"
        );
    }
}

/// One run on the local cluster harness: the same flag on a cluster URL,
/// where the three shards sit on three primaries.
#[tokio::test]
async fn on_a_cluster_the_flag_aggregates_the_primaries() {
    let cluster = RedisCluster::shared();
    let url = cluster.url();
    let base = unique_namespace("console_sharded_cluster");
    let (q, shard_of) = seed_sharded(&url, &base).await;
    let dead_total: usize = DEAD_PER_SHARD.iter().sum();

    let out = sharded(&url, &base, &["dead", "list", "-o", "json"]);
    assert_exit(&out, 0);
    let list = json(&out);
    assert_eq!(list["total"], dead_total);
    let mut seen: Vec<(String, u64)> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["id"].as_str().unwrap().to_owned(),
                j["shard"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut want: Vec<(String, u64)> = shard_of
        .iter()
        .map(|(id, s)| (id.clone(), *s as u64))
        .collect();
    seen.sort();
    want.sort();
    assert_eq!(seen, want);

    let out = sharded(
        &url,
        &base,
        &[
            "dead", "requeue", "webhooks", "--all", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], dead_total);
    let counts = q.counts("webhooks").await.unwrap();
    assert_eq!((counts.dead, counts.waiting), (0, dead_total as u64));
}

fn render(state: &State, width: u16, height: u16) -> String {
    use ratatui::backend::TestBackend;
    let mut terminal = ratatui::Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = redq_console::tui::theme::Theme::new(false);
    let now = state.redis_time(std::time::SystemTime::now());
    terminal
        .draw(|frame| redq_console::tui::view::render(frame, state, &theme, now))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            let line: String = (0..width).map(|x| buffer[(x, y)].symbol()).collect();
            line.trim_end().to_owned() + "\n"
        })
        .collect()
}

#[tokio::test]
async fn pages_deeper_than_one_shard_read_are_merged() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("console_sharded_deep");
    let q = ShardedQueue::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .unwrap();
    // Three batches, one per shard in turn: 1,500 jobs, 500 a shard.
    for batch in 0..3 {
        let jobs = (0..500)
            .map(|i| NewJob::new(serde_json::json!({"batch": batch, "n": i})))
            .collect();
        q.add_batch("bulk", jobs).await.unwrap();
    }
    let per_shard: Vec<u64> = {
        let mut sizes = Vec::new();
        for shard in q.shards() {
            sizes.push(shard.counts("bulk").await.unwrap().waiting);
        }
        sizes
    };
    assert_eq!(per_shard, vec![500, 500, 500]);

    // Past the first 1,000 (the driver's page limit per read).
    let args = ["jobs", "bulk", "--state", "waiting", "--offset", "1450"];
    let out = sharded(
        &url,
        &base,
        &[&args[..], &["--limit", "100", "-o", "json"]].concat(),
    );
    assert_exit(&out, 0);
    let page = json(&out);
    assert_eq!(page["total"], 1500);
    assert_eq!(page["jobs"].as_array().unwrap().len(), 50);

    // Deeper than a merge reads is refused as a usage error that says so.
    let out = sharded(
        &url,
        &base,
        &[
            "jobs", "bulk", "--state", "waiting", "--offset", "9990", "--limit", "20",
        ],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("1 to 10000 when several shards are merged"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn schedules_say_which_shard_stores_them() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("console_sharded_schedules");
    let q = ShardedQueue::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .unwrap();
    let schedule = redq::schedule::Schedule::new("nightly", "reports", "30 2 * * *");
    q.shards()[0].upsert_schedule(schedule).await.unwrap();

    let out = sharded(&url, &base, &["schedules", "-o", "json"]);
    assert_exit(&out, 0);
    let list = json(&out);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(
        (list[0]["name"].as_str(), list[0]["shard"].as_u64()),
        (Some("nightly"), Some(0))
    );
    let out = sharded(&url, &base, &["schedules"]);
    assert!(
        stdout(&out).lines().next().unwrap().contains("SHARD"),
        "{}",
        stdout(&out)
    );
    // One namespace: no shard field, as before.
    let single = unique_namespace("console_single_schedules");
    connect(&url, &single)
        .await
        .upsert_schedule(redq::schedule::Schedule::new(
            "nightly",
            "reports",
            "30 2 * * *",
        ))
        .await
        .unwrap();
    let list = json(&redq(&url, &single, &["schedules", "-o", "json"]));
    assert!(list[0].get("shard").is_none(), "{list}");
}

/// `--shards` with another count than the queue's producers connected with
/// is refused before anything is read or written: its namespaces overlap
/// with the right ones (shard 0 is shared by 3 and 4 here), so it would show
/// part of the queue, plausibly, and act on that part.
#[tokio::test]
async fn a_shard_count_the_producers_did_not_use_is_refused() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("console_shard_count");
    seed_sharded(&url, &base).await;
    let out = redq(&url, &base, &["--shards", "4", "queues"]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(
        said.contains("invalid shard count \"4\"") && said.contains("spread over 3 shards"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
    let out = sharded(&url, &base, &["queues", "-o", "json"]);
    assert_exit(&out, 0);
    // Without --shards the base namespace holds no queue of its own: the
    // listing and a queue's refusal say where the queue is.
    let out = redq(&url, &base, &["queues"]);
    assert_exit(&out, 0);
    assert!(stderr(&out).contains("add --shards 3"), "{}", stderr(&out));
    let out = redq(&url, &base, &["pause", "emails"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("or add --shards 3"),
        "{}",
        stderr(&out)
    );
    // Pointed at one shard, a refusal names the base to watch instead.
    let shard = &redq::shards::shard_namespaces(&base, 3).unwrap()[1];
    let out = redq(&url, shard, &["pause", "no-such-queue"]);
    assert_exit(&out, 1);
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "{shard} is one shard of {base}, a queue spread over 3 shards: use --namespace \
             {base} --shards 3"
        )),
        "{said}"
    );
    assert!(!said.contains("is the base"), "{said}");
}
