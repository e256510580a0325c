//! The schedule detail against a real Redis: Enter on the Schedules screen
//! opens what `redq schedules show NAME` prints (the same lines), with the
//! next 5 runs in UTC and in its zone and the payload inert; `t`, `p`, `d`
//! act on that schedule after asking; Esc goes back to the list where it
//! was; a schedule deleted while its detail is open reads as gone; help
//! lists the keys.

use std::time::{Duration, UNIX_EPOCH};

use ratatui::crossterm::event::KeyCode;
use redq::schedule::Schedule;
use redq_console::aggregate::Target;
use redq_console::tui::source;
use redq_console::tui::state::{Action, Focus, Mutation, Operate, Screen, State, View};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{chars, console, drawn, press, prompt, refresh, run};
use crate::seed::connect;

/// A payload an attacker could write: an escape sequence that recolours
/// the terminal, a bell, and a right-to-left override that reorders text.
fn hostile_payload() -> serde_json::Value {
    serde_json::json!({ "note": "\u{1b}[31mred\u{7}\u{202e}evil" })
}

/// Load what the console shows now, the schedule detail's schedule too,
/// as the source reads them.
async fn refresh_all(target: &Target, state: &mut State) {
    refresh(target, state).await;
    if let Focus::Schedule { name, shard } = state.focus() {
        let update = source::read_schedule(target, &name, shard).await.unwrap();
        state.apply(Action::Received(update));
    }
}

/// The console with `name`'s detail open from the Schedules screen.
async fn detail_of(target: &Target, ns: &str, name: &str) -> State {
    let mut state = console(target, ns);
    press(&mut state, &chars("4"));
    refresh_all(target, &mut state).await;
    press(&mut state, &chars("/"));
    press(&mut state, &chars(name));
    press(&mut state, &[KeyCode::Enter, KeyCode::Enter]);
    let View::Schedule(view) = &state.view else {
        panic!("Enter opens the schedule's detail, not {:?}", state.view)
    };
    assert_eq!(view.name, name);
    refresh_all(target, &mut state).await;
    state
}

#[tokio::test]
async fn enter_opens_the_detail_with_the_next_runs_5_minutes_apart_and_the_payload_inert() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("schedule_detail"));
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(
            Schedule::new("poll", "feeds", "@every 5m")
                .job_name("feeds::poll")
                .payload(hostile_payload()),
        )
        .await
        .unwrap();
    let target = Target::single(queue.clone());
    let state = detail_of(&target, &ns, "poll").await;
    let text = drawn(&state, 140, 42);

    // What `redq schedules show` prints, labels and all.
    for said in [
        "schedule poll",
        "queue         feeds",
        "expression    @every 5m",
        "job name      feeds::poll",
        "misfire       fire_once",
        "last tick     - (no tick yet)",
        "upcoming",
    ] {
        assert!(text.contains(said), "{said:?} in\n{text}");
    }
    // The next 5 runs, 5 minutes apart on multiples of 5 minutes since
    // the epoch, the first the stored next run.
    let next = queue.schedule("poll").await.unwrap().unwrap().next_run;
    let next = next.expect("an active schedule has a next run");
    let since = next.duration_since(UNIX_EPOCH).unwrap();
    assert_eq!(since.as_millis() % 300_000, 0, "a multiple of 5 minutes");
    let runs: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(UTC)"))
        .filter(|l| l.contains("│upcoming") || l.contains("│              2"))
        .collect();
    assert_eq!(runs.len(), 5, "{text}");
    for (k, line) in runs.iter().enumerate() {
        let at = next + Duration::from_secs(300 * k as u64);
        let utc = redq_console::clock::rfc3339(at);
        assert!(line.contains(&utc), "run {k} at {utc}: {line}");
    }

    // The payload shown inert: no escape, bell or override reaches the
    // terminal, each is written out instead.
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!text.contains(raw), "{raw:?} reached the screen");
    }
    assert!(
        text.contains(r#"{"note":"\u001b[31mred\u0007\u{202e}evil"}"#),
        "{text}"
    );
}

