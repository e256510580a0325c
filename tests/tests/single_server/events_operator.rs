//! The operator actions that change a schedule, a job or a retention policy
//! each write one event (`redq::events::EventKind`), atomically with the
//! change, naming who did it (`by`, the handle's actor) and what changed
//! (`detail`, never a payload's bytes); an action that changes nothing (an
//! unknown name, the same definition again, a job already due) writes none.

use std::time::Duration;

use redq::events::EventKind;
use redq::schedule::{Schedule, ScheduleChange};
use redq::{NewJob, QueueEvent, Retention};
use redq_tests::events::{acting, events_after, newest_event_id};
use redq_tests::fixtures::*;
use redq_tests::unique_namespace;
use serde_json::json;

const ACTOR: &str = "cli ops@bastion";
const LATER: Duration = Duration::from_secs(3600);
/// Text of every payload here: no event may carry it.
const SECRET: &str = "s3cret-payload-bytes";

/// Each event as (kind, queue, id, detail), after checking what every
/// operator action's event has: a kind the driver names as an operator
/// action, the actor as `by`, and no payload bytes.
fn summary(events: &[QueueEvent]) -> Vec<(String, String, String, Option<String>)> {
    events
        .iter()
        .map(|e| {
            let kind = EventKind::of(&e.kind).expect("a kind the driver names");
            assert!(kind.is_operator_action(), "{e:?}");
            assert_eq!(e.by.as_deref(), Some(ACTOR), "{e:?}");
            assert!(!format!("{e:?}").contains(SECRET), "payload bytes in {e:?}");
            (
                e.kind.clone(),
                e.queue.clone(),
                e.job_id.clone(),
                e.detail.clone(),
            )
        })
        .collect()
}

fn event(
    kind: &str,
    queue: &str,
    id: &str,
    detail: Option<&str>,
) -> (String, String, String, Option<String>) {
    (
        kind.to_owned(),
        queue.to_owned(),
        id.to_owned(),
        detail.map(str::to_owned),
    )
}

#[tokio::test]
async fn each_schedule_change_is_one_event_and_a_no_op_none() {
    let server = server();
    let queue = acting(&server, &unique_namespace("events_op_schedules"), ACTOR).await;
    let digest = || Schedule::new("digest", "mail", "@daily").payload(json!({ "k": SECRET }));
    let before = newest_event_id(&queue).await;

    queue.upsert_schedule(digest()).await.unwrap();
    // The same definition again (an application upserting at every start).
    queue.upsert_schedule(digest()).await.unwrap();
    queue
        .upsert_schedule(digest().payload(json!({ "k": SECRET, "v": 2 })).priority(7))
        .await
        .unwrap();
    assert_eq!(
        queue.pause_schedule("digest").await.unwrap(),
        ScheduleChange::Done
    );
    assert_eq!(
        queue.pause_schedule("digest").await.unwrap(),
        ScheduleChange::Unchanged
    );
    assert_eq!(
        queue.resume_schedule("digest").await.unwrap(),
        ScheduleChange::Done
    );
    assert_eq!(
        queue.resume_schedule("digest").await.unwrap(),
        ScheduleChange::Unchanged
    );
    assert_eq!(
        queue.delete_schedule("digest").await.unwrap(),
        ScheduleChange::Done
    );
    assert_eq!(
        queue.delete_schedule("digest").await.unwrap(),
        ScheduleChange::NotFound
    );
    assert_eq!(
        queue.pause_schedule("digest").await.unwrap(),
        ScheduleChange::NotFound
    );

    assert_eq!(
        summary(&events_after(&queue, &before).await),
        [
            event("schedule_created", "mail", "digest", Some("@daily UTC")),
            event(
                "schedule_changed",
                "mail",
                "digest",
                Some("payload, priority")
            ),
            event("schedule_paused", "mail", "digest", None),
            event("schedule_resumed", "mail", "digest", None),
            event("schedule_deleted", "mail", "digest", None),
        ]
    );

    // A move to another queue, created paused, and paused by an upsert.
    let before = newest_event_id(&queue).await;
    queue
        .upsert_schedule(Schedule::new("sweep", "mail", "0 3 * * *").paused(true))
        .await
        .unwrap();
    queue
        .upsert_schedule(
            Schedule::new("sweep", "ops", "0 4 * * *")
                .timezone("Europe/Paris")
                .paused(false),
        )
        .await
        .unwrap();
    assert_eq!(
        summary(&events_after(&queue, &before).await),
        [
            event(
                "schedule_created",
                "mail",
                "sweep",
                Some("0 3 * * * UTC, paused")
            ),
            event(
                "schedule_changed",
                "ops",
                "sweep",
                Some("queue (was mail), expression (was 0 3 * * *), time zone (was UTC), running")
            ),
        ]
    );
}

