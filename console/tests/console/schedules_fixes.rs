//! Recurring schedules as an on-call operator reads them: an outage shows
//! as overdue in `redq schedules` as on the screen, LAST is the last tick
//! (not a manual trigger), an ended schedule says so, `redq schedules show`
//! has everything with a preview in the schedule's zone, the screen shows
//! NEXT on the schedule's own clock when wide, and a name on several
//! shards is never acted on by guess.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::schedule::{CronExpr, Misfire, Schedule, Scheduler};
use redq::{RedisQueue, ShardedQueue};
use redq_console::tui::state::{Action, Screen, State, Update};
use redq_tests::{unique_namespace, RedisServer};

use crate::common::{now, press, settings, snapshot};
use crate::seed::*;
use crate::views::screen_text;

/// The first tick of a daily `expression` in `timezone` that is at least
/// `days` days ago.
fn tick_days_ago(expression: &str, timezone: &str, days: u64) -> SystemTime {
    let cron = CronExpr::parse(expression, timezone).unwrap();
    let from = SystemTime::now() - Duration::from_secs((days + 1) * 86_400);
    cron.upcoming(from, 1)[0]
}

fn ms(at: SystemTime) -> String {
    at.duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string()
}

/// Move `name`'s next run to `at`, as if no scheduler had run since.
async fn set_next_run(server: &RedisServer, ns: &str, name: &str, at: SystemTime) {
    let key = redq::keys::Keys::new(ns).schedules_next();
    server.cmd(&["ZADD", &key, &ms(at), name]).await;
}

/// The cells of the table row naming `name`.
fn row_of(out: &str, name: &str) -> String {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row for {name} in\n{out}"))
        .to_owned()
}

#[tokio::test]
async fn an_outage_reads_overdue_in_the_cli_by_the_screens_rule() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_overdue");
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::new("nightly", "reports", "30 2 * * *").timezone("Europe/Paris"))
        .await
        .unwrap();
    let missed = tick_days_ago("30 2 * * *", "Europe/Paris", 3);
    set_next_run(&server, &ns, "nightly", missed).await;

    let out = redq(&url, &ns, &["schedules"]);
    assert_exit(&out, 0);
    let row = row_of(&stdout(&out), "nightly");
    assert!(row.contains("overdue 3d"), "{row}");
    assert!(row.trim_end().ends_with("active"), "{row}");

    let list = json(&redq(&url, &ns, &["schedules", "-o", "json"]));
    let nightly = &list[0];
    assert_eq!(nightly["overdue"], true, "{nightly}");
    assert!(
        nightly["overdue_ms"].as_u64().unwrap() >= 3 * 86_400_000,
        "{nightly}"
    );
    assert_eq!(nightly["state"], "active", "{nightly}");

    // The console's row reads the same, by the same rule.
    let rows = redq_console::registry::schedules(&queue)
        .await
        .unwrap()
        .unwrap();
    let late = rows[0].overdue_by(SystemTime::now()).unwrap();
    assert!(late >= Duration::from_secs(3 * 86_400), "{late:?}");
}

