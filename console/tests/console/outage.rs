//! The console while Redis is out of reach. What it keeps on screen is the
//! last snapshot frozen as it was (ages and rates computed at that
//! snapshot's time, not the clock's), a list it never loaded before the
//! outage is not made up from an earlier visit, its messages say what is
//! wrong now in plain words and go once that is over, and a job's detail
//! follows the job after acting on it. End to end, in tmux against a real
//! redis-server killed with SIGKILL: the outage is noticed within about a
//! refresh, and the console opens while Redis is down and goes live when
//! it starts.

use std::time::{Duration, SystemTime};

use crate::common::*;
use crate::seed::tmux::Tmux;
use crate::seed::BIN;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use redq::{ConnectionFault, JobState, QueueError};
use redq_console::failure::{is_unreachable, read_failed, ReadFailure};
use redq_console::tui::source;
use redq_console::tui::state::{Action, Command, Level, Screen, Snapshot, State, Update};
use redq_console::tui::theme::Theme;
use redq_console::tui::view;
use redq_tests::{unique_namespace, RedisServer};

/// The screen at `now` as text, one line per row, trailing blanks cut.
pub(crate) fn screen_at(state: &State, now: SystemTime) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(false), now))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..30)
        .map(|y| {
            let line: String = (0..100).map(|x| buffer[(x, y)].symbol()).collect();
            format!("{}\n", line.trim_end())
        })
        .collect()
}

/// The row of the screen that mentions `key` (a queue, a job id, a worker).
fn row<'a>(screen: &'a str, key: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(key))
        .unwrap_or_else(|| panic!("no row for {key}:\n{screen}"))
}

/// A connect refused by a port nothing listens on, as the driver reports it.
fn refused_connect() -> QueueError {
    QueueError::ConnectFailed {
        target: "redis://127.0.0.1:1".into(),
        fault: Some(ConnectionFault::Refused),
        detail: "connection refused".into(),
    }
}

fn refused() -> Update {
    Update::Unreachable {
        error: read_failed(&refused_connect()),
        at: now() + Duration::from_secs(60),
    }
}

/// A refresh made while the Queues screen was in focus: the lists of the
/// other screens were not read.
fn overview_snapshot() -> Snapshot {
    Snapshot {
        leases: None,
        dead: None,
        ..snapshot()
    }
}

#[test]
fn kept_rows_are_drawn_exactly_as_last_seen() {
    // Ten minutes into an outage that began a minute after the last
    // snapshot, every row reads as it did when that snapshot was live:
    // rates, sparklines, OLDEST, badges, lease countdowns, heartbeats.
    let during = now() + Duration::from_secs(11 * 60);
    let cases: [(Screen, &[&str]); 3] = [
        (
            Screen::Queues,
            &["billing", "emails", "reports", "thumbnails", "webhooks"],
        ),
        (
            Screen::Leases,
            &["01JDQ3A1B2C3D4E5F6G7H8J9K0", "01JDQ3A1B2C3D4E5F6G7H8J9K1"],
        ),
        (Screen::Workers, &["web-1", "web-2"]),
    ];
    for (screen, keys) in cases {
        let mut live = loaded();
        live.apply(Action::Show(screen));
        let mut down = live.clone();
        down.apply(Action::Received(refused()));
        let (was, is) = (screen_at(&live, now()), screen_at(&down, during));
        for key in keys {
            assert_eq!(
                row(&is, key),
                row(&was, key),
                "{screen:?}: the kept row of {key} moved during the outage"
            );
        }
    }
}

#[test]
fn while_live_ages_count_on_between_refreshes() {
    // The freeze is for kept data only: live, a minute after the snapshot
    // the oldest waiting job is a minute older.
    let state = loaded();
    let later = screen_at(&state, now() + Duration::from_secs(60));
    assert!(
        row(&later, "emails").contains("2m35s"),
        "{}",
        row(&later, "emails")
    );
}

