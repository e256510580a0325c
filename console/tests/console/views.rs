//! Every screen rendered with ratatui's TestBackend at 100×30 and a fixed
//! clock, compared with reviewed snapshot files in `tests/snapshots/`.

use std::time::Duration;

use crate::common::*;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui::Terminal;
use redq::{ConnectionFault, JobState, Page, QueueError};
use redq_console::failure::{read_failed, ReadFailure};
use redq_console::tui::state::{Action, JobsPage, JobsQuery, Screen, State, Update, JOBS_PAGE};
use redq_console::tui::theme::Theme;
use redq_console::tui::view;

pub(crate) fn terminal(
    state: &State,
    width: u16,
    height: u16,
    color: bool,
) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| view::render(frame, state, &Theme::new(color), now()))
        .unwrap();
    terminal
}

pub(crate) fn screen_text(state: &State, width: u16, height: u16) -> String {
    let terminal = terminal(state, width, height, true);
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn screen(state: &State) -> String {
    screen_text(state, 100, 30)
}

pub(crate) fn with(actions: &[Action]) -> State {
    let mut state = loaded();
    press(&mut state, actions);
    state
}

#[test]
fn queues() {
    insta::assert_snapshot!(screen(&with(&[])));
}

#[test]
fn queues_while_typing_a_filter() {
    let state = with(&[
        Action::StartFilter,
        Action::FilterInput('e'),
        Action::FilterInput('m'),
    ]);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn leases_with_a_lapsed_lease() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Leases)])));
}

#[test]
fn dead_letters() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Dead), Action::Down])));
}

#[test]
fn dead_letters_grouped_by_error_signature() {
    insta::assert_snapshot!(screen(&with(&[
        Action::Show(Screen::Dead),
        Action::ToggleGroup
    ])));
}

#[test]
fn dead_letter_detail() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Dead), Action::Open])));
}

#[test]
fn dead_letters_confirm_requeue_all() {
    insta::assert_snapshot!(screen(&with(&[
        Action::Show(Screen::Dead),
        Action::RequeueAll
    ])));
}

/// `r`, then `2`: the prompt says where attempts restart, and the keys
/// that change it (the fixture's jobs have max attempts 3).
#[test]
fn dead_letters_confirm_requeue_with_attempts() {
    insta::assert_snapshot!(screen(&with(&[
        Action::Show(Screen::Dead),
        Action::Requeue,
        Action::AttemptsDigit(2),
    ])));
}

/// `r`, then `3`, then `y`: the count is refused on the status line and in
/// the question, which stays open.
#[test]
fn dead_letters_confirm_requeue_with_too_many_attempts() {
    insta::assert_snapshot!(screen(&with(&[
        Action::Show(Screen::Dead),
        Action::Requeue,
        Action::AttemptsDigit(3),
        Action::Confirm,
    ])));
}

#[test]
fn dead_letters_requeue_in_progress() {
    let state = with(&[
        Action::Show(Screen::Dead),
        Action::RequeueAll,
        Action::Confirm,
        Action::Received(Update::Progress {
            label: "requeue all dead letters of 2 queues".into(),
            done: 1000,
            left: 4000,
        }),
    ]);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn jobs_of_a_queue() {
    let mut state = with(&[Action::Down, Action::Open]);
    let query = JobsQuery {
        queue: "emails".into(),
        state: JobState::Scheduled,
        offset: 0,
    };
    state.apply(Action::NextState);
    let items = (0..3)
        .map(|i| {
            let mut j = job(
                &format!("01JDQ4S0000000000000000{i:03}"),
                "emails",
                JobState::Scheduled,
            );
            j.due_at = Some(now() + Duration::from_secs(30 * (i + 1)));
            j.attempts = i as u32;
            j.last_error = (i > 0).then(|| "smtp: 421 service not available".to_owned());
            j
        })
        .collect();
    let mut snapshot = snapshot();
    snapshot.jobs = Some(JobsPage {
        query,
        page: Page { total: 3, items },
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    assert_eq!(JOBS_PAGE, 50);
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn schedules() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Schedules)])));
}

