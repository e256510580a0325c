//! The one key table. It turns key presses into [`Action`]s, and the same
//! rows draw the footer hints and the help screen, so a binding and its
//! documentation cannot drift apart.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::state::{Action, MatchChange, OperateKey, Overlay, Screen, State, Surgery, View};
use redq::JobState;

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A confirmation is open.
    Confirm,
    /// A requeue's confirmation is open: it also takes the attempt count.
    ConfirmRequeue,
    /// The filter is being typed.
    Filter,
    /// The job detail view.
    Detail,
    /// One job: a row of the jobs view, or the job detail.
    Job,
    /// The jobs view of one queue.
    Jobs,
    /// The Queues screen.
    Queues,
    /// The Leases screen.
    Leases,
    /// The Schedules screen.
    Schedules,
    /// The detail of one schedule (Enter on the Schedules screen).
    Schedule,
    /// The Limits screen.
    Limits,
    /// The Workflows screen.
    Workflows,
    /// The view of one gate.
    Gate,
    /// The Metrics view of one queue (`m` on the Queues screen).
    Metrics,
    /// One dead letter: a row of the Dead letters screen (or a group), the
    /// detail of a dead letter, a row of the jobs view listing dead jobs.
    Dead,
    /// Lists of dead letters: the Dead letters screen, and the jobs view
    /// listing dead jobs (not the detail of one).
    DeadList,
    /// The Dead letters screen itself.
    DeadScreen,
    /// Screens that list rows (not the detail view).
    Lists,
    /// Lists that can be filtered: the seven screens and the jobs view.
    Filterable,
    /// Lists whose rows open a detail (leases, dead letters, jobs).
    Openable,
    /// Anywhere outside a confirmation, the filter and help.
    Main,
    /// The help overlay (any key not bound here closes it).
    Help,
    /// The Workers screen.
    Workers,
    /// Screens whose list sorts by a column (`State::sort_columns`).
    Sortable,
    /// A payload search's text being typed (`S` on a jobs view).
    SearchText,
    /// A payload search's results over the jobs view.
    Search,
}

impl Scope {
    /// The help screen's heading for this scope.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Main => "Everywhere",
            Scope::Lists | Scope::Filterable | Scope::Openable => "Lists",
            Scope::Queues => "Queues",
            Scope::Leases => "Leases",
            Scope::Limits => "Limits",
            Scope::Workflows | Scope::Gate => "Workflows",
            // Its keys sit with the `m` that opens it.
            Scope::Metrics => "Queues",
            Scope::Schedules => "Schedules",
            // Its keys sit with the Enter that opens it.
            Scope::Schedule => "Schedules",
            Scope::Jobs => "Jobs of a queue",
            Scope::Dead => "Dead letters",
            Scope::DeadList | Scope::DeadScreen => "Dead letters",
            Scope::Detail => "Job detail",
            Scope::Job => "A job (its row or its detail)",
            Scope::Filter => "Typing a filter",
            Scope::Confirm | Scope::ConfirmRequeue => "Confirmation",
            Scope::Help => "This help (any other key closes it)",
            Scope::Workers => "Workers",
            Scope::Sortable => "Lists",
            Scope::SearchText => "Typing a search text",
            Scope::Search => "Search results (S on a queue's jobs)",
        }
    }

    /// Whether the binding is live in this state: the overlay takes the
    /// keys first, and with none the view decides.
    pub fn applies(self, state: &State) -> bool {
        match &state.overlay {
            Overlay::Confirm(confirm) => match self {
                Scope::Confirm => true,
                Scope::ConfirmRequeue => confirm.mutation.attempts().is_some(),
                _ => false,
            },
            Overlay::Filter => self == Scope::Filter,
            // Any other key closes help (see `action_for`).
            Overlay::Help => self == Scope::Help,
            Overlay::None => match state.search_shown() {
                Some(search) if search.typing => self == Scope::SearchText,
                Some(_) => matches!(self, Scope::Search | Scope::Main),
                None => self.applies_to(&state.view),
            },
        }
    }

    /// Whether the binding is live in `view` with nothing over it.
    fn applies_to(self, view: &View) -> bool {
        match view {
            View::Metrics(_) => matches!(self, Scope::Main | Scope::Metrics),
            View::Gate(_) => matches!(self, Scope::Main | Scope::Lists | Scope::Gate),
            View::Schedule(_) => matches!(self, Scope::Main | Scope::Schedule),
            View::Detail(detail) => match self {
                Scope::Main | Scope::Detail | Scope::Job => true,
                Scope::Dead => detail.record.state == JobState::Dead,
                _ => false,
            },
            View::Jobs(jobs) => match self {
                Scope::Main
                | Scope::Lists
                | Scope::Filterable
                | Scope::Openable
                | Scope::Jobs
                | Scope::Job => true,
                Scope::Dead | Scope::DeadList => jobs.query.state == JobState::Dead,
                _ => false,
            },
            View::Screen(screen) => match self {
                Scope::Main | Scope::Lists | Scope::Filterable => true,
                Scope::Openable => matches!(screen, Screen::Leases | Screen::Dead),
                Scope::Queues => *screen == Screen::Queues,
                Scope::Leases => *screen == Screen::Leases,
                Scope::Limits => *screen == Screen::Limits,
                Scope::Workflows => *screen == Screen::Workflows,
                Scope::Schedules => *screen == Screen::Schedules,
                Scope::Dead | Scope::DeadList | Scope::DeadScreen => *screen == Screen::Dead,
                Scope::Workers => *screen == Screen::Workers,
                Scope::Sortable => matches!(
                    screen,
                    Screen::Queues
                        | Screen::Leases
                        | Screen::Dead
                        | Screen::Schedules
                        | Screen::Workers
                ),
                _ => false,
            },
        }
    }
}

