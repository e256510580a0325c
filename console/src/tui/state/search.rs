//! Searching a queue's payloads from its jobs view (`S`): the text is typed
//! in a prompt, then the I/O task walks the driver's bounded search steps
//! (`redq::search`) and sends each step's matches as they come; Esc stops
//! it. Once the walk is done, `c` and `d` act on every match in batches,
//! each asking first with the count (default No); once that finishes the
//! text is searched again, so the results never list a job that is gone.
//!
//! The app loop asks the source for [`State::search_wanted`] whenever it
//! changes, as it does for the focus: the state never starts I/O itself.

use redq::{JobRecord, JobState};

use super::{plural, Action, Command, Cursor, Level, Mutation, OpenedFrom, State, View};
use crate::text::inert;

/// A search shown over a queue's jobs view.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchView {
    /// The queue searched.
    pub queue: String,
    /// The text looked for (being typed while `typing`).
    pub text: String,
    /// The text is still being typed: nothing searched yet.
    pub typing: bool,
    /// Which search this is, so a step of an earlier one is not taken for
    /// this one's.
    pub run: u64,
    /// The walk is under way (not done, not stopped).
    pub running: bool,
    /// The walk went through every record.
    pub done: bool,
    /// Records the steps so far examined (of every queue of the namespace).
    pub examined: u64,
    /// The matches so far, each once, in the order found.
    pub matches: Vec<JobRecord>,
    /// The selected match.
    pub cursor: Cursor,
    /// `c` or `d` was sent for the matches: once it finishes the text is
    /// searched again, so the results show what is left of them.
    pub search_again: bool,
}

/// What the source is asked to search: `run` of `text` in `queue`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRun {
    /// Which search (see [`SearchView::run`]).
    pub run: u64,
    /// The queue.
    pub queue: String,
    /// The text.
    pub text: String,
}

/// One bounded step of a search, from the I/O task.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchStep {
    /// Which search it belongs to.
    pub run: u64,
    /// The queue's matches this step found.
    pub jobs: Vec<JobRecord>,
    /// Records this step examined.
    pub examined: u64,
    /// Whether this was the last step; `Err` carries why the search failed.
    pub outcome: Result<bool, String>,
}

/// What `c` or `d` does to every match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchChange {
    /// Cancel each: gone for good, never retried, its worker told.
    Cancel,
    /// Delete each (a running one's lease is voided).
    Delete,
}

impl MatchChange {
    /// The verb, for questions and progress.
    pub fn verb(self) -> &'static str {
        match self {
            MatchChange::Cancel => "cancel",
            MatchChange::Delete => "delete",
        }
    }
}

/// "1 match", "3 matches".
pub fn matches_text(n: usize) -> String {
    match n {
        1 => "1 match".to_owned(),
        n => format!("{n} matches"),
    }
}

impl SearchView {
    /// Matches of this state among those found (for the question).
    fn count_in(&self, state: JobState) -> usize {
        self.matches.iter().filter(|j| j.state == state).count()
    }
}

impl State {
    /// The search shown: open over the jobs view of its queue, nothing over it.
    pub fn search_shown(&self) -> Option<&SearchView> {
        match (&self.view, &self.search) {
            (View::Jobs(jobs), Some(search)) if jobs.query.queue == search.queue => Some(search),
            _ => None,
        }
    }

    /// The search the source should be walking now, if any.
    pub fn search_wanted(&self) -> Option<SearchRun> {
        let search = self.search.as_ref().filter(|s| s.running)?;
        Some(SearchRun {
            run: search.run,
            queue: search.queue.clone(),
            text: search.text.clone(),
        })
    }

    /// Records the queues of this namespace hold now, as last counted: what
    /// a search walks through ("searched N of about M records").
    pub fn search_records(&self) -> u64 {
        self.data
            .queues
            .iter()
            .map(|r| {
                let c = &r.counts;
                c.waiting + c.scheduled + c.leased + c.dead + c.held + c.blocked
            })
            .sum()
    }

    /// `S` on a jobs view: open the prompt for a text.
    pub(super) fn start_search(&mut self) {
        let Some(jobs) = self.jobs().filter(|_| matches!(self.view, View::Jobs(_))) else {
            return;
        };
        let queue = jobs.query.queue.clone();
        let run = self.search.as_ref().map_or(0, |s| s.run);
        self.search = Some(SearchView {
            queue,
            text: String::new(),
            typing: true,
            run,
            running: false,
            done: false,
            examined: 0,
            matches: Vec::new(),
            cursor: Cursor::default(),
            search_again: false,
        });
        self.status = None;
    }

