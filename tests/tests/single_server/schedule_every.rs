//! Interval schedules (`@every <interval>`) against a real redis-server:
//! ticks at multiples of the interval since the epoch, each fired exactly
//! once however many schedulers run, misfire policies as for cron, and bad
//! intervals refused before anything is written.
//!
//! Time is handled as in `schedules.rs` and `schedule_fixes.rs`: most tests
//! put a schedule's stored next run in the past (`ZADD` on
//! `schedules:next`, an outage) and drive scheduler passes with
//! `run_once`, so nothing waits on the clock; the one test that runs
//! schedulers for real uses a 2 s interval and counts ticks from the
//! schedule's own state, with deadlines.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::keys::Keys;
use redq::schedule::{tick_job_id, Misfire, Schedule, Scheduler, SchedulerReport};
use redq::{JobState, Operator, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio_util::sync::CancellationToken;

const QUEUE: &str = "intervals";
const MINUTE: u64 = 60_000;

fn ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn at_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

async fn connect(server: &RedisServer, namespace: &str) -> RedisQueue {
    RedisQueue::builder(&server.url())
        .namespace(namespace)
        .connect()
        .await
        .expect("connecting to the test redis")
}

/// The ticks (unix ms) of the waiting jobs of schedule `name`, sorted;
/// panics on a job that is not a tick job of that schedule.
async fn fired_ticks(queue: &RedisQueue, schedule: &str) -> Vec<u64> {
    let mut ticks: Vec<u64> = queue
        .list_jobs(QUEUE, JobState::Waiting, 0, 1000)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|job| {
            let tick: u64 = job.id.rsplit('-').next().unwrap().parse().unwrap();
            assert_eq!(job.id, tick_job_id(schedule, at_ms(tick)), "foreign job");
            tick
        })
        .collect();
    ticks.sort_unstable();
    ticks
}

async fn next_run_ms(queue: &RedisQueue, schedule: &str) -> u64 {
    queue
        .schedule(schedule)
        .await
        .unwrap()
        .expect("schedule exists")
        .next_run
        .map(ms)
        .expect("a next run")
}

/// Put schedule `name`'s next run back to `tick`, as after an outage.
async fn backdate(server: &RedisServer, namespace: &str, name: &str, tick: u64) {
    server
        .cmd(&[
            "ZADD",
            &Keys::new(namespace).schedules_next(),
            &tick.to_string(),
            name,
        ])
        .await;
}

fn sum(reports: &[SchedulerReport]) -> SchedulerReport {
    let mut total = SchedulerReport::default();
    for r in reports {
        total.enqueued += r.enqueued;
        total.duplicates += r.duplicates;
        total.skipped += r.skipped;
        total.lost += r.lost;
        total.errors += r.errors;
    }
    total
}

#[tokio::test]
async fn an_every_schedule_stores_a_next_run_aligned_to_the_epoch() {
    let server = server();
    let queue = queue(&server, "every-aligned").await;
    let seven = 7 * MINUTE;
    let before = ms(SystemTime::now());
    let next = queue
        .upsert_schedule(Schedule::new("seven", QUEUE, "@every 7m"))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    // A multiple of 7 minutes since 1970, not 7 minutes after the upsert.
    assert_eq!(next % seven, 0, "{next}");
    assert!(next > before && next <= before + seven + 1000, "{next}");
    assert_eq!(next_run_ms(&queue, "seven").await, next);

    // Schedule::every writes the same syntax, largest unit first.
    let upserted = queue
        .upsert_schedule(Schedule::every(
            "ninety",
            QUEUE,
            Duration::from_secs(90 * 60),
        ))
        .await
        .unwrap();
    let info = queue.schedule("ninety").await.unwrap().unwrap();
    assert_eq!(info.expression, "@every 1h30m");
    assert_eq!(info.timezone, "UTC");
    let next = ms(upserted.next_run().unwrap());
    assert_eq!(next % (90 * MINUTE), 0);

    // The operator's preview: the next ticks, one interval apart.
    let preview = Operator::upcoming_runs(&info, SystemTime::now(), 5).unwrap();
    let got: Vec<u64> = preview.iter().map(|(at, _)| ms(*at)).collect();
    let want: Vec<u64> = (0..5).map(|i| next + i * 90 * MINUTE).collect();
    assert_eq!(got, want);
    assert!(preview[0].1.ends_with("+00:00"), "{}", preview[0].1);
}

#[tokio::test]
async fn two_schedulers_fire_each_interval_tick_exactly_once() {
    let server = server();
    let ns = unique_namespace("every-two");
    let queue = connect(&server, &ns).await;
    let seven = 7 * MINUTE;
    let future = queue
        .upsert_schedule(Schedule::new("seven", QUEUE, "@every 7m"))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    let first = connect(&server, &ns).await;
    let second = connect(&server, &ns).await;

    // Three outages, each leaving one missed tick due: both schedulers pass
    // at once, and the tick fires once, the next run back to the future.
    let mut reports = Vec::new();
    for ticks_ago in [3, 2, 1] {
        let tick = future - ticks_ago * seven;
        backdate(&server, &ns, "seven", tick).await;
        let (one, two) = (
            Scheduler::new(first.clone()),
            Scheduler::new(second.clone()),
        );
        let (a, b) = tokio::join!(one.run_once(), two.run_once());
        let pass = sum(&[a.unwrap().report, b.unwrap().report]);
        assert_eq!(pass.enqueued, 1, "tick {tick}: {pass:?}");
        assert_eq!((pass.duplicates, pass.errors), (0, 0), "{pass:?}");
        assert_eq!(next_run_ms(&queue, "seven").await, future, "aligned, ahead");
        reports.push(pass);
    }
    assert_eq!(
        fired_ticks(&queue, "seven").await,
        [future - 3 * seven, future - 2 * seven, future - seven]
    );
    let info = queue.schedule("seven").await.unwrap().unwrap();
    assert_eq!(info.last_tick.map(ms), Some(future - seven));

    // Nothing more is due: another pass of each fires nothing.
    for q in [&first, &second] {
        let pass = Scheduler::new(q.clone()).run_once().await.unwrap();
        assert_eq!(pass.report, SchedulerReport::default());
    }
}

