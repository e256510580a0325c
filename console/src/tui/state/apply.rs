//! Actions, and where each goes: the overlay takes it first, then the
//! view. The handlers live by what they do: `navigate` (moving, opening,
//! going back, filters), `dead_letters` and `pause` (what `r`/`d`/`R`/`D`
//! and `p` ask), `confirm` (the answer), `receive` (the I/O task's news).

use std::time::SystemTime;

use super::{Level, Mutation, OperateKey, Overlay, Screen, State, Status, Surgery, Update, View};

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
    /// Promote, retry now or delete the selected job (asks).
    Job(Surgery),
    /// The same for every job of the queue in the state shown (asks).
    AllJobs(Surgery),
    /// Pause or resume the selected queue.
    TogglePause,
    /// Clear the selected limit (Limits screen).
    ClearLimit,
    /// Cancel the gate shown or selected (Workflows; asks).
    CancelGate,
    /// Release (`true`) or dead-letter the gate's held waiter (asks for
    /// the dead letter).
    DecideHeld(bool),
    /// Pick the next waiter of the gate shown (the one `r` and `d` decide).
    NextWaiter,
    /// A schedule, lease or canary key (`operate.rs`).
    Operate(OperateKey),
    /// Group dead letters by error signature, or stop grouping.
    ToggleGroup,
    /// Queues screen: open the selected queue's Metrics view (`m`).
    OpenMetrics,
    /// Metrics view: the next (positive) or previous window.
    MetricsWindow(isize),
    /// Jobs view: the next job state.
    NextState,
    /// Jobs view: the previous job state.
    PrevState,
    /// A digit typed into a requeue's confirmation: the attempt count it
    /// restarts at.
    AttemptsDigit(u8),
    /// Erase the last digit of a requeue's attempt count.
    AttemptsErase,
    /// Answer yes to the pending confirmation.
    Confirm,
    /// Answer no to the pending confirmation.
    Cancel,
    /// Freeze the screen, or resume refreshing (`f`).
    ToggleFreeze,
    /// Copy the selected row's id to the clipboard (`i`).
    CopyId,
    /// Sort the list by its next column (`o`).
    SortNext,
    /// Reverse the list's sort (`O`).
    SortReverse,
    /// Quiet the selected worker (asks).
    QuietWorker,
    /// Stop the selected worker once idle (asks).
    StopWorker,
    /// Jobs view: search the queue's payloads (`S`: type a text).
    StartSearch,
    /// A character typed into the search's text.
    SearchInput(char),
    /// Delete the search text's last character.
    SearchBackspace,
    /// Run the search for the text typed.
    SearchSubmit,
    /// Cancel or delete every match of the search (asks).
    OnMatches(super::MatchChange),
    /// Scroll the help overlay by this many lines (negative: up).
    HelpScroll(i64),
    /// Scroll the help overlay a page down (`true`) or up.
    HelpPage(bool),
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
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
}

impl State {
    /// Apply one action; the only way the state changes.
    pub fn apply(&mut self, action: Action) -> Command {
        let command = self.dispatch(action);
        self.drop_search_elsewhere();
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
        match std::mem::take(&mut self.overlay) {
            Overlay::Confirm(confirm) => self.answer(confirm, &action),
            // Help scrolls; any other key closes it, and does nothing else.
            Overlay::Help => {
                match action {
                    Action::HelpScroll(lines) => self.scroll_help(lines),
                    Action::HelpPage(down) => {
                        let page = self.help_page();
                        self.scroll_help(if down { page } else { -page })
                    }
                    _ => return Command::None,
                }
                self.overlay = Overlay::Help;
                Command::None
            }
            Overlay::Filter => {
                if self.type_into_filter(action) {
                    self.overlay = Overlay::Filter;
                }
                Command::None
            }
            // A search over the jobs view takes its keys first.
            Overlay::None if self.search_shown().is_some() => match self.on_search(&action) {
                Some(command) => command,
                None => self.act(action),
            },
            Overlay::None => self.act(action),
        }
    }

    /// An action with nothing over the view.
    fn act(&mut self, action: Action) -> Command {
        let jobs_shown = matches!(self.view, View::Jobs(_) | View::Gate(_));
        let list_shown = !matches!(self.view, View::Detail(_));
        match action {
            Action::ToggleHelp => {
                self.help_scroll = 0;
                self.overlay = Overlay::Help
            }
            Action::ToggleFreeze => self.toggle_freeze(),
            Action::CopyId => return self.copy_selected(),
            Action::SortNext => self.sort_next(),
            Action::SortReverse => self.sort_reverse(),
            Action::QuietWorker => return self.tell_selected_worker(false),
            Action::StopWorker => return self.tell_selected_worker(true),
            Action::Show(screen) => self.show(screen),
            Action::NextScreen => self.show(self.screen().step(1)),
            Action::PrevScreen => self.show(self.screen().step(-1)),
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::Top => self.step(i64::MIN / 2),
            Action::Bottom => self.step(i64::MAX / 2),
            Action::PageUp | Action::PageDown if jobs_shown => {
                self.turn_page(action == Action::PageDown)
            }
            Action::PageUp => self.step(-self.page_rows()),
            Action::PageDown => self.step(self.page_rows()),
            Action::Open => self.open(),
            Action::Back => self.back(),
            Action::StartFilter if list_shown => self.overlay = Overlay::Filter,
            Action::Requeue => return self.on_selected(true),
            Action::Delete => return self.on_selected(false),
            Action::RequeueAll => return self.on_all(true),
            Action::Purge => return self.on_all(false),
            Action::Job(change) => return self.on_job(change),
            Action::AllJobs(change) => return self.on_all_jobs(change),
            Action::TogglePause => return self.toggle_pause(),
            Action::ClearLimit => return self.clear_selected_limit(),
            Action::CancelGate => return self.cancel_gate(),
            Action::DecideHeld(release) => return self.decide_held(release),
            Action::NextWaiter => self.next_waiter(),
            Action::Operate(key) => return self.on_operate(key),
            Action::StartSearch => self.start_search(),
            Action::ToggleGroup if self.view == View::Screen(Screen::Dead) => {
                self.tabs.dead_grouped = !self.tabs.dead_grouped
            }
            Action::OpenMetrics => self.open_metrics(),
            Action::MetricsWindow(steps) => self.step_metrics_window(steps),
            Action::NextState | Action::PrevState => self.cycle_state(action == Action::NextState),
            _ => {}
        }
        Command::None
    }

    /// Put `text` on the status line.
    pub(super) fn say(&mut self, level: Level, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            level,
            at: self.clock,
        });
    }
}
