//! The operator's new subcommands against a real Redis: `redq schedules
//! trigger|pause|resume|delete`, `redq leases reclaim`, `redq jobs search`
//! and `redq dead requeue --group --canary`, in text and `-o json`, with
//! their exit codes (0 done, 1 refused or not found, 2 a wrong command line).

use std::time::Duration;

use crate::seed::*;
use redq::schedule::Schedule;
use redq::{JobState, NewJob};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

#[tokio::test]
async fn schedules_trigger_pause_resume_and_delete_by_name() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("cli-schedules"));
    let q = connect(&url, &ns).await;
    q.upsert_schedule(Schedule::new("digest", "emails", "0 3 * * *"))
        .await
        .unwrap();

    let out = redq(&url, &ns, &["schedules", "trigger", "digest", "-o", "json"]);
    assert_exit(&out, 0);
    let id = json(&out)["job"].as_str().unwrap().to_owned();
    assert_eq!(
        q.inspect(&id).await.unwrap().unwrap().state,
        JobState::Waiting
    );

    let out = redq(&url, &ns, &["schedules", "pause", "digest"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("paused schedule digest"),
        "{}",
        stdout(&out)
    );
    assert!(q.schedule("digest").await.unwrap().unwrap().paused);
    let out = redq(&url, &ns, &["schedules", "pause", "digest", "-o", "json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)["changed"], false);

    let out = redq(&url, &ns, &["schedules", "resume", "digest", "-o", "json"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)["changed"], true);
    assert!(!q.schedule("digest").await.unwrap().unwrap().paused);

    // Delete asks for --yes (a usage error, exit 2), then deletes.
    let out = redq(&url, &ns, &["schedules", "delete", "digest"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("add --yes"), "{}", stderr(&out));
    assert!(q.schedule("digest").await.unwrap().is_some());
    let out = redq(&url, &ns, &["schedules", "delete", "digest", "--yes"]);
    assert_exit(&out, 0);
    assert!(q.schedule("digest").await.unwrap().is_none());

    // An unknown name fails (exit 1) in a sentence.
    let out = redq(&url, &ns, &["schedules", "trigger", "digset"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no schedule is named digset; there are no schedules"),
        "{}",
        stderr(&out)
    );
    // Read-only refuses.
    let out = redq(&url, &ns, &["--read-only", "schedules", "pause", "digest"]);
    assert_exit(&out, 1);
}

#[tokio::test]
async fn leases_reclaim_returns_every_lapsed_lease_of_the_queue() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("cli-reclaim"));
    let q = connect(&url, &ns).await;
    for i in 0..5 {
        q.add("emails", NewJob::new(value!(i)).max_attempts(3))
            .await
            .unwrap();
    }
    // Claimed by a worker that dies: the leases lapse and nobody reclaims.
    let claimed = q
        .claim("emails", 5, Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 5);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while q.counts("emails").await.unwrap().lapsed < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the leases never lapsed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let out = redq(&url, &ns, &["leases", "reclaim", "emails", "-o", "json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(report["requeued"], 5, "{report}");
    assert_eq!(report["still_lapsed"], 0, "{report}");
    let counts = q.counts("emails").await.unwrap();
    assert_eq!((counts.leased, counts.lapsed), (0, 0), "{counts:?}");

    let out = redq(&url, &ns, &["leases", "reclaim", "emials"]);
    assert_exit(&out, 1);
}

#[tokio::test]
async fn jobs_search_lists_the_queues_jobs_whose_payload_has_the_text() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("cli-search"));
    let q = connect(&url, &ns).await;
    let mut wanted = Vec::new();
    for i in 0..30 {
        let job = q
            .add(
                "orders",
                NewJob::new(value!({ "customer": format!("cus_{}", i % 5) })),
            )
            .await
            .unwrap();
        if i % 5 == 3 {
            wanted.push(job.id().to_owned());
        }
    }
    q.add("refunds", NewJob::new(value!({ "customer": "cus_3" })))
        .await
        .unwrap();
    q.claim("orders", 4, Duration::from_secs(600))
        .await
        .unwrap();

    let out = redq(
        &url,
        &ns,
        &["jobs", "search", "orders", "cus_3", "-o", "json"],
    );
    assert_exit(&out, 0);
    let listed = json(&out);
    let mut ids: Vec<String> = listed["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    wanted.sort();
    assert_eq!(ids, wanted);

    // --state keeps the leased one only (the fourth job, cus_3).
    let out = redq(
        &url,
        &ns,
        &[
            "jobs", "search", "orders", "cus_3", "--state", "leased", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["jobs"].as_array().unwrap().len(), 1);

    let out = redq(&url, &ns, &["jobs", "search", "orders", "nobody"]);
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["jobs", "search", "ordres", "cus_3"]);
    assert_exit(&out, 1);
}

#[tokio::test]
async fn a_canary_requeue_sends_a_few_of_a_group_and_reports_what_became_of_them() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("cli-canary"));
    let q = connect(&url, &ns).await;
    dead_letters(&q, "webhooks", 6, "timeout after 3000 ms").await;
    // Two more of another error, in the same queue.
    for i in 0..2 {
        q.add(
            "webhooks",
            NewJob::new(value!({ "other": i })).max_attempts(1),
        )
        .await
        .unwrap();
    }
    for job in q
        .claim("webhooks", 2, Duration::from_secs(60))
        .await
        .unwrap()
    {
        q.nack(&job.lease(), Duration::ZERO, "bad signature")
            .await
            .unwrap();
    }
    assert_eq!(q.counts("webhooks").await.unwrap().dead, 8);
    let group = redq_console::signature::signature("timeout after 3000 ms");

    // A worker that fails everything again: the canaries die again.
    let worker = {
        let q = q.clone();
        tokio::spawn(async move {
            loop {
                for job in q
                    .claim("webhooks", 10, Duration::from_secs(30))
                    .await
                    .unwrap()
                {
                    q.nack(&job.lease(), Duration::ZERO, "timeout after 3001 ms")
                        .await
                        .unwrap();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let out = tokio::task::spawn_blocking({
        let (url, ns, group) = (url.clone(), ns.clone(), group.clone());
        move || {
            redq(
                &url,
                &ns,
                &[
                    "dead", "requeue", "webhooks", "--group", &group, "--canary", "2", "-o", "json",
                ],
            )
        }
    })
    .await
    .unwrap();
    worker.abort();
    assert_exit(&out, 1);
    let report = json(&out);
    let canaries = report["canaries"].as_array().unwrap();
    assert_eq!(canaries.len(), 2, "{report}");
    for c in canaries {
        assert_eq!(c["outcome"]["fate"], "dead_again", "{report}");
    }
    assert_eq!(report["rest"], 4, "{report}");
    assert!(
        stderr(&out).contains("2 of 2 canaries died again"),
        "{}",
        stderr(&out)
    );

    // Without a worker failing them, the rest of the group goes back at once.
    let out = redq(
        &url,
        &ns,
        &[
            "dead", "requeue", "webhooks", "--group", &group, "--yes", "-o", "json",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(json(&out)["done"], 6);
    assert_eq!(
        q.counts("webhooks").await.unwrap().dead,
        2,
        "the other group stays"
    );

    let out = redq(
        &url,
        &ns,
        &["dead", "requeue", "webhooks", "--group", "no such error"],
    );
    assert_exit(&out, 1);
    let out = redq(&url, &ns, &["dead", "requeue", "webhooks", "--canary", "2"]);
    assert_exit(&out, 2);
}
