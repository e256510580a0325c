//! `redq metrics show QUEUE [--window 1h]`: completed, failed, error rate
//! and wait/run percentiles per job name over a recent window, read once
//! through the driver's `Operator::metrics` (the shards summed), whether
//! the queue records them now, and its lost hand-offs, if any.

use redq::metrics::MetricsWindow;
use serde_json::json;

use super::figures::{
    claims_lost_note, figure_rows, handoffs_lost_note, recording_json, recording_note, row_cells,
    row_json, window_label, COLUMNS,
};
use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{out, outln, print_json, time, Table};

/// Print one queue's figures over `window`.
pub async fn run(
    target: &Target,
    queue: &str,
    window: MetricsWindow,
    json: bool,
) -> Result<(), Failure> {
    let metrics = target.metrics(queue, window).await?;
    let rows = figure_rows(&metrics);
    if json {
        let (recording, off_since) = recording_json(metrics.recording);
        print_json(&json!({
            "queue": queue,
            "window": window_label(window),
            "now": time(metrics.now),
            "recording": recording,
            "off_since": off_since,
            "handoffs_lost": metrics.handoffs_lost,
            "claims_lost": metrics.claims_lost,
            "rows": rows.iter().map(row_json).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    let mut table = Table::new(&COLUMNS);
    for row in &rows {
        table.row(row_cells(row));
    }
    outln!(
        "{queue}: the last {} (percentiles are estimates within a factor of 2)",
        window_label(window)
    );
    out!("{}", table.render());
    // Only an ack records a run time: a queue whose failures are timeouts
    // would otherwise read as fast.
    if rows.iter().any(|row| row.failed > 0) {
        outln!("RUN times are of completed runs only: failed runs record no run time");
    }
    if let Some(note) = recording_note(queue, metrics.recording) {
        outln!("{note}");
    }
    if let Some(note) = handoffs_lost_note(metrics.handoffs_lost) {
        outln!("{note}");
    }
    if let Some(note) = claims_lost_note(metrics.claims_lost) {
        outln!("{note}");
    }
    Ok(())
}
