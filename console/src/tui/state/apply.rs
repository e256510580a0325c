//! Actions, and what they do to the state.

use std::time::SystemTime;

use redq::JobState;

use super::{
    plural, Confirm, Connection, Cursor, DeadIds, Detail, JobsQuery, JobsView, Level, Mutation,
    Progress, Screen, State, Status, Update, JOBS_PAGE, STATUS_TTL,
};
use crate::clock::epoch_ms;
use crate::text::inert;
use crate::tui::detail_text::detail_lines;

/// Something the user asked for, or something the I/O task reported.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Leave the console.
    Quit,
    /// Open or close the help overlay.
    ToggleHelp,
    /// Switch to a screen.
    Show(Screen),
    /// The next screen (Tab).
    NextScreen,
    /// The previous screen (Shift-Tab).
    PrevScreen,
    /// Selection up (or scroll up).
    Up,
    /// Selection down (or scroll down).
    Down,
    /// First row.
    Top,
    /// Last row.
    Bottom,
    /// A page up (the previous page in the jobs view).
    PageUp,
    /// A page down (the next page in the jobs view).
    PageDown,
    /// Open the selection (Enter).
    Open,
    /// Close the innermost view, or clear the filter (Esc).
    Back,
    /// Start typing a filter.
    StartFilter,
    /// A character typed into the filter.
    FilterInput(char),
    /// Delete the filter's last character.
    FilterBackspace,
    /// Keep the filter and stop typing.
    FilterDone,
    /// Clear the filter and stop typing.
    FilterClear,
    /// Requeue the selected dead letter (or group).
    Requeue,
    /// Requeue every dead letter matching the filter.
    RequeueAll,
    /// Delete the selected dead letter (or group).
    Delete,
    /// Delete every dead letter matching the filter.
    Purge,
    /// Pause or resume the selected queue.
    TogglePause,
    /// Group dead letters by error signature, or stop grouping.
    ToggleGroup,
    /// Jobs view: the next job state.
    NextState,
    /// Jobs view: the previous job state.
    PrevState,
    /// Answer yes to the pending confirmation.
    Confirm,
    /// Answer no to the pending confirmation.
    Cancel,
    /// The terminal was resized.
    Resize(u16, u16),
    /// Time passed: the local clock now. Old status messages expire.
    Tick(SystemTime),
    /// The I/O task reported something.
    Received(Update),
}

/// What the app loop must do after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Nothing.
    None,
    /// Restore the terminal and exit.
    Quit,
    /// Hand this to the I/O task.
    Mutate(Mutation),
}

impl State {
    /// Apply one action; the only way the state changes.
    pub fn apply(&mut self, action: Action) -> Command {
        let command = self.dispatch(action);
        self.reanchor();
        command
    }

    fn dispatch(&mut self, action: Action) -> Command {
        match action {
            Action::Received(update) => {
                self.receive(update);
                return Command::None;
            }
            Action::Resize(w, h) => {
                self.size = (w, h);
                return Command::None;
            }
            Action::Tick(at) => {
                self.advance(at);
                return Command::None;
            }
            Action::Quit => return Command::Quit,
            _ => {}
        }
        if let Some(confirm) = self.confirm.take() {
            if action == Action::Confirm {
                return self.start(confirm.mutation);
            }
            self.say(Level::Info, "cancelled: nothing was changed");
            return Command::None;
        }
        if self.help {
            self.help = false;
            return Command::None;
        }
        if self.filter_editing {
            let filter = match &mut self.jobs {
                Some(view) => &mut view.filter,
                None => &mut self.filters[self.screen.index()],
            };
            match action {
                Action::FilterInput(c) if !c.is_control() => filter.push(c),
                Action::FilterBackspace => {
                    filter.pop();
                }
                Action::FilterDone => self.filter_editing = false,
                Action::FilterClear => {
                    filter.clear();
                    self.filter_editing = false;
                }
                _ => {}
            }
            self.reanchor();
            return Command::None;
        }
        match action {
            Action::ToggleHelp => self.help = true,
            Action::Show(screen) => self.show(screen),
            Action::NextScreen => self.show(Screen::ALL[(self.screen.index() + 1) % 6]),
            Action::PrevScreen => self.show(Screen::ALL[(self.screen.index() + 5) % 6]),
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::Top => self.step(i64::MIN / 2),
            Action::Bottom => self.step(i64::MAX / 2),
            Action::PageUp | Action::PageDown if self.detail.is_none() && self.jobs.is_some() => {
                self.turn_page(action == Action::PageDown)
            }
            Action::PageUp => self.step(-self.page_rows()),
            Action::PageDown => self.step(self.page_rows()),
            Action::Open => self.open(),
            Action::Back => self.back(),
            Action::StartFilter if self.detail.is_none() => self.filter_editing = true,
            Action::Requeue => return self.on_selected(true),
            Action::Delete => return self.on_selected(false),
            Action::RequeueAll => return self.on_all(true),
            Action::Purge => return self.on_all(false),
            Action::TogglePause => return self.toggle_pause(),
            Action::ToggleGroup if self.screen == Screen::Dead && self.detail.is_none() => {
                self.group_dead = !self.group_dead
            }
            Action::NextState | Action::PrevState => self.cycle_state(action == Action::NextState),
            _ => {}
        }
        Command::None
    }

