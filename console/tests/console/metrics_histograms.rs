//! `redq metrics` serves the wait and run histograms and the outcome
//! counters the scripts record: a known workload (run times sent with the
//! acks, a wait made by claiming 600 ms after the enqueue, a retry, a dead
//! letter, a cancel) is scraped and every figure checked against it and
//! against the driver's `metric_totals`.

use std::time::Duration;

use redq::{Completion, NewJob};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

use crate::metrics::Exporter;
use crate::seed::connect;

const LONG: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_scrape_serves_the_recorded_histograms_and_counters() {
    let server = RedisServer::builder().start();
    let url = server.url();
    let ns = unique_namespace("metrics_histograms");
    let q = connect(&url, &ns).await;
    let resize = (0..3)
        .map(|i| NewJob::new(json!(i)).name("resize"))
        .collect();
    q.add_batch("images", resize).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let claimed = q.claim("images", 3, LONG).await.unwrap();
    let runs_ms = [3, 100, 5_000];
    let leases: Vec<_> = claimed.iter().map(|j| j.lease()).collect();
    let done: Vec<_> = runs_ms
        .iter()
        .map(|ms| Completion::new().run_time(Duration::from_millis(*ms)))
        .collect();
    q.ack_batch_with(&leases, &done).await.unwrap();
    q.add_batch(
        "images",
        vec![NewJob::new(json!("retry")), NewJob::new(json!("die"))],
    )
    .await
    .unwrap();
    let failing = q.claim("images", 2, LONG).await.unwrap();
    q.nack(&failing[0].lease(), Duration::from_secs(3600), "once")
        .await
        .unwrap();
    q.dead_letter(&failing[1].lease(), "bad").await.unwrap();
    let cancelled = q.add("images", NewJob::new(json!("cancel"))).await.unwrap();
    q.cancel(cancelled.id(), "test").await.unwrap();

    let exporter = Exporter::start(&url, &ns, &[]).await;
    let page = exporter.scrape().await;
    let queue = ("queue", "images");
    for (family, expected) in [
        ("redq_jobs_completed_total", 3.0),
        ("redq_jobs_retried_total", 1.0),
        ("redq_jobs_dead_lettered_total", 1.0),
        ("redq_jobs_cancelled_total", 1.0),
        ("redq_jobs_reclaimed_total", 0.0),
    ] {
        assert_eq!(page.value(family, &[queue]), expected, "{family}");
    }
    let bucket =
        |family: &str, le: &str| page.value(family, &[("__suffix", "_bucket"), queue, ("le", le)]);
    let run = "redq_job_run_seconds";
    // 3 ms is in the bucket up to 4 ms, 100 ms up to 128 ms, 5 s up to 8.192 s.
    assert_eq!(bucket(run, "0.002"), 0.0);
    assert_eq!(bucket(run, "0.004"), 1.0);
    assert_eq!(bucket(run, "0.064"), 1.0);
    assert_eq!(bucket(run, "0.128"), 2.0);
    assert_eq!(bucket(run, "4.096"), 2.0);
    assert_eq!(bucket(run, "8.192"), 3.0);
    assert_eq!(bucket(run, "+Inf"), 3.0);
    assert_eq!(page.value(run, &[("__suffix", "_sum"), queue]), 5.103);
    assert_eq!(page.value(run, &[("__suffix", "_count"), queue]), 3.0);
    // Five claims: three 600 ms (and less than 1024 ms) after they were due,
    // two at once.
    let wait = "redq_job_wait_seconds";
    assert_eq!(bucket(wait, "0.256"), 2.0);
    assert_eq!(bucket(wait, "0.512"), 2.0);
    assert_eq!(bucket(wait, "1.024"), 5.0);
    assert_eq!(bucket(wait, "+Inf"), 5.0);
    assert_eq!(page.value(wait, &[("__suffix", "_count"), queue]), 5.0);
    let totals = q.operator().metric_totals("images").await.unwrap().total();
    assert_eq!(
        page.value(wait, &[("__suffix", "_sum"), queue]),
        totals.wait.sum_ms as f64 / 1000.0
    );
    assert!(totals.wait.sum_ms >= 3 * 600, "{:?}", totals.wait);
}
