//! The event stream on a real Redis (issue 16, part 4): every kind of
//! transition is one entry per script call with its fields (a batch is one
//! entry with its count), operator actions name who did them, the stream
//! stays at its cap, and a follower is handed a new kind by the blocked
//! read it was waiting in.

use std::time::Duration;

use redq::events::{EventCursor, EventKind, EventStream, EVENTS_CAP};
use redq::flow::{Limit, LimitScope};
use redq::schedule::Schedule;
use redq::worker::{Registry, WorkOptions, Worker};
use redq::{NewJob, QueueEvent, RecordFormat, RedisQueue};
use redq_tests::events::{acting, events_after, newest_event_id};
use redq_tests::fixtures::DEADLINE;
use redq_tests::running::RunningWorker;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;

const ACTOR: &str = "cli ops@bastion";

/// What both streams hold now, oldest first.
async fn all(queue: &RedisQueue) -> Vec<QueueEvent> {
    let mut events = queue
        .operator()
        .latest_events(&EventStream::BOTH, EVENTS_CAP)
        .await
        .expect("events");
    events.reverse();
    events
}

fn kinds(events: &[QueueEvent]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

fn jobs(n: usize) -> Vec<NewJob> {
    (0..n)
        .map(|i| {
            NewJob::new(json!({ "n": i }))
                .name("send_mail")
                .max_attempts(2)
        })
        .collect()
}

#[tokio::test]
async fn each_job_transition_is_one_event_per_call_with_its_fields() {
    let server = RedisServer::start();
    let queue = acting(&server, &unique_namespace("event_kinds_jobs"), ACTOR).await;

    // A batch of three is one `enqueued` with its count; one job names itself.
    queue.add_batch("mail", jobs(3)).await.unwrap();
    let single = queue.add("mail", jobs(1).remove(0)).await.unwrap();
    let events = all(&queue).await;
    assert_eq!(kinds(&events), ["enqueued", "enqueued"]);
    assert_eq!((events[0].count, events[0].job_id.as_str()), (Some(3), ""));
    assert_eq!(
        (events[1].count, events[1].job_id.as_str()),
        (Some(1), single.id())
    );
    assert_eq!(events[0].queue, "mail");
    assert_eq!(
        events[0].by, None,
        "a worker's or producer's call names nobody"
    );

    // Two acks in one call: one `completed` with count 2.
    let claimed = queue
        .claim("mail", 4, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 4);
    let before = newest_event_id(&queue).await;
    let leases: Vec<_> = claimed[..2].iter().map(|j| j.lease()).collect();
    queue.ack_batch(&leases).await.unwrap();
    let events = events_after(&queue, &before).await;
    assert_eq!(kinds(&events), ["completed"]);
    assert_eq!((events[0].count, events[0].job_id.as_str()), (Some(2), ""));

    // A failed attempt with attempts left: `retried`; spent: `dead`.
    let before = newest_event_id(&queue).await;
    let failing = &claimed[2];
    queue
        .nack(&failing.lease(), Duration::ZERO, "SMTP 451")
        .await
        .unwrap();
    let again = queue
        .claim("mail", 1, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(again[0].id, failing.id);
    queue
        .nack(&again[0].lease(), Duration::ZERO, "SMTP 550")
        .await
        .unwrap();
    let events = events_after(&queue, &before).await;
    assert_eq!(kinds(&events), ["retried", "dead"]);
    for (event, (attempts, error)) in events.iter().zip([(1, "SMTP 451"), (2, "SMTP 550")]) {
        assert_eq!(event.job_id, failing.id);
        assert_eq!(event.name.as_deref(), Some("send_mail"));
        assert_eq!((event.attempts, event.error.as_str()), (attempts, error));
    }

    // A lapsed lease: its `retried` (the lost attempt), then one `reclaimed`.
    let last = &claimed[3];
    queue.release(&last.lease()).await.unwrap();
    let lapsing = queue
        .claim("mail", 1, Duration::from_millis(1))
        .await
        .unwrap();
    assert_eq!(lapsing[0].id, last.id);
    let before = newest_event_id(&queue).await;
    wait_until(
        DEADLINE,
        "the lease to lapse and be reclaimed",
        async || queue.reclaim("mail", 10).await.unwrap().requeued == 1,
    )
    .await;
    let events = events_after(&queue, &before).await;
    assert_eq!(kinds(&events), ["retried", "reclaimed"]);
    assert!(
        events[0].error.starts_with("lease expired"),
        "{:?}",
        events[0]
    );
    assert_eq!(events[1].count, Some(1));
    assert_eq!(events[1].detail.as_deref(), Some("1 requeued, 0 dead"));
}

#[tokio::test]
async fn operator_actions_are_one_event_each_naming_who_did_them() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_ops");
    let queue = acting(&server, &ns, ACTOR).await;
    let dead_ids = {
        let added = queue.add_batch("mail", jobs(3)).await.unwrap();
        for job in queue
            .claim("mail", 3, Duration::from_secs(60))
            .await
            .unwrap()
        {
            queue.dead_letter(&job.lease(), "bounced").await.unwrap();
        }
        added.iter().map(|e| e.id().to_owned()).collect::<Vec<_>>()
    };
    let before = newest_event_id(&queue).await;

    queue.pause("mail").await.unwrap();
    queue.pause("mail").await.unwrap(); // already paused: nothing happened
    queue.resume("mail").await.unwrap();
    queue.resume("mail").await.unwrap(); // not paused: nothing happened
    queue.requeue_dead("mail", &dead_ids[..1]).await.unwrap();
    queue.delete_dead("mail", &dead_ids[1..2]).await.unwrap();
    assert_eq!(queue.purge_dead("mail", |_, _| {}).await.unwrap(), 1);
    queue.cancel(&dead_ids[0], "alice on call").await.unwrap();
    queue
        .set_limit("mail", LimitScope::Queue, Limit::concurrency(4))
        .await
        .unwrap();
    queue
        .set_limit("mail", LimitScope::Queue, Limit::none())
        .await
        .unwrap();
    queue
        .upsert_schedule(Schedule::new("digest", "mail", "@daily").job_name("digest"))
        .await
        .unwrap();
    queue.trigger_schedule("digest").await.unwrap();

    let events = events_after(&queue, &before).await;
    assert_eq!(
        kinds(&events),
        [
            "paused",
            "resumed",
            "requeued",
            "deleted",
            "purged",
            "cancelled",
            "limit_set",
            "limit_cleared",
            "schedule_created",
            "schedule_fired"
        ]
    );
    let by = |i: usize| events[i].by.as_deref();
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.queue, "mail", "{event:?}");
        if event.kind != "cancelled" {
            assert_eq!(by(i), Some(ACTOR), "{event:?}");
        }
    }
    assert_eq!(by(5), Some("alice on call"), "cancel's own by wins");
    assert_eq!(
        (events[2].count, events[2].job_id.as_str()),
        (Some(1), dead_ids[0].as_str())
    );
    assert_eq!(
        (events[3].job_id.as_str(), events[3].detail.as_deref()),
        (dead_ids[1].as_str(), Some("dead"))
    );
    assert_eq!(events[4].count, Some(1));
    assert_eq!(events[5].job_id, dead_ids[0]);
    assert_eq!(events[6].detail.as_deref(), Some("queue: concurrency 4"));
    assert_eq!(events[7].detail.as_deref(), Some("queue"));
    assert_eq!(
        (events[8].job_id.as_str(), events[8].detail.as_deref()),
        ("digest", Some("@daily UTC"))
    );
    assert_eq!(events[9].detail.as_deref(), Some("digest (triggered)"));
    assert_eq!(events[9].name.as_deref(), Some("digest"));
    for event in &events {
        let kind = EventKind::of(&event.kind).expect("a kind the driver names");
        assert!(kind.is_operator_action() || kind == EventKind::ScheduleFired);
    }

    // A handle without an actor records none.
    let plain = redq_tests::fixtures::handle(&server, &ns).await;
    let before = newest_event_id(&plain).await;
    plain.pause("mail").await.unwrap();
    let events = events_after(&plain, &before).await;
    assert_eq!(
        (kinds(&events), events[0].by.as_deref()),
        (vec!["paused"], None)
    );
}

