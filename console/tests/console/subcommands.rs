//! The subcommands against a real Redis: JSON output, exit codes (0 ok,
//! 1 failed, 2 usage) and read-only refusal.

use crate::seed::*;
use redq::NewJob;
use redq_tests::memory::{cap_memory, capped_server, fill_until_out_of_memory, hold_out_of_memory};
use redq_tests::{unique_namespace, RedisServer};

#[tokio::test]
async fn listings_print_json_and_tables() {
    let server = RedisServer::start();
    let ns = unique_namespace("listings");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({"to": "ada"})))
        .await
        .unwrap();
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "bob"})).delay(std::time::Duration::from_secs(600)),
    )
    .await
    .unwrap();
    let dead = dead_letters(&q, "webhooks", 3, "HTTP 503 from upstream").await;
    // One completion for the stats.
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "cy"})).priority(9),
    )
    .await
    .unwrap();
    let job = q
        .claim("emails", 1, std::time::Duration::from_secs(30))
        .await
        .unwrap()
        .remove(0);
    q.ack(&job.lease()).await.unwrap();

    let out = redq(&url, &ns, &["queues", "-o", "json"]);
    assert_exit(&out, 0);
    let queues = json(&out);
    assert_eq!(queues[0]["queue"], "emails");
    assert_eq!(
        (
            queues[0]["waiting"].as_u64(),
            queues[0]["scheduled"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(
        (queues[1]["queue"].as_str(), queues[1]["dead"].as_u64()),
        (Some("webhooks"), Some(3))
    );
    assert_eq!(queues[1]["paused"], false);

    let out = redq(&url, &ns, &["queues"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).starts_with("QUEUE"), "{}", stdout(&out));
    assert!(stdout(&out).contains("webhooks"));

    let out = redq(&url, &ns, &["stats", "emails", "-o", "json"]);
    assert_exit(&out, 0);
    let stats = json(&out);
    assert_eq!(stats[0]["processed_15m"], 1);
    assert_eq!(stats[0]["bucket_seconds"], 5);
    let out = redq(&url, &ns, &["stats", "webhooks", "-o", "json"]);
    assert_eq!(json(&out)[0]["failed_15m"], 3);

    let out = redq(
        &url,
        &ns,
        &["jobs", "webhooks", "--state", "dead", "-o", "json"],
    );
    assert_exit(&out, 0);
    let page = json(&out);
    assert_eq!(page["total"], 3);
    assert_eq!(page["jobs"][0]["state"], "dead");
    assert_eq!(page["jobs"][0]["last_error"], "HTTP 503 from upstream");

    let out = redq(&url, &ns, &["jobs", "emails", "--state", "scheduled"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("scheduled"), "{}", stdout(&out));

    let out = redq(&url, &ns, &["dead", "list", "-o", "json"]);
    assert_exit(&out, 0);
    let listed: Vec<String> = json(&out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect();
    let mut want = dead.clone();
    want.sort();
    let mut got = listed.clone();
    got.sort();
    assert_eq!(got, want);

    let out = redq(&url, &ns, &["dead", "show", &dead[0], "-o", "json"]);
    assert_exit(&out, 0);
    let shown = json(&out);
    assert_eq!(shown["payload"]["n"], 0);
    assert_eq!(shown["attempts"], 1);
    let out = redq(&url, &ns, &["dead", "show", &dead[0]]);
    assert!(stdout(&out).contains("HTTP 503 from upstream"));
    assert!(
        stdout(&out).contains("\"to\": \"user0@example.com\""),
        "{}",
        stdout(&out)
    );

    let out = redq(&url, &ns, &["dead", "show", "01JDQ2X7K5M3N8P9R2S4T6V8ZZ"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("no job"), "{}", stderr(&out));

    for (args, want) in [
        (["workers", "-o", "json"], "[]"),
        (["schedules", "-o", "json"], "[]"),
    ] {
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 0);
        assert_eq!(stdout(&out).trim(), want);
    }
    let out = redq(&url, &ns, &["workers"]);
    assert!(stdout(&out).contains("no workers registered"));
}

#[tokio::test]
async fn dead_letter_commands_change_redis_through_the_driver() {
    let server = RedisServer::start();
    let ns = unique_namespace("dead-cmds");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let ids = dead_letters(&q, "webhooks", 5, "timeout").await;

    let out = redq(
        &url,
        &ns,
        &["dead", "requeue", "webhooks", &ids[0], "-o", "json"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        json(&out),
        serde_json::json!({
            "queue": "webhooks", "action": "requeued", "done": 1, "not_found": 0, "dead_left": 4,
        })
    );
    assert_eq!(q.counts("webhooks").await.unwrap().waiting, 1);
    assert_eq!(q.inspect(&ids[0]).await.unwrap().unwrap().attempts, 0);

    // An id that is not a dead letter: the rest is done, the run fails.
    let out = redq(&url, &ns, &["dead", "delete", "webhooks", &ids[1], &ids[0]]);
    assert_exit(&out, 1);
    assert_eq!(q.counts("webhooks").await.unwrap().dead, 3);

    let out = redq(&url, &ns, &["dead", "purge", "webhooks"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    assert_eq!(q.counts("webhooks").await.unwrap().dead, 3);

    // These jobs allow one attempt: restarting them at 2 would quietly give
    // them one more try, so it is refused, as the console refuses it, and
    // nothing is requeued.
    let out = redq(
        &url,
        &ns,
        &[
            "dead",
            "requeue",
            "webhooks",
            "--all",
            "--yes",
            "--attempts",
            "2",
        ],
    );
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("only 0 is accepted (max attempts is 1)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(q.counts("webhooks").await.unwrap().dead, 3);
    let out = redq(
        &url,
        &ns,
        &[
            "dead", "requeue", "webhooks", "--all", "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], 3);
    let counts = q.counts("webhooks").await.unwrap();
    assert_eq!((counts.waiting, counts.dead), (4, 0));

    dead_letters(&q, "billing", 2, "declined").await;
    let out = redq(&url, &ns, &["dead", "purge", "billing", "--yes"]);
    assert_exit(&out, 0);
    assert_eq!(q.counts("billing").await.unwrap().dead, 0);
}

#[tokio::test]
async fn requeue_attempts_restart_below_the_jobs_max_attempts_or_are_refused() {
    let server = RedisServer::start();
    let ns = unique_namespace("requeue-attempts");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let mut ids = Vec::new();
    for max in [3, 5] {
        let job = redq::NewJob::new(serde_json::json!({ "max": max })).max_attempts(max);
        ids.push(q.add("imports", job).await.unwrap().id().to_owned());
    }
    for _ in 0..5 {
        for job in q
            .claim("imports", 2, std::time::Duration::from_secs(60))
            .await
            .unwrap()
        {
            q.nack(&job.lease(), std::time::Duration::ZERO, "no")
                .await
                .unwrap();
        }
    }
    assert_eq!(q.counts("imports").await.unwrap().dead, 2);

    // By id, by --all and by --group: the lowest max attempts of the jobs
    // taken bounds the count, and a refusal writes nothing.
    let signature = redq_console::signature::signature("no");
    let refusals = [
        vec!["dead", "requeue", "imports", &ids[0], "--attempts", "3"],
        vec!["dead", "requeue", "imports", "--all", "--attempts", "4"],
        vec![
            "dead",
            "requeue",
            "imports",
            "--group",
            &signature,
            "--attempts",
            "3",
        ],
    ];
    for args in refusals {
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("accepted are 0 to 2 (max attempts is 3); nothing was requeued"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(q.counts("imports").await.unwrap().dead, 2, "{args:?}");
    }
    // The job allowing 5 takes 4 alone; the one allowing 3 then takes 2.
    let out = redq(
        &url,
        &ns,
        &["dead", "requeue", "imports", &ids[1], "--attempts", "4"],
    );
    assert_exit(&out, 0);
    let out = redq(
        &url,
        &ns,
        &[
            "dead",
            "requeue",
            "imports",
            "--all",
            "--yes",
            "--attempts",
            "2",
        ],
    );
    assert_exit(&out, 0);
    for (id, attempts) in [(&ids[0], 2), (&ids[1], 4)] {
        let job = q.inspect(id).await.unwrap().unwrap();
        assert_eq!(
            (job.state, job.attempts),
            (redq::JobState::Waiting, attempts)
        );
    }
}

#[tokio::test]
async fn pause_resume_and_enqueue() {
    let server = RedisServer::start();
    let ns = unique_namespace("pause");
    let url = server.url();
    let q = connect(&url, &ns).await;

    let out = redq(
        &url,
        &ns,
        &[
            "enqueue",
            "emails",
            r#"{"to":"ada"}"#,
            "--dedup-key",
            "welcome:ada",
            "--priority",
            "5",
            "--name",
            "send_email",
            "-o",
            "json",
        ],
    );
    assert_exit(&out, 0);
    let created = json(&out);
    assert_eq!(created["outcome"], "created");
    let out = redq(
        &url,
        &ns,
        &[
            "enqueue",
            "emails",
            r#"{"to":"ada"}"#,
            "--dedup-key",
            "welcome:ada",
            "-o",
            "json",
        ],
    );
    assert_eq!(json(&out)["outcome"], "duplicate");
    assert_eq!(json(&out)["id"], created["id"]);
    let job = q
        .inspect(created["id"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((job.priority, job.name.as_deref()), (5, Some("send_email")));

    let out = redq(
        &url,
        &ns,
        &[
            "enqueue",
            "emails",
            "{}",
            "--delay",
            "5m",
            "--ordering-key",
            "cus_1",
        ],
    );
    assert_exit(&out, 0);
    assert!(stdout(&out).starts_with("created "));
    assert_eq!(q.counts("emails").await.unwrap().scheduled, 1);

    // A job moved from elsewhere keeps the attempts it already made; one
    // with none left is refused (a usage error) naming the rule, and
    // nothing is enqueued.
    let moved = [
        "enqueue",
        "imports",
        "{}",
        "--max-attempts",
        "3",
        "--attempts",
    ];
    let out = redq(&url, &ns, &[&moved[..], &["2", "-o", "json"]].concat());
    assert_exit(&out, 0);
    let id = json(&out)["id"].as_str().unwrap().to_owned();
    assert_eq!(q.inspect(&id).await.unwrap().unwrap().attempts, 2);
    let out = redq(&url, &ns, &[&moved[..], &["3"]].concat());
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("below max_attempts (3)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(q.counts("imports").await.unwrap().waiting, 1);

    set_paused(&url, &ns, "emails", true);
    assert!(q.counts("emails").await.unwrap().paused);
    let out = redq(&url, &ns, &["resume", "emails"]);
    assert_exit(&out, 0);
    assert_eq!(stdout(&out).trim(), "resumed emails");
    assert!(!q.counts("emails").await.unwrap().paused);

    // Asked again, each says nothing changed (and no event is written), so
    // an operator does not take a queue someone else paused for one they
    // just paused.
    let out = redq(&url, &ns, &["resume", "emails"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim(),
        "emails was not paused; nothing changed"
    );
    assert_exit(&redq(&url, &ns, &["pause", "emails"]), 0);
    let out = redq(&url, &ns, &["pause", "emails", "-o", "json"]);
    assert_exit(&out, 0);
    assert_eq!(
        json(&out),
        serde_json::json!({"queue": "emails", "paused": true, "changed": false})
    );
    let out = redq(&url, &ns, &["pause", "emails"]);
    assert_eq!(
        stdout(&out).trim(),
        "emails was already paused; nothing changed"
    );
    let paused_events = q
        .events(50)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == "paused")
        .count();
    assert_eq!(
        paused_events, 2,
        "one for each pause that changed the queue"
    );
}

/// During an incident Redis may be full (maxmemory with noeviction): the
/// operator can still pause a queue and resume it.
#[tokio::test]
async fn pause_and_resume_work_while_redis_is_out_of_memory() {
    let server = capped_server();
    let ns = unique_namespace("pause-oom");
    let url = server.url();
    let q = connect(&url, &ns).await;
    // "held" has no job yet: pausing it must be asked for explicitly.
    assert_exit(&redq(&url, &ns, &["pause", "held", "--allow-unknown"]), 0);
    cap_memory(&server, 3 << 20).await;
    fill_until_out_of_memory(&q, "emails").await;
    hold_out_of_memory(&server, 1 << 20).await;
    let full = redq(&url, &ns, &["enqueue", "emails", "{}"]);
    assert_exit(&full, 1);
    assert!(stderr(&full).contains("out of memory"), "{}", stderr(&full));

    set_paused(&url, &ns, "emails", true);
    assert!(q.counts("emails").await.unwrap().paused);
    assert!(q
        .claim("emails", 1, std::time::Duration::from_secs(30))
        .await
        .unwrap()
        .is_empty());

    for queue in ["emails", "held"] {
        set_paused(&url, &ns, queue, false);
        assert!(!q.counts(queue).await.unwrap().paused);
    }
    assert_exit(&redq(&url, &ns, &["enqueue", "emails", "{}"]), 1);
}

/// With none of USER, LOGNAME and USERNAME set (a container, `docker
/// exec`), an action still names the account it ran as, not "unknown".
#[tokio::test]
async fn an_action_names_the_account_when_no_user_variable_is_set() {
    let server = RedisServer::start();
    let ns = unique_namespace("actor-account");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", redq::NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let out = std::process::Command::new(BIN)
        .args(["pause", "emails"])
        .env("REDIS_URL", &url)
        .env("REDQ_NAMESPACE", &ns)
        .env_remove("USER")
        .env_remove("LOGNAME")
        .env_remove("USERNAME")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let events = q.events(10).await.unwrap();
    let by = events
        .iter()
        .find(|e| e.kind == "paused")
        .and_then(|e| e.by.clone())
        .unwrap_or_default();
    assert!(by.starts_with("cli "), "{by}");
    assert!(!by.starts_with("cli unknown@"), "{by}");
}

/// `--actor` names who a command's actions are, as does `REDQ_ACTOR`
/// (the flag wins); a name the driver would refuse is refused before
/// anything is written, in a sentence that shows it escaped.
#[tokio::test]
async fn an_actor_given_is_recorded_and_a_bad_one_is_refused_before_anything_is_written() {
    let server = RedisServer::start();
    let ns = unique_namespace("actor-given");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", redq::NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let run = |args: &[&str], actor_var: Option<&str>| {
        let mut command = std::process::Command::new(BIN);
        command
            .args(args)
            .env("REDIS_URL", &url)
            .env("REDQ_NAMESPACE", &ns)
            .env_remove("REDQ_ACTOR");
        if let Some(actor) = actor_var {
            command.env("REDQ_ACTOR", actor);
        }
        command.output().unwrap()
    };
    let by_of = async |kind: &str| {
        let events = q.events(20).await.unwrap();
        let of_kind: Vec<_> = events.into_iter().filter(|e| e.kind == kind).collect();
        of_kind
            .iter()
            .map(|e| e.by.clone().unwrap_or_default())
            .collect::<Vec<_>>()
    };

    assert_exit(
        &run(&["--actor", "runbook-bot #4512", "pause", "emails"], None),
        0,
    );
    assert_eq!(by_of("paused").await, ["runbook-bot #4512"]);
    assert_exit(&run(&["resume", "emails"], Some("deploy-bot")), 0);
    assert_eq!(by_of("resumed").await, ["deploy-bot"]);
    let flag_wins = run(&["pause", "emails", "--actor", "alice"], Some("deploy-bot"));
    assert_exit(&flag_wins, 0);
    assert_eq!(by_of("paused").await, ["alice", "runbook-bot #4512"]);

    for (flag, var) in [(Some("evil\u{1b}[2J"), None), (None, Some("evil\u{7}"))] {
        let mut args = vec!["resume", "emails"];
        if let Some(actor) = flag {
            args.extend(["--actor", actor]);
        }
        let refused = run(&args, var);
        assert_exit(&refused, 2);
        let said = stderr(&refused);
        assert!(
            said.contains("the actor (--actor or REDQ_ACTOR) is refused")
                && said.contains("at most 128 bytes without control characters"),
            "{said}"
        );
        assert!(
            !said.contains('\u{1b}') && !said.contains('\u{7}'),
            "shown escaped: {said:?}"
        );
    }
    assert_eq!(by_of("resumed").await, ["deploy-bot"], "nothing written");
}

/// `redq pause|resume QUEUE -o json`: exit 0 and the state it reports.
fn set_paused(url: &str, ns: &str, queue: &str, paused: bool) {
    let verb = if paused { "pause" } else { "resume" };
    let out = redq(url, ns, &[verb, queue, "-o", "json"]);
    assert_exit(&out, 0);
    let reply = json(&out);
    assert_eq!(
        (&reply["queue"], &reply["paused"]),
        (&serde_json::json!(queue), &serde_json::json!(paused)),
        "{reply}"
    );
}

#[tokio::test]
async fn read_only_refuses_every_mutation_and_changes_nothing() {
    let server = RedisServer::start();
    let ns = unique_namespace("read-only");
    let url = server.url();
    let q = connect(&url, &ns).await;
    let ids = dead_letters(&q, "webhooks", 2, "boom").await;
    let mutations: Vec<Vec<&str>> = vec![
        vec!["dead", "requeue", "webhooks", "--all"],
        vec!["dead", "requeue", "webhooks", &ids[0]],
        vec!["dead", "delete", "webhooks", &ids[0]],
        vec!["dead", "purge", "webhooks", "--yes"],
        vec!["pause", "webhooks"],
        vec!["resume", "webhooks"],
        vec!["enqueue", "webhooks", "{}"],
        vec!["metrics", "off", "webhooks"],
        vec!["metrics", "on", "webhooks"],
        vec!["demo"],
    ];
    for args in mutations {
        let mut all = vec!["--read-only"];
        all.extend(&args);
        let out = redq(&url, &ns, &all);
        assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("refused"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let counts = q.counts("webhooks").await.unwrap();
    assert_eq!((counts.dead, counts.waiting, counts.paused), (2, 0, false));
    let recording = q.metrics_recording("webhooks").await.unwrap();
    assert!(recording.is_on(), "metrics switched off: {recording:?}");
    // Reading is fine.
    assert_exit(&redq(&url, &ns, &["--read-only", "queues"]), 0);
}

/// With no `--url` and no `REDIS_URL`, reads look at the default Redis but
/// a change is refused before any connection: it goes only to a Redis the
/// user named.
#[test]
fn a_change_with_no_redis_named_is_refused_before_connecting() {
    let changes: Vec<Vec<&str>> = vec![
        vec!["dead", "purge", "webhooks", "--yes"],
        vec!["pause", "webhooks"],
        vec!["enqueue", "webhooks", "{}"],
        vec!["metrics", "off", "webhooks"],
    ];
    for args in changes {
        let out = std::process::Command::new(BIN)
            .args(&args)
            .env_remove("REDIS_URL")
            .env_remove("REDQ_LOG")
            .output()
            .expect("running redq");
        // Exit 2, a usage error: a connection tried would fail with exit 1.
        assert_exit(&out, 2);
        let said = stderr(&out);
        assert!(said.contains("no Redis was named"), "{args:?}: {said}");
        assert!(said.contains("--url or set REDIS_URL"), "{args:?}: {said}");
    }
}

#[tokio::test]
async fn usage_errors_exit_2_and_failures_exit_1() {
    let server = RedisServer::start();
    let ns = unique_namespace("usage");
    let url = server.url();
    let usage: Vec<Vec<&str>> = vec![
        vec!["jobs"],
        vec!["jobs", "emails", "--state", "sideways"],
        vec!["--refresh", "100ms", "queues"],
        vec!["dead", "requeue", "webhooks"],
        vec!["dead", "delete", "webhooks"],
        vec!["enqueue", "emails", "not json"],
        vec!["enqueue", "bad:name", "{}"],
        vec!["-o", "yaml", "queues"],
        vec!["frobnicate"],
    ];
    for args in usage {
        let out = redq(&url, &ns, &args);
        assert_exit(&out, 2);
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
    // Nothing listens on port 1: the connection fails.
    let out = redq("redis://127.0.0.1:1", &ns, &["queues"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("127.0.0.1:1"), "{}", stderr(&out));

    let out = redq(&url, &ns, &["completions", "bash"]);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("_redq"));
    let out = redq(&url, &ns, &["--help"]);
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["--version"]);
    assert_exit(&out, 0);
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Noop {}

impl redq::worker::TypedJob for Noop {
    const NAME: &'static str = "noop";
    const QUEUE: &'static str = "emails";
    async fn run(&self, _cx: &redq::worker::JobCx) -> Result<(), redq::worker::JobError> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_and_schedules_come_from_the_driver_registries() {
    use redq::worker::{Registry, WorkOptions, Worker};
    let server = RedisServer::start();
    let ns = unique_namespace("registries");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.upsert_schedule(
        redq::schedule::Schedule::new("digest", "emails", "*/5 * * * *").timezone("Europe/Paris"),
    )
    .await
    .unwrap();
    let mut registry = Registry::new();
    registry.add_job::<Noop>();
    let worker = Worker::new(
        connect(&url, &ns).await,
        registry,
        WorkOptions::new().queues(["emails"]).schedules(false),
    )
    .unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(worker.run(stop.clone()));
    redq_tests::wait_until(
        std::time::Duration::from_secs(10),
        "the worker to register",
        async || !q.workers().await.unwrap().is_empty(),
    )
    .await;

    let out = redq(&url, &ns, &["workers", "-o", "json"]);
    assert_exit(&out, 0);
    let workers = json(&out);
    assert_eq!(workers.as_array().map(Vec::len), Some(1), "{workers}");
    assert_eq!(workers[0]["queues"], serde_json::json!(["emails"]));
    assert_eq!(workers[0]["pid"], std::process::id());
    // It hears shard channels, and says which driver version it runs (the
    // workspace's, which this crate shares).
    redq_tests::wait_until(
        std::time::Duration::from_secs(10),
        "the worker's record to say how it hears wake-ups",
        async || q.workers().await.unwrap()[0].wake_ups.is_some(),
    )
    .await;
    let out = redq(&url, &ns, &["workers", "-o", "json"]);
    let workers = json(&out);
    assert_eq!(workers[0]["wake_ups"], "shard", "{workers}");
    assert_eq!(
        workers[0]["version"],
        env!("CARGO_PKG_VERSION"),
        "{workers}"
    );
    // It has lost no hand-off and no claim, and says so (an earlier
    // version says null).
    assert_eq!(workers[0]["handoffs_lost"], 0, "{workers}");
    assert_eq!(workers[0]["claims_lost"], 0, "{workers}");
    let out = redq(&url, &ns, &["workers"]);
    let table = stdout(&out);
    assert!(table.starts_with("WORKER"), "{table}");
    let header = table.lines().next().unwrap_or("");
    let row = table.lines().nth(1).unwrap_or("");
    assert!(
        header.contains("WAKE-UPS") && row.contains(" shard "),
        "{table}"
    );
    assert!(
        header.contains("VERSION") && row.contains(env!("CARGO_PKG_VERSION")),
        "{table}"
    );
    for column in ["LOST-HANDOFFS", "LOST-CLAIMS"] {
        let lost = header.split_whitespace().position(|h| h == column);
        assert_eq!(
            lost.and_then(|at| row.split_whitespace().nth(at)),
            Some("0"),
            "{column}: {table}"
        );
    }

    let out = redq(&url, &ns, &["schedules", "-o", "json"]);
    assert_exit(&out, 0);
    let schedules = json(&out);
    assert_eq!(schedules[0]["name"], "digest");
    assert_eq!(schedules[0]["timezone"], "Europe/Paris");
    assert!(schedules[0]["next_run"].as_str().unwrap().ends_with('Z'));
    let out = redq(&url, &ns, &["schedules"]);
    assert!(stdout(&out).contains("*/5 * * * *"), "{}", stdout(&out));

    stop.cancel();
    running.await.unwrap().unwrap();
}
