//! Wait and run times and outcome counts recorded by the scripts
//! (`lua/lib/metrics.lua`), read back through `RedisQueue::metrics`.

use std::time::Duration;

use redq::metrics::{Figures, Histogram, MetricsWindow, QueueMetrics, NAMES_MAX, OTHER};
use redq::{Completion, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{wait_until, RedisServer};
use serde_json::json;

/// The bucket `lua/lib/metrics.lua` files a time of `ms` under.
fn bucket_of(ms: u64) -> usize {
    (0..redq::metrics::BUCKETS)
        .find(|&b| Histogram::upper_bound_ms(b).is_none_or(|upper| ms <= upper))
        .unwrap()
}

fn named<'a>(metrics: &'a QueueMetrics, name: &str) -> &'a Figures {
    metrics
        .names
        .get(name)
        .unwrap_or_else(|| panic!("no figures for {name}: {:?}", metrics.names.keys()))
}

async fn ack_with_run(queue: &RedisQueue, job: &redq::Job, run_ms: u64) {
    let done = Completion::new().run_time(Duration::from_millis(run_ms));
    let acked = queue.ack_batch_with(&[job.lease()], &[done]).await.unwrap();
    assert!(acked[0].is_ok(), "{acked:?}");
}

#[tokio::test]
async fn completions_runs_and_waits_land_in_their_buckets_per_job_name() {
    let server = server();
    let queue = queue(&server, "metrics_known").await;
    let jobs = (0..3).map(|i| NewJob::new(json!(i)).name("resize"));
    queue
        .add_batch("q", jobs.chain([NewJob::new(json!("plain"))]).collect())
        .await
        .unwrap();
    // A known wait: due at enqueue, claimed no sooner than 600 ms later.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let claimed = queue.claim("q", 4, LONG).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let runs = [3, 100, 5_000];
    for (job, run_ms) in claimed.iter().zip(runs) {
        assert_eq!(job.name.as_deref(), Some("resize"));
        ack_with_run(&queue, job, run_ms).await;
    }
    ack_with_run(&queue, &claimed[3], 40).await;

    let expected_runs = {
        let mut h = Histogram::default();
        for ms in runs {
            h.counts[bucket_of(ms)] += 1;
            h.sum_ms += ms;
        }
        h
    };
    for window in [
        MetricsWindow::Last5Minutes,
        MetricsWindow::LastHour,
        MetricsWindow::LastDay,
        MetricsWindow::Last90Days,
    ] {
        let metrics = queue.metrics("q", window).await.unwrap();
        let resize = named(&metrics, "resize");
        assert_eq!(resize.completed, 3, "{window:?}");
        assert_eq!(resize.run, expected_runs, "{window:?}");
        assert_eq!(resize.wait.count(), 3);
        let waited = resize.wait.quantile(0.5).unwrap();
        // 600 ms and up, so the 513..1024 ms bucket (unless the claim was slow).
        assert!(waited >= Duration::from_millis(512), "{waited:?}");
        assert_eq!(resize.wait.counts[bucket_of(600)], 3, "{:?}", resize.wait);
        let plain = named(&metrics, "(none)");
        assert_eq!(
            (plain.completed, plain.run.sum_ms, plain.wait.count()),
            (1, 40, 1)
        );
        assert_eq!(metrics.total().completed, 4);
    }
    let totals = queue.metric_totals("q").await.unwrap();
    assert_eq!(named(&totals, "resize").run, expected_runs);
    assert_eq!(totals.total().completed, 4);
    // Another queue records nothing of these.
    assert!(queue
        .metrics("other", MetricsWindow::Last5Minutes)
        .await
        .unwrap()
        .names
        .is_empty());
}

/// The wait a claim filed for `job`, in ms: the claim's now (its lease's
/// expiry less the lease) less when the job was due (enqueued due at once).
fn filed_wait_ms(job: &redq::Job, lease: Duration) -> u64 {
    let claimed = job.lease_expires_at - lease;
    claimed
        .duration_since(job.enqueued_at)
        .map_or(0, |waited| waited.as_millis() as u64)
}

