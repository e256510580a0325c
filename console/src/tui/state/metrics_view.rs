//! The Metrics view of one queue (`m` on the Queues screen): opening it,
//! its window keys (`w`, `[`, `]`), and the figures the I/O task reads for
//! it.

use redq::metrics::MetricsHistory;

use super::{Level, MetricsView, Screen, State, View};
use crate::commands::metrics::figures::WINDOWS;
use crate::text::inert;

impl State {
    /// Open the selected queue's Metrics view, over the last 5 minutes (or
    /// the window the view was last shown with).
    pub(super) fn open_metrics(&mut self) {
        if self.view != View::Screen(Screen::Queues) {
            return;
        }
        let index = self.cursor().index;
        let Some(queue) = self
            .visible_queues()
            .get(index)
            .map(|row| row.counts.queue.clone())
        else {
            return;
        };
        let window = self.tabs.metrics_window.unwrap_or(WINDOWS[0]);
        self.view = View::Metrics(MetricsView { queue, window });
    }

    /// Step the Metrics view's window `steps` along 5m, 1h, 24h, 90d,
    /// wrapping.
    pub(super) fn step_metrics_window(&mut self, steps: isize) {
        let View::Metrics(view) = &mut self.view else {
            return;
        };
        let at = WINDOWS.iter().position(|w| *w == view.window).unwrap_or(0);
        let n = WINDOWS.len() as isize;
        view.window = WINDOWS[(at as isize + steps).rem_euclid(n) as usize];
        self.tabs.metrics_window = Some(view.window);
    }

    /// Figures read for the I/O task's view of a queue: kept unless frozen
    /// (a frozen screen stays exactly as it was).
    pub(super) fn receive_metrics(&mut self, view: MetricsView, history: MetricsHistory) {
        if self.frozen.is_some() && self.data.metrics.is_some() {
            return;
        }
        self.data.metrics = Some((view, history));
    }

    /// A read of `view` failed: the status line says so while the view is
    /// shown, and whether the figures on screen are older ones.
    pub(super) fn metrics_unread(&mut self, view: &MetricsView, error: &str) {
        if self.view != View::Metrics(view.clone()) {
            return;
        }
        let kept = if self.metrics_shown(view).is_some() {
            "; the figures shown are from the last read that worked"
        } else {
            ""
        };
        self.say(
            Level::Error,
            format!(
                "the metrics of {} could not be read: {error}{kept}",
                inert(&view.queue)
            ),
        );
    }

    /// The figures to draw for `view`: only those read for this queue and
    /// window, never another's shown under its title.
    pub fn metrics_shown(&self, view: &MetricsView) -> Option<&MetricsHistory> {
        match &self.data.metrics {
            Some((read, history)) if read == view => Some(history),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use redq::metrics::{MetricsWindow, QueueMetrics};

    use super::*;
    use crate::tui::state::{Action, Settings, Update};

    fn state_on(view: &MetricsView) -> State {
        let mut state = State::new(Settings {
            url: "redis://localhost".into(),
            namespace: "redq".into(),
            shards: Vec::new(),
            read_only: false,
            refresh: Duration::from_secs(1),
        });
        state.view = View::Metrics(view.clone());
        state
    }

    fn history(queue: &str) -> MetricsHistory {
        MetricsHistory {
            metrics: QueueMetrics {
                queue: queue.into(),
                window: Some(MetricsWindow::Last5Minutes),
                names: Default::default(),
                now: UNIX_EPOCH,
                recording: redq::metrics::Recording::On,
                handoffs_lost: 0,
                claims_lost: 0,
            },
            width: Duration::from_secs(5),
            points: Vec::new(),
        }
    }

    fn images(window: MetricsWindow) -> MetricsView {
        MetricsView {
            queue: "images".into(),
            window,
        }
    }

    fn receive(state: &mut State, view: &MetricsView, history: MetricsHistory) {
        let history = Box::new(history);
        let view = view.clone();
        state.apply(Action::Received(Update::Metrics { view, history }));
    }

    #[test]
    fn figures_read_for_another_window_are_not_shown_under_this_title() {
        let hour = images(MetricsWindow::LastHour);
        let mut state = state_on(&hour);
        receive(
            &mut state,
            &images(MetricsWindow::Last5Minutes),
            history("images"),
        );
        assert!(state.metrics_shown(&hour).is_none());
        assert!(!state.screen_loaded(), "the view says it is loading");
        receive(&mut state, &hour, history("images"));
        assert!(state.metrics_shown(&hour).is_some());
    }

    #[test]
    fn a_failed_read_is_said_and_the_figures_shown_stay() {
        let view = images(MetricsWindow::Last5Minutes);
        let mut state = state_on(&view);
        receive(&mut state, &view, history("images"));
        state.apply(Action::Received(Update::MetricsUnread {
            view: view.clone(),
            error: "the command timed out".into(),
        }));
        let status = state.status.as_ref().expect("a status line");
        assert_eq!(status.level, Level::Error);
        assert_eq!(
            status.text,
            "the metrics of images could not be read: the command timed out; \
             the figures shown are from the last read that worked"
        );
        assert!(state.metrics_shown(&view).is_some());
    }

    #[test]
    fn a_frozen_view_keeps_the_figures_it_showed() {
        let view = images(MetricsWindow::Last5Minutes);
        let mut state = state_on(&view);
        receive(&mut state, &view, history("images"));
        state.apply(Action::ToggleFreeze);
        let mut later = history("images");
        later.metrics.now = UNIX_EPOCH + Duration::from_secs(60);
        receive(&mut state, &view, later);
        let shown = state.metrics_shown(&view).unwrap();
        assert_eq!(shown.metrics.now, UNIX_EPOCH, "frozen: as it was");
    }
}