    fn say(&mut self, level: Level, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            level,
            at: self.clock,
        });
    }

    /// Move the state's clock to `at` (local) and let an old status go.
    fn advance(&mut self, at: SystemTime) {
        self.clock = self.clock.max(at);
        let expired = self
            .status
            .as_ref()
            .is_some_and(|s| crate::clock::age(s.at, self.clock) >= STATUS_TTL);
        if expired {
            self.status = None;
        }
    }

    fn receive(&mut self, update: Update) {
        match update {
            Update::Snapshot {
                snapshot,
                received_at,
            } => {
                self.advance(received_at);
                let s = *snapshot;
                let d = &mut self.data;
                d.loaded = true;
                d.updated_at = Some(received_at);
                d.fetched_at = Some(s.redis_now);
                d.clock_skew_ms = epoch_ms(s.redis_now) as i64 - epoch_ms(received_at) as i64;
                d.queues = s.queues;
                d.events = s.events;
                d.workers_known = s.workers.is_some();
                d.workers = s.workers.unwrap_or_default();
                d.schedules_known = s.schedules.is_some();
                d.schedules = s.schedules.unwrap_or_default();
                d.leases_loaded = s.leases.is_some();
                d.leases = s.leases.unwrap_or_default();
                d.dead_loaded = s.dead.is_some();
                d.dead = s.dead.unwrap_or_default();
                d.jobs = s.jobs;
                let recovered = matches!(self.connection, Connection::Reconnecting { .. });
                self.connection = Connection::Live;
                // A failure said during the outage describes a condition
                // that is over now.
                if recovered
                    && self
                        .status
                        .as_ref()
                        .is_some_and(|s| s.level == Level::Error)
                {
                    self.status = None;
                }
            }
            Update::Unreachable { error, at } => {
                self.advance(at);
                let since = match &self.connection {
                    Connection::Reconnecting { since, .. } => *since,
                    _ => at,
                };
                self.connection = Connection::Reconnecting { since, error };
            }
            Update::Job { id, record } => {
                let Some(detail) = self.detail.as_mut().filter(|d| d.record.id == id) else {
                    return;
                };
                match record {
                    Some(record) => detail.record = *record,
                    None => {
                        let text = format!("job {} no longer exists", inert(&id));
                        if self.status.as_ref().map(|s| &s.text) != Some(&text) {
                            self.say(Level::Info, text);
                        }
                    }
                }
            }
            Update::Progress { label, done, left } => {
                self.busy = Some(Progress { label, done, left })
            }
            Update::Finished { message, ok } => {
                self.busy = None;
                self.say(if ok { Level::Ok } else { Level::Error }, message);
            }
        }
    }

    /// Rows a page key moves: the body height less table chrome.
    fn page_rows(&self) -> i64 {
        (self.size.1 as i64 - 9).max(1)
    }

    fn show(&mut self, screen: Screen) {
        self.screen = screen;
        self.jobs = None;
        self.detail = None;
    }

    fn step(&mut self, delta: i64) {
        if let Some(detail) = &mut self.detail {
            let lines = detail_lines(
                &detail.record,
                &self.settings.shards,
                SystemTime::UNIX_EPOCH,
            )
            .len() as i64;
            let max = (lines - 3).max(0);
            detail.scroll = (detail.scroll as i64 + delta).clamp(0, max) as u16;
            return;
        }
        let keys = self.row_keys();
        let cursor = self.cursor_mut();
        if keys.is_empty() {
            *cursor = Cursor::default();
            return;
        }
        let index = (cursor.index as i64).saturating_add(delta);
        cursor.index = index.clamp(0, keys.len() as i64 - 1) as usize;
        cursor.key = Some(keys[cursor.index].clone());
    }

    fn cursor_mut(&mut self) -> &mut Cursor {
        if let Some(jobs) = &mut self.jobs {
            return &mut jobs.cursor;
        }
        if self.screen == Screen::Dead && self.group_dead {
            return &mut self.group_cursor;
        }
        &mut self.cursors[self.screen.index()]
    }

    /// Keep the cursor on its row when rows move, else within bounds.
    fn reanchor(&mut self) {
        // A list not loaded yet has no rows to move to: keep the selection
        // for when it arrives (coming back to a screen keeps its row).
        if !self.screen_loaded() {
            return;
        }
        let keys = self.row_keys();
        let cursor = self.cursor_mut();
        if let Some(i) = cursor
            .key
            .as_ref()
            .and_then(|k| keys.iter().position(|x| x == k))
        {
            cursor.index = i;
        } else {
            cursor.index = cursor.index.min(keys.len().saturating_sub(1));
            cursor.key = keys.get(cursor.index).cloned();
        }
    }

    fn open(&mut self) {
        if self.detail.is_some() {
            return;
        }
        if self.jobs.is_some() {
            if let Some(job) = self.selected_job().cloned() {
                self.detail = Some(Detail {
                    record: job,
                    scroll: 0,
                });
            }
            return;
        }
        let index = self.cursor().index;
        match self.screen {
            Screen::Queues => {
                if let Some(row) = self.visible_queues().get(index) {
                    self.jobs = Some(JobsView {
                        query: JobsQuery {
                            queue: row.counts.queue.clone(),
                            state: JobState::Waiting,
                            offset: 0,
                        },
                        cursor: Cursor::default(),
                        filter: String::new(),
                    });
                }
            }
            Screen::Dead if self.group_dead => {
                if let Some(group) = self.dead_groups().get(index) {
                    self.filters[Screen::Dead.index()] = group.signature.clone();
                    self.group_dead = false;
                }
            }
            Screen::Dead | Screen::Leases => {
                let rows = if self.screen == Screen::Dead {
                    self.visible_dead()
                } else {
                    self.visible_leases()
                };
                if let Some(job) = rows.get(index) {
                    self.detail = Some(Detail {
                        record: (*job).clone(),
                        scroll: 0,
                    });
                }
            }
            _ => {}
        }
    }

    fn back(&mut self) {
        if self.detail.take().is_some() {
            return;
        }
        // Esc in the jobs view clears its filter first, then leaves.
        if let Some(view) = self.jobs.as_mut().filter(|v| !v.filter.is_empty()) {
            view.filter.clear();
            return;
        }
        if self.jobs.take().is_some() {
            return;
        }
        self.filters[self.screen.index()].clear();
    }

    fn turn_page(&mut self, forward: bool) {
        // The total of the last page of this queue and state, whatever
        // its offset: paging on does not wait for each page to arrive.
        let total = match (&self.jobs, &self.data.jobs) {
            (Some(view), Some(page))
                if page.query.queue == view.query.queue && page.query.state == view.query.state =>
            {
                page.page.total
            }
            _ => 0,
        };
        let Some(view) = &mut self.jobs else { return };
        let page = JOBS_PAGE as u64;
        let offset = if forward {
            if view.query.offset + page >= total {
                return;
            }
            view.query.offset + page
        } else {
            view.query.offset.saturating_sub(page)
        };
        if offset != view.query.offset {
            view.query.offset = offset;
            view.cursor = Cursor::default();
        }
    }

    fn cycle_state(&mut self, forward: bool) {
        let Some(view) = &mut self.jobs else { return };
        if self.detail.is_some() {
            return;
        }
        let states = State::JOB_STATES;
        let i = states
            .iter()
            .position(|s| *s == view.query.state)
            .unwrap_or(0);
        let next = if forward { i + 1 } else { i + states.len() - 1 } % states.len();
        view.query.state = states[next];
        view.query.offset = 0;
        view.cursor = Cursor::default();
    }

    /// Refuse mutations in read-only mode or while one runs.
    fn may_mutate(&mut self, what: &str) -> bool {
        if self.settings.read_only {
            self.say(
                Level::Error,
                format!("read-only: {what} refused (the console was started with --read-only)"),
            );
            return false;
        }
        if let Some(busy) = &self.busy {
            let text = format!("busy: wait until \"{}\" finishes", busy.label);
            self.say(Level::Error, text);
            return false;
        }
        true
    }

    fn ask(&mut self, prompt: String, mutation: Mutation) -> Command {
        self.confirm = Some(Confirm { prompt, mutation });
        Command::None
    }

    fn start(&mut self, mutation: Mutation) -> Command {
        if !self.may_mutate(&mutation.label()) {
            return Command::None;
        }
        self.busy = Some(Progress {
            label: mutation.label(),
            done: 0,
            left: 0,
        });
        self.status = None;
        Command::Mutate(mutation)
    }

    /// `r` / `d`: the selected dead letter, or the selected group.
    fn on_selected(&mut self, requeue: bool) -> Command {
        let verb = if requeue { "requeue" } else { "delete" };
        if self.settings.read_only {
            self.may_mutate(verb);
            return Command::None;
        }
        // Which dead letters are selected, and how to describe them.
        let picked: Option<(DeadIds, String)> = if let Some(detail) = &self.detail {
            (detail.record.state == JobState::Dead).then(|| {
                let j = &detail.record;
                (vec![(j.queue.clone(), vec![j.id.clone()])], describe_job(j))
            })
        } else if let Some(view) = &self.jobs {
            (view.query.state == JobState::Dead)
                .then(|| self.selected_job())
                .flatten()
                .map(|j| (vec![(j.queue.clone(), vec![j.id.clone()])], describe_job(j)))
        } else if self.screen == Screen::Dead && self.group_dead {
            self.dead_groups().get(self.cursor().index).map(|g| {
                let n = g.jobs.len();
                (
                    by_queue(g.jobs.iter().map(|j| (&j.queue, &j.id))),
                    format!(
                        "{} with error \"{}\"",
                        plural(n, "dead letter"),
                        inert(&g.signature)
                    ),
                )
            })
        } else if self.screen == Screen::Dead {
            self.visible_dead()
                .get(self.cursor().index)
                .map(|j| (vec![(j.queue.clone(), vec![j.id.clone()])], describe_job(j)))
        } else {
            return Command::None;
        };
        let Some((ids, what)) = picked else {
            self.say(Level::Info, format!("nothing selected to {verb}"));
            return Command::None;
        };
        if !self.may_mutate(verb) {
            return Command::None;
        }
        if requeue {
            let prompt = format!("Requeue {what}? Attempts restart at 0.");
            self.ask(prompt, Mutation::RequeueDead(ids))
        } else {
            let prompt = format!("Delete {what} for good?");
            self.ask(prompt, Mutation::DeleteDead(ids))
        }
    }

    /// `R` / `D`: every dead letter matching the filter.
    fn on_all(&mut self, requeue: bool) -> Command {
        let verb = if requeue {
            "Requeue"
        } else {
            "Delete for good"
        };
        let on_dead = self.screen == Screen::Dead && self.jobs.is_none() && self.detail.is_none();
        let jobs_dead = self
            .jobs
            .as_ref()
            .is_some_and(|v| v.query.state == JobState::Dead)
            && self.detail.is_none();
        if !on_dead && !jobs_dead {
            return Command::None;
        }
        if !self.may_mutate(if requeue { "requeue" } else { "purge" }) {
            return Command::None;
        }
        let filter = self.filter().to_owned();
        if filter.is_empty() {
            // Everything: let the driver drain whole queues in batches.
            let queues: Vec<(String, u64)> = match &self.jobs {
                Some(view) => self
                    .data
                    .queues
                    .iter()
                    .filter(|q| q.counts.queue == view.query.queue)
                    .map(|q| (q.counts.queue.clone(), q.counts.dead))
                    .collect(),
                None => self
                    .data
                    .queues
                    .iter()
                    .filter(|q| q.counts.dead > 0)
                    .map(|q| (q.counts.queue.clone(), q.counts.dead))
                    .collect(),
            };
            let total: u64 = queues.iter().map(|(_, n)| n).sum();
            if total == 0 {
                self.say(Level::Info, "no dead letters");
                return Command::None;
            }
            let names: Vec<String> = queues.into_iter().map(|(q, _)| q).collect();
            let place = match names.as_slice() {
                [one] => format!("queue {}", inert(one)),
                many => plural(many.len(), "queue"),
            };
            let prompt = format!(
                "{verb} all {} in {place}?",
                plural(total as usize, "dead letter")
            );
            let mutation = if requeue {
                Mutation::RequeueAllDead(names)
            } else {
                Mutation::PurgeDead(names)
            };
            return self.ask(prompt, mutation);
        }
        // A filtered jobs view acts on the matching rows of its page only.
        let rows = if jobs_dead {
            self.visible_jobs()
        } else {
            self.visible_dead()
        };
        if rows.is_empty() {
            self.say(Level::Info, "no dead letters match the filter");
            return Command::None;
        }
        let ids = by_queue(rows.iter().map(|j| (&j.queue, &j.id)));
        let mut prompt = format!(
            "{verb} the {} matching \"{}\"?",
            plural(rows.len(), "dead letter"),
            inert(&filter)
        );
        if jobs_dead {
            prompt.push_str(" (only this page was searched)");
        } else if self.data.dead.truncated {
            prompt.push_str(" (only the newest loaded dead letters were searched)");
        }
        let mutation = if requeue {
            Mutation::RequeueDead(ids)
        } else {
            Mutation::DeleteDead(ids)
        };
        self.ask(prompt, mutation)
    }

    fn toggle_pause(&mut self) -> Command {
        if self.detail.is_some() {
            return Command::None;
        }
        let queue = match &self.jobs {
            Some(view) => Some(view.query.queue.clone()),
            None if self.screen == Screen::Queues => self
                .visible_queues()
                .get(self.cursor().index)
                .map(|q| q.counts.queue.clone()),
            None => return Command::None,
        };
        let Some(queue) = queue else {
            self.say(Level::Info, "no queue selected");
            return Command::None;
        };
        let paused = self
            .data
            .queues
            .iter()
            .any(|q| q.counts.queue == queue && q.counts.paused);
        if !self.may_mutate(if paused { "resume" } else { "pause" }) {
            return Command::None;
        }
        let shown = inert(&queue);
        if paused {
            self.ask(
                format!("Resume queue {shown}? Workers start claiming its jobs again."),
                Mutation::Resume(queue),
            )
        } else {
            self.ask(
                format!("Pause queue {shown}? Workers claim nothing from it until it is resumed."),
                Mutation::Pause(queue),
            )
        }
    }
}

fn describe_job(job: &redq::JobRecord) -> String {
    let name = job
        .name
        .as_deref()
        .map(|n| format!(" {}", inert(n)))
        .unwrap_or_default();
    format!(
        "dead letter {} ({}{name})",
        inert(&job.id),
        inert(&job.queue)
    )
}

fn by_queue<'a>(jobs: impl Iterator<Item = (&'a String, &'a String)>) -> DeadIds {
    let mut out: DeadIds = Vec::new();
    for (queue, id) in jobs {
        match out.iter_mut().find(|(q, _)| q == queue) {
            Some((_, ids)) => ids.push(id.clone()),
            None => out.push((queue.clone(), vec![id.clone()])),
        }
    }
    out
}