#[test]
fn while_live_rates_stay_as_the_snapshot_read_them_and_the_title_says_how_often_it_refreshes() {
    // A refresh every 30 s: 25 s after the snapshot, nothing newer has been
    // read, so the rates must be the snapshot's. Read at the moment drawn,
    // they sank as the screen's clock passed the snapshot's buckets (emails'
    // 6.0 a second fell toward 0: a busy queue read as stopped).
    let mut state = State::new(redq_console::tui::state::Settings {
        refresh: Duration::from_secs(30),
        ..settings()
    });
    state.apply(Action::Resize(100, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    let (was, is) = (
        screen_at(&state, now()),
        screen_at(&state, now() + Duration::from_secs(25)),
    );
    let done_per_second = |screen: &str| {
        row(screen, "emails")
            .split_whitespace()
            .find(|cell| cell.contains('.'))
            .map(str::to_owned)
    };
    assert_eq!(done_per_second(&was).as_deref(), Some("6.0"), "{was}");
    assert_eq!(done_per_second(&is), done_per_second(&was), "{is}");
    let title = is.lines().next().unwrap_or_default();
    assert!(title.contains("live, every 30s"), "{title}");
}

#[test]
fn a_list_not_loaded_before_the_outage_is_not_shown() {
    // The dead letters were loaded on an earlier visit; since then the
    // Queues screen was in focus, and Redis died. Switching to Dead letters
    // must not bring back that earlier list (its ids may be long gone).
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(overview_snapshot()),
        received_at: now(),
    }));
    state.apply(Action::Received(refused()));
    state.apply(Action::Show(Screen::Dead));
    let screen = screen_at(&state, now() + Duration::from_secs(120));
    for letter in dead_letters() {
        assert!(
            !screen.contains(&letter.id[..20]),
            "an earlier visit's dead letter {} is shown:\n{screen}",
            letter.id
        );
    }
    // The list's own body says it will not come while Redis is down, not
    // that it is on its way.
    assert!(
        screen.contains("dead letters not loaded: Redis is unreachable"),
        "{screen}"
    );
    assert!(!screen.contains("loading"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn the_cause_follows_the_latest_error() {
    let mut state = loaded();
    state.apply(Action::Received(Update::Unreachable {
        error: ReadFailure::silent(Duration::from_secs(1)),
        at: now() + Duration::from_secs(1),
    }));
    state.apply(Action::Received(refused()));
    let screen = screen_at(&state, now() + Duration::from_secs(70));
    assert!(screen.contains("Redis refused the connection"), "{screen}");
    assert!(!screen.contains("did not answer"), "{screen}");
    assert!(
        screen.contains("reconnecting since 22:37:06 UTC"),
        "the banner keeps the first failure's time:\n{screen}"
    );
}

#[test]
fn status_messages_expire() {
    let mut state = loaded();
    state.apply(Action::Tick(now()));
    press(
        &mut state,
        &[Action::Show(Screen::Dead), Action::Requeue, Action::Cancel],
    );
    assert_eq!(
        state.status.as_ref().map(|s| s.text.as_str()),
        Some("cancelled: nothing was changed")
    );
    state.apply(Action::Tick(now() + Duration::from_secs(9)));
    assert!(state.status.is_some(), "gone too soon");
    state.apply(Action::Tick(now() + Duration::from_secs(10)));
    assert_eq!(state.status, None, "still on screen after 10 s");
}

#[test]
fn a_failure_goes_once_redis_answers_again() {
    let mut state = loaded();
    state.apply(Action::Received(refused()));
    state.apply(Action::Received(Update::Finished {
        message: "pause emails failed: redis command timed out after 5 s; \
                  if it was a write, it may or may not have been applied"
            .into(),
        ok: false,
    }));
    assert_eq!(state.status.as_ref().map(|s| s.level), Some(Level::Error));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now() + Duration::from_secs(2),
    }));
    assert_eq!(state.status, None, "the failure outlived the outage");
    let screen = screen_at(&state, now() + Duration::from_secs(2));
    assert!(!screen.contains("failed"), "{screen}");
    assert!(!screen.contains("refused"), "{screen}");
    assert!(screen.contains("● live"), "{screen}");
}

