//! Transitions between views and overlays, driven by keys through the key
//! table: where each key leaves the console, and what it finds on return.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use redq::{JobRecord, JobState, Page, QueueCounts};

use super::{
    Action, Command, DeadWindow, JobsPage, Level, OpenedFrom, Overlay, QueueRow, Screen, Settings,
    Snapshot, State, Update, View,
};
use crate::tui::input::action_for;

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_764_455_825)
}

/// A job record of `state` for the console's unit tests.
pub(crate) fn job(id: &str, queue: &str, state: JobState, error: Option<&str>) -> JobRecord {
    JobRecord {
        id: id.into(),
        queue: queue.into(),
        state,
        payload: serde_json::json!({"n": 1}),
        name: Some("work".into()),
        priority: 0,
        attempts: 1,
        max_attempts: 3,
        enqueued_at: now() - Duration::from_secs(60),
        due_at: None,
        lease_id: None,
        lease_expires_at: (state == JobState::Leased).then(|| now() + Duration::from_secs(30)),
        holder: None,
        last_error: error.map(str::to_owned),
        died_at: (state == JobState::Dead).then(|| now() - Duration::from_secs(5)),
        dedup_key: None,
        ordering_key: None,
        limit_key: None,
        trace_parent: None,
        retry_window: None,
        reclaim_backoff: redq::Backoff::NONE,
        finished_at: None,
        namespace: "redq".into(),
        gate: None,
        awaits: None,
    }
}

/// An empty queue's counts, in one namespace.
pub(crate) fn queue_counts(name: &str) -> QueueCounts {
    queue(name, 0).counts
}

fn queue(name: &str, dead: u64) -> QueueRow {
    QueueRow {
        counts: QueueCounts {
            queue: name.into(),
            waiting: 0,
            scheduled: 0,
            leased: 0,
            dead,
            blocked: 0,
            lapsed: 0,
            completed: 0,
            cancelled: 0,
            held: 0,
            awaiting: 0,
            due: 0,
            due_since: None,
            paused: false,
            paused_shards: 0,
            shards: 1,
            head_enqueued_at: None,
            now: now(),
        },
        stats: Vec::new(),
    }
}

fn dead(id: &str, error: &str) -> JobRecord {
    job(id, "emails", JobState::Dead, Some(error))
}

fn snapshot() -> Snapshot {
    Snapshot {
        redis_now: now(),
        queues: vec![queue("emails", 3), queue("webhooks", 0)],
        shard_jobs: Vec::new(),
        events: Vec::new(),
        event_reach: None,
        workers: None,
        schedules: None,
        leases: Some(vec![
            job("L1", "emails", JobState::Leased, None),
            job("L2", "webhooks", JobState::Leased, None),
        ]),
        dead: Some(DeadWindow::whole(vec![
            dead("D1", "timeout after 30s"),
            dead("D2", "HTTP 503"),
            dead("D3", "timeout after 31s"),
        ])),
        jobs: None,
        limits: None,
        limited: Vec::new(),
        gates: None,
        gate: None,
    }
}

fn receive(state: &mut State, snapshot: Snapshot) {
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
}

fn loaded() -> State {
    let mut state = State::new(Settings {
        url: "redis://127.0.0.1:6379".into(),
        namespace: "redq".into(),
        shards: Vec::new(),
        read_only: false,
        refresh: Duration::from_secs(1),
    });
    receive(&mut state, snapshot());
    state
}

/// Press each key as the terminal would send it; the commands that came out.
fn press(state: &mut State, keys: &[KeyCode]) -> Vec<Command> {
    let mut commands = Vec::new();
    for code in keys {
        if let Some(action) = action_for(state, &KeyEvent::new(*code, KeyModifiers::NONE)) {
            match state.apply(action) {
                Command::None => {}
                command => commands.push(command),
            }
        }
    }
    commands
}

fn typed(text: &str) -> Vec<KeyCode> {
    text.chars().map(KeyCode::Char).collect()
}

use KeyCode::{Enter, Esc, Tab};

#[test]
fn esc_in_a_detail_opened_from_a_jobs_view_returns_to_that_view_as_it_was() {
    let mut state = loaded();
    press(&mut state, &[Enter]);
    press(&mut state, &typed("h"));
    let query = state
        .jobs()
        .expect("Enter opens the queue's jobs")
        .query
        .clone();
    assert_eq!(
        (query.queue.as_str(), query.state),
        ("emails", JobState::Dead)
    );
    let mut with_page = snapshot();
    with_page.jobs = Some(JobsPage {
        query,
        page: Page {
            total: 3,
            items: vec![dead("J1", "x"), dead("J2", "boom"), dead("J3", "boom")],
        },
    });
    receive(&mut state, with_page.clone());
    press(&mut state, &typed("/boom"));
    press(&mut state, &[Enter]);
    press(&mut state, &typed("j"));
    let before = state.view.clone();
    press(&mut state, &[Enter]);
    assert_eq!(state.detail().map(|d| d.record.id.as_str()), Some("J3"));
    assert_eq!(state.screen(), Screen::Queues, "the Queues tab stays lit");
    // The page keeps loading under the detail, so Esc finds it current.
    receive(&mut state, with_page);
    press(&mut state, &[Esc]);
    assert_eq!(
        state.view, before,
        "page, state, filter and selection as left"
    );
    assert_eq!(state.filter(), "boom");
}

