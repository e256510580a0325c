//! Every metric family the endpoint serves, with its help text: the one
//! place their names and meanings are written (the README's table repeats
//! them for readers).

use std::time::Duration;

use redq::events::EventStream;
use redq::metrics::{Figures, Histogram};

use super::collect::{Reading, Row, STATES, WAKE_UPS};
use super::encode::{Family, Kind};

/// The exporter's own figures, there even when Redis was not read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scrape {
    /// Whether Redis was read.
    pub up: bool,
    /// Scrapes that could not read Redis since the exporter started.
    pub errors: u64,
    /// How long reading Redis took.
    pub duration: Duration,
    /// Whether the wait and run histograms are served (`--no-histograms`
    /// leaves out their 2 × 26 series a queue).
    pub histograms: bool,
}

/// A family with one sample per `queue` label: name, help, and its value.
type PerQueue = (&'static str, &'static str, fn(&Row) -> f64);

/// One family of `kind`, named and described by its entry, with a sample
/// per queue row that the entry's function reads from the row.
fn per_queue_family(kind: Kind, (name, help, value): PerQueue, rows: &[Row]) -> Family {
    let mut family = Family::new(name, kind, help);
    for row in rows {
        family.sample(vec![("queue", row.queue.clone())], value(row));
    }
    family
}

/// The families of one scrape; without a reading only the exporter's own.
/// Seconds, rounded to the microsecond: `as_secs_f64` adds the whole
/// seconds and the nanoseconds as floats, which writes e.g.
/// 4.7287163549999995 for 4.728716355 s; a whole number of microseconds
/// divided once is the nearest float to that decimal, and writes as it.
fn to_microseconds(duration: Duration) -> f64 {
    duration.as_micros() as f64 / 1e6
}

