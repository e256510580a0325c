//! Recurring schedules against a real redis-server: exactly one job per tick
//! however many schedulers run, misfire policies, and the operator calls.
//!
//! How ticks are counted: never from wall-clock guesses, always from the
//! schedule's own state. The window opens at the first tick the upsert
//! reported and closes before the next run left stored once every scheduler
//! has stopped; every tick in that half-open window must own exactly one job
//! (its id names the tick) and no job may lie outside it. A scheduler stopped
//! mid-tick therefore cannot make the count flaky: the tick either fired (and
//! the stored next run moved past it) or it did not (and it is outside the
//! window).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::keys::Keys;
use redq::schedule::{
    tick_job_id, Misfire, Schedule, ScheduleChange, Scheduler, SchedulerReport, Triggered, Upserted,
};
use redq::{JobState, QueueError, RedisQueue};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const DEADLINE: Duration = Duration::from_secs(10);
const QUEUE: &str = "ticks";

async fn handle(server: &RedisServer, namespace: &str) -> RedisQueue {
    RedisQueue::builder(&server.url())
        .namespace(namespace)
        .connect()
        .await
        .expect("connecting to the test redis")
}

fn ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn at_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// Ids of every job waiting in `queue`.
async fn job_ids(queue: &RedisQueue, name: &str) -> Vec<String> {
    queue
        .list_jobs(name, JobState::Waiting, 0, 1000)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|job| job.id)
        .collect()
}

/// The ticks (unix ms) of the waiting jobs of schedule `name`, sorted; panics
/// on a job id that is not a tick id of that schedule.
async fn fired_ticks(queue: &RedisQueue, schedule: &str) -> Vec<u64> {
    let mut ticks: Vec<u64> = job_ids(queue, QUEUE)
        .await
        .iter()
        .map(|id| {
            let tick: u64 = id.rsplit('-').next().unwrap().parse().unwrap();
            assert_eq!(*id, tick_job_id(schedule, at_ms(tick)), "foreign job {id}");
            tick
        })
        .collect();
    ticks.sort_unstable();
    ticks
}

/// Every second from `first` (inclusive) to `stop` (exclusive).
fn seconds(first: u64, stop: u64) -> Vec<u64> {
    (first..stop).step_by(1000).collect()
}

/// Waits (with a deadline) until schedule `name` has fired at least `n` ticks.
async fn wait_for_ticks(queue: &RedisQueue, schedule: &str, n: usize) {
    wait_until(
        DEADLINE,
        &format!("{n} ticks of {schedule} to fire"),
        async || fired_ticks(queue, schedule).await.len() >= n,
    )
    .await;
}

fn spawn_scheduler(queue: RedisQueue, cancel: &CancellationToken) -> JoinHandle<SchedulerReport> {
    tokio::spawn(Scheduler::new(queue).run(cancel.clone()))
}

async fn next_run_ms(queue: &RedisQueue, schedule: &str) -> Option<u64> {
    queue
        .schedule(schedule)
        .await
        .unwrap()
        .expect("schedule exists")
        .next_run
        .map(ms)
}

#[tokio::test]
async fn three_schedulers_enqueue_exactly_one_job_per_tick() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-three");
    let queue = handle(&server, &ns).await;
    let first = queue
        .upsert_schedule(
            Schedule::new("every-second", QUEUE, "* * * * * *").payload(json!({"n": 1})),
        )
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();

    let cancel = CancellationToken::new();
    let mut schedulers = Vec::new();
    for _ in 0..3 {
        schedulers.push(spawn_scheduler(handle(&server, &ns).await, &cancel));
    }
    wait_for_ticks(&queue, "every-second", 4).await;
    cancel.cancel();
    let mut total = SchedulerReport::default();
    for scheduler in schedulers {
        let report = scheduler.await.unwrap();
        total.enqueued += report.enqueued;
        total.duplicates += report.duplicates;
        total.skipped += report.skipped;
        total.lost += report.lost;
        total.errors += report.errors;
    }

    let stop = next_run_ms(&queue, "every-second").await.unwrap();
    let ticks = fired_ticks(&queue, "every-second").await;
    assert_eq!(
        ticks,
        seconds(first, stop),
        "one job per tick in [first, stop)"
    );
    // Every tick was fired by exactly one scheduler: the others lost the
    // compare-and-advance and created nothing.
    assert_eq!(total.enqueued, ticks.len() as u64, "{total:?}");
    // The losers stopped at the compare-and-advance itself, not at the later
    // guards (the tick job id, the last fired tick).
    assert_eq!(
        (total.duplicates, total.skipped, total.errors),
        (0, 0, 0),
        "{total:?}"
    );

    let info = queue.schedule("every-second").await.unwrap().unwrap();
    let last = *ticks.last().unwrap();
    assert_eq!(info.last_tick.map(ms), Some(last));
    assert_eq!(
        info.last_job_id,
        Some(tick_job_id("every-second", at_ms(last)))
    );
    assert_eq!(
        queue
            .list_jobs(QUEUE, JobState::Waiting, 0, 1)
            .await
            .unwrap()
            .items[0]
            .payload,
        json!({"n": 1})
    );
}

