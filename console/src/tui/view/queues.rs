//! Screen 1: every queue with its sizes, throughput and warnings.

use std::time::SystemTime;

use ratatui::layout::Rect;
use ratatui::Frame;

use redq::{StatsBucket, STATS_BUCKET};

use super::table::{self, Column, Item, List};
use crate::clock;
use crate::text::inert;
use crate::tui::state::metrics::{rate_text, rates, series, sparkline, SPARK_WINDOW};
use crate::tui::state::rows::{overdue, Badge};
use crate::tui::state::State;
use crate::tui::theme::Theme;

/// Sparklines get between this many columns and [`SPARK_MAX`], as the
/// layout allows; at the narrowest sizes they are left out.
const SPARK_MIN: u16 = 9;
const SPARK_MAX: u16 = 30;

/// A sparkline `width` bars wide over the whole [`SPARK_WINDOW`] its header
/// names, at any width: each bar is the mean of the stats buckets it
/// covers, so bars covering 12 buckets and bars covering 13 read alike and
/// a steady rate draws a flat line.
fn spark(
    stats: &[StatsBucket],
    now: SystemTime,
    width: usize,
    pick: fn(&StatsBucket) -> u64,
) -> String {
    let buckets = (SPARK_WINDOW.as_millis() / STATS_BUCKET.as_millis().max(1)) as usize;
    let per_bucket = series(stats, now, buckets, pick);
    sparkline(&resample(&per_bucket, width))
}

