//! One row of wait/run percentiles and outcomes per job name (and the queue
//! summed), from the driver's [`QueueMetrics`]: what `redq metrics show`
//! prints and the console's Metrics view draws, defined once here.

use std::time::Duration;

use redq::metrics::{Figures, MetricsWindow, QueueMetrics, Recording};
use serde_json::{json, Value};

/// The label of the row summing every name.
pub const ALL_NAMES: &str = "(all)";

/// The percentiles shown, in column order.
pub const PERCENTILES: [(f64, &str); 3] = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")];

/// One job name's (or the queue's) figures, ready to show.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// The job name, or [`ALL_NAMES`].
    pub name: String,
    /// Jobs acknowledged as done.
    pub completed: u64,
    /// Failed attempts: retried plus dead-lettered.
    pub failed: u64,
    /// Failed attempts over all finished attempts; `None` when none finished.
    pub error_rate: Option<f64>,
    /// Wait p50, p90, p99.
    pub wait: [Option<Duration>; 3],
    /// Run p50, p90, p99.
    pub run: [Option<Duration>; 3],
}

impl FigureRow {
    fn of(name: &str, figures: &Figures) -> FigureRow {
        let failed = figures.retried + figures.dead_lettered;
        let finished = figures.completed + failed;
        FigureRow {
            name: name.to_owned(),
            completed: figures.completed,
            failed,
            error_rate: (finished > 0).then(|| failed as f64 / finished as f64),
            wait: PERCENTILES.map(|(q, _)| figures.wait.quantile(q)),
            run: PERCENTILES.map(|(q, _)| figures.run.quantile(q)),
        }
    }
}

/// The queue's row first, then one per job name in name order.
pub fn figure_rows(metrics: &QueueMetrics) -> Vec<FigureRow> {
    let mut rows = vec![FigureRow::of(ALL_NAMES, &metrics.total())];
    rows.extend(
        metrics
            .names
            .iter()
            .map(|(name, figures)| FigureRow::of(name, figures)),
    );
    rows
}

/// A window as the command line and the view name it: `5m`, `1h`, `24h`, `90d`.
pub fn window_label(window: MetricsWindow) -> &'static str {
    match window {
        MetricsWindow::Last5Minutes => "5m",
        MetricsWindow::LastHour => "1h",
        MetricsWindow::LastDay => "24h",
        MetricsWindow::Last90Days => "90d",
    }
}

/// The windows in the order the view steps through them.
pub const WINDOWS: [MetricsWindow; 4] = [
    MetricsWindow::Last5Minutes,
    MetricsWindow::LastHour,
    MetricsWindow::LastDay,
    MetricsWindow::Last90Days,
];

/// A window from its label; the error names the labels accepted.
pub fn parse_window(text: &str) -> Result<MetricsWindow, String> {
    WINDOWS
        .into_iter()
        .find(|w| window_label(*w) == text)
        .ok_or_else(|| format!("{text} is not a metrics window: use 5m, 1h, 24h or 90d"))
}