#[tokio::test]
async fn killing_schedulers_changes_nothing() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-kill");
    let queue = handle(&server, &ns).await;
    let first = queue
        .upsert_schedule(Schedule::new("every-second", QUEUE, "* * * * * *"))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();

    let survivor_cancel = CancellationToken::new();
    let aborted_cancel = CancellationToken::new();
    let stopped_cancel = CancellationToken::new();
    let survivor = spawn_scheduler(handle(&server, &ns).await, &survivor_cancel);
    let aborted = spawn_scheduler(handle(&server, &ns).await, &aborted_cancel);
    let stopped = spawn_scheduler(handle(&server, &ns).await, &stopped_cancel);

    // Killed outright, wherever it is (possibly mid-call), then one stopped
    // by its token just after a tick, when it is most likely busy firing.
    wait_for_ticks(&queue, "every-second", 2).await;
    aborted.abort();
    assert!(aborted.await.unwrap_err().is_cancelled());
    let next = next_run_ms(&queue, "every-second").await.unwrap();
    let now = ms(SystemTime::now());
    tokio::time::sleep(Duration::from_millis(next.saturating_sub(now) + 2)).await;
    stopped_cancel.cancel();
    stopped.await.unwrap();

    // The survivor alone keeps every later tick.
    let so_far = fired_ticks(&queue, "every-second").await.len();
    wait_for_ticks(&queue, "every-second", so_far + 2).await;
    survivor_cancel.cancel();
    survivor.await.unwrap();

    let stop = next_run_ms(&queue, "every-second").await.unwrap();
    let ticks = fired_ticks(&queue, "every-second").await;
    assert_eq!(
        ticks,
        seconds(first, stop),
        "one job per tick in [first, stop)"
    );
}

/// Upsert a per-second schedule, let `downtime` pass with no scheduler, then
/// run one pass; returns (first tick, report of that pass, next run after it).
async fn after_downtime(
    queue: &RedisQueue,
    misfire: Misfire,
    downtime: Duration,
) -> (u64, SchedulerReport, u64) {
    let first = queue
        .upsert_schedule(Schedule::new("every-second", QUEUE, "* * * * * *").misfire(misfire))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    tokio::time::sleep(downtime).await;
    let pass = Scheduler::new(queue.clone()).run_once().await.unwrap();
    let next = next_run_ms(queue, "every-second").await.unwrap();
    (first, pass.report, next)
}

#[tokio::test]
async fn downtime_fires_once_then_continues_from_the_next_future_tick() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-fire-once");
    let queue = handle(&server, &ns).await;
    let (first, report, next) =
        after_downtime(&queue, Misfire::FireOnce, Duration::from_millis(3_500)).await;

    // Three or four ticks were missed: one job, for the first of them.
    assert_eq!(report.enqueued, 1, "{report:?}");
    assert_eq!(fired_ticks(&queue, "every-second").await, [first]);
    assert!(
        next >= first + 3_000,
        "next run {next} is not past the missed ticks"
    );
    assert!(next > ms(SystemTime::now()) - 1_000);

    // Then one job per tick again.
    let cancel = CancellationToken::new();
    let scheduler = spawn_scheduler(handle(&server, &ns).await, &cancel);
    wait_for_ticks(&queue, "every-second", 3).await;
    cancel.cancel();
    scheduler.await.unwrap();
    let stop = next_run_ms(&queue, "every-second").await.unwrap();
    let mut expected = vec![first];
    expected.extend(seconds(next, stop));
    assert_eq!(fired_ticks(&queue, "every-second").await, expected);
}

