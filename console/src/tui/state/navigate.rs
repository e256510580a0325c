//! Moving around: switching screens, the selection, opening and going back,
//! the jobs view's pages and states, typing a filter, grouping dead letters.

use std::time::SystemTime;

use redq::JobState;

use super::{Action, Cursor, JobsQuery, JobsView, OpenedFrom, Screen, State, View, JOBS_PAGE};
use crate::tui::detail_text::view_lines;
use crate::tui::view::schedule::detail as schedule_detail;

impl State {
    /// Rows a page key moves: the body height less table chrome.
    pub(super) fn page_rows(&self) -> i64 {
        (self.size.1 as i64 - 9).max(1)
    }

    /// Show a screen's own list; a jobs view or detail open on top closes.
    pub(super) fn show(&mut self, screen: Screen) {
        self.view = View::Screen(screen);
    }

    /// Move the selection (or scroll the detail) by `delta` rows.
    pub(super) fn step(&mut self, delta: i64) {
        if let View::Detail(detail) = &mut self.view {
            let lines =
                view_lines(detail, &self.settings.shards, SystemTime::UNIX_EPOCH).len() as i64;
            let max = (lines - 3).max(0);
            detail.scroll = (detail.scroll as i64 + delta).clamp(0, max) as u16;
            return;
        }
        if let View::Schedule(view) = &self.view {
            // As drawn at this width (the border aside): scrolling stops
            // once its last line is on screen, the box still full (header,
            // tabs, borders, blank and footer take 6 rows).
            let theme = crate::tui::theme::Theme::new(false);
            let width = self.size.0.saturating_sub(2);
            let now = self.redis_time(self.clock);
            let (_, lines) = schedule_detail(self, view, width, &theme, now);
            let shown = (self.size.1 as i64 - 6).max(1);
            let max = (lines.len() as i64 - shown).max(0);
            if let View::Schedule(view) = &mut self.view {
                view.scroll = (view.scroll as i64 + delta).clamp(0, max) as u16;
            }
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

    /// The current list's cursor (see [`State::cursor`]), to move.
    fn cursor_mut(&mut self) -> &mut Cursor {
        let screen = self.view.screen();
        if matches!(self.view, View::Gate(_)) {
            let View::Gate(gate) = &mut self.view else {
                unreachable!("just matched")
            };
            return &mut gate.cursor;
        }
        if let Some(jobs) = self.view.jobs_mut() {
            return &mut jobs.cursor;
        }
        let tabs = &mut self.tabs;
        if screen == Screen::Dead && tabs.dead_grouped {
            return &mut tabs.group_cursor;
        }
        &mut tabs.cursors[screen.index()]
    }

    /// Keep the cursor on its row when rows move, else within bounds.
    pub(super) fn reanchor(&mut self) {
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

    /// Enter: a queue opens its jobs, a job its detail, a schedule its
    /// detail, a group filters by its signature.
    pub(super) fn open(&mut self) {
        let index = self.cursor().index;
        let opened = match &self.view {
            View::Detail(_) | View::Metrics(_) | View::Gate(_) | View::Schedule(_) => None,
            View::Screen(Screen::Schedules) => self.visible_schedules().get(index).map(|s| {
                View::Schedule(super::ScheduleView {
                    name: s.name.clone(),
                    shard: s.shard,
                    scroll: 0,
                })
            }),
            View::Screen(Screen::Workflows) => self.visible_gates().get(index).map(|gate| {
                View::Gate(super::GateView {
                    query: super::GateQuery {
                        id: gate.id.clone(),
                        cursor: String::new(),
                    },
                    cursor: Cursor::default(),
                    earlier: Vec::new(),
                    // The first held waiter, which r and d decide first.
                    waiter: gate
                        .waiters
                        .iter()
                        .position(|w| w.decision == crate::workflow::WaiterDecision::Held)
                        .unwrap_or(0),
                })
            }),
            View::Jobs(jobs) => self
                .selected_job()
                .map(|job| View::detail_of(job, OpenedFrom::Jobs(jobs.clone()))),
            View::Screen(Screen::Queues) => self.visible_queues().get(index).map(|row| {
                View::Jobs(JobsView {
                    from: Screen::Queues,
                    query: JobsQuery {
                        queue: row.counts.queue.clone(),
                        state: JobState::Waiting,
                        offset: 0,
                    },
                    cursor: Cursor::default(),
                    filter: String::new(),
                })
            }),
            // A limiter lists its queue's held jobs; a key's row narrows
            // them to that key (the filter matches limit keys).
            View::Screen(Screen::Limits) => self.visible_limits().get(index).map(|row| {
                View::Jobs(JobsView {
                    from: Screen::Limits,
                    query: JobsQuery {
                        queue: row.queue.clone(),
                        state: JobState::Held,
                        offset: 0,
                    },
                    cursor: Cursor::default(),
                    filter: row.key().unwrap_or("").to_owned(),
                })
            }),
            View::Screen(Screen::Dead) if self.tabs.dead_grouped => {
                if let Some(group) = self.dead_groups().get(index) {
                    self.tabs.filters[Screen::Dead.index()] = group.signature.clone();
                    self.tabs.dead_grouped = false;
                }
                None
            }
            View::Screen(Screen::Dead) => {
                let job = self.visible_dead().get(index).copied();
                job.map(|job| View::detail_of(job, OpenedFrom::Dead))
            }
            View::Screen(Screen::Leases) => {
                let job = self.visible_leases().get(index).copied();
                job.map(|job| View::detail_of(job, OpenedFrom::Leases))
            }
            View::Screen(_) => None,
        };
        if let Some(view) = opened {
            // A schedule read on an earlier visit is not shown as current.
            if matches!(view, View::Schedule(_)) {
                self.data.schedule = None;
            }
            self.view = view;
        }
    }

    /// Esc: a detail returns to its list; the jobs view clears its filter
    /// first, then returns to the screen it was opened from; a screen
    /// clears its filter.
    pub(super) fn back(&mut self) {
        self.view = match std::mem::replace(&mut self.view, View::Screen(Screen::Queues)) {
            View::Detail(detail) => detail.from.into_view(),
            View::Jobs(mut jobs) if !jobs.filter.is_empty() => {
                jobs.filter.clear();
                View::Jobs(jobs)
            }
            View::Jobs(jobs) => View::Screen(jobs.from),
            View::Metrics(_) => View::Screen(Screen::Queues),
            View::Gate(_) => View::Screen(Screen::Workflows),
            // The Schedules screen keeps its selection, filter and sort.
            View::Schedule(_) => View::Screen(Screen::Schedules),
            View::Screen(screen) => {
                self.tabs.filters[screen.index()].clear();
                View::Screen(screen)
            }
        };
    }

    /// PgUp/PgDn in the jobs view: the previous or next page.
    pub(super) fn turn_page(&mut self, forward: bool) {
        if matches!(self.view, View::Gate(_)) {
            return self.turn_members_page(forward);
        }
        let View::Jobs(view) = &mut self.view else {
            return;
        };
        // The total of the last page of this queue and state, whatever
        // its offset: paging on does not wait for each page to arrive.
        let total = match &self.data.jobs {
            Some(page)
                if page.query.queue == view.query.queue && page.query.state == view.query.state =>
            {
                page.page.total
            }
            _ => 0,
        };
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

    /// ←/→ in the jobs view: the previous or next job state, from its first
    /// page.
    pub(super) fn cycle_state(&mut self, forward: bool) {
        let View::Jobs(view) = &self.view else {
            return;
        };
        let states = self.job_states(&view.query.queue, view.query.state);
        let View::Jobs(view) = &mut self.view else {
            return;
        };
        let i = states
            .iter()
            .position(|s| *s == view.query.state)
            .unwrap_or(0);
        let next = if forward { i + 1 } else { i + states.len() - 1 } % states.len();
        view.query.state = states[next];
        view.query.offset = 0;
        view.cursor = Cursor::default();
    }

    /// A key while typing into the current list's filter. Returns whether
    /// typing goes on.
    pub(super) fn type_into_filter(&mut self, action: Action) -> bool {
        let screen = self.view.screen();
        let filter = match self.view.jobs_mut() {
            Some(view) => &mut view.filter,
            None => &mut self.tabs.filters[screen.index()],
        };
        match action {
            Action::FilterInput(c) if !c.is_control() => filter.push(c),
            Action::FilterBackspace => {
                filter.pop();
            }
            Action::FilterDone => return false,
            Action::FilterClear => {
                filter.clear();
                return false;
            }
            _ => {}
        }
        true
    }
}