/// A key as written in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Required modifiers (Shift is ignored for characters: `R` is `R`).
    pub mods: KeyModifiers,
}

const fn k(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::NONE,
    }
}

const fn code(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

/// One row of the key table.
#[derive(Debug)]
pub struct Binding {
    /// Where it applies.
    pub scope: Scope,
    /// The keys that trigger it.
    pub keys: &'static [Key],
    /// How the keys are written in help.
    pub label: &'static str,
    /// What it does, for help.
    pub help: &'static str,
    /// Footer hint, if it earns a place there.
    pub hint: Option<&'static str>,
    /// The action.
    pub action: Action,
}

const fn bind(
    scope: Scope,
    keys: &'static [Key],
    label: &'static str,
    help: &'static str,
    hint: Option<&'static str>,
    action: Action,
) -> Binding {
    Binding {
        scope,
        keys,
        label,
        help,
        hint,
        action,
    }
}

use KeyCode::{
    BackTab, Backspace, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up,
};
use Scope::{
    Confirm, ConfirmRequeue, Dead, DeadList, DeadScreen, Detail, Filter, Filterable, Help, Job,
    Jobs, Leases, Limits, Lists, Main, Metrics, Openable, Queues, Search, SearchText, Sortable,
    Workers,
};

/// Every binding, most specific scope first (the first match wins).
#[rustfmt::skip]
pub static BINDINGS: &[Binding] = &[
    bind(Help, &[k('j'), code(Down)], "j k ↓ ↑", "scroll a line", None, Action::HelpScroll(1)),
    bind(Help, &[k('k'), code(Up)], "", "", None, Action::HelpScroll(-1)),
    bind(Help, &[code(PageDown), k(' ')], "PgDn PgUp", "scroll a page (Space: down)", None, Action::HelpPage(true)),
    bind(Help, &[code(PageUp)], "", "", None, Action::HelpPage(false)),
    bind(Help, &[k('g'), code(Home)], "g G", "top, end (Home, End)", None, Action::HelpScroll(i64::MIN / 2)),
    bind(Help, &[k('G'), code(End)], "", "", None, Action::HelpScroll(i64::MAX / 2)),
    bind(Confirm, &[k('y'), k('Y')], "y", "yes, do it", Some("y yes"), Action::Confirm),
    bind(Confirm, &[k('n'), code(Esc)], "n Esc", "no (so does any other key)", Some("n/Esc no (default)"), Action::Cancel),
    bind(ConfirmRequeue, &[k('0')], "0-9", "attempts a requeue restarts at", Some("0-9 attempts"), Action::AttemptsDigit(0)),
    bind(ConfirmRequeue, &[k('1')], "", "", None, Action::AttemptsDigit(1)),
    bind(ConfirmRequeue, &[k('2')], "", "", None, Action::AttemptsDigit(2)),
    bind(ConfirmRequeue, &[k('3')], "", "", None, Action::AttemptsDigit(3)),
    bind(ConfirmRequeue, &[k('4')], "", "", None, Action::AttemptsDigit(4)),
    bind(ConfirmRequeue, &[k('5')], "", "", None, Action::AttemptsDigit(5)),
    bind(ConfirmRequeue, &[k('6')], "", "", None, Action::AttemptsDigit(6)),
    bind(ConfirmRequeue, &[k('7')], "", "", None, Action::AttemptsDigit(7)),
    bind(ConfirmRequeue, &[k('8')], "", "", None, Action::AttemptsDigit(8)),
    bind(ConfirmRequeue, &[k('9')], "", "", None, Action::AttemptsDigit(9)),
    bind(ConfirmRequeue, &[code(Backspace)], "Backspace", "erase a digit of those attempts", Some("Backspace erase"), Action::AttemptsErase),
    bind(SearchText, &[code(Enter)], "Enter", "search every job of the queue for it", Some("Enter search"), Action::SearchSubmit),
    bind(SearchText, &[code(Esc)], "Esc", "give up the search", Some("Esc cancel"), Action::Back),
    bind(SearchText, &[code(Backspace)], "Backspace", "delete a character", None, Action::SearchBackspace),
    bind(Search, &[k('j'), code(Down)], "j k ↓ ↑", "move down, up", Some("j/k move"), Action::Down),
    bind(Search, &[k('k'), code(Up)], "", "", None, Action::Up),
    bind(Search, &[k('g'), code(Home)], "g G", "first, last match (Home, End)", None, Action::Top),
    bind(Search, &[k('G'), code(End)], "", "", None, Action::Bottom),
    bind(Search, &[code(PageDown)], "PgDn PgUp", "page down, up", None, Action::PageDown),
    bind(Search, &[code(PageUp)], "", "", None, Action::PageUp),
    bind(Search, &[code(Enter)], "Enter", "show the selected job", Some("Enter detail"), Action::Open),
    bind(Search, &[k('c')], "c", "cancel every match, in batches (asks)", Some("c cancel all"), Action::OnMatches(MatchChange::Cancel)),
    bind(Search, &[k('d')], "d", "delete every match, in batches (asks)", Some("d delete all"), Action::OnMatches(MatchChange::Delete)),
    bind(Search, &[k('S')], "S", "search for another text", Some("S new"), Action::StartSearch),
    bind(Search, &[code(Esc)], "Esc", "stop the search; once stopped, back to the jobs", Some("Esc stop/back"), Action::Back),
    bind(Filter, &[code(Enter)], "Enter", "keep the filter", Some("Enter keep"), Action::FilterDone),
    bind(Filter, &[code(Esc)], "Esc", "clear the filter", Some("Esc clear"), Action::FilterClear),
    bind(Filter, &[code(Backspace)], "Backspace", "delete a character", None, Action::FilterBackspace),
    bind(Dead, &[k('r')], "r d", "requeue, delete the selected one (or group)", Some("r requeue"), Action::Requeue),
    bind(DeadList, &[k('R')], "R D", "requeue, delete all that match the filter", Some("R all"), Action::RequeueAll),
    bind(Dead, &[k('d')], "", "", Some("d delete"), Action::Delete),
    bind(DeadList, &[k('D')], "", "", Some("D all"), Action::Purge),
    bind(Job, &[k('u')], "u t d c", "promote, retry now, delete, cancel", None, Action::Job(Surgery::Promote)),
    bind(Job, &[k('x')], "x", "dead-letter it: set aside unrun, requeue later (asks)", None, Action::Job(Surgery::DeadLetter)),
    bind(Job, &[k('t')], "", "", None, Action::Job(Surgery::RetryNow)),
    bind(Job, &[k('d')], "", "", None, Action::Job(Surgery::Delete)),
    bind(Job, &[k('c')], "", "", None, Action::Job(Surgery::Cancel)),
    bind(Detail, &[k('j'), code(Down)], "j k ↓ ↑", "scroll down, up", Some("j/k scroll"), Action::Down),
    bind(Detail, &[k('k'), code(Up)], "", "", None, Action::Up),
    bind(Detail, &[code(Esc), k('h'), code(Left)], "Esc", "back to the list", Some("Esc back"), Action::Back),
    bind(Jobs, &[k('l'), code(Right)], "l h → ←", "next, previous job state", Some("←/→ state"), Action::NextState),
    bind(Jobs, &[k('h'), code(Left)], "", "", None, Action::PrevState),
    bind(Jobs, &[code(PageDown)], "PgDn PgUp", "next, previous page", Some("PgUp/PgDn page"), Action::PageDown),
    bind(Jobs, &[code(PageUp)], "", "", None, Action::PageUp),
    bind(Jobs, &[k('p')], "p", "pause or resume the queue (asks)", Some("p pause"), Action::TogglePause),
    bind(Jobs, &[k('S')], "S", "search every job's payload for a text", None, Action::StartSearch),
    bind(Jobs, &[code(Enter)], "Enter", "show the selected job", Some("Enter detail"), Action::Open),
    bind(Jobs, &[code(Esc)], "Esc", "clear filter, else go back", Some("Esc back"), Action::Back),
    bind(Jobs, &[k('U')], "U T D C", "the same, all in this state (asks)", None, Action::AllJobs(Surgery::Promote)),
    bind(Jobs, &[k('T')], "", "", None, Action::AllJobs(Surgery::RetryNow)),
    bind(Jobs, &[k('D')], "", "", None, Action::AllJobs(Surgery::Delete)),
    bind(Jobs, &[k('C')], "", "", None, Action::AllJobs(Surgery::Cancel)),
    bind(Leases, &[k('c')], "c", "cancel the selected job (asks)", Some("c cancel"), Action::Job(Surgery::Cancel)),
    bind(Metrics, &[k('w'), k(']')], "w ] [ o", "in its metrics: next, previous window; off/on (asks); Esc back", Some("w window"), Action::MetricsWindow(1)),
    bind(Metrics, &[k('[')], "", "", None, Action::MetricsWindow(-1)),
    bind(Metrics, &[k('o')], "", "", Some("o off/on"), Action::Operate(OperateKey::ToggleMetrics)),
    bind(Metrics, &[code(Esc), k('h'), code(Left)], "", "", Some("Esc back"), Action::Back),
    bind(Queues, &[code(Enter)], "Enter", "list the queue's jobs by state", Some("Enter jobs"), Action::Open),
    bind(Queues, &[k('m')], "m", "the queue's metrics: counts, percentiles, throughput", Some("m metrics"), Action::OpenMetrics),
    bind(Limits, &[code(Enter)], "Enter", "list the limiter's held jobs", Some("Enter held jobs"), Action::Open),
    bind(Limits, &[k('x')], "x", "clear the selected limit (asks)", Some("x clear"), Action::ClearLimit),
    bind(Scope::Gate, &[code(PageDown)], "", "", Some("PgUp/PgDn members"), Action::PageDown),
    bind(Scope::Gate, &[code(PageUp)], "", "", None, Action::PageUp),
    bind(Scope::Gate, &[code(Esc), k('h'), code(Left)], "", "", Some("Esc back"), Action::Back),
    bind(Scope::Gate, &[k('c')], "", "", Some("c cancel"), Action::CancelGate),
    bind(Scope::Gate, &[k('r')], "", "", Some("r release"), Action::DecideHeld(true)),
    bind(Scope::Gate, &[k('d')], "", "", Some("d fail"), Action::DecideHeld(false)),
    bind(Scope::Gate, &[k('w')], "", "", Some("w waiter"), Action::NextWaiter),
    bind(Scope::Workflows, &[code(Enter)], "Enter", "open it: counts, waiters and why, members (PgDn)", Some("Enter open"), Action::Open),
    bind(Scope::Workflows, &[k('c')], "c r d", "cancel it; release, dead-letter its held job (asks)", Some("c cancel"), Action::CancelGate),
    bind(Scope::Workflows, &[k('r')], "", "", Some("r release"), Action::DecideHeld(true)),
    bind(Scope::Workflows, &[k('d')], "", "", Some("d fail"), Action::DecideHeld(false)),
    bind(Scope::Schedules, &[code(Enter)], "Enter", "open it: the whole schedule and its next 5 runs", Some("Enter detail"), Action::Open),
    bind(Scope::Schedule, &[code(Esc), k('h'), code(Left)], "", "", Some("Esc back"), Action::Back),
    bind(Scope::Schedule, &[k('t')], "t p d Esc", "in its detail: the same to it (asks); j k scroll; Esc back", Some("t trigger"), Action::Operate(OperateKey::TriggerSchedule)),
    bind(Scope::Schedule, &[k('p')], "", "", Some("p pause"), Action::Operate(OperateKey::ToggleSchedule)),
    bind(Scope::Schedule, &[k('d')], "", "", Some("d delete"), Action::Operate(OperateKey::DeleteSchedule)),
    bind(Scope::Schedule, &[k('j'), code(Down)], "", "", Some("j/k scroll"), Action::Down),
    bind(Scope::Schedule, &[k('k'), code(Up)], "", "", None, Action::Up),
    bind(Scope::Schedules, &[k('t')], "t p d", "trigger now, pause or resume, delete (asks)", Some("t trigger"), Action::Operate(OperateKey::TriggerSchedule)),
    bind(Scope::Schedules, &[k('p')], "", "", Some("p pause"), Action::Operate(OperateKey::ToggleSchedule)),
    bind(Scope::Schedules, &[k('d')], "", "", Some("d delete"), Action::Operate(OperateKey::DeleteSchedule)),
    bind(Leases, &[k('x')], "x", "reclaim the queue's lapsed leases now (asks)", Some("x reclaim"), Action::Operate(OperateKey::Reclaim)),
    bind(DeadScreen, &[k('K')], "K", "canary: requeue 3 of the group, watch them (asks)", Some("K canary"), Action::Operate(OperateKey::Canary)),
    bind(Queues, &[k('p')], "p", "pause or resume the queue (asks)", Some("p pause"), Action::TogglePause),
    bind(DeadScreen, &[k('s')], "s", "group by error signature, or ungroup", Some("s group"), Action::ToggleGroup),
    bind(Workers, &[k('z')], "z", "quiet it: claims nothing more, finishes its jobs (asks)", Some("z quiet"), Action::QuietWorker),
    bind(Workers, &[k('s')], "s", "stop it: quiet, then it exits once idle (asks)", Some("s stop"), Action::StopWorker),
    bind(Lists, &[k('j'), code(Down)], "j k ↓ ↑", "move down, up", Some("j/k move"), Action::Down),
    bind(Lists, &[k('k'), code(Up)], "", "", None, Action::Up),
    bind(Lists, &[k('g'), code(Home)], "g G", "first, last row (Home, End)", None, Action::Top),
    bind(Lists, &[k('G'), code(End)], "", "", None, Action::Bottom),
    bind(Lists, &[code(PageDown)], "PgDn PgUp", "page down, up", None, Action::PageDown),
    bind(Lists, &[code(PageUp)], "", "", None, Action::PageUp),
    bind(Openable, &[code(Enter)], "Enter", "open it (a group: filter by it)", Some("Enter open"), Action::Open),
    bind(Filterable, &[k('/')], "/", "filter the rows", Some("/ filter"), Action::StartFilter),
    bind(Filterable, &[code(Esc)], "Esc", "clear the filter", None, Action::Back),
    bind(Sortable, &[k('o')], "o O", "sort by the next column, reverse the sort", Some("o sort"), Action::SortNext),
    bind(Sortable, &[k('O')], "", "", None, Action::SortReverse),
    bind(Main, &[k('1')], "1-8", "switch screen (the tabs at the top)", Some("1-8 screens"), Action::Show(Screen::Queues)),
    bind(Main, &[k('2')], "", "", None, Action::Show(Screen::Leases)),
    bind(Main, &[k('3')], "", "", None, Action::Show(Screen::Dead)),
    bind(Main, &[k('4')], "", "", None, Action::Show(Screen::Schedules)),
    bind(Main, &[k('5')], "", "", None, Action::Show(Screen::Workers)),
    bind(Main, &[k('6')], "", "", None, Action::Show(Screen::Events)),
    bind(Main, &[k('7')], "", "", None, Action::Show(Screen::Limits)),
    bind(Main, &[k('8')], "", "", None, Action::Show(Screen::Workflows)),
    bind(Main, &[code(Tab)], "Tab S-Tab", "next, previous screen (Shift-Tab)", None, Action::NextScreen),
    bind(Main, &[code(BackTab)], "", "", None, Action::PrevScreen),
    bind(Main, &[k('f')], "f", "freeze the screen to read it; f again resumes", Some("f freeze"), Action::ToggleFreeze),
    bind(Main, &[k('i')], "i", "copy the selected id or name to the clipboard", Some("i copy id"), Action::CopyId),
    bind(Main, &[k('?')], "?", "this help", Some("? help"), Action::ToggleHelp),
    bind(Main, &[k('q'), ctrl('c')], "q Ctrl-C", "quit", Some("q quit"), Action::Quit),
];

fn key_matches(key: &Key, event: &KeyEvent) -> bool {
    if key.code != event.code {
        return false;
    }
    let mut mods = event.modifiers;
    if matches!(event.code, KeyCode::Char(_) | KeyCode::BackTab) {
        mods.remove(KeyModifiers::SHIFT);
    }
    mods == key.mods
}

/// The action for a key press in this state, if any.
pub fn action_for(state: &State, event: &KeyEvent) -> Option<Action> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl_c =
        event.code == KeyCode::Char('c') && event.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl_c {
        return Some(Action::Quit);
    }
    let found = BINDINGS
        .iter()
        .filter(|b| b.scope.applies(state))
        .find(|b| b.keys.iter().any(|k| key_matches(k, event)))
        .map(|b| b.action.clone());
    if found.is_some() {
        return found;
    }
    match state.overlay {
        // The default answer is No: any other key cancels.
        Overlay::Confirm(_) => Some(Action::Cancel),
        Overlay::Filter => match event.code {
            KeyCode::Char(c)
                if !event
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                Some(Action::FilterInput(c))
            }
            _ => None,
        },
        // Any key help does not bind closes it.
        Overlay::Help => Some(Action::ToggleHelp),
        Overlay::None => match state.search_shown() {
            Some(search) if search.typing => match event.code {
                KeyCode::Char(c)
                    if !event
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    Some(Action::SearchInput(c))
                }
                _ => None,
            },
            _ => None,
        },
    }
}