#[tokio::test]
async fn downtime_with_skip_fires_nothing_for_missed_ticks() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-skip");
    let queue = handle(&server, &ns).await;
    let (first, report, next) =
        after_downtime(&queue, Misfire::Skip, Duration::from_millis(3_500)).await;

    assert_eq!((report.enqueued, report.skipped), (0, 1), "{report:?}");
    assert!(job_ids(&queue, QUEUE).await.is_empty());
    assert!(next >= first + 3_000);
    let info = queue.schedule("every-second").await.unwrap().unwrap();
    assert_eq!((info.last_run, info.last_job_id), (None, None));
    assert_eq!(info.last_tick.map(ms), Some(first));

    // On-time ticks still fire under Skip.
    let cancel = CancellationToken::new();
    let scheduler = spawn_scheduler(handle(&server, &ns).await, &cancel);
    wait_for_ticks(&queue, "every-second", 2).await;
    cancel.cancel();
    scheduler.await.unwrap();
    let stop = next_run_ms(&queue, "every-second").await.unwrap();
    let ticks = fired_ticks(&queue, "every-second").await;
    assert_eq!(ticks, seconds(next, stop));
}

#[tokio::test]
async fn a_daily_schedule_down_for_days_fires_once_or_skips() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-daily");
    let queue = handle(&server, &ns).await;
    let keys = Keys::new(&ns);
    let day = 86_400_000;
    for (name, misfire) in [("once", Misfire::FireOnce), ("skip", Misfire::Skip)] {
        let upserted = queue
            .upsert_schedule(Schedule::new(name, QUEUE, "@daily").misfire(misfire))
            .await
            .unwrap();
        let midnight = ms(upserted.next_run().unwrap());
        assert_eq!(midnight % day, 0);
        // Three days without a scheduler: put the next run back to a past midnight.
        let past = (midnight - 3 * day).to_string();
        server
            .cmd(&["ZADD", &keys.schedules_next(), &past, name])
            .await;
    }
    let report = Scheduler::new(queue.clone())
        .run_once()
        .await
        .unwrap()
        .report;
    assert_eq!((report.enqueued, report.skipped), (1, 1), "{report:?}");
    let once = queue.schedule("once").await.unwrap().unwrap();
    let skip = queue.schedule("skip").await.unwrap().unwrap();
    let midnight = ms(once.next_run.unwrap());
    assert_eq!(skip.next_run.map(ms), Some(midnight));
    assert!(
        midnight > ms(SystemTime::now()),
        "continues from a future tick"
    );
    assert_eq!(
        job_ids(&queue, QUEUE).await,
        [tick_job_id("once", at_ms(midnight - 3 * day))]
    );
    assert_eq!(skip.last_job_id, None);
    // A second pass finds nothing due.
    let again = Scheduler::new(queue.clone()).run_once().await.unwrap();
    assert_eq!(again.report, SchedulerReport::default());
    assert!(again.next_due.unwrap() > Duration::ZERO);
}