#[test]
fn esc_in_a_detail_returns_to_the_screen_it_was_opened_from() {
    for (tab, screen, from, id) in [
        ('2', Screen::Leases, OpenedFrom::Leases, "L2"),
        ('3', Screen::Dead, OpenedFrom::Dead, "D2"),
    ] {
        let mut state = loaded();
        press(&mut state, &typed(&format!("{tab}j")));
        press(&mut state, &[Enter]);
        let detail = state.detail().expect("Enter opens the selected job");
        assert_eq!((detail.record.id.as_str(), &detail.from), (id, &from));
        assert_eq!(state.screen(), screen, "its tab stays lit");
        press(&mut state, &[Esc]);
        assert_eq!(state.view, View::Screen(screen));
        assert_eq!(state.cursor().index, 1, "on the row it was opened from");
    }
}

#[test]
fn help_over_a_detail_closes_on_any_key_back_to_the_detail_unchanged() {
    let mut state = loaded();
    press(&mut state, &typed("3"));
    press(&mut state, &[Enter]);
    let detail = state.view.clone();
    press(&mut state, &typed("?"));
    assert_eq!(state.overlay, Overlay::Help);
    // `d` deletes from a detail and `q` quits, but with help open either
    // only closes it (`j` and `k` scroll help itself: `state::help`).
    for key in ['d', 'q'] {
        let commands = press(&mut state, &typed(&key.to_string()));
        assert_eq!(commands, []);
        assert_eq!((&state.view, &state.overlay), (&detail, &Overlay::None));
        press(&mut state, &typed("?"));
    }
}

#[test]
fn answering_no_to_a_requeue_from_a_detail_keeps_the_detail_open() {
    let mut state = loaded();
    press(&mut state, &typed("3"));
    press(&mut state, &[Enter]);
    let detail = state.view.clone();
    press(&mut state, &typed("r"));
    let prompt = state
        .confirm()
        .map(|c| c.prompt.clone())
        .unwrap_or_default();
    assert!(prompt.starts_with("Requeue dead letter D1"), "{prompt}");
    // Any key but `y` answers no, and does nothing else (`j` does not scroll).
    let commands = press(&mut state, &typed("j"));
    assert_eq!(commands, []);
    assert_eq!((&state.view, &state.overlay), (&detail, &Overlay::None));
    let status = state.status.as_ref().expect("the answer is acknowledged");
    assert_eq!(
        (status.level, status.text.as_str()),
        (Level::Info, "cancelled: nothing was changed")
    );
}

#[test]
fn keys_typed_into_a_filter_are_text_even_where_they_are_bindings() {
    let mut state = loaded();
    press(&mut state, &typed("/?3q"));
    assert_eq!(state.overlay, Overlay::Filter);
    assert_eq!(state.filter(), "?3q");
    assert_eq!(state.view, View::Screen(Screen::Queues));
    press(&mut state, &[Enter]);
    assert_eq!(
        (state.overlay.clone(), state.filter()),
        (Overlay::None, "?3q")
    );
}

#[test]
fn tabs_keep_their_filter_and_grouping_while_another_is_shown() {
    let mut state = loaded();
    press(&mut state, &typed("3s1/web"));
    press(&mut state, &[Enter]);
    press(&mut state, &typed("3"));
    assert!(state.tabs.dead_grouped, "Dead letters still grouped");
    assert_eq!(state.filter(), "");
    press(&mut state, &typed("1"));
    assert_eq!(state.filter(), "web", "the Queues filter kept");
}

#[test]
fn a_jobs_view_closes_when_another_tab_is_chosen_and_tab_moves_on_from_queues() {
    let mut state = loaded();
    press(&mut state, &[Enter]);
    assert!(state.jobs().is_some());
    press(&mut state, &[Tab]);
    assert_eq!(state.view, View::Screen(Screen::Leases));
    press(&mut state, &typed("1"));
    assert_eq!(
        state.view,
        View::Screen(Screen::Queues),
        "no jobs view left open"
    );
}

#[test]
fn enter_on_a_dead_letter_group_filters_by_its_signature_and_ungroups() {
    let mut state = loaded();
    press(&mut state, &typed("3s"));
    let group = state.dead_groups()[0].signature.clone();
    assert_eq!(state.dead_groups()[0].count, 2, "the timeouts group first");
    press(&mut state, &[Enter]);
    assert!(!state.tabs.dead_grouped);
    assert_eq!(state.view, View::Screen(Screen::Dead));
    assert_eq!(state.filter(), group);
    let shown: Vec<&str> = state.visible_dead().iter().map(|j| j.id.as_str()).collect();
    assert_eq!(shown, ["D1", "D3"]);
}