#[tokio::test]
async fn workers_joining_leaving_and_lost_are_events_of_the_registry() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_workers");
    let queue = acting(&server, &ns, ACTOR).await;
    // A worker that stopped beating long ago: the next beat finds it lost.
    server
        .cmd(&["ZADD", &format!("{{{ns}}}:workers"), "1", "7-7"])
        .await;
    let options = WorkOptions::new().queues(["mail"]).schedules(false);
    let worker =
        RunningWorker::spawn(Worker::new(queue.clone(), Registry::new(), options).unwrap());
    wait_until(DEADLINE, "the worker's first beat", async || {
        kinds(&all(&queue).await).contains(&"worker_joined")
    })
    .await;
    worker.shutdown().await;
    wait_until(DEADLINE, "the worker's last beat", async || {
        kinds(&all(&queue).await).contains(&"worker_left")
    })
    .await;
    let events = all(&queue).await;
    // A lost worker's detail says when it was last seen (its score, 1 ms
    // past the epoch here), since the event is written when it is noticed.
    let lost = events.iter().find(|e| e.kind == "worker_lost").unwrap();
    let said = lost.detail.as_deref().unwrap();
    assert!(
        said.starts_with("7-7, last seen 1970-01-01 00:00:00 UTC, ")
            && said.ends_with(" days before this was noticed"),
        "{said}"
    );
    let registry: Vec<(&str, Option<&str>)> = events
        .iter()
        .map(|e| {
            let detail = e.detail.as_deref();
            let id = detail.map(|d| d.split_once(", last seen ").map_or(d, |(id, _)| id));
            (e.kind.as_str(), id)
        })
        .collect();
    let me = events
        .iter()
        .find(|e| e.kind == "worker_joined")
        .and_then(|e| e.detail.clone())
        .unwrap();
    assert_eq!(
        registry,
        [
            ("worker_joined", Some(me.as_str())),
            ("worker_lost", Some("7-7")),
            ("worker_left", Some(me.as_str())),
        ]
    );
    assert!(events.iter().all(|e| e.queue.is_empty() && e.by.is_none()));
}