#[tokio::test]
async fn upsert_changes_the_expression_and_keeps_the_run_history() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-upsert");
    let queue = handle(&server, &ns).await;
    let daily = Schedule::new("report", QUEUE, "0 0 * * *").payload(json!({"v": 1}));
    let created = queue.upsert_schedule(daily.clone()).await.unwrap();
    assert!(matches!(created, Upserted::Created { .. }));
    let midnight = ms(created.next_run().unwrap());
    assert_eq!(midnight % 86_400_000, 0);

    // The same timing again (an application restarting): the next run stays.
    let again = queue
        .upsert_schedule(daily.payload(json!({"v": 2})))
        .await
        .unwrap();
    assert_eq!(
        again,
        Upserted::Updated {
            next_run: Some(at_ms(midnight))
        }
    );

    // A new expression: the next run follows it at once.
    queue.trigger_schedule("report").await.unwrap();
    let before = queue.schedule("report").await.unwrap().unwrap();
    let changed = queue
        .upsert_schedule(Schedule::new("report", QUEUE, "* * * * * *").payload(json!({"v": 3})))
        .await
        .unwrap();
    let next = ms(changed.next_run().unwrap());
    assert!(
        next < midnight && next <= ms(SystemTime::now()) + 1_500,
        "{next}"
    );
    let info = queue.schedule("report").await.unwrap().unwrap();
    assert_eq!(info.expression, "* * * * * *");
    assert_eq!(info.revision, 3);
    assert_eq!(info.last_job_id, before.last_job_id, "history kept");
    assert_eq!(info.created_at, before.created_at);

    // The next tick enqueues the new payload.
    let cancel = CancellationToken::new();
    let scheduler = spawn_scheduler(handle(&server, &ns).await, &cancel);
    let tick_id = tick_job_id("report", at_ms(next));
    wait_until(
        DEADLINE,
        "the first tick of the new expression",
        async || job_ids(&queue, QUEUE).await.contains(&tick_id),
    )
    .await;
    cancel.cancel();
    scheduler.await.unwrap();
    let job = queue.inspect(&tick_id).await.unwrap().unwrap();
    assert_eq!(job.payload, json!({"v": 3}));
}

#[tokio::test]
async fn pause_resume_trigger_and_delete() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-ops");
    let queue = handle(&server, &ns).await;
    let schedule = Schedule::new("beat", QUEUE, "* * * * * *")
        .payload(json!({"beat": true}))
        .priority(7)
        .max_attempts(3)
        .job_name("heartbeat");
    queue.upsert_schedule(schedule.clone()).await.unwrap();

    assert_eq!(
        queue.pause_schedule("beat").await.unwrap(),
        ScheduleChange::Done
    );
    assert_eq!(
        queue.pause_schedule("beat").await.unwrap(),
        ScheduleChange::Unchanged
    );
    let info = queue.schedule("beat").await.unwrap().unwrap();
    assert!(info.paused);
    assert_eq!(info.next_run, None);

    // Re-upserting without saying `paused` keeps the operator's pause.
    let kept = queue.upsert_schedule(schedule.clone()).await.unwrap();
    assert_eq!(kept.next_run(), None);
    assert!(queue.schedule("beat").await.unwrap().unwrap().paused);

    // Paused: ticks pass, nothing fires.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let pass = Scheduler::new(queue.clone()).run_once().await.unwrap();
    assert_eq!(pass.report, SchedulerReport::default());
    assert_eq!(pass.next_due, None);
    assert!(job_ids(&queue, QUEUE).await.is_empty());

    // Trigger now works on a paused schedule, with its payload and options.
    let Triggered::Enqueued(id) = queue.trigger_schedule("beat").await.unwrap() else {
        panic!("trigger found no schedule");
    };
    let jobs = queue
        .claim(QUEUE, 10, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].id, id);
    assert_eq!(jobs[0].payload, json!({"beat": true}));
    assert_eq!(
        (
            jobs[0].priority,
            jobs[0].max_attempts,
            jobs[0].name.as_deref()
        ),
        (7, 3, Some("heartbeat"))
    );
    queue.ack(&jobs[0].lease()).await.unwrap();
    let info = queue.schedule("beat").await.unwrap().unwrap();
    assert_eq!(info.last_job_id.as_deref(), Some(id.as_str()));
    assert!(info.last_run.is_some());
    assert_eq!(info.next_run, None, "trigger leaves the next run alone");

    // Resume: from the next future tick, no backlog of paused ticks.
    let before_resume = ms(SystemTime::now());
    assert_eq!(
        queue.resume_schedule("beat").await.unwrap(),
        ScheduleChange::Done
    );
    assert_eq!(
        queue.resume_schedule("beat").await.unwrap(),
        ScheduleChange::Unchanged
    );
    let next = next_run_ms(&queue, "beat").await.unwrap();
    assert!(
        next > before_resume - 1_000 && next <= before_resume + 2_000,
        "{next}"
    );
    let cancel = CancellationToken::new();
    let scheduler = spawn_scheduler(handle(&server, &ns).await, &cancel);
    wait_until(DEADLINE, "a tick after resume", async || {
        !job_ids(&queue, QUEUE).await.is_empty()
    })
    .await;
    cancel.cancel();
    scheduler.await.unwrap();
    assert!(fired_ticks(&queue, "beat").await.iter().all(|t| *t >= next));

    // Listing shows it all.
    let listed = queue.list_schedules().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].name.as_str(),
            listed[0].queue.as_str(),
            listed[0].timezone.as_str()
        ),
        ("beat", QUEUE, "UTC")
    );
    assert!(!listed[0].paused && listed[0].next_run.is_some() && listed[0].last_run.is_some());

    // Delete: gone, its jobs stay.
    let jobs_before = job_ids(&queue, QUEUE).await;
    assert_eq!(
        queue.delete_schedule("beat").await.unwrap(),
        ScheduleChange::Done
    );
    assert_eq!(
        queue.delete_schedule("beat").await.unwrap(),
        ScheduleChange::NotFound
    );
    assert_eq!(
        queue.trigger_schedule("beat").await.unwrap(),
        Triggered::NotFound
    );
    assert_eq!(
        queue.pause_schedule("beat").await.unwrap(),
        ScheduleChange::NotFound
    );
    assert_eq!(
        queue.resume_schedule("beat").await.unwrap(),
        ScheduleChange::NotFound
    );
    assert!(queue.schedule("beat").await.unwrap().is_none());
    assert!(queue.list_schedules().await.unwrap().is_empty());
    assert_eq!(job_ids(&queue, QUEUE).await, jobs_before);
    let keys = Keys::new(&ns);
    let exists = server
        .cmd(&["EXISTS", &keys.schedules(), &keys.schedules_next()])
        .await;
    assert_eq!(exists, fred::types::Value::Integer(0));
}