#[test]
fn the_detail_follows_the_job_after_acting_on_it() {
    let mut state = loaded();
    press(&mut state, &[Action::Show(Screen::Dead), Action::Open]);
    let id = state.watched_job().expect("the detail watches its job");
    let commands = press(&mut state, &[Action::Requeue, Action::Confirm]);
    assert!(matches!(commands.last(), Some(Command::Mutate(_))));
    state.apply(Action::Received(Update::Finished {
        message: "requeued 1 dead letter".into(),
        ok: true,
    }));
    let mut requeued = state.detail().unwrap().record.clone();
    requeued.state = JobState::Waiting;
    requeued.attempts = 0;
    requeued.died_at = None;
    state.apply(Action::Received(Update::Job {
        id: id.clone(),
        record: Some(Box::new(requeued)),
        notes: redq::JobNotes::default(),
        finished: None,
    }));
    let screen = screen_at(&state, now());
    let line = row(&screen, "state");
    assert!(line.contains("waiting"), "{line}");
    assert!(!line.contains("dead"), "{line}");

    // Deleted meanwhile: the detail says so rather than pretend.
    state.apply(Action::Received(Update::Job {
        id: id.clone(),
        record: None,
        notes: redq::JobNotes::default(),
        finished: None,
    }));
    assert_eq!(
        state.status.as_ref().map(|s| s.text.clone()),
        Some(format!("job {id} no longer exists"))
    );
}

#[test]
fn read_failures_are_plain_sentences() {
    let timeout = read_failed(&QueueError::Timeout(Duration::from_secs(5)));
    assert_eq!(timeout.sentence, "Redis did not answer within 5s");
    assert_eq!(timeout.word(), "not answering");
    let e = refused_connect();
    assert!(is_unreachable(&e), "{e}");
    let said = read_failed(&e);
    assert!(
        said.sentence.starts_with("Redis refused the connection"),
        "{said}"
    );
    assert_eq!(said.word(), "unreachable");
    // Retrying cannot fix these: the console refuses to start, as before.
    let bad_url = QueueError::Config("redis://127.0.0.1:1: invalid port".into());
    assert!(!is_unreachable(&bad_url));
    let wrong_password = QueueError::ConnectFailed {
        target: "redis://127.0.0.1:1".into(),
        fault: Some(ConnectionFault::LoginRefused),
        detail: "WRONGPASS invalid username-password pair".into(),
    };
    assert!(!is_unreachable(&wrong_password));
    assert_eq!(read_failed(&wrong_password).word(), "login refused");
}

// ---- End to end: tmux, the real binary, a real redis-server ----

const DEADLINE: Duration = Duration::from_secs(20);
/// How soon the header must show that Redis died. The console before this
/// change needed the driver's 5 s command timeout; now the first read of a
/// refresh must answer within a second.
const NOTICED_WITHIN: Duration = Duration::from_secs(4);

