//! One scrape's reading of Redis, through the driver's [`Operator`] (one
//! namespace, or every shard summed): per queue its sizes by state, lapsed
//! leases, pause, head age, recent throughput, workers, and the wait/run
//! histograms and outcome totals the scripts record (`redq::metrics`), with the queues
//! past `max_queues` folded into one row, [`OTHER`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use futures::stream::{self, StreamExt, TryStreamExt};
use redq::events::EventStream;
use redq::metrics::Figures;
use redq::{Operator, QueueCounts, QueueError, StatsBucket};

/// The `queue` label of the row summing every queue past `--max-queues`
/// (the first scrape names the first ones by name, later ones keep their
/// label, [`Labels`]). A queue
/// actually named so is summed into it as well, so the label stays unique.
pub const OTHER: &str = "_other";

/// Queues read at once: enough to hide round trips, few enough to leave
/// Redis to the workers.
const CONCURRENT_READS: usize = 8;

/// The states of [`QueueCounts`], as the `state` label names them.
pub const STATES: [&str; 8] = [
    "waiting",
    "scheduled",
    "leased",
    "dead",
    "blocked",
    "held",
    "completed",
    "cancelled",
];

/// The recent windows the throughput buckets (about 16 minutes of 5 s
/// buckets) are summed over.
pub const LAST_MINUTE: Duration = Duration::from_secs(60);
/// See [`LAST_MINUTE`].
pub const LAST_15_MINUTES: Duration = Duration::from_secs(15 * 60);

/// What one scrape read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// How many queues the namespace knows (before folding).
    pub known_queues: usize,
    /// One row per queue in name order, until [`fold`] leaves one per
    /// `queue` label, [`OTHER`] last.
    pub rows: Vec<Row>,
    /// Live workers, each counted once however many shards it serves.
    pub workers: u64,
    /// Live workers by how they hear wake-ups, in the order of
    /// [`WAKE_UPS`]; each once, under its least-hearing shard's word.
    pub workers_by_wake_ups: [u64; WAKE_UPS.len()],
    /// How far back each event stream reaches (in the order of
    /// [`EventStream::BOTH`]; the shortest over shards), `None` while it is
    /// empty.
    pub event_history: [Option<Duration>; 2],
    /// The `INFO` of each shard's server (`None` where refused: a managed
    /// Redis may not allow it, and the scrape goes on without it).
    pub server: Vec<Option<redq::ServerStats>>,
}

/// How a live worker hears that work is due, as the `wake_ups` label names
/// it (`redq::worker::WakeUps`, and `unknown` for a worker of an earlier
/// version, which hears plain channels only), from the least hearing to the
/// most: a worker over several shards counts under its least-hearing one.
pub const WAKE_UPS: [&str; 4] = ["polls", "unknown", "plain", "shard"];

/// The index of `wake_ups` in [`WAKE_UPS`].
fn wake_ups_rank(wake_ups: Option<redq::worker::WakeUps>) -> usize {
    let word = wake_ups.map_or("unknown", redq::worker::WakeUps::as_str);
    WAKE_UPS
        .iter()
        .position(|w| *w == word)
        .expect("every wake-ups word has its label")
}

/// The figures of one `queue` label.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    pub queue: String,
    /// Sizes, in the order of [`STATES`].
    pub sizes: [u64; STATES.len()],
    pub lapsed: u64,
    /// Scheduled jobs past their time that no claim moved to waiting yet
    /// (counted in scheduled too; `QueueCounts::due`).
    pub due: u64,
    /// Paused queues among those of the row (0 or 1 but for [`OTHER`]).
    pub paused: u64,
    /// Queues of the row whose metrics are off (`redq metrics off`: their
    /// histograms and outcome totals stand still), 0 or 1 but for [`OTHER`].
    pub metrics_off: u64,
    /// How long the longest-ready job has been ready: the waiting head
    /// since its enqueue, or a due scheduled job since its time
    /// (`QueueCounts::ready_since`; the oldest of the row's).
    pub oldest_age: Duration,
    pub processed_last_minute: u64,
    pub failed_last_minute: u64,
    pub processed_last_15_minutes: u64,
    pub failed_last_15_minutes: u64,
    /// Live workers serving any queue of the row (ids, counted once).
    pub workers: BTreeSet<String>,
    /// Since the queue began, every job name summed: monotonic, never
    /// reset by the rollups (what counters and histograms want).
    pub totals: Figures,
    /// Hand-offs given back as lost since the queue began
    /// (`redq::metrics::QueueMetrics::handoffs_lost`).
    pub handoffs_lost: u64,
    /// Jobs of lost claims given back since the queue began
    /// (`redq::metrics::QueueMetrics::claims_lost`).
    pub claims_lost: u64,
}