/// The footer hints for this state, in table order.
pub fn hints(state: &State) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for b in BINDINGS.iter().filter(|b| b.scope.applies(state)) {
        if let Some(hint) = b.hint {
            // A more specific scope already claimed this key's slot.
            let key = hint.split(' ').next().unwrap_or(hint);
            if !out.iter().any(|h| h.split(' ').next() == Some(key)) {
                out.push(hint);
            }
        }
    }
    out
}

/// Help sections: a heading and (keys, what they do) rows, from the table.
/// Rows with an empty label are covered by the row before them (`1-8`,
/// `0-9`, `j k`);
/// scopes sharing a heading share a section.
pub fn help_sections() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    let order = [
        Main,
        Lists,
        Openable,
        Filterable,
        Sortable,
        Queues,
        Metrics,
        Leases,
        Scope::Schedules,
        Scope::Schedule,
        Limits,
        Scope::Workflows,
        Scope::Gate,
        Workers,
        Confirm,
        ConfirmRequeue,
        Job,
        Jobs,
        SearchText,
        Search,
        Dead,
        DeadList,
        DeadScreen,
        Detail,
        Filter,
        Help,
    ];
    let mut sections: Vec<(&'static str, Vec<(&'static str, &'static str)>)> = Vec::new();
    for scope in order {
        let rows = BINDINGS
            .iter()
            .filter(|b| b.scope == scope && !b.label.is_empty())
            .map(|b| (b.label, b.help));
        match sections.last_mut() {
            Some((title, existing)) if *title == scope.title() => existing.extend(rows),
            _ => sections.push((scope.title(), rows.collect())),
        }
    }
    sections
}