#[tokio::test]
async fn the_stream_stays_at_its_cap() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_cap");
    let queue = acting(&server, &ns, ACTOR).await;
    // Each pause and resume that changes something is one event.
    let rounds = EVENTS_CAP / 2 + 500;
    for _ in 0..rounds {
        queue.pause("mail").await.unwrap();
        queue.resume("mail").await.unwrap();
    }
    let key = format!("{{{ns}}}:events");
    let len: i64 = server.cmd(&["XLEN", &key]).await.convert().unwrap();
    // MAXLEN ~ trims whole stream nodes (100 entries each by default).
    assert!(
        (EVENTS_CAP as i64..=EVENTS_CAP as i64 + 100).contains(&len),
        "{len} entries after {} events",
        rounds * 2
    );
    let bytes: i64 = server
        .cmd(&["MEMORY", "USAGE", &key])
        .await
        .convert()
        .unwrap();
    println!("{{ns}}:events at its cap: {len} entries, {bytes} bytes");
    assert!(bytes < 4_000_000, "{bytes} bytes");
}

#[tokio::test]
async fn a_follower_is_handed_a_new_kind_by_its_blocked_read() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_follow");
    let queue = acting(&server, &ns, ACTOR).await;
    queue.add("mail", jobs(1).remove(0)).await.unwrap();
    let mut feed = queue.follow_events(EventCursor::Now).await.unwrap();
    server.reset_stats().await;
    let follower = tokio::spawn(async move { (feed.next_batch().await, feed) });
    wait_until(DEADLINE, "the follower to block in XREAD", async || {
        let info: String = server.cmd(&["INFO", "clients"]).await.convert().unwrap();
        info.contains("blocked_clients:1")
    })
    .await;
    queue.pause("mail").await.unwrap();
    let (batch, feed) = tokio::time::timeout(DEADLINE, follower)
        .await
        .unwrap()
        .unwrap();
    let batch = batch.unwrap();
    assert_eq!(kinds(&batch), ["paused"]);
    assert_eq!(batch[0].by.as_deref(), Some(ACTOR));
    assert_eq!(feed.position(), batch[0].event_id);
    let seen = server.seen_since_reset().await;
    let xreads = seen
        .commands
        .iter()
        .find(|(name, _)| name == "xread")
        .map_or(0, |(_, n)| *n);
    assert_eq!(xreads, 1, "one blocked read, no polling: {seen:?}");
}

