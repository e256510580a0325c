//! The Metrics view of one queue: per job name (and the queue summed)
//! completed, failed, error rate and wait/run percentiles over a window,
//! above a chart of throughput window by window with a time scale.
//! A pure function of the driver's `MetricsHistory`, so it is drawn the
//! same in a `TestBackend` as on a terminal.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType};
use ratatui::Frame;
use redq::metrics::{MetricsHistory, MetricsWindow, Recording};

use super::table::{self, Column, Item, List};
use crate::clock;
use crate::commands::metrics::figures::{
    figure_rows, rate_text, short_duration, window_label, FigureRow,
};
use crate::tui::theme::Theme;

/// Draw `history` (read over `window`) in `area`.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    history: &MetricsHistory,
    window: MetricsWindow,
    theme: &Theme,
) {
    let rows = figure_rows(&history.metrics);
    // The table takes what its rows need (borders and header included), up
    // to half the body; the chart the rest.
    let wanted = rows.len() as u16 + 3;
    let [table_area, chart_area] = Layout::vertical([
        Constraint::Max(wanted.min(area.height / 2)),
        Constraint::Min(6),
    ])
    .areas(area);
    draw_table(frame, table_area, history, window, &rows, theme);
    draw_chart(frame, chart_area, history, theme);
}

/// What the view shows before the figures for `queue` and `window` came:
/// the same title, and `text` (loading, or why not).
pub fn not_read(
    frame: &mut Frame,
    area: Rect,
    queue: &str,
    window: MetricsWindow,
    text: &str,
    theme: &Theme,
) {
    let block = Block::bordered().title(Line::styled(title(queue, window), theme.header()));
    let body = ratatui::widgets::Paragraph::new(Line::styled(text.to_owned(), theme.dim()));
    frame.render_widget(body.block(block), area);
}

fn title(queue: &str, window: MetricsWindow) -> String {
    format!(
        " Metrics: {}, last {} (w: window; percentiles within a factor of 2) ",
        crate::text::inert(queue),
        window_label(window)
    )
}

/// The title of figures read: while the queue's metrics are off, that
/// first (a title is cut at the right), since when, and the key to turn
/// them on.
fn read_title(history: &MetricsHistory, window: MetricsWindow) -> String {
    let metrics = &history.metrics;
    match metrics.recording {
        // The wide windows are read every 30 s (each read walks many
        // rollup fields): said, or their totals read as behind the 5 m
        // window's for no reason.
        Recording::On if matches!(window, MetricsWindow::LastDay | MetricsWindow::Last90Days) => {
            format!(
                " Metrics: {}, last {}, read {} UTC (every {}; w: window) ",
                crate::text::inert(&metrics.queue),
                window_label(window),
                clock::short(metrics.now, metrics.now),
                clock::compact(crate::tui::source::METRICS_SLOW_EVERY),
            )
        }
        Recording::On => title(&metrics.queue, window),
        Recording::Off { since } => format!(
            " Metrics: {}, last {}: OFF since {} UTC, nothing newer recorded (o: turn on) ",
            crate::text::inert(&metrics.queue),
            window_label(window),
            clock::short(since, metrics.now)
        ),
    }
}

fn draw_table(
    frame: &mut Frame,
    area: Rect,
    history: &MetricsHistory,
    window: MetricsWindow,
    rows: &[FigureRow],
    theme: &Theme,
) {
    let list = List {
        title: read_title(history, window),
        columns: vec![
            Column::name("NAME"),
            Column::number("COMPLETED"),
            Column::number("FAILED"),
            Column::number("ERROR RATE"),
            // p50 goes first at narrow widths: p90 and p99 say more of a tail.
            Column::number("WAIT p50").optional(1),
            Column::number("WAIT p90"),
            Column::number("WAIT p99").optional(2),
            Column::number("RUN p50").optional(1),
            Column::number("RUN p90"),
            Column::number("RUN p99").optional(2),
        ],
        rows: rows.iter().map(|row| cells(row, theme)).collect(),
        selected: 0,
        empty: vec![match history.metrics.recording {
            Recording::On => "nothing recorded in this window".to_owned(),
            Recording::Off { .. } => {
                "nothing recorded in this window: the metrics are off".to_owned()
            }
        }],
    };
    table::draw(frame, area, list, theme);
}