/// `values` averaged into `width` consecutive, near-equal runs (scaled by
/// 1000 to keep the fraction the sparkline's levels need).
fn resample(values: &[u64], width: usize) -> Vec<u64> {
    let n = values.len();
    (0..width)
        .map(|i| {
            let (from, to) = (i * n / width, ((i + 1) * n / width).max(i * n / width + 1));
            let run = &values[from.min(n)..to.min(n)];
            let sum: u64 = run.iter().sum();
            sum * 1000 / run.len().max(1) as u64
        })
        .collect()
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, now: SystemTime) {
    let queues = state.visible_queues();
    // Flow control's held jobs get a column only while some queue holds
    // any: most namespaces never do, and 80 columns are scarce.
    let any_held = state.data.queues.iter().any(|q| q.counts.held > 0);
    // Scheduled jobs past their time that no claim moved (every worker
    // gone): a column while any queue has them, or a dead fleet's retries
    // and delayed jobs would read as an idle queue.
    let any_due = state.data.queues.iter().any(|q| overdue(&q.counts, now));
    // Likewise jobs blocked behind an earlier one with their ordering key,
    // and leases that lapsed with nobody reclaiming them (also a badge).
    let any_blocked = state.data.queues.iter().any(|q| q.counts.blocked > 0);
    let any_lapsed = state.data.queues.iter().any(|q| q.counts.lapsed > 0);
    // And jobs waiting on other jobs (a batch's callbacks, dependents, tree
    // parents), held there for an operator too when a dependency failed:
    // without the column a queue of them reads as empty.
    let any_awaiting = state.data.queues.iter().any(|q| q.counts.awaiting > 0);
    let stats_at = state.stats_time(now);
    let rows = queues
        .iter()
        .map(|row| {
            let c = &row.counts;
            let (ok_rate, fail_rate) = rates(&row.stats, stats_at);
            let stats = &row.stats;
            let spark = |pick: fn(&StatsBucket) -> u64| {
                Item::drawn(move |w| spark(stats, stats_at, w, pick))
            };
            let oldest = match c.ready_since() {
                Some(at) => clock::compact(clock::age(at, now)),
                None => "—".to_owned(),
            };
            let badges: Vec<String> = state.badges(row, now).iter().map(Badge::text).collect();
            let dead = Item::number(c.dead);
            let mut cells = vec![
                Item::new(&c.queue),
                Item::number(c.waiting),
                Item::number(c.scheduled),
            ];
            if any_due {
                let due = Item::number(c.due);
                cells.push(if overdue(c, now) {
                    due.style(theme.warn())
                } else {
                    due
                });
            }
            cells.push(Item::number(c.leased));
            if any_held {
                cells.push(Item::number(c.held));
            }
            if any_blocked {
                cells.push(Item::number(c.blocked));
            }
            if any_awaiting {
                cells.push(Item::number(c.awaiting));
            }
            if any_lapsed {
                let lapsed = Item::number(c.lapsed);
                cells.push(if c.lapsed > 0 {
                    lapsed.style(theme.warn())
                } else {
                    lapsed
                });
            }
            cells.extend([
                if c.dead > 0 {
                    dead.style(theme.error())
                } else {
                    dead
                },
                Item::new(rate_text(ok_rate)),
                Item::new(rate_text(fail_rate)),
                spark(|b| b.processed).style(theme.spark_ok()),
                spark(|b| b.failed).style(theme.spark_fail()),
                Item::new(oldest),
                Item::new(badges.join(" ")).style(theme.warn()),
            ]);
            cells
        })
        .collect::<Vec<_>>();
    let empty = if state.filter().is_empty() {
        vec![
            "no queues yet".to_owned(),
            format!(
                "nothing was ever enqueued in namespace {}",
                inert(&state.settings.namespace)
            ),
        ]
    } else {
        vec!["no queue matches the filter".to_owned()]
    };
    // At 80 columns the name and the badge must survive, so the numbers
    // go too when room is short, an operator's least needed first: the
    // sparklines (1, 2), LAPSED (3: its badge stays), SCHED (4: future
    // jobs are normal, DUE is the part that is not), BLOCKED and AWAITING
    // (5), HELD (6: the Limits screen has it), DONE/S (7), FAIL/S (8), DUE
    // (9: NO WORKER says it too). WAITING, LEASED, DEAD and OLDEST stay.
    let mut columns = vec![
        Column::name("QUEUE"),
        Column::number("WAITING"),
        Column::number("SCHED").optional(4),
    ];
    if any_due {
        columns.push(Column::number("DUE").optional(9));
    }
    columns.push(Column::number("LEASED"));
    if any_held {
        columns.push(Column::number("HELD").optional(6));
    }
    // When room is short these go after the sparklines, LAPSED first: its
    // badge still names the queue.
    if any_blocked {
        columns.push(Column::number("BLOCKED").optional(5));
    }
    if any_awaiting {
        columns.push(Column::number("AWAITING").optional(5));
    }
    if any_lapsed {
        columns.push(Column::number("LAPSED").optional(3));
    }
    columns.extend([
        Column::number("DEAD"),
        Column::number("DONE/S").optional(7),
        Column::number("FAIL/S").optional(8),
        Column::drawn("DONE 15m", SPARK_MIN, SPARK_MAX).optional(2),
        Column::drawn("FAILED 15m", SPARK_MIN, SPARK_MAX).optional(1),
        Column::number("OLDEST"),
        Column::whole("").kept(),
    ]);
    let list = List {
        title: format!(" Queues ({}) ", queues.len()),
        columns,
        rows,
        selected: state.cursor().index,
        empty,
    };
    table::draw_sorted(frame, area, list, theme, state.sort());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_rate_draws_a_flat_line_at_any_width() {
        let steady = vec![5; 180];
        for width in [9, 13, 14, 30] {
            let bars = resample(&steady, width);
            assert_eq!(bars.len(), width);
            assert!(bars.iter().all(|b| *b == 5000), "{width}: {bars:?}");
        }
    }

    #[test]
    fn every_bucket_lands_in_one_bar() {
        let mut one = vec![0; 180];
        one[0] = 1;
        one[179] = 1;
        let bars = resample(&one, 14);
        assert!(bars[0] > 0 && bars[13] > 0);
        assert!(bars[1..13].iter().all(|b| *b == 0));
    }
}