#[tokio::test]
async fn t_p_d_ask_then_act_on_the_schedule_shown_and_a_deleted_one_reads_gone() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("schedule_detail_keys"));
    let queue = connect(&url, &ns).await;
    for name in ["alpha", "digest", "zulu"] {
        queue
            .upsert_schedule(Schedule::new(name, "emails", "0 3 * * *"))
            .await
            .unwrap();
    }
    let target = Target::single(queue.clone());
    let mut state = console(&target, &ns);
    press(&mut state, &chars("4"));
    refresh_all(&target, &mut state).await;
    press(&mut state, &[KeyCode::Down, KeyCode::Enter]);
    refresh_all(&target, &mut state).await;
    assert!(matches!(&state.view, View::Schedule(v) if v.name == "digest"));

    // t: asks, naming the schedule and its queue; No sends nothing.
    assert!(press(&mut state, &chars("t")).is_empty());
    let asked = prompt(&state);
    assert!(
        asked.starts_with("Trigger schedule digest now?") && asked.contains("emails"),
        "{asked}"
    );
    assert!(press(&mut state, &chars("n")).is_empty());
    let sent = press(&mut state, &chars("ty"));
    assert_eq!(
        sent,
        vec![Mutation::Operate(Operate::TriggerSchedule(
            "digest".into(),
            0
        ))]
    );
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(
        ok && message.starts_with("triggered schedule digest"),
        "{message}"
    );
    assert_eq!(queue.counts("emails").await.unwrap().waiting, 1);

    // p: pause, then (read again) resume.
    assert!(press(&mut state, &chars("p")).is_empty());
    assert!(prompt(&state).starts_with("Pause schedule digest?"));
    let sent = press(&mut state, &chars("y"));
    run(&target, &mut state, sent[0].clone()).await;
    assert!(queue.schedule("digest").await.unwrap().unwrap().paused);
    refresh_all(&target, &mut state).await;
    assert!(drawn(&state, 120, 40).contains("state         paused"));
    press(&mut state, &chars("p"));
    assert!(prompt(&state).starts_with("Resume schedule digest?"));
    let sent = press(&mut state, &chars("y"));
    run(&target, &mut state, sent[0].clone()).await;
    assert!(!queue.schedule("digest").await.unwrap().unwrap().paused);
    refresh_all(&target, &mut state).await;

    // d: asks, then deletes it; the other schedules stay.
    press(&mut state, &chars("d"));
    assert!(prompt(&state).starts_with("Delete schedule digest?"));
    let sent = press(&mut state, &chars("y"));
    assert_eq!(
        sent,
        vec![Mutation::Operate(Operate::DeleteSchedule(
            "digest".into(),
            0
        ))]
    );
    run(&target, &mut state, sent[0].clone()).await;
    assert!(queue.schedule("digest").await.unwrap().is_none());
    assert!(queue.schedule("alpha").await.unwrap().is_some());

    // Read again: gone, still showing what it last was; its keys refuse.
    refresh_all(&target, &mut state).await;
    let text = drawn(&state, 120, 40);
    assert!(text.contains("schedule digest (gone)"), "{text}");
    assert!(text.contains("expression    0 3 * * *"), "{text}");
    assert!(press(&mut state, &chars("t")).is_empty());
    let said = &state.status.as_ref().expect("a refusal says why").text;
    assert!(said.contains("schedule digest is gone"), "{said}");

    // Esc: back to the Schedules screen, its selection where it was.
    press(&mut state, &[KeyCode::Esc]);
    assert_eq!(state.view, View::Screen(Screen::Schedules));
    assert_eq!(state.cursor().index, 1);
}