fn cells<'a>(row: &FigureRow, theme: &Theme) -> Vec<Item<'a>> {
    let failed = Item::number(row.failed);
    let mut items = vec![
        Item::new(&row.name),
        Item::number(row.completed),
        if row.failed > 0 {
            failed.style(theme.error())
        } else {
            failed
        },
        Item::new(rate_text(row.error_rate)),
    ];
    items.extend(row.wait.iter().map(|d| Item::new(short_duration(*d))));
    items.extend(row.run.iter().map(|d| Item::new(short_duration(*d))));
    items
}

fn draw_chart(frame: &mut Frame, area: Rect, history: &MetricsHistory, theme: &Theme) {
    let first = history.points.first().map(|p| p.start);
    // A point's x: seconds since the first window began.
    let x = |start| first.map_or(0.0, |first| clock::age(first, start).as_secs_f64());
    let completed: Vec<(f64, f64)> = history
        .points
        .iter()
        .map(|p| (x(p.start), p.figures.completed as f64))
        .collect();
    let failed: Vec<(f64, f64)> = history
        .points
        .iter()
        .map(|p| {
            let f = &p.figures;
            (x(p.start), (f.retried + f.dead_lettered) as f64)
        })
        .collect();
    let top = completed
        .iter()
        .chain(&failed)
        .map(|(_, y)| *y)
        .fold(0.0, f64::max)
        .max(1.0);
    let span = completed.last().map_or(1.0, |(x, _)| x.max(1.0));
    let now = history.metrics.now;
    let label = |offset: f64| -> Span<'static> {
        let at = first.map_or(now, |first| {
            first + std::time::Duration::from_secs_f64(offset)
        });
        // Once the scale starts on an earlier day, every label says its
        // day: a bare "09:09:00" at the end of a 24 h scale reads as the
        // same day as the "12-06 09:10" at its start.
        let text = match first {
            Some(first) if !clock::same_day(first, now) => clock::dated(at),
            _ => clock::short(at, now),
        };
        Span::styled(text, theme.dim())
    };
    let per = clock::compact(history.width);
    let datasets = vec![
        Dataset::default()
            .name("completed")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.spark_ok())
            .data(&completed),
        Dataset::default()
            .name("failed")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.spark_fail())
            .data(&failed),
    ];
    let mut block = Block::bordered().title(Line::styled(
        format!(" Throughput, jobs per {per} window (UTC) "),
        theme.header(),
    ));
    // Rare, and a sign of subscription or connection trouble: shown where
    // the eye lands after the table, the jobs themselves on the Events
    // screen.
    let lost = [
        (history.metrics.handoffs_lost, "hand-off", "hand-offs"),
        (history.metrics.claims_lost, "claim's job", "claims' jobs"),
    ];
    for (lost, one, many) in lost {
        if lost > 0 {
            let what = if lost == 1 { one } else { many };
            block = block.title(
                Line::styled(
                    format!(" {lost} {what} lost since the queue began (see Events) "),
                    theme.warn(),
                )
                .right_aligned(),
            );
        }
    }
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(
            Axis::default()
                .style(Style::default())
                .bounds([0.0, span])
                .labels([label(0.0), label(span / 2.0), label(span)]),
        )
        .y_axis(Axis::default().bounds([0.0, top]).labels([
            Span::styled("0", theme.dim()),
            Span::styled(format!("{top:.0}"), theme.dim()),
        ]));
    frame.render_widget(chart, area);
}
