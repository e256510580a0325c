//! Interval schedules (`@every <interval>`) as an operator reads them:
//! `redq schedules` lists the expression and an aligned next run,
//! `redq schedules show` previews runs one interval apart on multiples of
//! the interval since the epoch, `-o json` carries the same, the overdue
//! rule is the one for cron, and the Schedules screen shows the expression.
//!
//! `redq schedules set` writes one: a queue nobody knows is refused unless
//! `--allow-unknown`, and a replace names what it changed.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::schedule::{Schedule, Scheduler};
use redq_console::tui::state::{Action, Screen, State, Update};
use redq_tests::{unique_namespace, RedisServer};

use crate::common::{now, press, settings, snapshot};
use crate::seed::*;
use crate::views::screen_text;

const MINUTE: u64 = 60_000;

fn ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn at_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// The table row naming `name`.
fn row_of(out: &str, name: &str) -> String {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row for {name} in\n{out}"))
        .to_owned()
}

/// Move `name`'s next run to `at`, as if no scheduler had run since.
async fn set_next_run(server: &RedisServer, ns: &str, name: &str, at: u64) {
    let key = redq::keys::Keys::new(ns).schedules_next();
    server.cmd(&["ZADD", &key, &at.to_string(), name]).await;
}

#[tokio::test]
async fn list_and_show_print_an_every_schedule_with_aligned_runs() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_every");
    let queue = connect(&url, &ns).await;
    let seven = 7 * MINUTE;
    let next = queue
        .upsert_schedule(Schedule::new("poll", "feeds", "@every 7m").job_name("feeds::poll"))
        .await
        .unwrap()
        .next_run()
        .map(ms)
        .unwrap();
    assert_eq!(next % seven, 0);
    let next_text = redq_console::clock::rfc3339(at_ms(next));

    // The list: the expression as written, the next run, active.
    let out = redq(&url, &ns, &["schedules"]);
    assert_exit(&out, 0);
    let row = row_of(&stdout(&out), "poll");
    assert!(row.contains("@every 7m"), "{row}");
    assert!(row.contains(&next_text), "{row}");
    assert!(!row.contains("overdue"), "{row}");
    assert!(row.trim_end().ends_with("active"), "{row}");

    // show: five runs, 7 minutes apart from the stored next run.
    let out = redq(&url, &ns, &["schedules", "show", "poll"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("expression") && l.ends_with("@every 7m")),
        "{text}"
    );
    let previewed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("upcoming"))
        .take(5)
        .collect();
    assert_eq!(previewed.len(), 5, "{text}");
    for (i, line) in previewed.iter().enumerate() {
        let at = redq_console::clock::rfc3339(at_ms(next + i as u64 * seven));
        assert!(line.contains(&at), "run {i} is {at}: {line}\n{text}");
        assert!(line.trim_end().ends_with("(UTC)"), "{line}");
    }

    // -o json: the same runs, the expression, the zone.
    let shown = json(&redq(
        &url,
        &ns,
        &["schedules", "show", "poll", "-o", "json"],
    ));
    assert_eq!(shown["expression"], "@every 7m", "{shown}");
    assert_eq!(shown["timezone"], "UTC", "{shown}");
    assert_eq!(shown["next_run"], next_text.as_str(), "{shown}");
    let upcoming: Vec<&str> = shown["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["utc"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (0..5)
        .map(|i| redq_console::clock::rfc3339(at_ms(next + i * seven)))
        .collect();
    assert_eq!(upcoming, want);
    let listed = json(&redq(&url, &ns, &["schedules", "-o", "json"]));
    assert_eq!(listed[0]["expression"], "@every 7m", "{listed}");
    assert_eq!(listed[0]["overdue"], false, "{listed}");
}

#[tokio::test]
async fn schedule_every_writes_the_interval_largest_unit_first() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_every_dur");
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::every(
            "sync",
            "feeds",
            Duration::from_secs(26 * 3600 + 30),
        ))
        .await
        .unwrap();
    let row = row_of(&stdout(&redq(&url, &ns, &["schedules"])), "sync");
    assert!(row.contains("@every 1d2h30s"), "{row}");
}

#[tokio::test]
async fn an_interval_schedule_is_overdue_by_the_same_rule_as_cron() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_every_late");
    let queue = connect(&url, &ns).await;
    for name in ["stalled", "busy"] {
        queue
            .upsert_schedule(Schedule::new(name, "feeds", "@every 1s"))
            .await
            .unwrap();
    }
    let now_ms = ms(SystemTime::now());
    // Five minutes without a scheduler: overdue. A per-second schedule a
    // few seconds behind (a busy scheduler) is not: the 30 s margin is the
    // same whatever the interval.
    set_next_run(&server, &ns, "stalled", (now_ms - 5 * MINUTE) / 1000 * 1000).await;
    set_next_run(&server, &ns, "busy", (now_ms - 3000) / 1000 * 1000).await;
    let out = stdout(&redq(&url, &ns, &["schedules"]));
    assert!(row_of(&out, "stalled").contains("overdue 5m"), "{out}");
    assert!(!row_of(&out, "busy").contains("overdue"), "{out}");

    // One pass fires each once and moves both back to an aligned future.
    let pass = Scheduler::new(queue.clone()).run_once().await.unwrap();
    assert_eq!(pass.report.enqueued, 2, "{pass:?}");
    let listed = json(&redq(&url, &ns, &["schedules", "-o", "json"]));
    for s in listed.as_array().unwrap() {
        assert_eq!(s["overdue"], false, "{s}");
        assert_eq!(s["last_tick_fired"], true, "{s}");
    }
}