#[tokio::test]
async fn last_is_the_last_tick_and_a_trigger_is_shown_as_one() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_last");
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::new("nightly", "reports", "30 2 * * *").timezone("Europe/Paris"))
        .await
        .unwrap();

    // A trigger before any tick: the tick has not run, and LAST says so.
    let triggered = json(&redq(
        &url,
        &ns,
        &["schedules", "trigger", "nightly", "-o", "json"],
    ));
    let trigger_job = triggered["job"].as_str().unwrap().to_owned();
    let row = row_of(&stdout(&redq(&url, &ns, &["schedules"])), "nightly");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[cells.len() - 2],
        "-",
        "LAST after a trigger only: {row}"
    );
    let listed = json(&redq(&url, &ns, &["schedules", "-o", "json"]));
    let nightly = &listed[0];
    assert_eq!(nightly["last_tick"], serde_json::Value::Null, "{nightly}");
    assert!(nightly["last_run"].is_string(), "{nightly}");
    assert_eq!(nightly["last_run_by"], "trigger", "{nightly}");
    assert_eq!(nightly["last_job_id"], trigger_job.as_str(), "{nightly}");
    let rows = redq_console::registry::schedules(&queue)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rows[0].last_run, None, "the screen's LAST: {:?}", rows[0]);

    // The tick runs (late, after an outage): LAST is that tick, and stays
    // it through a later trigger.
    let tick = tick_days_ago("30 2 * * *", "Europe/Paris", 1);
    set_next_run(&server, &ns, "nightly", tick).await;
    let pass = Scheduler::new(queue.clone()).run_once().await.unwrap();
    assert_eq!(pass.report.enqueued, 1, "{pass:?}");
    redq(&url, &ns, &["schedules", "trigger", "nightly"]);
    let tick_text = redq_console::clock::rfc3339(tick);
    let row = row_of(&stdout(&redq(&url, &ns, &["schedules"])), "nightly");
    assert!(
        row.contains(&tick_text),
        "LAST is the tick {tick_text}: {row}"
    );
    let nightly = &json(&redq(&url, &ns, &["schedules", "-o", "json"]))[0];
    assert_eq!(nightly["last_tick"], tick_text.as_str(), "{nightly}");
    assert_eq!(nightly["last_tick_fired"], true, "{nightly}");
    assert_eq!(nightly["last_run_by"], "trigger", "{nightly}");
    let rows = redq_console::registry::schedules(&queue)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rows[0].last_run, Some(tick));
    let shown = stdout(&redq(&url, &ns, &["schedules", "show", "nightly"]));
    assert!(shown.contains("a manual trigger"), "{shown}");
}

#[tokio::test]
async fn a_skipped_tick_reads_skipped() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_skipped");
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::new("nightly", "reports", "30 2 * * *").misfire(Misfire::Skip))
        .await
        .unwrap();
    let tick = tick_days_ago("30 2 * * *", "UTC", 1);
    set_next_run(&server, &ns, "nightly", tick).await;
    let pass = Scheduler::new(queue.clone()).run_once().await.unwrap();
    assert_eq!(pass.report.skipped, 1, "{pass:?}");
    let nightly = &json(&redq(&url, &ns, &["schedules", "-o", "json"]))[0];
    let tick_text = redq_console::clock::rfc3339(tick);
    assert_eq!(nightly["last_tick"], tick_text.as_str(), "{nightly}");
    assert_eq!(nightly["last_tick_fired"], false, "{nightly}");
    let shown = stdout(&redq(&url, &ns, &["schedules", "show", "nightly"]));
    assert!(
        shown.contains(&format!("last tick     {tick_text}")) && shown.contains("skipped"),
        "{shown}"
    );
}