#[tokio::test]
async fn a_schedules_tick_is_one_schedule_fired_event_naming_no_one() {
    let server = RedisServer::start();
    let queue = acting(&server, &unique_namespace("event_kinds_tick"), ACTOR).await;
    queue
        .upsert_schedule(Schedule::new("every-second", "mail", "* * * * * *").job_name("tick"))
        .await
        .unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let scheduler = tokio::spawn(redq::schedule::Scheduler::new(queue.clone()).run(stop.clone()));
    wait_until(DEADLINE, "a tick's event", async || {
        kinds(&all(&queue).await).contains(&"schedule_fired")
    })
    .await;
    stop.cancel();
    scheduler.await.unwrap();
    let fired = all(&queue).await;
    let fired = fired.iter().find(|e| e.kind == "schedule_fired").unwrap();
    assert_eq!(
        (
            fired.queue.as_str(),
            fired.name.as_deref(),
            fired.count,
            fired.detail.as_deref(),
            fired.by.as_deref()
        ),
        ("mail", Some("tick"), Some(1), Some("every-second"), None),
        "a tick is nobody's action, whatever handle runs the scheduler"
    );
    assert_eq!(
        queue.inspect(&fired.job_id).await.unwrap().unwrap().queue,
        "mail"
    );
}

/// The traffic's flood does not trim an incident's events away: a dead
/// letter's event outlives more enqueued events than a stream keeps, which
/// fill the traffic stream to its own cap.
#[tokio::test]
async fn an_incidents_events_outlive_a_flood_of_traffic() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_flood");
    let queue = acting(&server, &ns, ACTOR).await;
    queue
        .add("mail", NewJob::new(json!({"doomed": true})).max_attempts(1))
        .await
        .unwrap();
    let job = queue
        .claim("mail", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    queue
        .nack(&job.lease(), Duration::ZERO, "smtp refused")
        .await
        .unwrap();
    // One call a job: one `enqueued` event each.
    for i in 0..EVENTS_CAP + 500 {
        queue.add("flood", NewJob::new(json!(i))).await.unwrap();
    }
    let traffic = format!("{{{ns}}}:events:traffic");
    let len: i64 = server.cmd(&["XLEN", &traffic]).await.convert().unwrap();
    assert!(
        (EVENTS_CAP as i64..=EVENTS_CAP as i64 + 100).contains(&len),
        "the traffic stream holds {len} entries"
    );
    let dead = queue.latest_events(EventStream::Main, 10).await.unwrap();
    assert_eq!(kinds(&dead), ["dead"], "the dead letter's event is kept");
    assert_eq!(
        (dead[0].job_id.as_str(), dead[0].error.as_str()),
        (job.id.as_str(), "smtp refused")
    );
    // Read as `redq events` reads the main stream: from the start.
    let from_start = queue
        .operator()
        .events_since(EventCursor::Start)
        .await
        .unwrap();
    assert_eq!(kinds(&from_start), ["dead"]);
}