impl Row {
    fn of(counts: &QueueCounts, stats: &[StatsBucket]) -> Row {
        let c = counts;
        let head_age = c.ready_since().map_or(Duration::ZERO, |at| {
            c.now.duration_since(at).unwrap_or_default()
        });
        let (processed_last_minute, failed_last_minute) = window_sum(stats, c.now, LAST_MINUTE);
        let (processed_last_15_minutes, failed_last_15_minutes) =
            window_sum(stats, c.now, LAST_15_MINUTES);
        Row {
            queue: c.queue.clone(),
            sizes: [
                c.waiting,
                c.scheduled,
                c.leased,
                c.dead,
                c.blocked,
                c.held,
                c.completed,
                c.cancelled,
            ],
            lapsed: c.lapsed,
            due: c.due,
            paused: u64::from(c.paused),
            metrics_off: 0,
            oldest_age: head_age,
            processed_last_minute,
            failed_last_minute,
            processed_last_15_minutes,
            failed_last_15_minutes,
            workers: BTreeSet::new(),
            totals: Figures::default(),
            handoffs_lost: 0,
            claims_lost: 0,
        }
    }

    /// Fold `other` into this row: sums, the older head, the union of workers.
    fn absorb(&mut self, other: Row) {
        for (mine, theirs) in self.sizes.iter_mut().zip(other.sizes) {
            *mine += theirs;
        }
        self.lapsed += other.lapsed;
        self.due += other.due;
        self.paused += other.paused;
        self.metrics_off += other.metrics_off;
        self.oldest_age = self.oldest_age.max(other.oldest_age);
        self.processed_last_minute += other.processed_last_minute;
        self.failed_last_minute += other.failed_last_minute;
        self.processed_last_15_minutes += other.processed_last_15_minutes;
        self.failed_last_15_minutes += other.failed_last_15_minutes;
        self.workers.extend(other.workers);
        self.totals.add(&other.totals);
        self.handoffs_lost += other.handoffs_lost;
        self.claims_lost += other.claims_lost;
    }
}

/// Processed and failed in the buckets that started within `window` before
/// `now`, the bucket in progress included: what `redq stats` shows as its
/// 1m and 15m columns.
pub fn window_sum(stats: &[StatsBucket], now: SystemTime, window: Duration) -> (u64, u64) {
    let since = now.checked_sub(window).unwrap_or(SystemTime::UNIX_EPOCH);
    stats
        .iter()
        .filter(|b| b.start >= since)
        .fold((0, 0), |(p, f), b| (p + b.processed, f + b.failed))
}