#[tokio::test]
async fn promote_retry_now_and_edit_are_one_event_each_and_a_no_op_none() {
    let server = server();
    let queue = acting(&server, &unique_namespace("events_op_surgery"), ACTOR).await;
    let delayed = |n: i64| NewJob::new(json!({ "n": n, "k": SECRET })).delay(LATER);
    let one = queue.add("mail", delayed(0)).await.unwrap().id().to_owned();
    for n in 1..=3 {
        queue.add("mail", delayed(n)).await.unwrap();
    }
    let failing = queue
        .add("flaky", NewJob::new(json!({ "k": SECRET })))
        .await
        .unwrap()
        .id()
        .to_owned();
    let claimed = queue
        .claim("flaky", 1, Duration::from_secs(60))
        .await
        .unwrap();
    queue
        .nack(&claimed[0].lease(), LATER, "boom")
        .await
        .unwrap();
    let before = newest_event_id(&queue).await;

    queue.promote(&one).await.unwrap();
    // Already due: refused, nothing changed.
    assert!(queue.promote(&one).await.is_err());
    assert_eq!(queue.promote_all("mail", |_, _| {}).await.unwrap(), 3);
    assert_eq!(queue.promote_all("mail", |_, _| {}).await.unwrap(), 0);
    queue.retry_now(&failing).await.unwrap();
    let edited = json!({ "k": SECRET, "more": "x" });
    queue.edit_payload(&one, &edited).await.unwrap();
    // The payload it already has: nothing changed.
    queue.edit_payload(&one, &edited).await.unwrap();
    let before_size = json!({ "n": 0, "k": SECRET }).to_string().len();
    let after_size = edited.to_string().len();

    let events = events_after(&queue, &before).await;
    assert_eq!(
        summary(&events),
        [
            event("promoted", "mail", &one, Some("run now")),
            event("promoted", "mail", "", Some("run now")),
            event("promoted", "flaky", &failing, Some("retry now")),
            event(
                "edited",
                "mail",
                &one,
                Some(&format!("payload {before_size} -> {after_size} bytes"))
            ),
        ]
    );
    let counts: Vec<Option<u64>> = events.iter().map(|e| e.count).collect();
    assert_eq!(counts, [Some(1), Some(3), Some(1), None]);
    assert_eq!(
        queue.inspect(&one).await.unwrap().unwrap().payload,
        edited,
        "the edit the event reports is the one stored"
    );
}

#[tokio::test]
async fn a_retention_set_and_clear_are_one_event_each_with_the_figures() {
    let server = server();
    let queue = acting(&server, &unique_namespace("events_op_retention"), ACTOR).await;
    let policy = Retention::new()
        .max_count(100)
        .max_age(Duration::from_secs(3600))
        .keep_tombstones_for(Duration::from_millis(1500));
    let before = newest_event_id(&queue).await;

    queue.set_retention("mail", &policy).await.unwrap();
    queue.set_retention("mail", &policy).await.unwrap(); // the same: no change
    queue
        .set_retention("mail", &Retention::new().max_bytes(1 << 20))
        .await
        .unwrap();
    queue.clear_retention("mail", |_, _| {}).await.unwrap();
    queue.clear_retention("mail", |_, _| {}).await.unwrap(); // nothing to clear

    assert_eq!(
        summary(&events_after(&queue, &before).await),
        [
            event(
                "retention_set",
                "mail",
                "",
                Some("count 100, age 1h, tombstones 1500ms")
            ),
            event(
                "retention_set",
                "mail",
                "",
                Some("size 1048576 bytes, tombstones 1d")
            ),
            event(
                "retention_cleared",
                "mail",
                "",
                Some("size 1048576 bytes, tombstones 1d")
            ),
        ]
    );
}