pub fn families(scrape: Scrape, reading: Option<&Reading>) -> Vec<Family> {
    let mut out = vec![
        Family::new(
            "redq_up",
            Kind::Gauge,
            "1 when this scrape read the queues from Redis, 0 when it could not (the reason is a comment at the top of the page).",
        )
        .single(if scrape.up { 1.0 } else { 0.0 }),
        Family::new(
            "redq_scrape_errors_total",
            Kind::Counter,
            "Scrapes that could not read Redis since this exporter started.",
        )
        .single(scrape.errors as f64),
        Family::new(
            "redq_scrape_duration_seconds",
            Kind::Gauge,
            "How long this scrape took to read Redis, in seconds.",
        )
        .single(to_microseconds(scrape.duration)),
    ];
    let Some(reading) = reading else {
        return out;
    };
    out.push(
        Family::new(
            "redq_queues",
            Kind::Gauge,
            "Queues the namespace knows (ever enqueued to). Each has its own queue label up to --max-queues (by name); the rest are summed under queue=\"_other\".",
        )
        .single(reading.known_queues as f64),
    );
    out.push(
        Family::new(
            "redq_workers",
            Kind::Gauge,
            "Live workers (heartbeat within the last 15 s), each counted once however many queues and shards it serves.",
        )
        .single(reading.workers as f64),
    );
    let mut hearing = Family::new(
        "redq_workers_by_wake_ups",
        Kind::Gauge,
        "Live workers by how they hear that work is due (redq workers' WAKE-UPS): shard (every wake-up), plain (no shard subscription: a server before 7.0 or an ACL without +ssubscribe; where the scripts can SPUBLISH it starts work it was not handed only at its next poll), polls (no subscription at all), unknown (an earlier driver, which hears plain channels only). Each worker once, under its least-hearing shard; the samples sum to redq_workers.",
    );
    for (word, count) in WAKE_UPS.iter().zip(reading.workers_by_wake_ups) {
        hearing.sample(vec![("wake_ups", (*word).to_owned())], count as f64);
    }
    out.push(hearing);
    let mut history = Family::new(
        "redq_event_history_seconds",
        Kind::Gauge,
        "How far back each event stream reaches: seconds since its oldest kept entry, on the Redis clock (the shortest over shards); no sample while it is empty. stream=\"main\" holds every kind but the traffic's (dead letters, reclaims, operator actions, workers), stream=\"traffic\" the enqueued and completed events. Each keeps about 10 000 entries, so an alert that the main stream reaches back less than an incident review needs says its events are being trimmed too soon.",
    );
    for (stream, reach) in EventStream::BOTH.into_iter().zip(reading.event_history) {
        if let Some(reach) = reach {
            history.sample(
                vec![("stream", stream.as_str().to_owned())],
                reach.as_secs_f64(),
            );
        }
    }
    out.push(history);
    out.extend(server_families(&reading.server));
    let mut jobs = Family::new(
        "redq_jobs",
        Kind::Gauge,
        "Jobs of the queue by state: waiting (due, not yet claimed), scheduled (delayed or backing off), leased (claimed; lapsed leases included), dead (dead letters), blocked (behind an earlier job of their ordering key), held (due, but held back by their limit key's flow-control limits), completed and cancelled (kept by a retention policy).",
    );
    for row in &reading.rows {
        for (state, size) in STATES.iter().zip(row.sizes) {
            jobs.sample(
                vec![("queue", row.queue.clone()), ("state", (*state).to_owned())],
                size as f64,
            );
        }
    }
    out.push(jobs);
    let per_queue: [PerQueue; 10] = [
        (
            "redq_due_jobs",
            "Scheduled jobs of the queue whose time has come that no claim moved to waiting yet (counted in redq_jobs{state=\"scheduled\"} too). Only a claim moves a due retry or delayed job, so while workers run this stays near 0; one that grows means nothing claims the queue (every worker gone), and redq_oldest_job_age_seconds counts these jobs too.",
            |r| r.due as f64,
        ),
        (
            "redq_lapsed_leases",
            "Leases of the queue past their expiry that no worker reclaimed yet (counted in redq_jobs{state=\"leased\"} too).",
            |r| r.lapsed as f64,
        ),
        (
            "redq_queue_paused",
            "1 when the queue is paused (claims hand out nothing), else 0; for queue=\"_other\" how many of its queues are paused.",
            |r| r.paused as f64,
        ),
        (
            "redq_queue_metrics_off",
            "1 when the queue's metrics are off (redq metrics off): its redq_job_wait_seconds and redq_job_run_seconds histograms and its redq_jobs_*_total counters stop moving until they are on again; else 0. For queue=\"_other\" how many of its queues have them off.",
            |r| r.metrics_off as f64,
        ),
        (
            "redq_oldest_job_age_seconds",
            "Seconds the longest-ready job of the queue has been ready, on the Redis clock: the head of the waiting line (the next one a claim takes) since it was enqueued, or a scheduled job past its time that no claim moved (redq_due_jobs) since its time, whichever is older; 0 when none is ready. A waiting head counts from enqueue, not from when it came due: a delayed job that just came due reads as old as its delay. For queue=\"_other\" the oldest.",
            |r| r.oldest_age.as_secs_f64(),
        ),
        (
            "redq_processed_last_minute",
            "Jobs of the queue acknowledged in the 5 s throughput buckets that started in the last 60 s (the bucket in progress included). A gauge, not a counter: the buckets roll over and expire, so it is not monotonic and rate() does not apply.",
            |r| r.processed_last_minute as f64,
        ),
        (
            "redq_failed_last_minute",
            "Failed attempts of the queue (retries and dead letters) in the 5 s throughput buckets that started in the last 60 s. A gauge: the buckets roll over.",
            |r| r.failed_last_minute as f64,
        ),
        (
            "redq_processed_last_15_minutes",
            "Jobs of the queue acknowledged in the 5 s throughput buckets that started in the last 15 minutes. A gauge: the buckets roll over.",
            |r| r.processed_last_15_minutes as f64,
        ),
        (
            "redq_failed_last_15_minutes",
            "Failed attempts of the queue in the 5 s throughput buckets that started in the last 15 minutes. A gauge: the buckets roll over.",
            |r| r.failed_last_15_minutes as f64,
        ),
        (
            "redq_queue_workers",
            "Live workers serving the queue (a worker serving several queues counts in each).",
            |r| r.workers.len() as f64,
        ),
    ];
    out.extend(per_queue.map(|one| per_queue_family(Kind::Gauge, one, &reading.rows)));
    out.extend(outcome_counters(&reading.rows));
    // Alarms, each job of a lost reply given back: counters per queue.
    let lost: [PerQueue; 2] = [
        (
            "redq_handoffs_lost_total",
            "Jobs handed to a parked worker of the queue that it gave back because their messages never reached it (its subscription broke or lagged, or a failover moved its channel): each due again at once with no attempt counted, and each a handoff_lost event (redq events --kind handoff_lost). Counted while the queue's metrics are off too; never reset.",
            |r| r.handoffs_lost as f64,
        ),
        (
            "redq_claims_lost_total",
            "Jobs a worker's claim leased whose reply never reached it (its connection dropped or the call timed out), which the worker gave back: each due again at once with no attempt counted, and each a claim_lost event (redq events --kind claim_lost). Counted while the queue's metrics are off too; never reset.",
            |r| r.claims_lost as f64,
        ),
    ];
    out.extend(lost.map(|one| per_queue_family(Kind::Counter, one, &reading.rows)));
    if !scrape.histograms {
        return out;
    }
    out.push(histogram(
        "redq_job_wait_seconds",
        "Seconds from when a job was due (enqueued, its delay over, or put back by a retry, release or requeue) to its claim, on the Redis clock, recorded by the claim; buckets at powers of 2 ms (0.001 s to 4194.304 s). Since the queue began, summed over job names and shards.",
        &reading.rows,
        |r| &r.totals.wait,
    ));
    out.push(histogram(
        "redq_job_run_seconds",
        "Seconds a job's handler ran, as the worker measured it and sent with its ack (completed jobs only); buckets at powers of 2 ms (0.001 s to 4194.304 s). Since the queue began, summed over job names and shards.",
        &reading.rows,
        |r| &r.totals.run,
    ));
    out
}

