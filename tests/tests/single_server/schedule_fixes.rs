//! Fixes from the schedules review, against a real redis-server: a tick
//! skipped by the misfire policy is seen (event, last_skipped); an upsert
//! whose end leaves no tick is refused before anything is written, and an
//! ended schedule reads as ended; a schedule change names the old
//! expression and time zone; a bad expression is refused with a sentence
//! naming the field.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::events::EventKind;
use redq::keys::Keys;
use redq::schedule::{Misfire, Schedule, Scheduler, Upserted};
use redq::{JobState, QueueError, RedisQueue};
use redq_tests::events::{events_after, latest_of_kind, newest_event_id};
use redq_tests::fixtures::*;
use redq_tests::wait_until;

const QUEUE: &str = "reports";
const DEADLINE: Duration = Duration::from_secs(10);

fn ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

async fn waiting(queue: &RedisQueue) -> usize {
    queue
        .list_jobs(QUEUE, JobState::Waiting, 0, 100)
        .await
        .unwrap()
        .items
        .len()
}

#[tokio::test]
async fn a_tick_skipped_three_minutes_late_is_an_event_and_the_last_skipped() {
    let server = server();
    let queue = queue(&server, "sched-fix-skip").await;
    let keys = Keys::new(queue.namespace());
    queue
        .upsert_schedule(
            Schedule::new("daily-report", QUEUE, "@daily")
                .job_name("acme::report")
                .misfire(Misfire::Skip),
        )
        .await
        .unwrap();
    // A deploy outage: the next run is three minutes in the past.
    let tick = (ms(SystemTime::now()) - 180_000) / 1000 * 1000;
    server
        .cmd(&[
            "ZADD",
            &keys.schedules_next(),
            &tick.to_string(),
            "daily-report",
        ])
        .await;
    let before = newest_event_id(&queue).await;

    let report = Scheduler::new(queue.clone())
        .run_once()
        .await
        .unwrap()
        .report;

    assert_eq!((report.enqueued, report.skipped), (0, 1), "{report:?}");
    assert_eq!(waiting(&queue).await, 0, "a skip enqueues nothing");
    let info = queue.schedule("daily-report").await.unwrap().unwrap();
    assert_eq!(info.last_run, None);
    assert_eq!(info.last_skipped.map(ms), Some(tick), "{info:?}");
    let events = events_after(&queue, &before).await;
    let skipped: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::ScheduleSkipped.as_str())
        .collect();
    assert_eq!(skipped.len(), 1, "{events:?}");
    let event = skipped[0];
    assert_eq!(
        (event.queue.as_str(), event.job_id.as_str()),
        (QUEUE, "daily-report")
    );
    assert_eq!(event.name.as_deref(), Some("acme::report"));
    let detail = event.detail.as_deref().unwrap();
    assert!(detail.starts_with("tick "), "{detail}");
    assert!(
        detail.ends_with(" UTC skipped 3 min late (misfire policy skip)")
            || detail.ends_with(" UTC skipped 4 min late (misfire policy skip)"),
        "{detail}"
    );

    // A later upsert keeps the record of the skip.
    queue
        .upsert_schedule(
            Schedule::new("daily-report", QUEUE, "@daily")
                .job_name("acme::report")
                .misfire(Misfire::Skip)
                .priority(2),
        )
        .await
        .unwrap();
    let info = queue.schedule("daily-report").await.unwrap().unwrap();
    assert_eq!(info.last_skipped.map(ms), Some(tick));
}

#[tokio::test]
async fn a_skip_after_a_long_outage_names_the_tick_and_the_days() {
    let server = server();
    let queue = queue(&server, "sched-fix-skip-days").await;
    let keys = Keys::new(queue.namespace());
    queue
        .upsert_schedule(Schedule::new("weekly", QUEUE, "@weekly").misfire(Misfire::Skip))
        .await
        .unwrap();
    // 2020-02-29T12:34:56Z: a leap day, for the script's calendar.
    let tick: u64 = 1_582_979_696_000;
    server
        .cmd(&["ZADD", &keys.schedules_next(), &tick.to_string(), "weekly"])
        .await;
    let before = newest_event_id(&queue).await;
    let report = Scheduler::new(queue.clone())
        .run_once()
        .await
        .unwrap()
        .report;
    assert_eq!(report.skipped, 1, "{report:?}");
    let days = (ms(SystemTime::now()) - tick) / 86_400_000;
    let details: Vec<String> = events_after(&queue, &before)
        .await
        .into_iter()
        .filter(|e| e.kind == EventKind::ScheduleSkipped.as_str())
        .filter_map(|e| e.detail)
        .collect();
    assert_eq!(
        details,
        [format!(
            "tick 2020-02-29 12:34:56 UTC skipped {days} days late (misfire policy skip)"
        )]
    );
}

#[tokio::test]
async fn a_schedule_stored_before_last_skipped_existed_still_reads_and_fires() {
    let server = server();
    let queue = queue(&server, "sched-fix-old-record").await;
    let keys = Keys::new(queue.namespace());
    queue
        .upsert_schedule(Schedule::new("old", QUEUE, "* * * * * *"))
        .await
        .unwrap();
    // Cut the stored record back to the 19 fields of the previous layout.
    let trimmed = server
        .cmd(&[
            "EVAL",
            "local s = cmsgpack.unpack(redis.call('HGET', KEYS[1], 'old')) \
             s[20] = nil \
             redis.call('HSET', KEYS[1], 'old', cmsgpack.pack(s)) return #s",
            "1",
            &keys.schedules(),
        ])
        .await;
    assert_eq!(trimmed.as_i64(), Some(19));
    let info = queue.schedule("old").await.unwrap().unwrap();
    assert_eq!(info.last_skipped, None);
    wait_until(DEADLINE, "a tick of the old record", async || {
        Scheduler::new(queue.clone()).run_once().await.unwrap();
        waiting(&queue).await > 0
    })
    .await;
}