#[tokio::test]
async fn the_schedules_screen_shows_the_interval_expression() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_every_screen");
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::new("poll", "feeds", "@every 1h30m"))
        .await
        .unwrap();
    let rows = redq_console::registry::schedules(&queue)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rows[0].overdue_by(SystemTime::now()), None);
    let mut state = State::new(settings());
    let mut snap = snapshot();
    snap.schedules = Some(rows);
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snap),
        received_at: now(),
    }));
    press(&mut state, &[Action::Show(Screen::Schedules)]);
    state.apply(Action::Resize(140, 30));
    let screen = screen_text(&state, 140, 30);
    let row = screen
        .lines()
        .find(|l| l.contains("poll"))
        .unwrap_or_else(|| panic!("no poll row in\n{screen}"));
    assert!(row.contains("@every 1h30m"), "{row}");
}

#[tokio::test]
async fn schedules_set_writes_an_every_schedule_and_refuses_a_bad_interval() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("schedules_every_set");
    let queue = connect(&url, &ns).await;

    // A queue with no job yet: a typo would fill a queue no worker reads.
    let unknown = redq(
        &url,
        &ns,
        &["schedules", "set", "poll", "feeds", "@every 5m"],
    );
    assert_exit(&unknown, 1);
    assert!(
        stderr(&unknown).contains("no queue named feeds")
            && stderr(&unknown).contains("add --allow-unknown"),
        "{}",
        stderr(&unknown)
    );
    assert_eq!(queue.schedule("poll").await.unwrap(), None);

    let out = redq(
        &url,
        &ns,
        &[
            "schedules",
            "set",
            "poll",
            "feeds",
            "@every 5m",
            "--allow-unknown",
            "--job-name",
            "feeds::poll",
            "--payload",
            r#"{"all":true}"#,
        ],
    );
    assert_exit(&out, 0);
    let info = queue.schedule("poll").await.unwrap().unwrap();
    assert_eq!(info.expression, "@every 5m");
    assert_eq!(info.job_name.as_deref(), Some("feeds::poll"));
    assert_eq!(info.payload, serde_json::json!({"all": true}));
    let next = ms(info.next_run.unwrap());
    assert_eq!(next % (5 * MINUTE), 0);
    let text = stdout(&out);
    assert!(
        text.starts_with("created schedule poll (@every 5m): next run ")
            && text.contains(&redq_console::clock::rfc3339(at_ms(next))),
        "{text}"
    );

    // An existing schedule is replaced only when asked.
    let again = redq(
        &url,
        &ns,
        &[
            "schedules",
            "set",
            "poll",
            "feeds",
            "@every 1h",
            "--allow-unknown",
        ],
    );
    assert_exit(&again, 2);
    assert!(
        stderr(&again).contains("add --replace"),
        "{}",
        stderr(&again)
    );
    let replaced = json(&redq(
        &url,
        &ns,
        &[
            "schedules",
            "set",
            "poll",
            "feeds",
            "@every 1h",
            "--replace",
            "--allow-unknown",
            "-o",
            "json",
        ],
    ));
    assert_eq!(replaced["action"], "replaced", "{replaced}");
    // What the replace reset is said, the payload without its value.
    assert_eq!(
        replaced["changed"],
        serde_json::json!([
            "expression (was @every 5m)",
            "job name (was feeds::poll)",
            "payload"
        ]),
        "{replaced}"
    );
    assert_eq!(replaced["expression"], "@every 1h", "{replaced}");
    let next = queue
        .schedule("poll")
        .await
        .unwrap()
        .unwrap()
        .next_run
        .unwrap();
    assert_eq!(ms(next) % (60 * MINUTE), 0);
    assert_eq!(
        replaced["next_run"],
        redq_console::clock::rfc3339(next).as_str(),
        "{replaced}"
    );

    // A bad interval: the driver's sentence, exit 2, nothing written.
    let bad = redq(
        &url,
        &ns,
        &[
            "schedules",
            "set",
            "bad",
            "feeds",
            "@every 90x",
            "--allow-unknown",
        ],
    );
    assert_exit(&bad, 2);
    let err = stderr(&bad);
    assert!(
        err.contains(
            "invalid interval \"@every 90x\": the interval \"90x\" has the unit \"x\", which \
             @every does not know: accepted is"
        ),
        "{err}"
    );
    assert!(!err.contains("Invalid {"), "no Debug text: {err}");
    let zone = redq(
        &url,
        &ns,
        &[
            "schedules",
            "set",
            "bad",
            "feeds",
            "@every 1d",
            "--timezone",
            "Europe/Paris",
            "--allow-unknown",
        ],
    );
    assert_exit(&zone, 2);
    assert!(
        stderr(&zone).contains("which no time zone moves"),
        "{}",
        stderr(&zone)
    );
    assert_eq!(queue.schedule("bad").await.unwrap(), None);
}