/// The Redis server's memory and uptime, from `INFO`: none when it could
/// not be read (an ACL that refuses it). Over shards on several servers,
/// the memory of the fullest and the uptime of the latest started.
fn server_families(servers: &[Option<redq::ServerStats>]) -> Vec<Family> {
    let Some(fullest) = crate::server::fullest(servers) else {
        return Vec::new();
    };
    let uptime = servers.iter().flatten().map(|s| s.uptime_s).min();
    vec![
        Family::new(
            "redq_redis_used_memory_bytes",
            Kind::Gauge,
            "Bytes the Redis server holding the namespace has allocated (INFO memory used_memory); with shards on several servers, the fullest one's. Alert when it nears redq_redis_maxmemory_bytes: under noeviction a full Redis refuses enqueues and retries, under an evicting policy it evicts keys, and an evicted key is lost jobs.",
        )
        .single(fullest.used_memory_bytes as f64),
        Family::new(
            "redq_redis_maxmemory_bytes",
            Kind::Gauge,
            "The maxmemory of the Redis server holding the namespace (of the same server as redq_redis_used_memory_bytes); 0 when it has no limit.",
        )
        .single(fullest.maxmemory_bytes as f64),
        Family::new(
            "redq_redis_uptime_seconds",
            Kind::Gauge,
            "Seconds since the Redis server holding the namespace started (INFO server uptime_in_seconds; with shards on several servers, the latest started). A drop is a restart: without persistence, the namespace's jobs are gone.",
        )
        .single(uptime.unwrap_or(0) as f64),
    ]
}

/// A family with one `_total` counter sample per queue.
type Outcome = (&'static str, &'static str, fn(&Figures) -> u64);