#[tokio::test]
async fn two_running_schedulers_fire_a_two_second_interval_once_per_tick() {
    let server = server();
    let ns = unique_namespace("every-live");
    let queue = connect(&server, &ns).await;
    let first = queue
        .upsert_schedule(Schedule::new("two", QUEUE, "@every 2s"))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    assert_eq!(first % 2000, 0);

    let cancel = CancellationToken::new();
    let mut schedulers = Vec::new();
    for _ in 0..2 {
        let handle = connect(&server, &ns).await;
        schedulers.push(tokio::spawn(Scheduler::new(handle).run(cancel.clone())));
    }
    wait_until(
        Duration::from_secs(15),
        "3 ticks of an @every 2s schedule to fire",
        async || fired_ticks(&queue, "two").await.len() >= 3,
    )
    .await;
    cancel.cancel();
    let mut reports = Vec::new();
    for scheduler in schedulers {
        reports.push(scheduler.await.unwrap());
    }
    let total = sum(&reports);

    // Every tick in [first, next run left stored) fired, once, and only those.
    let stop = next_run_ms(&queue, "two").await;
    assert_eq!(stop % 2000, 0);
    let ticks = fired_ticks(&queue, "two").await;
    assert_eq!(ticks, (first..stop).step_by(2000).collect::<Vec<_>>());
    assert_eq!(total.enqueued, ticks.len() as u64, "{total:?}");
    assert_eq!(
        (total.duplicates, total.skipped, total.errors),
        (0, 0, 0),
        "{total:?}"
    );
}

#[tokio::test]
async fn missed_interval_ticks_fire_once_or_skip_then_continue_aligned() {
    let server = server();
    let ns = unique_namespace("every-misfire");
    let queue = connect(&server, &ns).await;
    let mut futures = Vec::new();
    for (name, misfire) in [("once", Misfire::FireOnce), ("skip", Misfire::Skip)] {
        let next = queue
            .upsert_schedule(Schedule::new(name, QUEUE, "@every 1m").misfire(misfire))
            .await
            .unwrap()
            .next_run()
            .map(ms)
            .unwrap();
        // Five minutes without a scheduler.
        backdate(&server, &ns, name, next - 5 * MINUTE).await;
        futures.push(next);
    }
    let report = Scheduler::new(queue.clone())
        .run_once()
        .await
        .unwrap()
        .report;
    assert_eq!((report.enqueued, report.skipped), (1, 1), "{report:?}");
    let now = ms(SystemTime::now());
    for name in ["once", "skip"] {
        let next = next_run_ms(&queue, name).await;
        assert_eq!(next % MINUTE, 0, "{name}: {next}");
        assert!(next > now - 1000 && next <= now + MINUTE, "{name}: {next}");
    }
    // FireOnce: the first missed tick; Skip: nothing, and says so.
    let once = fired_ticks(&queue, "once").await;
    assert_eq!(once, [futures[0] - 5 * MINUTE]);
    let skip = queue.schedule("skip").await.unwrap().unwrap();
    assert_eq!(skip.last_job_id, None);
    assert_eq!(skip.last_skipped.map(ms), Some(futures[1] - 5 * MINUTE));
}

#[tokio::test]
async fn a_bad_interval_or_a_non_utc_zone_is_refused_and_nothing_is_stored() {
    let server = server();
    let queue = queue(&server, "every-refused").await;
    for bad in [
        "@every 0s",
        "@every 500ms",
        "@every 367d",
        "@every 5",
        "@every",
    ] {
        let result = queue
            .upsert_schedule(Schedule::new("bad", QUEUE, bad))
            .await;
        assert_invalid(result, "interval");
    }
    let err = queue
        .upsert_schedule(Schedule::new("bad", QUEUE, "@every 2w"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid interval \"@every 2w\": the interval \"2w\" has the unit \"w\", which \
         @every does not know: accepted is a whole number of s, m, h or d, or a combination \
         largest first, such as 30s, 5m, 1h30m or 2d, from 1s to 366d"
    );
    let result = queue
        .upsert_schedule(Schedule::every("bad", QUEUE, Duration::from_millis(1500)))
        .await;
    assert_invalid(result, "interval");
    let err = queue
        .upsert_schedule(Schedule::new("bad", QUEUE, "@every 1d").timezone("Europe/Paris"))
        .await
        .unwrap_err();
    match &err {
        QueueError::Invalid { what, .. } => assert_eq!(*what, "timezone"),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("which no time zone moves"),
        "{err}"
    );
    assert!(queue.list_schedules().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_every_schedule_with_a_start_ticks_at_the_first_aligned_time_from_it() {
    let server = server();
    let queue = queue(&server, "every-start").await;
    let hour = 60 * MINUTE;
    // A start two and a half hours ahead, between two hourly ticks.
    let base = (ms(SystemTime::now()) / hour + 2) * hour;
    let start = base + hour / 2;
    let next = queue
        .upsert_schedule(Schedule::new("hourly", QUEUE, "@every 1h").starts_at(at_ms(start)))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    assert_eq!(next, base + hour, "the aligned tick after the start");
    // A start exactly on a tick fires at it.
    let next = queue
        .upsert_schedule(Schedule::new("on-tick", QUEUE, "@every 1h").starts_at(at_ms(base)))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    assert_eq!(next, base);
}