/// Read everything one scrape shows. The first read, the queue names,
/// must answer within `first_within` ([`super::PING_TIMEOUT`]): a Redis
/// that died fails the scrape then, not after the driver's command timeout.
pub async fn read(operator: &Operator, first_within: Duration) -> Result<Reading, QueueError> {
    let names = tokio::time::timeout(first_within, operator.queues())
        .await
        .map_err(|_| QueueError::Timeout(first_within))??;
    // Owned names: futures borrowing from the list trip the compiler's
    // higher-ranked lifetime check once the scrape is spawned.
    let mut rows: Vec<Row> = stream::iter(names.clone())
        .map(|queue| async move {
            let (counts, stats, totals) = futures::try_join!(
                operator.counts(&queue),
                operator.stats(&queue),
                operator.metric_totals(&queue)
            )?;
            let mut row = Row::of(&counts, &stats);
            row.totals = totals.total();
            row.metrics_off = u64::from(!totals.recording.is_on());
            row.handoffs_lost = totals.handoffs_lost;
            row.claims_lost = totals.claims_lost;
            Ok::<Row, QueueError>(row)
        })
        .buffered(CONCURRENT_READS)
        .try_collect()
        .await?;
    let shards = futures::future::try_join_all(operator.shards().iter().map(|s| s.workers()));
    let mut serving: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // The registry also lists gone workers (silent past its TTL, kept for
    // ten minutes so screens can say when they were last seen): none of
    // them is live, and an alert on these gauges must not wait that long.
    let live = shards.await?.into_iter().flatten().filter(|w| !w.gone);
    // Each live worker once, by id, with its least-hearing shard's rank.
    let mut hearing: BTreeMap<String, usize> = BTreeMap::new();
    for worker in live {
        for queue in &worker.queues {
            serving
                .entry(queue.clone())
                .or_default()
                .insert(worker.id.clone());
        }
        let rank = wake_ups_rank(worker.wake_ups);
        hearing
            .entry(worker.id)
            .and_modify(|least| *least = (*least).min(rank))
            .or_insert(rank);
    }
    let workers = hearing.len() as u64;
    let mut workers_by_wake_ups = [0; WAKE_UPS.len()];
    for rank in hearing.into_values() {
        workers_by_wake_ups[rank] += 1;
    }
    for row in &mut rows {
        row.workers = serving.remove(&row.queue).unwrap_or_default();
    }
    let [main, traffic] = EventStream::BOTH;
    let event_history = futures::try_join!(
        operator.event_history(main),
        operator.event_history(traffic)
    )?;
    let server = crate::server::read(operator, first_within).await;
    Ok(Reading {
        known_queues: names.len(),
        rows,
        workers,
        workers_by_wake_ups,
        event_history: event_history.into(),
        server,
    })
}

/// Which queues have a `queue` label of their own and which are summed
/// under [`OTHER`], kept for the exporter's life: a queue named once stays
/// named and a queue folded once stays folded, so the counters of neither
/// move between labels as queues come and go. Were "the first `max_queues`
/// by name" recomputed each scrape, a new queue sorting early would push a
/// named one into [`OTHER`], whose `_total` counters would then rise by
/// that queue's whole history with no event behind it (an `increase() > 0`
/// alert firing), and a queue leaving it would drop them, which Prometheus
/// also reads as a reset followed by an increase.
#[derive(Debug, Default)]
pub struct Labels {
    named: BTreeSet<String>,
    folded: BTreeSet<String>,
}