/// Setting the record format and rewriting records back are namespace-wide
/// operator actions: each that did something is one event naming who, what
/// it replaced, and what a rewrite did, so an incident's timeline shows a
/// rollback's steps.
#[tokio::test]
async fn a_record_format_change_and_a_rewrite_are_events_naming_who() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_format");
    let queue = acting(&server, &ns, ACTOR).await;
    let before = newest_event_id(&queue).await;

    queue
        .set_record_format(RecordFormat::Compact)
        .await
        .unwrap();
    queue
        .set_record_format(RecordFormat::Compact)
        .await
        .unwrap(); // nothing changed
    queue.add_batch("mail", jobs(3)).await.unwrap();
    queue
        .set_record_format(RecordFormat::Standard)
        .await
        .unwrap();
    let done = queue.rewrite_records().await.unwrap();
    assert_eq!(done.compact, 3, "{done:?}");
    // Nothing left to rewrite: no event.
    queue.rewrite_records().await.unwrap();

    let events = events_after(&queue, &before).await;
    let ours: Vec<&QueueEvent> = events.iter().filter(|e| e.kind != "enqueued").collect();
    let shown: Vec<_> = ours
        .iter()
        .map(|e| {
            let kind = EventKind::of(&e.kind).expect("a kind the driver names");
            assert!(kind.is_operator_action(), "{e:?}");
            (
                e.kind.as_str(),
                e.queue.as_str(),
                e.count,
                e.detail.as_deref(),
                e.by.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                "record_format_set",
                "",
                None,
                Some("compact (was standard)"),
                Some(ACTOR)
            ),
            (
                "record_format_set",
                "",
                None,
                Some("standard (was compact)"),
                Some(ACTOR)
            ),
            (
                "records_rewritten",
                "",
                Some(3),
                Some("compact 3, detached 0, left leased 0"),
                Some(ACTOR)
            ),
        ]
    );
}

/// An operator's quiet or stop that a worker heard is an event naming the
/// worker and who did it, so whoever comes to the incident next finds why
/// a worker claims nothing; one that no worker heard changed nothing and
/// records nothing.
#[tokio::test]
async fn quieting_and_stopping_a_worker_are_events_of_who_did_it() {
    let server = RedisServer::start();
    let ns = unique_namespace("event_kinds_control");
    let queue = acting(&server, &ns, ACTOR).await;
    let options = WorkOptions::new().queues(["mail"]).schedules(false);
    let worker =
        RunningWorker::spawn(Worker::new(queue.clone(), Registry::new(), options).unwrap());
    wait_until(DEADLINE, "the worker listed", async || {
        !queue.workers().await.unwrap().is_empty()
    })
    .await;
    let id = queue.workers().await.unwrap().remove(0).id;
    let operator = queue.operator();
    assert!(
        !operator.quiet_worker("9-9").await.unwrap(),
        "nobody is 9-9"
    );
    assert!(operator.quiet_worker(&id).await.unwrap());
    assert!(operator.stop_worker(&id).await.unwrap());
    let told: Vec<(String, Option<String>, Option<String>)> = all(&queue)
        .await
        .into_iter()
        .filter(|e| e.kind == "worker_quieted" || e.kind == "worker_stopping")
        .map(|e| (e.kind, e.detail, e.by))
        .collect();
    let by = Some(ACTOR.to_owned());
    assert_eq!(
        told,
        [
            ("worker_quieted".to_owned(), Some(id.clone()), by.clone()),
            ("worker_stopping".to_owned(), Some(id), by),
        ]
    );
    worker.shutdown().await;
}