#[tokio::test]
async fn a_bad_expression_or_timezone_is_named_and_nothing_is_stored() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("sched-bad")).await;
    let cases = [
        (
            Schedule::new("s", QUEUE, "61 * * * *"),
            "cron expression",
            "61 * * * *",
        ),
        (
            Schedule::new("s", QUEUE, "* * *"),
            "cron expression",
            "* * *",
        ),
        (
            Schedule::new("s", QUEUE, "0 0 30 2 *"),
            "cron expression",
            "0 0 30 2 *",
        ),
        (
            Schedule::new("s", QUEUE, "* * * * *").timezone("Mars/Olympus_Mons"),
            "timezone",
            "Mars/Olympus_Mons",
        ),
        (
            Schedule::new("s", QUEUE, "* * * * *").timezone(""),
            "timezone",
            "",
        ),
        (Schedule::new("", QUEUE, "* * * * *"), "schedule name", ""),
        (Schedule::new("s", "a:b", "* * * * *"), "queue name", "a:b"),
        (
            Schedule::new("s", QUEUE, "* * * * *")
                .starts_at(at_ms(2_000_000_000_000))
                .ends_at(at_ms(1_900_000_000_000)),
            "ends_at",
            "",
        ),
    ];
    for (schedule, expected_what, expected_value) in cases {
        match queue.upsert_schedule(schedule.clone()).await {
            Err(QueueError::Invalid { what, value, .. }) => {
                assert_eq!(what, expected_what, "{schedule:?}");
                if !expected_value.is_empty() {
                    assert_eq!(value, expected_value);
                }
            }
            other => panic!("{schedule:?} gave {other:?}"),
        }
    }
    let err = queue
        .upsert_schedule(Schedule::new("s", QUEUE, "* * * * *").timezone("Mars/Olympus_Mons"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("timezone \"Mars/Olympus_Mons\""),
        "{err}"
    );

    assert!(queue.list_schedules().await.unwrap().is_empty());
    let dbsize = server.cmd(&["DBSIZE"]).await;
    assert_eq!(
        dbsize,
        fred::types::Value::Integer(0),
        "nothing stored at all"
    );
}