/// Counters of what happened to the queue's jobs, recorded by the scripts
/// since the queue began (the totals are never reset). A queue never moves
/// into or out of `queue="_other"` while the exporter runs
/// (`collect::Labels`): a move in would be read as an increase with no event
/// behind it, a move out as a reset; `_other` grows by its queues' events
/// and by the whole counts of a new queue summed there. No job name label: up to 101 names a
/// queue would multiply the series; the driver's `metrics` API has them.
fn outcome_counters(rows: &[Row]) -> Vec<Family> {
    let outcomes: [Outcome; 5] = [
        (
            "redq_jobs_completed_total",
            "Jobs of the queue acknowledged as done.",
            |f| f.completed,
        ),
        (
            "redq_jobs_retried_total",
            "Failed attempts of the queue's jobs put back to run again (by a nack or a lapsed lease).",
            |f| f.retried,
        ),
        (
            "redq_jobs_dead_lettered_total",
            "Jobs of the queue moved to the dead-letter set.",
            |f| f.dead_lettered,
        ),
        (
            "redq_jobs_cancelled_total",
            "Jobs of the queue cancelled by an operator.",
            |f| f.cancelled,
        ),
        (
            "redq_jobs_reclaimed_total",
            "Lapsed leases of the queue taken back (each is also counted as retried or dead-lettered).",
            |f| f.reclaimed,
        ),
    ];
    outcomes
        .into_iter()
        .map(|(name, help, value)| {
            let mut family = Family::new(name, Kind::Counter, help);
            for row in rows {
                family.sample(
                    vec![("queue", row.queue.clone())],
                    value(&row.totals) as f64,
                );
            }
            family
        })
        .collect()
}

/// A histogram family per queue: cumulative `_bucket`s up to `+Inf`, `_sum`
/// and `_count`, in seconds.
fn histogram(
    name: &'static str,
    help: &'static str,
    rows: &[Row],
    of: fn(&Row) -> &Histogram,
) -> Family {
    let mut family = Family::new(name, Kind::Histogram, help);
    for row in rows {
        let h = of(row);
        let queue = || ("queue", row.queue.clone());
        let mut cumulative = 0;
        for (b, count) in h.counts.iter().enumerate() {
            cumulative += count;
            let le = match Histogram::upper_bound_ms(b) {
                Some(ms) => format!("{}", ms as f64 / 1000.0),
                None => "+Inf".to_owned(),
            };
            family.sample_named("_bucket", vec![queue(), ("le", le)], cumulative as f64);
        }
        family.sample_named("_sum", vec![queue()], h.sum_ms as f64 / 1000.0);
        family.sample_named("_count", vec![queue()], h.count() as f64);
    }
    family
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workers_help_names_the_drivers_liveness_window() {
        assert_eq!(redq::worker::WORKER_TTL, Duration::from_secs(15));
        let all = families(
            Scrape {
                up: true,
                errors: 0,
                duration: Duration::ZERO,
                histograms: true,
            },
            Some(&Reading {
                known_queues: 0,
                rows: Vec::new(),
                workers: 0,
                workers_by_wake_ups: [0; WAKE_UPS.len()],
                event_history: [Some(Duration::from_secs(90)), None],
                server: Vec::new(),
            }),
        );
        let workers = all.iter().find(|f| f.name == "redq_workers").unwrap();
        assert!(workers.help.contains("within the last 15 s"));
        // The event streams' cap, and a sample only for a stream that
        // holds something.
        assert_eq!(redq::events::EVENTS_CAP, 10_000);
        let history = all
            .iter()
            .find(|f| f.name == "redq_event_history_seconds")
            .unwrap();
        assert!(history.help.contains("about 10 000 entries"));
        let text = super::super::encode::encode(&[], std::slice::from_ref(history));
        assert!(
            text.contains("redq_event_history_seconds{stream=\"main\"} 90"),
            "{text}"
        );
        assert!(!text.contains("seconds{stream=\"traffic\"}"), "{text}");
    }

    #[test]
    fn the_scrape_duration_is_written_to_the_microsecond() {
        let scrape = Scrape {
            up: false,
            errors: 1,
            duration: Duration::new(4, 728_716_355),
            histograms: true,
        };
        let all = families(scrape, None);
        let duration = all
            .iter()
            .find(|f| f.name == "redq_scrape_duration_seconds")
            .unwrap();
        let text = super::super::encode::encode(&[], std::slice::from_ref(duration));
        assert!(
            text.ends_with("\nredq_scrape_duration_seconds 4.728716\n"),
            "{text}"
        );
    }

    #[test]
    fn without_a_reading_only_the_exporters_own_families_are_there() {
        let scrape = Scrape {
            up: false,
            errors: 3,
            duration: Duration::from_millis(1500),
            histograms: true,
        };
        let names: Vec<&str> = families(scrape, None).iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "redq_up",
                "redq_scrape_errors_total",
                "redq_scrape_duration_seconds"
            ]
        );
    }
}