#[tokio::test]
async fn a_handle_without_an_actor_records_no_one_for_the_new_kinds() {
    let server = server();
    let ns = unique_namespace("events_op_plain");
    let plain = handle(&server, &ns).await;
    let before = newest_event_id(&plain).await;
    plain
        .upsert_schedule(Schedule::new("digest", "mail", "@daily"))
        .await
        .unwrap();
    plain.pause_schedule("digest").await.unwrap();
    let events = events_after(&plain, &before).await;
    let seen: Vec<(&str, Option<&str>)> = events
        .iter()
        .map(|e| (e.kind.as_str(), e.by.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [("schedule_created", None), ("schedule_paused", None)]
    );
}

/// An operator's reclaim (the console's `x` on Leases) names who ran it; a
/// handle without an actor, a worker's, names no one.
#[tokio::test]
async fn a_reclaim_names_the_operator_who_ran_it() {
    let server = server();
    let ns = unique_namespace("events_op_reclaim");
    let operator = acting(&server, &ns, ACTOR).await;
    let worker = handle(&server, &ns).await;
    let mut seen = Vec::new();
    for by in [&operator, &worker] {
        worker.add("mail", NewJob::new(json!(1))).await.unwrap();
        let leased = worker
            .claim("mail", 1, Duration::from_millis(20))
            .await
            .unwrap();
        assert_eq!(leased.len(), 1);
        let before = newest_event_id(&worker).await;
        redq_tests::wait_until(Duration::from_secs(5), "the lease to lapse", async || {
            worker.counts("mail").await.unwrap().lapsed == 1
        })
        .await;
        let reclaimed = by.reclaim("mail", 10).await.unwrap();
        assert_eq!(reclaimed.requeued, 1);
        seen.extend(
            events_after(&worker, &before)
                .await
                .into_iter()
                .filter(|e| e.kind == "reclaimed")
                .map(|e| e.by),
        );
        worker.claim("mail", 1, LATER).await.unwrap();
    }
    assert_eq!(seen, [Some(ACTOR.to_owned()), None]);
}

/// A held waiter's decision writes `released` (or `dead`) naming who
/// decided: the `by` given, else the handle's actor.
#[tokio::test]
async fn a_held_waiters_decision_names_who_decided() {
    use redq::workflow::{Decision, OnFailure};
    let server = server();
    let queue = acting(&server, &unique_namespace("events_op_decide"), ACTOR).await;
    let charge = queue
        .add("pay", NewJob::new(json!("charge")))
        .await
        .unwrap();
    let held = |what: &str| {
        NewJob::new(json!(what))
            .after([charge.id()])
            .on_dependency_failure(OnFailure::Hold)
    };
    let receipt = queue.add("mail", held("receipt")).await.unwrap();
    let refund = queue.add("mail", held("refund")).await.unwrap();
    let job = queue
        .claim("pay", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    queue.dead_letter(&job.lease(), "declined").await.unwrap();
    // A claim of their queue is what finds their gate failed: both held.
    let claimed = queue.claim("mail", 10, Duration::from_secs(60)).await;
    assert!(claimed.unwrap().is_empty());
    let before = newest_event_id(&queue).await;

    queue
        .decide_held(receipt.id(), Decision::Release, "")
        .await
        .unwrap();
    queue
        .decide_held(refund.id(), Decision::DeadLetter, "alice on call")
        .await
        .unwrap();
    let events = events_after(&queue, &before).await;
    let seen: Vec<(&str, &str, Option<&str>)> = events
        .iter()
        .map(|e| (e.kind.as_str(), e.job_id.as_str(), e.by.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            ("released", receipt.id(), Some(ACTOR)),
            ("dead", refund.id(), Some("alice on call")),
        ]
    );
}