#[tokio::test]
async fn start_and_end_times_bound_the_ticks() {
    let server = RedisServer::start();
    let ns = unique_namespace("sched-bounds");
    let queue = handle(&server, &ns).await;
    let now = ms(SystemTime::now());

    let later = now + 3_600_000;
    let pending = queue
        .upsert_schedule(Schedule::new("later", QUEUE, "* * * * * *").starts_at(at_ms(later)))
        .await
        .unwrap();
    let first = ms(pending.next_run().unwrap());
    assert!(first >= later && first < later + 1_000, "{first}");

    let ends = now + 2_500;
    queue
        .upsert_schedule(Schedule::new("brief", QUEUE, "* * * * * *").ends_at(at_ms(ends)))
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let scheduler = spawn_scheduler(handle(&server, &ns).await, &cancel);
    wait_until(DEADLINE, "the brief schedule to end", async || {
        next_run_ms(&queue, "brief").await.is_none()
    })
    .await;
    cancel.cancel();
    scheduler.await.unwrap();
    let ticks = fired_ticks(&queue, "brief").await;
    assert!(!ticks.is_empty() && ticks.len() <= 3, "{ticks:?}");
    assert!(ticks.iter().all(|t| *t <= ends));
    let info = queue.schedule("brief").await.unwrap().unwrap();
    assert_eq!(
        (info.next_run, info.paused),
        (None, false),
        "ended, still listed"
    );
}

#[tokio::test]
async fn a_cancelled_idle_scheduler_returns_promptly() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("sched-idle")).await;
    queue
        .upsert_schedule(Schedule::new("yearly", QUEUE, "@yearly"))
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let scheduler = spawn_scheduler(queue.clone(), &cancel);
    tokio::time::sleep(Duration::from_millis(300)).await;
    cancel.cancel();
    let report = tokio::time::timeout(Duration::from_secs(1), scheduler)
        .await
        .expect("scheduler stops within a second")
        .unwrap();
    assert_eq!(report, SchedulerReport::default());
}

/// A typed job for [`a_schedule_of_a_typed_job_is_run_by_its_typed_worker`]:
/// each run is noted with its payload.
#[derive(serde::Serialize, serde::Deserialize)]
struct Digest {
    list: String,
}

impl redq::worker::TypedJob for Digest {
    const NAME: &'static str = "tests::digest";
    const QUEUE: &'static str = "digests";
    const MAX_ATTEMPTS: u32 = 4;
    const RETRY_WINDOW: Option<Duration> = Some(Duration::from_secs(3600));

    fn priority(&self) -> u8 {
        7
    }

    async fn run(&self, cx: &redq::worker::JobCx) -> Result<(), redq::worker::JobError> {
        let runs = cx.service::<std::sync::Arc<std::sync::Mutex<Vec<String>>>>();
        runs.expect("runs").lock().unwrap().push(self.list.clone());
        Ok(())
    }
}

/// `Schedule::of_job` takes a typed job's queue, name, payload, priority
/// and attempt ceiling from its type, so a tick's job is one its typed
/// worker decodes and runs, with nothing copied by hand.
#[tokio::test]
async fn a_schedule_of_a_typed_job_is_run_by_its_typed_worker() {
    use redq::worker::{Registry, Services, WorkOptions, Worker};
    let server = RedisServer::start();
    let queue = redq_tests::fixtures::handle(&server, &unique_namespace("typed-sched")).await;
    let job = Digest {
        list: "weekly".into(),
    };
    let schedule = Schedule::of_job("digest", "0 0 3 * * *", &job).unwrap();
    queue.upsert_schedule(schedule).await.unwrap();
    queue.trigger_schedule("digest").await.unwrap();
    let waiting = queue
        .list_jobs("digests", JobState::Waiting, 0, 10)
        .await
        .unwrap()
        .items;
    let [tick] = &waiting[..] else {
        panic!("one waiting job in the type's queue: {waiting:?}")
    };
    assert_eq!(tick.name.as_deref(), Some("tests::digest"));
    assert_eq!((tick.priority, tick.max_attempts), (7, 4));
    assert_eq!(tick.payload, json!({ "list": "weekly" }));

    let runs = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut registry = Registry::new();
    registry.add_job::<Digest>();
    let options = WorkOptions::new().schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .unwrap()
        .services(Services::new().with(runs.clone()));
    let running = redq_tests::running::RunningWorker::spawn(worker);
    wait_until(DEADLINE, "the tick's job to run", async || {
        runs.lock().unwrap().len() == 1
    })
    .await;
    assert_eq!(running.shutdown().await.processed, 1);
    assert_eq!(*runs.lock().unwrap(), ["weekly"]);
}