#[tokio::test]
async fn an_upsert_whose_end_leaves_no_tick_is_refused_and_nothing_is_stored() {
    let server = server();
    let queue = queue(&server, "sched-fix-ended").await;
    let now = SystemTime::now();

    let err = queue
        .upsert_schedule(Schedule::new("past", QUEUE, "* * * * *").ends_at(now))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            QueueError::Invalid {
                what: "ends_at",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        text.contains("this end has passed, so the schedule would never fire"),
        "{text}"
    );
    assert!(text.contains("on the Redis clock"), "{text}");
    assert_eq!(queue.schedule("past").await.unwrap(), None);

    // An end still ahead, but before the first tick.
    let err = queue
        .upsert_schedule(
            Schedule::new("too-soon", QUEUE, "0 0 1 1 *").ends_at(now + Duration::from_secs(60)),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no tick of \"0 0 1 1 *\" falls before this end"),
        "{err}"
    );
    assert_eq!(queue.schedule("too-soon").await.unwrap(), None);
}

#[tokio::test]
async fn an_ended_schedule_reads_as_ended_and_re_upserting_it_still_works() {
    let server = server();
    let queue = queue(&server, "sched-fix-ends").await;
    let ends = SystemTime::now() + Duration::from_millis(1_500);
    let brief = || Schedule::new("brief", QUEUE, "* * * * * *").ends_at(ends);
    queue.upsert_schedule(brief()).await.unwrap();
    let info = queue.schedule("brief").await.unwrap().unwrap();
    assert!(!info.ended(SystemTime::now()), "{info:?}");

    wait_until(DEADLINE, "the brief schedule to end", async || {
        Scheduler::new(queue.clone()).run_once().await.unwrap();
        queue
            .schedule("brief")
            .await
            .unwrap()
            .unwrap()
            .next_run
            .is_none()
    })
    .await;
    let info = queue.schedule("brief").await.unwrap().unwrap();
    assert!(info.ended(SystemTime::now()), "{info:?}");
    assert!(!info.paused);

    // An application upserting its schedules at every start is not refused
    // once one has ended: the stored timing is accepted as it is.
    assert_eq!(
        queue.upsert_schedule(brief()).await.unwrap(),
        Upserted::Updated { next_run: None }
    );
    // A new end in the past is a mistake, refused.
    let err = queue
        .upsert_schedule(brief().ends_at(ends - Duration::from_secs(1)))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            QueueError::Invalid {
                what: "ends_at",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_schedule_change_names_the_old_expression_and_time_zone() {
    let server = server();
    let queue = queue(&server, "sched-fix-changed").await;
    queue
        .upsert_schedule(Schedule::new("nightly", QUEUE, "0 2 * * *"))
        .await
        .unwrap();
    queue
        .upsert_schedule(Schedule::new("nightly", QUEUE, "0 3 * * *").timezone("Europe/Paris"))
        .await
        .unwrap();
    let long = format!(
        "0 {} * * *",
        (0..24).map(|h| h.to_string()).collect::<Vec<_>>().join(",")
    );
    queue
        .upsert_schedule(Schedule::new("nightly", QUEUE, long.as_str()).timezone("Europe/Paris"))
        .await
        .unwrap();
    queue
        .upsert_schedule(Schedule::new("nightly", QUEUE, "@daily").timezone("Europe/Paris"))
        .await
        .unwrap();
    let details: Vec<String> = latest_of_kind(&queue, EventKind::ScheduleChanged)
        .await
        .into_iter()
        .rev()
        .map(|e| e.detail.unwrap_or_default())
        .collect();
    assert_eq!(
        details,
        [
            "expression (was 0 2 * * *), time zone (was UTC)".to_owned(),
            "expression (was 0 3 * * *)".to_owned(),
            // An old expression is cut to 64 bytes.
            format!("expression (was {}...)", &long[..64]),
        ]
    );
}

#[tokio::test]
async fn a_bad_expression_is_refused_naming_the_field_and_nothing_is_stored() {
    let server = server();
    let queue = queue(&server, "sched-fix-cron-errors").await;
    for (expression, rule) in [
        (
            "0 25 * * *",
            "the hour field 25 is out of range: hours are 0-23",
        ),
        (
            "61 * * * *",
            "the minute field 61 is out of range: minutes are 0-59",
        ),
    ] {
        let err = queue
            .upsert_schedule(Schedule::new("bad", QUEUE, expression))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("invalid cron expression {expression:?}: {rule}")
        );
    }
    let err = queue
        .upsert_schedule(Schedule::new("bad", QUEUE, "30 2 * * * Europe/Paris"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("with .timezone(...) (--timezone on the command line)"),
        "{err}"
    );
    // @every is supported now (schedule_every.rs); a bad interval is refused.
    let err = queue
        .upsert_schedule(Schedule::new("bad", QUEUE, "@every 5x"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("which @every does not know"), "{err}");
    assert_eq!(queue.schedule("bad").await.unwrap(), None);
}