#[tokio::test]
async fn a_schedule_deleted_elsewhere_while_its_detail_is_open_reads_gone() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("schedule_detail_gone"));
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::new("nightly", "reports", "30 2 * * *").timezone("Europe/Paris"))
        .await
        .unwrap();
    let target = Target::single(queue.clone());
    let mut state = detail_of(&target, &ns, "nightly").await;
    let text = drawn(&state, 120, 40);
    assert!(!text.contains("(gone)"), "{text}");
    assert!(
        text.contains("(Europe/Paris)"),
        "runs in its zone too: {text}"
    );

    queue.delete_schedule("nightly").await.unwrap();
    refresh_all(&target, &mut state).await;
    let text = drawn(&state, 120, 40);
    assert!(text.contains("schedule nightly (gone)"), "{text}");
    assert!(text.contains("This schedule is gone (deleted)"), "{text}");
    press(&mut state, &chars("p"));
    assert!(matches!(
        state.overlay,
        redq_console::tui::state::Overlay::None
    ));
}

#[test]
fn help_lists_enter_on_the_schedules_screen_and_the_detail_keys() {
    let sections = redq_console::tui::input::help_sections();
    let (_, rows) = sections
        .iter()
        .find(|(title, _)| *title == "Schedules")
        .expect("a Schedules section");
    let has = |label: &str, words: &str| {
        rows.iter()
            .any(|(l, help)| *l == label && help.contains(words))
    };
    assert!(has("Enter", "next 5 runs"), "{rows:?}");
    assert!(has("t p d", "trigger now"), "{rows:?}");
    assert!(has("t p d Esc", "in its detail"), "{rows:?}");
}

/// The detail of the Schedules screen's paused `nightly-report` (the
/// second row of the fixed data), its record as `record` says.
fn fixed_detail(record: Option<redq::schedule::ScheduleInfo>) -> State {
    use crate::common::{ago, loaded};
    let mut state = loaded();
    state.apply(Action::Resize(80, 24));
    state.apply(Action::Show(Screen::Schedules));
    state.apply(Action::Down);
    state.apply(Action::Open);
    assert!(matches!(&state.view, View::Schedule(v) if v.name == "nightly-report"));
    let record = record.or_else(|| {
        Some(redq::schedule::ScheduleInfo {
            name: "nightly-report".into(),
            queue: "reports".into(),
            expression: "30 2 * * *".into(),
            timezone: "Europe/Paris".into(),
            payload: hostile_payload(),
            priority: 0,
            max_attempts: 3,
            job_name: Some("reports::nightly".into()),
            retry_window: None,
            paused: true,
            starts_at: None,
            ends_at: None,
            misfire: redq::schedule::Misfire::Skip,
            next_run: None,
            last_run: Some(ago(86_400 + 3600)),
            last_tick: Some(ago(86_400 + 3600)),
            last_skipped: None,
            last_job_id: Some(redq::schedule::tick_job_id(
                "nightly-report",
                ago(86_400 + 3600),
            )),
            revision: 4,
            created_at: ago(30 * 86_400),
            updated_at: ago(3600),
        })
    });
    state.apply(Action::Received(
        redq_console::tui::state::Update::Schedule(redq_console::tui::state::ScheduleRead {
            name: "nightly-report".into(),
            shard: 0,
            record: record.map(Box::new),
            gone: false,
        }),
    ));
    state
}

#[test]
fn the_detail_at_80x24_wraps_under_its_values_and_scrolls_to_its_last_run() {
    let mut state = fixed_detail(None);
    insta::assert_snapshot!(
        "schedule_detail_80x24_top",
        crate::views::screen_text(&state, 80, 24)
    );
    // Scrolled as far as it goes: its last lines, the last run among them.
    press(&mut state, &chars(&"j".repeat(40)));
    insta::assert_snapshot!(
        "schedule_detail_80x24_scrolled",
        crate::views::screen_text(&state, 80, 24)
    );
}