#[tokio::test]
async fn an_ended_schedule_reads_ended() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_ended");
    let queue = connect(&url, &ns).await;
    let end = SystemTime::now() + Duration::from_millis(1500);
    queue
        .upsert_schedule(Schedule::new("brief", "reports", "* * * * * *").ends_at(end))
        .await
        .unwrap();
    // Its last tick fires once the end has passed; then none is left.
    let scheduler = Scheduler::new(queue.clone());
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        scheduler.run_once().await.unwrap();
        let s = queue.schedule("brief").await.unwrap().unwrap();
        if s.next_run.is_none() && SystemTime::now() > end {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never ended: {s:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let row = row_of(&stdout(&redq(&url, &ns, &["schedules"])), "brief");
    assert!(row.trim_end().ends_with("ended"), "{row}");
    let brief = &json(&redq(&url, &ns, &["schedules", "-o", "json"]))[0];
    assert_eq!(
        (&brief["state"], &brief["ended"]),
        (&"ended".into(), &true.into())
    );
    let shown = stdout(&redq(&url, &ns, &["schedules", "show", "brief"]));
    assert!(shown.contains("none (it is ended)"), "{shown}");
}

#[tokio::test]
async fn show_has_the_whole_record_and_a_preview_in_its_zone() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_show");
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(
            Schedule::new("ny-twice", "reports", "0 2,14 * * *")
                .timezone("America/New_York")
                .payload(serde_json::json!({"title": "\u{1b}]0;owned\u{7}"}))
                .job_name("report")
                .priority(3)
                .max_attempts(4)
                .misfire(Misfire::Skip),
        )
        .await
        .unwrap();

    let out = redq(&url, &ns, &["schedules", "show", "ny-twice"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    for want in [
        "misfire       skip",
        "job name      report",
        "priority      3",
        "max attempts  4",
        "revision      1",
        // JSON text escapes the controls; inert() would have too.
        "payload       {\"title\":\"\\u001b]0;owned\\u0007\"}",
        "last tick     - (no tick yet)",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    // Five upcoming runs: UTC, then New York's wall clock, at 02:00 or
    // 14:00 there as the expression says.
    let upcoming: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("upcoming"))
        .collect();
    assert_eq!(upcoming.len(), 5, "{text}");
    for line in &upcoming {
        assert!(
            (line.contains(" 02:00:00 -0") || line.contains(" 14:00:00 -0"))
                && line.contains("(America/New_York)"),
            "{line}"
        );
    }

    let value = json(&redq(
        &url,
        &ns,
        &["schedules", "show", "ny-twice", "-o", "json"],
    ));
    assert_eq!(value["misfire"], "skip");
    assert_eq!(value["job_name"], "report");
    assert_eq!(
        (value["priority"].as_u64(), value["max_attempts"].as_u64()),
        (Some(3), Some(4))
    );
    assert_eq!(value["payload"]["title"], "\u{1b}]0;owned\u{7}");
    assert_eq!(value["revision"], 1);
    let upcoming = value["upcoming"].as_array().unwrap();
    assert_eq!(upcoming.len(), 5, "{value}");
    assert_eq!(upcoming[0]["utc"], value["next_run"], "{value}");

    let out = redq(&url, &ns, &["schedules", "show", "nope"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("the schedules are ny-twice"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_name_on_several_shards_is_acted_on_only_where_chosen() {
    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("schedules_shards_act");
    let q = ShardedQueue::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .unwrap();
    for shard in [0, 1] {
        q.shards()[shard]
            .upsert_schedule(Schedule::new("nightly", "reports", "30 2 * * *"))
            .await
            .unwrap();
    }
    q.shards()[2]
        .upsert_schedule(Schedule::new("hourly", "reports", "@hourly"))
        .await
        .unwrap();
    let sharded = |args: &[&str]| {
        let mut all = vec!["--shards", "3", "schedules"];
        all.extend_from_slice(args);
        redq(&url, &base, &all)
    };
    let paused = |shard: usize| {
        let q = q.clone();
        async move {
            q.shards()[shard]
                .schedule("nightly")
                .await
                .unwrap()
                .unwrap()
                .paused
        }
    };

    for verb in ["pause", "trigger", "show"] {
        let out = sharded(&[verb, "nightly"]);
        assert_exit(&out, 2);
        let said = stderr(&out);
        assert!(
            said.contains("stored on shards 0 and 1") && said.contains("--shard 0 or --shard 1"),
            "{said}"
        );
    }
    let out = sharded(&["delete", "nightly", "--yes"]);
    assert_exit(&out, 2);
    assert!(
        !paused(0).await && !paused(1).await,
        "a refusal changed nothing"
    );
    assert_eq!(q.shards()[0].counts("reports").await.unwrap().waiting, 0);

    let out = sharded(&["pause", "nightly", "--shard", "1"]);
    assert_exit(&out, 0);
    assert_eq!(stdout(&out).trim(), "paused schedule nightly");
    assert!(paused(1).await && !paused(0).await);
    let shown = json(&sharded(&["show", "nightly", "--shard", "1", "-o", "json"]));
    assert_eq!(
        (shown["shard"].as_u64(), &shown["state"]),
        (Some(1), &"paused".into())
    );

    // A name on one shard needs no --shard; a shard there is not is refused.
    assert_exit(&sharded(&["pause", "hourly"]), 0);
    let out = sharded(&["resume", "nightly", "--shard", "7"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("numbered 0 to 2"), "{}", stderr(&out));
    // --shard names a shard without the schedule: not found, with where
    // the schedules are.
    let out = sharded(&["pause", "hourly", "--shard", "0"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("hourly (shard 2)"),
        "{}",
        stderr(&out)
    );
}

/// The Schedules screen with `schedules`, at `width` x `height`.
fn screen_with(schedules: Vec<redq_console::tui::state::ScheduleInfo>, width: u16) -> String {
    let mut state = State::new(settings());
    let mut snapshot = snapshot();
    snapshot.schedules = Some(schedules);
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    press(&mut state, &[Action::Show(Screen::Schedules)]);
    state.apply(Action::Resize(width, 42));
    screen_text(&state, width, 42)
}

fn ny_twice() -> redq_console::tui::state::ScheduleInfo {
    redq_console::tui::state::ScheduleInfo {
        name: "ny-twice".into(),
        queue: "reports".into(),
        expression: "0 2,14 * * *".into(),
        timezone: "America/New_York".into(),
        // 2025-11-30 07:00 UTC: 02:00 in New York (EST).
        next_run: Some(UNIX_EPOCH + Duration::from_secs(1_764_486_000)),
        last_run: None,
        paused: false,
        shard: None,
    }
}

#[test]
fn the_screen_shows_next_on_the_schedules_own_clock_when_wide() {
    let mut all = crate::common::schedules();
    all.push(ny_twice());
    let text = screen_with(all.clone(), 140);
    let row = text.lines().find(|l| l.contains("ny-twice")).unwrap();
    assert!(
        row.contains("11-30 07:00") && row.contains("11-30 02:00"),
        "{text}"
    );
    assert!(
        text.contains("LOCAL") && text.contains("digest-every-minute"),
        "{text}"
    );
    // Where LOCAL would cost a name its middle, it gives way.
    for width in [80, 100] {
        let text = screen_with(all.clone(), width);
        let row = text.lines().find(|l| l.contains("ny-twice")).unwrap();
        assert!(
            row.contains("11-30 07:00") && !row.contains("11-30 02:00"),
            "{text}"
        );
        assert!(!text.contains("LOCAL") && text.contains("PAUSED"), "{text}");
    }
}

#[test]
fn the_screen_says_ended() {
    let mut ended = ny_twice();
    ended.next_run = None;
    let text = screen_with(vec![ended], 140);
    let row = text.lines().find(|l| l.contains("ny-twice")).unwrap();
    assert!(row.contains("ENDED"), "{text}");
}

/// On the Schedules screen over shards, `p` on a row pauses that row's
/// schedule: the same name on another shard keeps firing untouched.
#[tokio::test]
async fn p_on_a_shard_row_pauses_that_shards_schedule() {
    use ratatui::crossterm::event::KeyCode;
    use redq_console::aggregate::Target;

    let server = RedisServer::start();
    let url = server.url();
    let base = unique_namespace("schedules_shard_keys");
    let q = ShardedQueue::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .unwrap();
    for shard in [0, 1] {
        q.shards()[shard]
            .upsert_schedule(Schedule::new("nightly", "reports", "30 2 * * *"))
            .await
            .unwrap();
    }
    let target = Target::connect(RedisQueue::builder(&url), &base, 3)
        .await
        .unwrap();
    let mut state = State::new(redq_console::tui::state::Settings {
        shards: target.shard_namespaces(),
        ..crate::live::console(&target, &base).settings
    });
    crate::live::press(&mut state, &[KeyCode::Char('4')]);
    crate::live::refresh(&target, &mut state).await;
    state.apply(redq_console::tui::state::Action::Resize(140, 40));
    // The second row: shard 1's nightly.
    crate::live::press(&mut state, &[KeyCode::Down, KeyCode::Char('p')]);
    let asked = crate::live::prompt(&state);
    assert!(asked.contains("nightly (shard 1)"), "{asked}");
    let sent = crate::live::press(&mut state, &[KeyCode::Char('y')]);
    let ((message, ok), _) = crate::live::run(&target, &mut state, sent[0].clone()).await;
    assert!(ok && message == "paused schedule nightly", "{message}");
    let paused = |shard: usize| {
        let q = q.clone();
        async move {
            q.shards()[shard]
                .schedule("nightly")
                .await
                .unwrap()
                .unwrap()
                .paused
        }
    };
    assert!(paused(1).await && !paused(0).await);
}
