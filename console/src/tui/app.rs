//! The one loop that owns the state: terminal events and source updates go
//! in as actions, commands come out, and the screen is redrawn.

use std::time::{Duration, SystemTime};

use futures::StreamExt;
use ratatui::crossterm::event::{Event, EventStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::input::action_for;
use super::source::{self, Link, Request};
use super::state::{Action, Command, Settings, State};
use super::theme::Theme;
use super::view;
use crate::aggregate::Target;

/// How often the screen is redrawn without news (countdowns tick).
const TICK: Duration = Duration::from_millis(250);

/// Restores the terminal when dropped: on return and on `?`. A panic is
/// handled by the hook `ratatui::try_init` installs, which restores the
/// terminal before the message prints; restoring a second time while the
/// panic unwinds would leave the alternate screen twice, and terminals then
/// jump the cursor back over the panic message.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            ratatui::restore();
        }
    }
}

/// Run the console on `queue` until the user quits (or SIGTERM/SIGHUP).
pub async fn run(queue: Target, settings: Settings, theme: Theme) -> anyhow::Result<()> {
    run_with(Link::connected(queue), settings, theme).await
}

/// Run the console on `link`: it opens at once, connected or not, and
/// keeps retrying while Redis is out of reach.
pub async fn run_with(link: Link, settings: Settings, theme: Theme) -> anyhow::Result<()> {
    let refresh = settings.refresh;
    let mut terminal = ratatui::try_init()?;
    let _restore = Restore;

    let (request_tx, request_rx) = mpsc::unbounded_channel();
    let (update_tx, mut update_rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let source = tokio::spawn(source::run(
        link,
        refresh,
        request_rx,
        update_tx,
        cancel.clone(),
    ));
    let _stop_source = cancel.clone().drop_guard();

    let mut state = State::new(settings);
    state.apply(Action::Tick(SystemTime::now()));
    let size = terminal.size()?;
    state.apply(Action::Resize(size.width, size.height));
    let mut focus = state.focus();
    let _ = request_tx.send(Request::Focus(focus.clone()));
    let mut watched = state.watched_job();
    let mut searched = state.search_wanted();

    let mut events = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut term = signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut hup = signal(tokio::signal::unix::SignalKind::hangup())?;

    loop {
        let now = state.redis_time(SystemTime::now());
        terminal.draw(|frame| view::render(frame, &state, &theme, now))?;
        let action = tokio::select! {
            event = events.next() => match event {
                Some(Ok(Event::Key(key))) => action_for(&state, &key),
                Some(Ok(Event::Resize(w, h))) => Some(Action::Resize(w, h)),
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e.into()),
                None => Some(Action::Quit),
            },
            update = update_rx.recv() => match update {
                Some(update) => Some(Action::Received(update)),
                None => anyhow::bail!("the data source stopped unexpectedly"),
            },
            _ = tick.tick() => Some(Action::Tick(SystemTime::now())),
            _ = term.recv() => Some(Action::Quit),
            _ = hup.recv() => Some(Action::Quit),
        };
        let Some(action) = action else { continue };
        match state.apply(action) {
            Command::None => {}
            Command::Quit => break,
            Command::Mutate(mutation) => {
                let _ = request_tx.send(Request::Mutate(mutation));
            }
            Command::Copy(text) => super::clipboard::copy(&text)?,
        }
        if state.focus() != focus {
            focus = state.focus();
            let _ = request_tx.send(Request::Focus(focus.clone()));
        }
        if state.watched_job() != watched {
            watched = state.watched_job();
            let _ = request_tx.send(Request::Watch(watched.clone()));
        }
        if state.search_wanted() != searched {
            searched = state.search_wanted();
            let _ = request_tx.send(Request::Search(searched.clone()));
        }
    }
    cancel.cancel();
    let _ = source.await;
    Ok(())
}

fn signal(kind: tokio::signal::unix::SignalKind) -> anyhow::Result<tokio::signal::unix::Signal> {
    Ok(tokio::signal::unix::signal(kind)?)
}