#[tokio::test]
async fn a_batch_of_several_due_times_and_names_files_each_jobs_wait() {
    // The claim tallies a run of jobs with the same name and wait once
    // (lua/lib/metrics.lua record_waits): every job must still count.
    let server = server();
    let queue = queue(&server, "metrics_wait_runs").await;
    let early = (0..3).map(|i| NewJob::new(json!(i)).name("x"));
    queue.add_batch("q", early.collect()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let late = [("x", 3), ("y", 4), ("x", 5)].map(|(name, i)| NewJob::new(json!(i)).name(name));
    queue.add_batch("q", late.to_vec()).await.unwrap();
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    assert_eq!(claimed.len(), 6);

    let mut expected = std::collections::BTreeMap::<&str, Histogram>::new();
    for job in &claimed {
        let ms = filed_wait_ms(job, LONG);
        let h = expected.entry(job.name.as_deref().unwrap()).or_default();
        h.counts[bucket_of(ms)] += 1;
        h.sum_ms += ms;
    }
    assert_eq!(expected["x"].count(), 5);
    // The two enqueue calls' jobs waited apart (300 ms), so the batch holds
    // runs of different waits within one name.
    let x_waits: Vec<u64> = claimed
        .iter()
        .filter(|job| job.name.as_deref() == Some("x"))
        .map(|job| filed_wait_ms(job, LONG))
        .collect();
    assert!(x_waits[0] >= x_waits[3] + 250, "{x_waits:?}");
    let metrics = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    for (name, histogram) in &expected {
        assert_eq!(&named(&metrics, name).wait, histogram, "{name}");
    }
}

#[tokio::test]
async fn retries_dead_letters_cancels_and_reclaims_are_counted() {
    let server = server();
    let queue = queue(&server, "metrics_outcomes").await;
    let batch = ["retry", "die", "lapse", "cancel"]
        .map(|name| NewJob::new(json!(name)).name(name).max_attempts(3));
    let ids = queue.add_batch("q", batch.to_vec()).await.unwrap();
    let claimed = queue.claim("q", 2, LONG).await.unwrap();
    queue
        .nack(&claimed[0].lease(), Duration::from_secs(3600), "once")
        .await
        .unwrap();
    queue.dead_letter(&claimed[1].lease(), "bad").await.unwrap();
    let lapsing = queue.claim("q", 1, SHORT).await.unwrap();
    assert_eq!(lapsing[0].name.as_deref(), Some("lapse"));
    wait_until(DEADLINE, "the short lease to be reclaimed", async || {
        queue.reclaim("q", 10).await.unwrap();
        queue.metric_totals("q").await.unwrap().total().reclaimed == 1
    })
    .await;
    queue.cancel(ids[3].id(), "test").await.unwrap();

    let metrics = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    let counts = |name: &str| {
        let f = named(&metrics, name);
        [
            f.completed,
            f.retried,
            f.dead_lettered,
            f.cancelled,
            f.reclaimed,
        ]
    };
    assert_eq!(counts("retry"), [0, 1, 0, 0, 0]);
    assert_eq!(counts("die"), [0, 0, 1, 0, 0]);
    // A lapsed lease is a failed attempt put back, and counted as reclaimed.
    assert_eq!(counts("lapse"), [0, 1, 0, 0, 1]);
    assert_eq!(counts("cancel"), [0, 0, 0, 1, 0]);
    assert_eq!(
        queue.metric_totals("q").await.unwrap().total(),
        metrics.total()
    );
}

#[tokio::test]
async fn a_retry_waits_from_its_new_due_time_not_from_its_enqueue() {
    let server = server();
    let queue = queue(&server, "metrics_retry_wait").await;
    queue
        .add("q", NewJob::new(json!(1)).name("slow"))
        .await
        .unwrap();
    let first = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    // The attempt runs 1.5 s, then fails and is due again at once.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    queue
        .nack(&first.lease(), Duration::ZERO, "again")
        .await
        .unwrap();
    let second = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    ack_with_run(&queue, &second, 1).await;
    let wait = named(
        &queue
            .metrics("q", MetricsWindow::Last5Minutes)
            .await
            .unwrap(),
        "slow",
    )
    .wait
    .clone();
    assert_eq!(wait.count(), 2);
    // Both claims came straight after the job was due: neither waited 1.5 s.
    assert!(wait.sum_ms < 1_000, "{wait:?}");
}

#[tokio::test]
async fn job_names_past_the_cap_are_counted_as_other_and_memory_stays_bounded() {
    let server = server();
    let queue = queue(&server, "metrics_names").await;
    let names = NAMES_MAX + 5;
    let jobs = (0..names).map(|i| NewJob::new(json!(i)).name(format!("job-{i:03}")));
    queue.add_batch("q", jobs.collect()).await.unwrap();
    let claimed = queue.claim("q", names, LONG).await.unwrap();
    let leases: Vec<_> = claimed.iter().map(|j| j.lease()).collect();
    queue.ack_batch(&leases).await.unwrap();

    let metrics = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    assert_eq!(
        metrics.names.len(),
        NAMES_MAX + 1,
        "{:?}",
        metrics.names.keys()
    );
    assert_eq!(named(&metrics, OTHER).completed, 5);
    assert_eq!(named(&metrics, OTHER).wait.count(), 5);
    assert_eq!(metrics.total().completed, names as u64);
    // The same names again in a later 5 s window, whose first write folds
    // the closed one into the 1 min and 1 h rollups for every name.
    let first = an_early_5s_window(&queue).await;
    a_5s_window_after(&queue, first).await;
    let jobs = (0..names).map(|i| NewJob::new(json!(i)).name(format!("job-{i:03}")));
    queue.add_batch("q", jobs.collect()).await.unwrap();
    let claimed = queue.claim("q", names, LONG).await.unwrap();
    let leases: Vec<_> = claimed.iter().map(|j| j.lease()).collect();
    queue.ack_batch(&leases).await.unwrap();
    let hour = queue.metrics("q", MetricsWindow::LastHour).await.unwrap();
    assert_eq!(hour.names.len(), NAMES_MAX + 1);
    assert_eq!(named(&hour, OTHER).completed, 10);
    assert_eq!(hour.total().completed, 2 * names as u64);
    // One total, one open-window marker, two 5 s slots, a 1 min and a 1 h
    // slot per name, "(other)" too, and the two bookkeeping fields: nothing
    // grows with the number of jobs or names.
    let fields = hlen(&server, &queue, "q:q:metrics").await;
    assert_eq!(fields, (NAMES_MAX as i64 + 1) * 6 + 2);
    let key = format!("{{{}}}:q:q:metrics", queue.namespace());
    let bytes: i64 = server
        .cmd(&["MEMORY", "USAGE", &key, "SAMPLES", "0"])
        .await
        .convert()
        .unwrap();
    println!(
        "metrics hash: {fields} fields, {bytes} bytes ({} per value)",
        bytes / fields
    );
}

/// Wait (with a deadline) until the Redis clock is past 5 s window `first`.
async fn a_5s_window_after(queue: &RedisQueue, first: u64) {
    wait_until(Duration::from_secs(10), "the next 5 s window", async || {
        redis_5s_window(queue).await > first
    })
    .await;
}

/// The 5 s window the Redis clock is in now.
async fn redis_5s_window(queue: &RedisQueue) -> u64 {
    let now = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap()
        .now;
    now.duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        / 5_000
}

/// The current 5 s window number (Redis clock), waiting for the next one
/// when less than half of this one is left, so what follows stays in it.
async fn an_early_5s_window(queue: &RedisQueue) -> u64 {
    let now_ms = |m: QueueMetrics| {
        m.now
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let ms = now_ms(
        queue
            .metrics("q", MetricsWindow::Last5Minutes)
            .await
            .unwrap(),
    );
    if ms % 5_000 < 2_500 {
        return ms / 5_000;
    }
    tokio::time::sleep(Duration::from_millis(5_000 - ms % 5_000 + 10)).await;
    now_ms(
        queue
            .metrics("q", MetricsWindow::Last5Minutes)
            .await
            .unwrap(),
    ) / 5_000
}

#[tokio::test]
async fn a_rollup_slot_left_from_an_older_window_is_not_read_and_is_overwritten() {
    let server = server();
    let queue = queue(&server, "metrics_ring").await;
    let key = format!("{{{}}}:q:q:metrics", queue.namespace());
    queue
        .add("q", NewJob::new(json!(1)).name("n"))
        .await
        .unwrap();
    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    let window = an_early_5s_window(&queue).await;
    // What the slots of this window and the one before held 192 windows
    // (16 minutes) earlier: 7 and 5 completions.
    let stale = "local v = { tonumber(ARGV[2]), tonumber(ARGV[3]) } \
                 redis.call('HSET', KEYS[1], ARGV[1], cmsgpack.pack(v))";
    for (w, completed) in [(window, "7"), (window - 1, "5")] {
        let field = format!("s{}|n", w % 192);
        let old = (w - 192).to_string();
        server
            .cmd(&["EVAL", stale, "1", &key, &field, &old, completed])
            .await;
    }
    ack_with_run(&queue, &job, 1).await;
    let recent = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    assert_eq!(
        named(&recent, "n").completed,
        1,
        "the stale 7 was overwritten, not added to, and the stale 5 not read"
    );
    assert_eq!(
        named(&queue.metric_totals("q").await.unwrap(), "n").completed,
        1
    );
}

#[tokio::test]
async fn recording_adds_no_round_trip_and_one_hmget_and_hset_per_ack_batch() {
    let server = server();
    let queue = queue(&server, "metrics_cost").await;
    queue.add_batch("q", numbered(11)).await.unwrap();
    let claimed = queue.claim("q", 11, LONG).await.unwrap();
    // The first ack loads the script and opens this 5 s window (the call
    // that opens a window folds the one before it: one HMGET more); the
    // batch after it, in the same window, is the one measured.
    an_early_5s_window(&queue).await;
    ack_with_run(&queue, &claimed[0], 1).await;
    let leases: Vec<_> = claimed[1..].iter().map(|j| j.lease()).collect();
    let done: Vec<_> = leases
        .iter()
        .map(|_| Completion::new().run_time(Duration::from_millis(2)))
        .collect();
    server.reset_stats().await;
    queue.ack_batch_with(&leases, &done).await.unwrap();
    let seen = server.seen_since_reset().await;
    let calls = |name: &str| seen.calls(name);
    assert_eq!(
        seen.script_calls(),
        1,
        "one round trip: {:?}",
        seen.commands
    );
    // The ack's own HMGET of the records, and the metrics hash's HMGET and HSET.
    assert_eq!(calls("hmget"), 2, "{:?}", seen.commands);
    assert_eq!(calls("hset"), 1, "{:?}", seen.commands);
    let totals = queue.metric_totals("q").await.unwrap();
    assert_eq!(totals.total().completed, 11);
    assert_eq!(totals.total().run.sum_ms, 1 + 10 * 2);
}

#[tokio::test]
async fn a_closed_5s_window_is_folded_into_the_minute_and_hour_rollups_exactly() {
    let server = server();
    let queue = queue(&server, "metrics_fold").await;
    let jobs = (0..3).map(|i| NewJob::new(json!(i)).name("n")).collect();
    queue.add_batch("q", jobs).await.unwrap();
    let claimed = queue.claim("q", 3, LONG).await.unwrap();
    let first = an_early_5s_window(&queue).await;
    ack_with_run(&queue, &claimed[0], 3).await;
    let redis_window = async || redis_5s_window(&queue).await;
    // Read while its window is open (added from the 5 s ring by readers),
    // then after the next window's first write folded it.
    let check = async |completed: u64, run_sum_ms: u64| {
        for window in [
            MetricsWindow::LastHour,
            MetricsWindow::LastDay,
            MetricsWindow::Last90Days,
        ] {
            let metrics = queue.metrics("q", window).await.unwrap();
            let n = named(&metrics, "n");
            assert_eq!(
                (n.completed, n.run.sum_ms),
                (completed, run_sum_ms),
                "{window:?}"
            );
            let history = queue.metrics_history("q", window).await.unwrap();
            let charted: u64 = history.points.iter().map(|p| p.figures.completed).sum();
            assert_eq!(charted, completed, "{window:?} window by window");
            assert_eq!(named(&history.metrics, "n").completed, completed);
        }
    };
    check(1, 3).await;
    wait_until(Duration::from_secs(10), "the next 5 s window", async || {
        redis_window().await > first
    })
    .await;
    ack_with_run(&queue, &claimed[1], 100).await;
    check(2, 103).await;
    ack_with_run(&queue, &claimed[2], 5).await;
    check(3, 108).await;
    let recent = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    assert_eq!(named(&recent, "n").completed, 3);
    assert_eq!(
        named(&queue.metric_totals("q").await.unwrap(), "n").completed,
        3
    );
}

/// Sets `field` of the hash `key` to the msgpack map of `pairs` (position
/// from 1, number): a stored metrics value written by hand.
async fn put_value(server: &RedisServer, key: &str, field: &str, pairs: &[(usize, u64)]) {
    let script =
        "local v = {} for i = 2, #ARGV, 2 do v[tonumber(ARGV[i])] = tonumber(ARGV[i + 1]) end \
                  redis.call('HSET', KEYS[1], ARGV[1], cmsgpack.pack(v))";
    let mut args = vec![
        "EVAL".to_owned(),
        script.to_owned(),
        "1".to_owned(),
        key.to_owned(),
        field.to_owned(),
    ];
    for (at, n) in pairs {
        args.push(at.to_string());
        args.push(n.to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    server.cmd(&args).await;
}

/// Position `at` (from 1) of the stored value in `field`, 0 when it or the
/// field is absent.
async fn stored_at(server: &RedisServer, key: &str, field: &str, at: usize) -> u64 {
    let script = "local raw = redis.call('HGET', KEYS[1], ARGV[1]) \
                  if not raw then return 0 end \
                  return cmsgpack.unpack(raw)[tonumber(ARGV[2])] or 0";
    server
        .cmd(&["EVAL", script, "1", key, field, &at.to_string()])
        .await
        .convert()
        .unwrap()
}

async fn marker(server: &RedisServer, key: &str, name: &str) -> Option<u64> {
    let raw: Option<String> = server
        .cmd(&["HGET", key, &format!("w|{name}")])
        .await
        .convert()
        .unwrap();
    raw.map(|w| w.parse().unwrap())
}

const COMPLETED_AT: usize = 2;

#[tokio::test]
async fn totals_add_the_open_5s_window_from_its_slot_until_the_next_window_folds_it_in() {
    let server = server();
    let queue = queue(&server, "metrics_open_totals").await;
    let key = format!("{{{}}}:q:q:metrics", queue.namespace());
    let jobs = (0..2).map(|i| NewJob::new(json!(i)).name("n")).collect();
    queue.add_batch("q", jobs).await.unwrap();
    let claimed = queue.claim("q", 2, LONG).await.unwrap();
    let first = an_early_5s_window(&queue).await;
    ack_with_run(&queue, &claimed[0], 7).await;
    // The completion is in the open window's slot only: the stored totals
    // (closed windows) do not hold it, the totals read do.
    assert_eq!(marker(&server, &key, "n").await, Some(first));
    assert_eq!(stored_at(&server, &key, "t|n", COMPLETED_AT).await, 0);
    let totals = queue.metric_totals("q").await.unwrap();
    let n = named(&totals, "n");
    assert_eq!((n.completed, n.run.sum_ms, n.wait.count()), (1, 7, 2));
    a_5s_window_after(&queue, first).await;
    ack_with_run(&queue, &claimed[1], 30).await;
    // The first window is folded into the stored totals, the second is open.
    assert!(marker(&server, &key, "n").await.unwrap() > first);
    assert_eq!(stored_at(&server, &key, "t|n", COMPLETED_AT).await, 1);
    let totals = queue.metric_totals("q").await.unwrap();
    let n = named(&totals, "n");
    assert_eq!((n.completed, n.run.sum_ms, n.wait.count()), (2, 37, 2));
}

#[tokio::test]
async fn a_namespace_of_the_earlier_layout_reads_right_and_its_next_write_adopts_it() {
    let server = server();
    let queue = queue(&server, "metrics_earlier").await;
    let key = format!("{{{}}}:q:q:metrics", queue.namespace());
    let jobs = ["now", "before"]
        .map(|n| NewJob::new(json!(n)).name(n))
        .to_vec();
    queue.add_batch("q", jobs).await.unwrap();
    let claimed = queue.claim("q", 2, LONG).await.unwrap();
    let w = an_early_5s_window(&queue).await;
    let minute = |w: u64| w * 5_000 / 60_000;
    // The earlier layout, written by hand (no "w|" markers; the totals hold
    // every window, their window position the name's newest 5 s window):
    // "now" last wrote this 5 s window (2 completions in it, 3 before it,
    // folded into the minute rollup), "before" the window before (4
    // completions, not yet folded).
    server.cmd(&["DEL", &key]).await;
    let names = "redis.call('HSET', KEYS[1], 'names', cmsgpack.pack(ARGV), '#', #ARGV)";
    server
        .cmd(&["EVAL", names, "1", &key, "now", "before"])
        .await;
    put_value(&server, &key, "t|now", &[(1, w), (2, 5)]).await;
    put_value(
        &server,
        &key,
        &format!("s{}|now", w % 192),
        &[(1, w), (2, 2)],
    )
    .await;
    let m = minute(w);
    put_value(
        &server,
        &key,
        &format!("m{}|now", m % 1440),
        &[(1, m), (2, 3)],
    )
    .await;
    let h = w * 5_000 / 3_600_000;
    put_value(
        &server,
        &key,
        &format!("h{}|now", h % 2160),
        &[(1, h), (2, 3)],
    )
    .await;
    put_value(&server, &key, "t|before", &[(1, w - 1), (2, 4)]).await;
    put_value(
        &server,
        &key,
        &format!("s{}|before", (w - 1) % 192),
        &[(1, w - 1), (2, 4)],
    )
    .await;
    let check = async |now: u64, now_recent: u64, before: u64| {
        let totals = queue.metric_totals("q").await.unwrap();
        assert_eq!(named(&totals, "now").completed, now, "totals");
        assert_eq!(named(&totals, "before").completed, before, "totals");
        for window in [MetricsWindow::LastHour, MetricsWindow::Last90Days] {
            let read = queue.metrics("q", window).await.unwrap();
            assert_eq!(named(&read, "now").completed, now, "{window:?}");
            assert_eq!(named(&read, "before").completed, before, "{window:?}");
        }
        let recent = queue
            .metrics("q", MetricsWindow::Last5Minutes)
            .await
            .unwrap();
        assert_eq!(named(&recent, "now").completed, now_recent);
        assert_eq!(named(&recent, "before").completed, before);
    };
    check(5, 2, 4).await;
    // Their next write (this window, unless the machine took 2.5 s).
    let leases: Vec<_> = claimed.iter().map(|j| j.lease()).collect();
    queue.ack_batch(&leases).await.unwrap();
    let done = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap()
        .now;
    let done = done
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        / 5_000;
    assert_eq!(
        done, w,
        "the ack ran in the window the old fields were written in"
    );
    check(6, 3, 5).await;
    // Adopted: the markers name this window; "now"'s stored totals no longer
    // hold its open window, "before"'s closed window is folded into the
    // minute rollup (its totals held it already), and no name was admitted
    // twice.
    assert_eq!(marker(&server, &key, "now").await, Some(w));
    assert_eq!(marker(&server, &key, "before").await, Some(w));
    assert_eq!(stored_at(&server, &key, "t|now", COMPLETED_AT).await, 3);
    assert_eq!(stored_at(&server, &key, "t|before", COMPLETED_AT).await, 4);
    assert_eq!(stored_at(&server, &key, "t|now", 1).await, 0);
    let folded = format!("m{}|before", minute(w - 1) % 1440);
    assert_eq!(stored_at(&server, &key, &folded, COMPLETED_AT).await, 4);
    let admitted: i64 = server.cmd(&["HGET", &key, "#"]).await.convert().unwrap();
    assert_eq!(admitted, 2);
}
