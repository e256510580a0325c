//! Driving the console's state against a real Redis, as its loop does: load
//! what it shows through the source, press keys through the key table, and
//! carry out the mutations they start. Shared by the key tests.

use std::time::{Duration, SystemTime};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use redq_console::aggregate::Target;
use redq_console::tui::input::action_for;
use redq_console::tui::source;
use redq_console::tui::state::{
    Action, Command, Focus, Mutation, Overlay, Settings, State, Update,
};

/// A console on `namespace` of `target`, not read-only, nothing loaded yet.
pub fn console(target: &Target, namespace: &str) -> State {
    State::new(Settings {
        url: target.redacted_url().to_owned(),
        namespace: namespace.to_owned(),
        shards: Vec::new(),
        read_only: false,
        refresh: Duration::from_secs(1),
    })
}

/// Load what the console shows now (its focus) into `state`: the snapshot,
/// then (Metrics view) its figures, as the source reads them.
pub async fn refresh(target: &Target, state: &mut State) {
    let focus = state.focus();
    let snapshot = source::fetch(target, &focus).await.unwrap();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: SystemTime::now(),
    }));
    if let Focus::Metrics(view) = &focus {
        let update = source::read_metrics(target, view).await.unwrap();
        state.apply(Action::Received(update));
    }
}

/// Press `keys` through the key table; the mutations they start.
pub fn press(state: &mut State, keys: &[KeyCode]) -> Vec<Mutation> {
    let mut sent = Vec::new();
    for code in keys {
        let event = KeyEvent::new(*code, KeyModifiers::NONE);
        if let Some(action) = action_for(state, &event) {
            if let Command::Mutate(mutation) = state.apply(action) {
                sent.push(mutation);
            }
        }
    }
    sent
}

/// The keys that type `text`.
pub fn chars(text: &str) -> Vec<KeyCode> {
    text.chars().map(KeyCode::Char).collect()
}

/// The open question's text (panics when none is open).
pub fn prompt(state: &State) -> String {
    match &state.overlay {
        Overlay::Confirm(confirm) => confirm.prompt.clone(),
        other => panic!(
            "no question open ({other:?}); status {:?}, view {:?}",
            state.status, state.view
        ),
    }
}

/// Carry out `mutation` as the console's I/O task does, the state receiving
/// every update as the console's loop would: its result line and ok, and
/// how many progress reports came on the way.
pub async fn run(
    target: &Target,
    state: &mut State,
    mutation: Mutation,
) -> ((String, bool), usize) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    source::mutate(target, mutation, &tx).await;
    let (mut finished, mut progress) = (None, 0);
    while let Ok(update) = rx.try_recv() {
        match &update {
            Update::Finished { message, ok } => finished = Some((message.clone(), *ok)),
            Update::Progress { .. } => progress += 1,
            _ => {}
        }
        state.apply(Action::Received(update));
    }
    (
        finished.expect("a mutation always reports how it ended"),
        progress,
    )
}

/// The screen drawn now at `width`×`height`, each row in full (as a live
/// console would draw it: ages and rates against the real clock).
pub fn drawn(state: &State, width: u16, height: u16) -> String {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut terminal = ratatui::Terminal::new(backend).unwrap();
    let theme = redq_console::tui::theme::Theme::new(false);
    terminal
        .draw(|frame| redq_console::tui::view::render(frame, state, &theme, SystemTime::now()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}