fn console_command() -> String {
    format!("{BIN} --refresh 250ms --no-color; echo REDQ-EXITED-$?; sleep 60")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_shows_at_once_and_goes_when_redis_is_back() {
    let mut server = RedisServer::start();
    let ns = unique_namespace("outage");
    let url = server.url();
    let q = crate::seed::connect(&url, &ns).await;
    crate::seed::dead_letters(&q, "webhooks", 2, "boom").await;
    drop(q);
    let term = Tmux::start(
        &console_command(),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    term.wait_until(DEADLINE, "live data", |s| {
        s.contains("● live") && s.contains("webhooks")
    });

    server.kill9();
    term.wait_until(NOTICED_WITHIN, "the outage in the header", |s| {
        s.contains("reconnecting since") && !s.contains("● live")
    });
    let screen = term.wait_for("Redis refused the connection", DEADLINE);
    assert!(
        screen.contains("webhooks"),
        "the last data stays:\n{screen}"
    );
    assert!(
        !screen.contains("may or may not"),
        "a failed read is not a write:\n{screen}"
    );

    // Dead letters were never loaded: nothing old is made up.
    term.keys(&["3"]);
    let screen = term.wait_for("not loaded: Redis unreachable since", DEADLINE);
    assert!(!screen.contains("boom"), "{screen}");
    term.keys(&["1"]);

    // A write during the outage fails, and says so until Redis is back.
    term.keys(&["p"]);
    term.wait_for("Pause queue webhooks?", DEADLINE);
    term.keys(&["y"]);
    term.wait_for("pause webhooks failed", DEADLINE);

    server.restart();
    term.wait_until(DEADLINE, "live again with no failure left", |s| {
        s.contains("● live")
            && !s.contains("reconnecting since")
            && !s.contains("failed")
            && !s.contains("refused")
    });
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opens_while_redis_is_down_and_goes_live_when_it_starts() {
    let mut server = RedisServer::start();
    let ns = unique_namespace("late");
    let url = server.url();
    server.kill9();
    let term = Tmux::start(
        &console_command(),
        &[("REDIS_URL", url.as_str()), ("REDQ_NAMESPACE", ns.as_str())],
    );
    let screen = term.wait_until(DEADLINE, "the console retrying", |s| {
        s.contains("○ retrying") && s.contains("Redis refused the connection")
    });
    assert!(screen.contains("connecting to"), "{screen}");
    assert!(screen.contains("retrying every 250ms"), "{screen}");

    server.restart();
    term.wait_for("● live", DEADLINE);
    let q = crate::seed::connect(&url, &ns).await;
    crate::seed::dead_letters(&q, "webhooks", 1, "boom").await;
    term.wait_for("webhooks", DEADLINE);
    term.keys(&["q"]);
    term.wait_for("REDQ-EXITED-0", DEADLINE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_stops_answering_leaves_no_connections_behind_once_it_answers() {
    // During a pause each refresh fails its read and opens a probe to learn
    // why, which cannot finish either. Dropped halfway, such a probe went on
    // connecting in the background and stayed connected for good once Redis
    // answered: one connection kept for every few refreshes of the outage.
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_pause_probes"));
    let connect: source::Connector = std::sync::Arc::new(move || {
        let (url, ns) = (url.clone(), ns.clone());
        Box::pin(async move {
            let builder = redq::RedisQueue::builder(&url);
            redq_console::aggregate::Target::connect(builder, &ns, 1).await
        })
    });
    let first = connect().await.unwrap();
    let (_requests_tx, requests) = tokio::sync::mpsc::unbounded_channel();
    let (updates, mut updates_rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(source::run(
        source::Link::new(Some(first), connect),
        Duration::from_millis(250),
        requests,
        updates,
        cancel.clone(),
    ));
    let first_update = updates_rx.recv().await.expect("a first update");
    assert!(matches!(first_update, Update::Snapshot { .. }));
    let baseline = server.connected_clients().await;

    server.cmd(&["CLIENT", "PAUSE", "7000", "ALL"]).await;
    // Let the outage be noticed and probed a few times.
    let mut unreachable = 0;
    while unreachable < 2 {
        if let Some(Update::Unreachable { .. }) = updates_rx.recv().await {
            unreachable += 1;
        }
    }
    // Once Redis answers again, the console reads again and the probes of
    // the outage are closed, not kept.
    loop {
        if let Some(Update::Snapshot { .. }) = updates_rx.recv().await {
            break;
        }
    }
    redq_tests::wait_until(
        Duration::from_secs(10),
        "the outage's probes to close",
        async || server.connected_clients().await <= baseline,
    )
    .await;
    cancel.cancel();
    let _ = running.await;
}