#[test]
fn workers() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Workers)])));
}

fn without_registries(workers: Option<Vec<redq_console::tui::state::WorkerInfo>>) -> State {
    let mut snapshot = snapshot();
    snapshot.workers = workers;
    snapshot.schedules = snapshot.workers.as_ref().map(|_| Vec::new());
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

#[test]
fn no_workers_registered() {
    let mut state = without_registries(Some(Vec::new()));
    state.apply(Action::Show(Screen::Workers));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn no_schedules() {
    let mut state = without_registries(Some(Vec::new()));
    state.apply(Action::Show(Screen::Schedules));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn queues_without_a_worker_registry_flag_stalled_backlogs() {
    // A driver without a worker registry: no NO WORKER badge, only STALLED
    // where nothing moved for a minute.
    insta::assert_snapshot!(screen(&without_registries(None)));
}

#[test]
fn events() {
    insta::assert_snapshot!(screen(&with(&[Action::Show(Screen::Events)])));
}

#[test]
fn help() {
    insta::assert_snapshot!(screen(&with(&[Action::ToggleHelp])));
}

#[test]
fn terminal_too_small() {
    // Below 80×24 (a tmux split in an incident) the console still says
    // whether Redis answers and each queue's backlog and warnings.
    let text = screen_text(&with(&[]), 60, 20);
    assert!(text.contains("live"), "{text}");
    assert!(text.contains("the full console needs 80×24"), "{text}");
    let billing = line_with(&text, "billing");
    assert!(
        billing.contains("w3") && billing.contains("NO WORKER"),
        "{text}"
    );
    insta::assert_snapshot!(text);
    insta::assert_snapshot!("terminal_too_small_79x23", screen_text(&with(&[]), 79, 23));
}

#[test]
fn the_header_says_what_kind_of_outage_it_is() {
    // A Redis that refuses the password, or accepts and does not answer
    // (paused, busy), is there: "unreachable" would send an operator to
    // the network.
    let connect_failed = |fault, detail: &str| QueueError::ConnectFailed {
        target: "redis://127.0.0.1:6379".into(),
        fault: Some(fault),
        detail: detail.into(),
    };
    for (error, word) in [
        (
            connect_failed(ConnectionFault::Refused, "connection refused"),
            "unreachable",
        ),
        (QueueError::Timeout(Duration::from_secs(1)), "not answering"),
        (
            connect_failed(ConnectionFault::NoAnswer, "no answer within 5s"),
            "not answering",
        ),
        (
            connect_failed(
                ConnectionFault::LoginRefused,
                "authentication failed: WRONGPASS invalid username-password pair",
            ),
            "login refused",
        ),
    ] {
        let state = with(&[Action::Received(Update::Unreachable {
            error: read_failed(&error),
            at: now() + Duration::from_secs(60),
        })]);
        let title = screen_text(&state, 140, 30)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned();
        assert!(title.contains(&format!("◌ {word}")), "{error}: {title}");
    }
}

#[test]
fn reconnecting_keeps_the_last_data() {
    // The last snapshot was read at now(); Redis died a minute later, and
    // the screen is drawn ten minutes into the outage. What is shown must be
    // that snapshot as it was: OLDEST still 1m35s, DONE/S still 6.0 for
    // emails, the sparklines unmoved, and no NO WORKER badge on emails or
    // thumbnails because their heartbeats stopped arriving with the data.
    let state = with(&[Action::Received(Update::Unreachable {
        error: ReadFailure {
            sentence: "Redis refused the connection: nothing is listening at that address \
                       (is redis-server running?)"
                .into(),
            fault: Some(ConnectionFault::Refused),
        },
        at: now() + Duration::from_secs(60),
    })]);
    let during = now() + Duration::from_secs(11 * 60);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|frame| view::render(frame, &state, &Theme::new(true), during))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let text: String = (0..30)
        .map(|y| {
            let line: String = (0..100).map(|x| buffer[(x, y)].symbol()).collect();
            format!("{}\n", line.trim_end())
        })
        .collect();
    insta::assert_snapshot!(text);
}

#[test]
fn connecting() {
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn read_only_refuses_and_says_so() {
    let mut state = State::new(redq_console::tui::state::Settings {
        read_only: true,
        ..settings()
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    press(&mut state, &[Action::Show(Screen::Dead), Action::Requeue]);
    insta::assert_snapshot!(screen(&state));
}

/// `redq` with neither `--url` nor `REDIS_URL` watches the default Redis
/// and changes nothing there: a requeue is refused and says why.
#[test]
fn with_no_redis_named_the_console_is_read_only() {
    use clap::Parser;
    use redq_console::cli::Cli;
    let settings_of = |args: &[&str]| {
        let cli = Cli::try_parse_from(args).unwrap();
        redq_console::console_settings(&cli.connection, &cli.global).unwrap()
    };
    let named = settings_of(&["redq", "--url", "redis://127.0.0.1:6379"]);
    assert!(!named.read_only, "a named Redis may be changed");
    let unnamed = settings_of(&["redq"]);
    assert!(unnamed.read_only, "the default Redis must not be changed");
    assert_eq!(unnamed.url, named.url, "both watch the same Redis");

    let mut state = State::new(redq_console::tui::state::Settings {
        refresh: settings().refresh,
        ..unnamed
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    let commands = press(&mut state, &[Action::Show(Screen::Dead), Action::Requeue]);
    let sent: Vec<_> = commands
        .iter()
        .filter(|c| !matches!(c, redq_console::tui::state::Command::None))
        .collect();
    assert!(sent.is_empty(), "nothing may be sent: {sent:?}");
    let shown = screen_text(&state, 140, 30);
    assert!(
        shown.contains("no --url or REDIS_URL named this Redis"),
        "{shown}"
    );
}

#[test]
fn escape_sequences_in_payloads_are_shown_inert() {
    let mut evil = dead(
        "01JDQ2X7K5M3N8P9R2S4T6V8W9",
        "webhooks",
        "boom \u{1b}[2J\u{1b}]0;owned\u{7} done",
        5,
    );
    evil.name = Some("x\u{1b}[31mred".into());
    evil.payload = serde_json::Value::String("raw \u{1b}[?1049l\u{9b}2J bytes\u{0}".into());
    let mut snapshot = snapshot();
    snapshot.dead = Some(redq_console::tui::state::DeadWindow::whole(vec![evil]));
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Dead));
    let list = screen(&state);
    state.apply(Action::Open);
    let detail = screen(&state);
    for text in [&list, &detail] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "a control character reached the screen:\n{text}"
        );
    }
    assert!(
        detail.contains("boom \\x1b[2J\\x1b]0;owned\\x07 done"),
        "{detail}"
    );
    insta::assert_snapshot!("escape_list", list);
    insta::assert_snapshot!("escape_detail", detail);
}

#[test]
fn without_colour_selection_is_a_marker_and_reverse_video() {
    let state = with(&[Action::Down]);
    let terminal = terminal(&state, 100, 30, false);
    let buffer = terminal.backend().buffer();
    // Row 4 is the first queue, row 5 the selected second one.
    let row = |y: u16| {
        (0..100)
            .map(|x| buffer[(x, y)].symbol())
            .collect::<String>()
    };
    assert!(row(5).contains("▶ emails"), "{}", row(5));
    assert!(!row(4).contains('▶'));
    assert!(buffer[(5, 5)].modifier.contains(Modifier::REVERSED));
    for y in 0..30 {
        for x in 0..100 {
            let cell = &buffer[(x, y)];
            assert_eq!(cell.fg, ratatui::style::Color::Reset, "colour at {x},{y}");
            assert_eq!(cell.bg, ratatui::style::Color::Reset, "colour at {x},{y}");
        }
    }
}

#[test]
fn wide_terminals_show_full_ids_and_longer_sparklines() {
    let state = with(&[]);
    insta::assert_snapshot!("wide_queues", screen_text(&state, 140, 24));
    let state = with(&[Action::Show(Screen::Dead)]);
    insta::assert_snapshot!("wide_dead", screen_text(&state, 140, 24));
}

/// `--shards 3`: the dead letters of three shards in one list, a SHARD
/// column after the job id, and the detail naming the shard's namespace.
fn sharded() -> State {
    let shards: Vec<String> = ["redq.s0.2", "redq.s1.0", "redq.s2.5"]
        .map(String::from)
        .to_vec();
    let mut state = State::new(redq_console::tui::state::Settings {
        shards: shards.clone(),
        ..settings()
    });
    state.apply(Action::Resize(100, 30));
    let mut snapshot = snapshot();
    if let Some(dead) = snapshot.dead.as_mut() {
        for (i, job) in dead.items.iter_mut().enumerate() {
            job.namespace = shards[i % 3].clone();
        }
    }
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

#[test]
fn dead_letters_over_shards() {
    let mut state = sharded();
    state.apply(Action::Show(Screen::Dead));
    insta::assert_snapshot!(screen(&state));
}

#[test]
fn dead_letter_detail_over_shards() {
    let mut state = sharded();
    press(
        &mut state,
        &[Action::Show(Screen::Dead), Action::Down, Action::Open],
    );
    insta::assert_snapshot!(screen(&state));
}

// ---- Layout: column widths from the content and the room there is ----

const INVOICES: &str = "tenant-acme-production-eu-west-1-invoices";
const REFUNDS: &str = "tenant-acme-production-eu-west-1-refunds";

/// The fixture plus two tenant queues whose names differ only at the end,
/// with dead letters, leases and events of their own.
fn with_tenant_queues() -> State {
    let mut snapshot = snapshot();
    for (name, waiting) in [(INVOICES, 5), (REFUNDS, 9)] {
        snapshot.queues.push(redq_console::tui::state::QueueRow {
            counts: counts(name, waiting, 0, 1, 1),
            stats: stats(3, 0),
        });
        let mut lease = leased(&format!("01JDQ5{:020}", waiting), name, 30, 1);
        lease.name = Some("charge_card".into());
        if let Some(leases) = snapshot.leases.as_mut() {
            leases.push(lease);
        }
        let letter = dead(&format!("01JDQ6{:020}", waiting), name, "card declined", 20);
        if let Some(window) = snapshot.dead.as_mut() {
            window.items.insert(0, letter.clone());
        }
        snapshot.events.insert(
            0,
            redq::QueueEvent {
                event_id: format!("1764455824000-{waiting}"),
                kind: "dead".into(),
                queue: name.into(),
                job_id: letter.id.clone(),
                name: letter.name.clone(),
                error: "card declined".into(),
                attempts: 3,
                count: None,
                by: None,
                detail: None,
                at: ago(20),
                namespace: "redq".into(),
            },
        );
    }
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

/// The line of `text` that holds `needle`.
pub(crate) fn line_with<'t>(text: &'t str, needle: &str) -> &'t str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line holds {needle:?}:\n{text}"))
}

/// Every header word appears whole, in order, on the header line.
pub(crate) fn assert_headers_whole(text: &str, headers: &[&str]) {
    let line = line_with(text, headers[0]);
    let mut rest = line;
    for h in headers {
        let at = rest
            .find(h)
            .unwrap_or_else(|| panic!("header {h:?} is cut or missing:\n{text}"));
        rest = &rest[at + h.len()..];
    }
}

/// The rows of the two tenant queues differ, keep their distinct ends, and
/// mark any cut with an ellipsis.
fn assert_tenants_distinguishable(text: &str, full: bool) {
    let invoices = line_with(text, "oices");
    let refunds = line_with(text, "funds");
    assert_ne!(invoices, refunds);
    for (line, name) in [(invoices, INVOICES), (refunds, REFUNDS)] {
        assert!(line.contains("tenant"), "the head is gone: {line}");
        if full {
            assert!(
                line.contains(name),
                "{name} is cut with room to spare:\n{text}"
            );
        } else if !line.contains(name) {
            assert!(line.contains('…'), "cut without an ellipsis: {line}");
        }
    }
}

const SIZES: [(u16, u16); 3] = [(140, 42), (100, 30), (80, 24)];

#[test]
fn long_tenant_queue_names_stay_distinguishable_on_the_queues_screen() {
    let state = with_tenant_queues();
    // The paused thumbnails nobody serves carries PAUSED NO WORKER, the
    // widest badge, which the layout keeps: at 140 columns the names give
    // up a few characters for it (and SCHED goes first at 80); at 160 they
    // are whole.
    assert_tenants_distinguishable(&screen_text(&state, 160, 42), true);
    for (w, h) in SIZES {
        let text = screen_text(&state, w, h);
        assert_tenants_distinguishable(&text, false);
        assert_headers_whole(&text, &["QUEUE", "WAITING", "LEASED", "DEAD", "OLDEST"]);
        assert!(line_with(&text, "billing").contains("NO WORKER"), "{text}");
        insta::assert_snapshot!(format!("tenant_queues_{w}x{h}"), text);
    }
}

#[test]
fn long_tenant_queue_names_stay_distinguishable_on_every_list() {
    let lists: [(Screen, &[&str]); 3] = [
        (
            Screen::Leases,
            &["JOB", "QUEUE", "NAME", "HOLDER", "LEFT", "TRIES"],
        ),
        (
            Screen::Dead,
            &["JOB", "QUEUE", "NAME", "TRIES", "DIED", "ERROR"],
        ),
        (Screen::Events, &["TIME", "KIND", "QUEUE", "JOB", "WHAT"]),
    ];
    for (screen, headers) in lists {
        let mut state = with_tenant_queues();
        state.apply(Action::Show(screen));
        for (w, h) in SIZES {
            let text = screen_text(&state, w, h);
            assert_tenants_distinguishable(&text, false);
            assert_headers_whole(&text, headers);
            let name = format!(
                "tenant_{}_{w}x{h}",
                screen.title().replace(' ', "_").to_lowercase()
            );
            insta::assert_snapshot!(name, text);
        }
    }
}

/// Every list at the smallest size the console draws in: no header cut.
#[test]
fn at_80_by_24_no_header_is_cut() {
    let lists: [(Screen, &[&str]); 3] = [
        (
            Screen::Queues,
            // SCHED (future jobs, which are normal) makes way first when
            // a wide badge (PAUSED NO WORKER) needs the room.
            &[
                "QUEUE", "WAITING", "LEASED", "DEAD", "DONE/S", "FAIL/S", "OLDEST",
            ],
        ),
        (
            Screen::Schedules,
            &["NAME", "QUEUE", "EXPRESSION", "TIMEZONE", "NEXT", "LAST"],
        ),
        (
            Screen::Workers,
            &[
                "WORKER",
                "HOST",
                "PID",
                "QUEUES",
                "RUNNING",
                "HEARTBEAT",
                "DONE",
                "FAILED",
            ],
        ),
    ];
    for (screen, headers) in lists {
        let text = screen_text(&with(&[Action::Show(screen)]), 80, 24);
        assert_headers_whole(&text, headers);
        assert!(
            !text.contains("billin\n") && !text.contains("billi "),
            "{text}"
        );
    }
}

#[test]
fn workers_numbers_sit_under_their_headers() {
    let text = screen(&with(&[Action::Show(Screen::Workers)]));
    let header = line_with(&text, "FAILED");
    let row = line_with(&text, "web-1");
    // Right-aligned numbers end where their header ends.
    for (head, value) in [("DONE", "12,345"), ("FAILED", "17"), ("RUNNING", "3")] {
        let head_end = header.find(&format!(" {head}")).unwrap() + 1 + head.len();
        let value_end = row.rfind(&format!(" {value}")).unwrap() + 1 + value.len();
        let head_col = header[..head_end].chars().count();
        let value_col = row[..value_end].chars().count();
        assert_eq!(head_col, value_col, "{head} vs {value}:\n{header}\n{row}");
    }
}

// ---- One way to write each fact ----

#[test]
fn tries_read_the_same_on_every_screen() {
    // A dead letter of webhooks: 3 tries of at most 3.
    let letter = crate::common::dead_letters().remove(0);
    let mut state = with(&[Action::Show(Screen::Dead)]);
    let dead_screen = screen(&state);
    assert!(
        line_with(&dead_screen, "S4T6V8W0").contains(" 3/3 "),
        "{dead_screen}"
    );

    state.apply(Action::Open);
    let detail = screen(&state);
    assert!(line_with(&detail, "attempts").contains("3/3"), "{detail}");

    let mut state = jobs_view("webhooks", JobState::Dead, vec![letter]);
    let jobs = screen(&state);
    assert!(line_with(&jobs, "S4T6V8W0").contains(" 3/3 "), "{jobs}");
    state.apply(Action::Open);
    assert_eq!(
        line_with(&screen(&state), "attempts"),
        line_with(&detail, "attempts")
    );

    // An event does not record the limit: its column says what the bare
    // count is (failed attempts), rather than a `3/?` read as a question.
    let events = screen(&with(&[Action::Show(Screen::Events)]));
    assert!(line_with(&events, "TIME").contains(" FAILED "), "{events}");
    assert!(line_with(&events, "S4T6V8W0").contains(" 3 "), "{events}");
    assert!(!events.contains("3/?"), "{events}");
}

/// The Queues screen, 140×30, with `counts` beside the usual queues.
fn queues_with(counts: redq::QueueCounts) -> String {
    let mut snapshot = snapshot();
    snapshot.queues.push(redq_console::tui::state::QueueRow {
        counts,
        stats: Vec::new(),
    });
    let mut state = State::new(settings());
    state.apply(Action::Resize(140, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    screen_text(&state, 140, 30)
}

#[test]
fn scheduled_jobs_past_their_time_with_no_worker_read_as_a_backlog() {
    // Every worker of imports is gone: its retries came due 90 s ago and no
    // claim moved them to waiting. They must not read as an idle queue.
    let mut imports = crate::common::counts("imports", 0, 5, 0, 0);
    imports.due = 5;
    imports.due_since = Some(crate::common::ago(90));
    let drawn = queues_with(imports);
    let header = line_with(&drawn, "QUEUE");
    assert!(header.contains(" SCHED DUE LEASED "), "{header}");
    // WAITING, SCHED and DUE, the cells after the queue's name.
    let counts = |queue: &str| -> Vec<String> {
        line_with(&drawn, queue)
            .split_whitespace()
            .skip_while(|cell| *cell != queue)
            .skip(1)
            .take(3)
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(counts("imports"), ["0", "5", "5"], "{drawn}");
    let row = line_with(&drawn, "imports");
    assert!(row.contains("1m30s"), "OLDEST counts the due jobs: {row}");
    assert!(row.contains("NO WORKER"), "{row}");
    // A queue with nothing overdue shows 0 due.
    assert_eq!(counts("emails"), ["7", "12", "0"], "{drawn}");
}

#[test]
fn lapsed_leases_with_no_worker_read_as_unserved_work() {
    // Every worker of payouts died holding leases: nothing waits, but the
    // leases lapsed and only a claim (none will come) or an operator's
    // reclaim returns them. The row must say no worker serves it.
    let mut payouts = crate::common::counts("payouts", 0, 0, 1, 0);
    payouts.lapsed = 1;
    let drawn = queues_with(payouts);
    let row = line_with(&drawn, "payouts");
    assert!(row.contains("LAPSED") && row.contains("NO WORKER"), "{row}");
}

#[test]
fn a_scheduled_job_past_its_time_and_a_late_tick_say_so() {
    // In the jobs view a job due 90 s ago reads "due 1m30s ago", not "in 0s".
    let mut late = crate::common::dead_letters().remove(0);
    late.state = JobState::Scheduled;
    late.due_at = Some(crate::common::ago(90));
    let mut soon = late.clone();
    soon.id = "01JDQ2X7K5M3N8P9R2S4T6V8SO".into();
    soon.due_at = Some(now() + Duration::from_secs(30));
    let jobs = screen(&jobs_view(
        "webhooks",
        JobState::Scheduled,
        vec![late.clone(), soon],
    ));
    assert!(
        line_with(&jobs, "S4T6V8W0").contains("due 1m30s ago"),
        "{jobs}"
    );
    assert!(line_with(&jobs, "S4T6V8SO").contains("in 30s"), "{jobs}");

    // A schedule whose tick is a minute late says overdue; a paused one
    // does not.
    let mut snapshot = snapshot();
    let mut schedules = crate::common::schedules();
    schedules[0].next_run = Some(crate::common::ago(60));
    schedules[1].next_run = Some(crate::common::ago(60));
    snapshot.schedules = Some(schedules);
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Schedules));
    let drawn = screen(&state);
    assert!(
        line_with(&drawn, "digest-every-minute").contains("overdue"),
        "{drawn}"
    );
    assert!(
        !line_with(&drawn, "nightly-report").contains("overdue"),
        "{drawn}"
    );
}

#[test]
fn a_requeue_event_says_where_attempts_restart() {
    // The count a requeued event carries is where its jobs restart, not
    // failures: it goes to WHAT, and FAILED stays empty.
    let mut snapshot = snapshot();
    snapshot.events.insert(
        0,
        redq::QueueEvent {
            event_id: "1764455824000-0".into(),
            kind: "requeued".into(),
            queue: "webhooks".into(),
            job_id: String::new(),
            name: None,
            error: String::new(),
            attempts: 2,
            count: Some(4),
            by: Some("cli ops@bastion".into()),
            detail: None,
            at: crate::common::ago(1),
            namespace: "redq".into(),
        },
    );
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state.apply(Action::Show(Screen::Events));
    let events = screen(&state);
    let row = line_with(&events, "requeued");
    assert!(row.contains("attempts restart at 2"), "{events}");
    let failed_and_name = row
        .split("4 jobs")
        .nth(1)
        .and_then(|rest| rest.split("cli ops").next())
        .unwrap_or_default();
    assert!(!failed_and_name.contains('2'), "{row}");
}

#[test]
fn the_lease_holder_reads_the_same_in_the_list_and_the_detail() {
    // Node 0x9cd25af9, instance 1: the registry's worker id is decimal.
    let mut state = with(&[Action::Show(Screen::Leases)]);
    let list = screen(&state);
    assert!(line_with(&list, "J9K1").contains("2631031545-1"), "{list}");
    state.apply(Action::Down);
    state.apply(Action::Open);
    let detail = screen(&state);
    assert!(
        line_with(&detail, "holder").contains("2631031545-1"),
        "{detail}"
    );
    let workers = screen(&with(&[Action::Show(Screen::Workers)]));
    assert!(
        line_with(&workers, "web-1").contains("2631031545-1"),
        "{workers}"
    );
}

/// The jobs view of `queue` in `state`, showing `items` as its page.
fn jobs_view(queue: &str, state_shown: JobState, items: Vec<redq::JobRecord>) -> State {
    let mut state = loaded();
    let index = state
        .visible_queues()
        .iter()
        .position(|q| q.counts.queue == queue)
        .unwrap();
    for _ in 0..index {
        state.apply(Action::Down);
    }
    state.apply(Action::Open);
    while state.jobs().unwrap().query.state != state_shown {
        state.apply(Action::NextState);
    }
    let mut snapshot = snapshot();
    snapshot.jobs = Some(JobsPage {
        query: state.jobs().unwrap().query.clone(),
        page: Page {
            total: items.len() as u64,
            items,
        },
    });
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    state
}

// ---- The filter on a queue's jobs ----

#[test]
fn slash_filters_a_queues_jobs_and_typed_text_runs_no_command() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use redq_console::tui::input::action_for;

    let items = ["cus_1", "cus_3", "cus_7", "cus_3"]
        .iter()
        .enumerate()
        .map(|(i, customer)| {
            let mut j = job(
                &format!("01JDQ7C0000000000000000{i:03}"),
                "billing",
                JobState::Waiting,
            );
            j.name = Some("charge_card".into());
            j.payload = serde_json::json!({"customer": customer, "cents": 1200});
            j
        })
        .collect();
    let mut state = jobs_view("billing", JobState::Waiting, items);
    for c in "/cus_3".chars() {
        let event = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        if let Some(action) = action_for(&state, &event) {
            state.apply(action);
        }
    }
    assert_eq!(state.screen(), Screen::Queues, "a typed 3 switched screens");
    let view = state.jobs().expect("the jobs view closed");
    assert_eq!(view.query.queue, "billing");
    assert_eq!(state.filter(), "cus_3");
    insta::assert_snapshot!("jobs_filter_typing", screen(&state));
    if let Some(action) = action_for(&state, &KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)) {
        state.apply(action);
    }
    let text = screen(&state);
    let shown: Vec<&str> = state.visible_jobs().iter().map(|j| j.id.as_str()).collect();
    assert_eq!(
        shown,
        ["01JDQ7C0000000000000000001", "01JDQ7C0000000000000000003"]
    );
    assert_eq!(text.matches("charge_card").count(), 2, "{text}");
    insta::assert_snapshot!("jobs_filtered", text);
    // The selection is among the matching rows: Enter opens cus_3's job.
    state.apply(Action::Open);
    assert_eq!(
        state.detail().map(|d| d.record.id.as_str()),
        Some("01JDQ7C0000000000000000001")
    );
}

// ---- Sparklines keep their 15 minutes at every width ----

#[test]
fn sparklines_span_fifteen_minutes_at_every_width() {
    // One queue whose only work was in the oldest and the newest complete
    // bucket: both ends of the sparkline show a bar at every width.
    let mut snapshot = snapshot();
    let end = 1_764_455_825 / 5 * 5;
    let bucket = |start: u64| redq::StatsBucket {
        start: std::time::UNIX_EPOCH + Duration::from_secs(start),
        processed: 50,
        failed: 0,
    };
    snapshot.queues = vec![redq_console::tui::state::QueueRow {
        counts: counts("edges", 1, 0, 0, 0),
        stats: vec![bucket(end - 179 * 5), bucket(end - 5)],
    }];
    let mut state = loaded();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    for (w, h) in SIZES {
        let text = screen_text(&state, w, h);
        let header = line_with(&text, "QUEUE");
        let Some(at) = header.find("DONE 15m") else {
            // Dropped for room: then it must not be there at all.
            assert!(!text.contains('█'), "{text}");
            continue;
        };
        let start = header[..at].chars().count();
        let row: Vec<char> = line_with(&text, "edges").chars().collect();
        let bars: String = row[start..]
            .iter()
            .take_while(|c| **c == ' ' || ('▁'..='█').contains(*c))
            .collect();
        let bars = bars.trim_end();
        assert!(
            bars.trim_start().starts_with('█'),
            "oldest bar missing at {w}: {bars:?}\n{text}"
        );
        assert!(
            bars.ends_with('█'),
            "newest bar missing at {w}: {bars:?}\n{text}"
        );
    }
}