/// Give the queues of `labels.named` their own row, name newly seen queues
/// while fewer than `max_queues` are (in name order, so the first scrape
/// names the first `max_queues` by name), and sum every other queue into
/// one [`OTHER`] row, present only when something was folded. A queue gone
/// from the namespace leaves both sets, so its place goes to the next new
/// queue (not to one already summed under [`OTHER`]).
pub fn fold(rows: Vec<Row>, max_queues: usize, labels: &mut Labels) -> Vec<Row> {
    let present: BTreeSet<&str> = rows.iter().map(|r| r.queue.as_str()).collect();
    labels.named.retain(|q| present.contains(q.as_str()));
    labels.folded.retain(|q| present.contains(q.as_str()));
    let mut kept = Vec::new();
    let mut other: Option<Row> = None;
    for row in rows {
        let own = row.queue != OTHER
            && (labels.named.contains(&row.queue)
                || (!labels.folded.contains(&row.queue)
                    && labels.named.len() < max_queues
                    && labels.named.insert(row.queue.clone())));
        if own {
            kept.push(row);
            continue;
        }
        labels.folded.insert(row.queue.clone());
        other
            .get_or_insert_with(|| Row {
                queue: OTHER.to_owned(),
                ..Row::default()
            })
            .absorb(row);
    }
    kept.extend(other);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker over several shards counts under its least-hearing one: the
    /// ranks run from no subscription to shard channels.
    #[test]
    fn wake_ups_rank_from_least_hearing_to_most() {
        use redq::worker::WakeUps;
        let ranks = [
            wake_ups_rank(Some(WakeUps::Polls)),
            wake_ups_rank(None),
            wake_ups_rank(Some(WakeUps::Plain)),
            wake_ups_rank(Some(WakeUps::Shard)),
        ];
        assert_eq!(ranks, [0, 1, 2, 3]);
        assert_eq!(
            ranks.map(|r| WAKE_UPS[r]),
            ["polls", "unknown", "plain", "shard"]
        );
    }

    fn row(queue: &str, waiting: u64, age_s: u64, paused: bool) -> Row {
        let mut sizes = [0; STATES.len()];
        sizes[0] = waiting;
        Row {
            queue: queue.into(),
            sizes,
            paused: u64::from(paused),
            oldest_age: Duration::from_secs(age_s),
            processed_last_minute: waiting * 2,
            workers: [format!("w-{queue}"), "w-all".to_owned()].into(),
            ..Row::default()
        }
    }

    #[test]
    fn queues_past_the_limit_are_summed_under_other() {
        let rows = vec![
            row("a", 1, 5, false),
            row("b", 2, 9, true),
            row("c", 3, 7, true),
            row("d", 4, 1, false),
        ];
        let folded = fold(rows, 2, &mut Labels::default());
        let names: Vec<&str> = folded.iter().map(|r| r.queue.as_str()).collect();
        assert_eq!(names, ["a", "b", OTHER]);
        let other = &folded[2];
        assert_eq!(other.sizes[0], 7);
        assert_eq!(other.paused, 1);
        assert_eq!(other.oldest_age, Duration::from_secs(7));
        assert_eq!(other.processed_last_minute, 14);
        assert_eq!(other.workers.len(), 3, "w-c, w-d and w-all once");
    }

    #[test]
    fn no_other_row_without_folding_and_a_queue_named_other_is_folded() {
        let folded = fold(vec![row("a", 1, 0, false)], 5, &mut Labels::default());
        assert_eq!(folded.len(), 1);
        let folded = fold(
            vec![row(OTHER, 1, 0, false), row("a", 2, 0, false)],
            5,
            &mut Labels::default(),
        );
        let names: Vec<&str> = folded.iter().map(|r| r.queue.as_str()).collect();
        assert_eq!(names, ["a", OTHER]);
    }

    fn names(rows: &[Row]) -> Vec<&str> {
        rows.iter().map(|r| r.queue.as_str()).collect()
    }

    /// A new queue that sorts first does not push a named one into
    /// `_other` (whose counters would then jump with no event), and a
    /// queue that disappears frees its place for the next new one.
    #[test]
    fn a_named_queue_stays_named_while_new_ones_go_to_other() {
        let mut labels = Labels::default();
        let first = fold(
            vec![row("b", 1, 0, false), row("c", 2, 0, false)],
            2,
            &mut labels,
        );
        assert_eq!(names(&first), ["b", "c"]);
        let grown = fold(
            vec![
                row("a", 4, 0, false),
                row("b", 1, 0, false),
                row("c", 2, 0, false),
            ],
            2,
            &mut labels,
        );
        assert_eq!(names(&grown), ["b", "c", OTHER]);
        assert_eq!(grown[2].sizes[0], 4, "only the new queue's own counts");
        // b disappears: its place goes to the next new queue, not to a,
        // which stays summed so that _other does not drop.
        let moved = fold(
            vec![
                row("a", 4, 0, false),
                row("c", 2, 0, false),
                row("d", 8, 0, false),
            ],
            2,
            &mut labels,
        );
        assert_eq!(names(&moved), ["c", "d", OTHER]);
        assert_eq!(moved[2].sizes[0], 4);
    }
}
