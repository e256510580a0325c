//! Every style the console uses, in one place.
//!
//! With colour off (`NO_COLOR` or `--no-color`) the theme uses only bold,
//! reverse and dim, and selection is always also shown by a `▶` marker in
//! the first column: some terminals (and crossterm with `NO_COLOR`) drop
//! reverse video on coloured rows, so selection never rests on style alone.

use ratatui::style::{Color, Modifier, Style};

/// The marker drawn before the selected row.
pub const SELECTED_MARKER: &str = "▶ ";

/// The console's styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// A theme with colour, or without.
    pub fn new(color: bool) -> Theme {
        Theme { color }
    }

    /// Whether colour is on.
    pub fn color(&self) -> bool {
        self.color
    }

    fn pick(&self, colored: Style, plain: Style) -> Style {
        if self.color {
            colored
        } else {
            plain
        }
    }

    /// Plain text.
    pub fn text(&self) -> Style {
        Style::default()
    }

    /// Secondary text.
    pub fn dim(&self) -> Style {
        self.pick(
            Style::default().fg(Color::DarkGray),
            Style::default().add_modifier(Modifier::DIM),
        )
    }

    /// The title bar.
    pub fn title(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    /// The active tab.
    pub fn tab_active(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }

    /// Table headers.
    pub fn header(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        self.pick(
            Style::default().bg(Color::Blue).fg(Color::White),
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    /// Something needing attention (badges, lapsed leases).
    pub fn warn(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    /// Errors and failures.
    pub fn error(&self) -> Style {
        self.pick(
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    /// Success.
    pub fn ok(&self) -> Style {
        self.pick(Style::default().fg(Color::Green), Style::default())
    }

    /// The reconnecting banner and the read-only badge.
    pub fn banner(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    /// Sparklines of processed jobs.
    pub fn spark_ok(&self) -> Style {
        self.pick(Style::default().fg(Color::Green), Style::default())
    }

    /// Sparklines of failures.
    pub fn spark_fail(&self) -> Style {
        self.pick(Style::default().fg(Color::Red), Style::default())
    }

    /// Key names in hints and help.
    pub fn key(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }
}