/// A percentile in a column's few characters: `-` for none, `<1ms`, `840ms`,
/// `2.5s`, `4.2m`, `1.5h` (estimates are within a factor of two, so two
/// significant figures say all there is).
pub fn short_duration(value: Option<Duration>) -> String {
    let Some(value) = value else {
        return "-".to_owned();
    };
    let ms = value.as_secs_f64() * 1000.0;
    if ms < 1.0 {
        "<1ms".to_owned()
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else if ms < 60_000.0 {
        format!("{:.1}s", ms / 1000.0)
    } else if ms < 3_600_000.0 {
        format!("{:.1}m", ms / 60_000.0)
    } else {
        format!("{:.1}h", ms / 3_600_000.0)
    }
}

/// What a reader of a queue's figures must know when its metrics are off
/// (`None` while they are on): since when nothing has been recorded, and
/// how to record again. Times in UTC, as everywhere in the console.
pub fn recording_note(queue: &str, recording: Recording) -> Option<String> {
    match recording {
        Recording::On => None,
        Recording::Off { since } => Some(format!(
            "metrics are off since {} UTC: nothing after that is recorded \
             (redq metrics on {} records again)",
            crate::clock::datetime(since),
            crate::text::inert(queue)
        )),
    }
}

/// What a reader of a queue's figures must know when hand-offs to its
/// workers were lost (`None` when none were): how many since the queue
/// began, what it means, and where the jobs are named.
pub fn handoffs_lost_note(lost: u64) -> Option<String> {
    lost_note(
        lost,
        "handed to parked workers",
        "their messages never arrived (a worker's subscription broke or lagged",
        "handoff_lost",
    )
}

/// The same for jobs of lost claims (`redq::metrics::QueueMetrics::claims_lost`).
pub fn claims_lost_note(lost: u64) -> Option<String> {
    lost_note(
        lost,
        "leased by workers' claims",
        "the claims' replies never arrived (a worker's connection dropped or timed out",
        "claim_lost",
    )
}

/// `lost` jobs that went `how` and were given back `because`, named by the
/// events of `kind`; `None` when there were none.
fn lost_note(lost: u64, how: &str, because: &str, kind: &str) -> Option<String> {
    (lost > 0).then(|| {
        let (jobs, were) = if lost == 1 {
            ("job", "was")
        } else {
            ("jobs", "were")
        };
        format!(
            "{lost} {jobs} {how} since the queue began {were} given back because {because}; \
             redq events --kind {kind} names them)"
        )
    })
}

/// A switch as `-o json` gives it: `recording`, and `off_since` (RFC 3339,
/// `null` while recording).
pub fn recording_json(recording: Recording) -> (bool, Value) {
    match recording {
        Recording::On => (true, Value::Null),
        Recording::Off { since } => (false, json!(crate::clock::rfc3339(since))),
    }
}

/// An error rate as a percentage, `-` when nothing finished.
pub fn rate_text(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

/// The column headers, in the order [`row_cells`] fills them (`>`: right-aligned).
pub const COLUMNS: [&str; 10] = [
    "NAME",
    ">COMPLETED",
    ">FAILED",
    ">ERROR RATE",
    ">WAIT p50",
    ">WAIT p90",
    ">WAIT p99",
    ">RUN p50",
    ">RUN p90",
    ">RUN p99",
];

/// A row's cells under [`COLUMNS`].
pub fn row_cells(row: &FigureRow) -> Vec<String> {
    let mut cells = vec![
        row.name.clone(),
        row.completed.to_string(),
        row.failed.to_string(),
        rate_text(row.error_rate),
    ];
    cells.extend(row.wait.iter().map(|d| short_duration(*d)));
    cells.extend(row.run.iter().map(|d| short_duration(*d)));
    cells
}

fn percentiles_ms(values: &[Option<Duration>; 3]) -> Value {
    let mut out = serde_json::Map::new();
    for ((_, label), value) in PERCENTILES.iter().zip(values) {
        out.insert(
            (*label).to_owned(),
            value.map_or(Value::Null, |d| json!(d.as_secs_f64() * 1000.0)),
        );
    }
    Value::Object(out)
}

/// A row as `-o json` gives it: times in ms (`null` when none recorded).
pub fn row_json(row: &FigureRow) -> Value {
    json!({
        "name": row.name,
        "completed": row.completed,
        "failed": row.failed,
        "error_rate": row.error_rate,
        "wait_ms": percentiles_ms(&row.wait),
        "run_ms": percentiles_ms(&row.run),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_read_in_a_few_characters() {
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(short_duration(None), "-");
        assert_eq!(short_duration(Some(Duration::from_micros(300))), "<1ms");
        assert_eq!(short_duration(ms(840)), "840ms");
        assert_eq!(short_duration(ms(2_500)), "2.5s");
        assert_eq!(short_duration(ms(252_000)), "4.2m");
        assert_eq!(short_duration(ms(5_400_000)), "1.5h");
    }

    #[test]
    fn a_switched_off_queue_says_since_when_and_how_to_record_again() {
        assert_eq!(recording_note("mail", Recording::On), None);
        let since = std::time::UNIX_EPOCH + Duration::from_secs(1_764_921_600);
        let note = recording_note("mail", Recording::Off { since }).unwrap();
        assert_eq!(
            note,
            "metrics are off since 2025-12-05 08:00:00 UTC: nothing after that is recorded \
             (redq metrics on mail records again)"
        );
        assert_eq!(
            recording_json(Recording::Off { since }),
            (false, json!("2025-12-05T08:00:00.000Z"))
        );
    }

    #[test]
    fn lost_hand_offs_and_claims_are_told_only_when_there_were_some() {
        assert_eq!(handoffs_lost_note(0), None);
        assert!(handoffs_lost_note(1).unwrap().starts_with("1 job handed"));
        let note = handoffs_lost_note(3).unwrap();
        assert!(note.starts_with("3 jobs handed"), "{note}");
        assert!(note.contains("redq events --kind handoff_lost"), "{note}");
        assert_eq!(claims_lost_note(0), None);
        assert!(claims_lost_note(1).unwrap().starts_with("1 job leased"));
        let note = claims_lost_note(2).unwrap();
        assert!(
            note.contains("2 jobs leased") && note.contains("were given"),
            "{note}"
        );
        assert!(note.contains("redq events --kind claim_lost"), "{note}");
    }

    #[test]
    fn windows_round_trip_through_their_labels() {
        for w in WINDOWS {
            assert_eq!(parse_window(window_label(w)), Ok(w));
        }
        assert!(parse_window("2h")
            .unwrap_err()
            .contains("5m, 1h, 24h or 90d"));
    }
}