    /// A key while the search is shown; `None`: not the search's key.
    pub(super) fn on_search(&mut self, action: &Action) -> Option<Command> {
        let search = self.search.as_mut()?;
        if search.typing {
            match action {
                Action::SearchInput(c) => search.text.push(*c),
                Action::SearchBackspace => {
                    search.text.pop();
                }
                Action::SearchSubmit if search.text.is_empty() => {
                    self.say(Level::Info, "type some text to look for, or Esc");
                }
                Action::SearchSubmit => {
                    search.typing = false;
                    search.running = true;
                    search.run += 1;
                }
                Action::Back => self.search = None,
                _ => return Some(Command::None),
            }
            return Some(Command::None);
        }
        match action {
            Action::Back if search.running => {
                search.running = false;
                let text = format!(
                    "search stopped: {} so far, {} records searched",
                    matches_text(search.matches.len()),
                    search.examined
                );
                self.say(Level::Info, text);
            }
            Action::Back => self.search = None,
            Action::StartSearch => self.start_search(),
            Action::Up => self.step_search(-1),
            Action::Down => self.step_search(1),
            Action::Top => self.step_search(i64::MIN / 2),
            Action::Bottom => self.step_search(i64::MAX / 2),
            Action::PageUp => self.step_search(-self.page_rows()),
            Action::PageDown => self.step_search(self.page_rows()),
            Action::Open => self.open_match(),
            Action::OnMatches(change) => return Some(self.ask_on_matches(*change)),
            _ => return None,
        }
        Some(Command::None)
    }

    fn step_search(&mut self, delta: i64) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        if search.matches.is_empty() {
            search.cursor = Cursor::default();
            return;
        }
        let last = search.matches.len() as i64 - 1;
        let index = (search.cursor.index as i64)
            .saturating_add(delta)
            .clamp(0, last) as usize;
        search.cursor = Cursor {
            index,
            key: Some(search.matches[index].id.clone()),
        };
    }

    /// Enter: the selected match's detail; Esc comes back to the results.
    fn open_match(&mut self) {
        let (Some(search), View::Jobs(jobs)) = (&self.search, &self.view) else {
            return;
        };
        let Some(job) = search.matches.get(search.cursor.index) else {
            self.say(Level::Info, "no match selected");
            return;
        };
        self.view = View::detail_of(job, OpenedFrom::Jobs(jobs.clone()));
    }

    /// `c` / `d`: every match, asked about with the count.
    fn ask_on_matches(&mut self, change: MatchChange) -> Command {
        let Some(search) = self.search.as_ref() else {
            return Command::None;
        };
        let verb = change.verb();
        if search.running {
            self.say(
                Level::Info,
                format!("the search is still running: wait until it is done (or Esc) to {verb} its matches"),
            );
            return Command::None;
        }
        if search.matches.is_empty() {
            self.say(Level::Info, format!("no match to {verb}"));
            return Command::None;
        }
        let count = plural(search.matches.len(), "matching job");
        let (text, queue) = (inert(&search.text), inert(&search.queue));
        let leased = search.count_in(JobState::Leased);
        let running = match leased {
            0 => String::new(),
            n => format!(" {n} of them running: a running job's lease is voided, so its worker's ack changes nothing."),
        };
        let stopped = if search.done {
            ""
        } else {
            " The search was stopped: jobs not searched yet stay as they are."
        };
        let prompt = match change {
            MatchChange::Cancel => format!(
                "Cancel all {count} of {queue} whose payload contains \"{text}\"? Each is gone for good, never retried.{running}{stopped}"
            ),
            MatchChange::Delete => format!(
                "Delete all {count} of {queue} whose payload contains \"{text}\" for good?{running}{stopped}"
            ),
        };
        let mutation = Mutation::OnMatches {
            change,
            queue: search.queue.clone(),
            ids: search.matches.iter().map(|j| j.id.clone()).collect(),
        };
        if !self.may_mutate(&mutation.label()) {
            return Command::None;
        }
        self.ask(prompt, mutation)
    }

    /// A step of a search from the I/O task.
    pub(super) fn receive_search(&mut self, step: SearchStep) {
        let Some(search) = self
            .search
            .as_mut()
            .filter(|s| s.run == step.run && s.running)
        else {
            return;
        };
        search.examined += step.examined;
        for job in step.jobs {
            // A rehash during the walk may return a job twice.
            if !search.matches.iter().any(|j| j.id == job.id) {
                search.matches.push(job);
            }
        }
        if search.cursor.key.is_none() && !search.matches.is_empty() {
            search.cursor.key = Some(search.matches[0].id.clone());
        }
        match step.outcome {
            Ok(false) => {}
            Ok(true) => {
                search.running = false;
                search.done = true;
            }
            Err(error) => {
                search.running = false;
                self.say(Level::Error, format!("search failed: {error}"));
            }
        }
    }

    /// A change of the matches was sent: search again once it finished.
    pub(super) fn search_again_after_change(&mut self) {
        if let Some(search) = self.search.as_mut() {
            search.search_again = true;
        }
    }

    /// A change finished: a search waiting for it walks again from the
    /// start, so the jobs cancelled or deleted leave its results.
    pub(super) fn search_again_if_changed(&mut self) {
        let Some(search) = self.search.as_mut().filter(|s| s.search_again) else {
            return;
        };
        search.search_again = false;
        search.run += 1;
        search.running = true;
        search.done = false;
        search.examined = 0;
        search.matches.clear();
        search.cursor = Cursor::default();
    }

    /// A search stays only over the jobs view of its queue (or a detail
    /// opened from its results).
    pub(super) fn drop_search_elsewhere(&mut self) {
        let kept = match (&self.search, self.jobs()) {
            (None, _) => return,
            (Some(search), Some(jobs)) => jobs.query.queue == search.queue,
            (Some(_), None) => false,
        };
        if !kept {
            self.search = None;
        }
    }
}
