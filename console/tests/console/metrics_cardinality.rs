//! How many series a queue costs on the exporter's page, and
//! `--no-histograms`, which leaves the wait and run histograms out.

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::metrics::{fetch_page, Exporter};
use crate::seed::connect;

/// The samples labelled `queue="q"`.
fn series_of_q(page: &str) -> usize {
    page.lines()
        .filter(|l| !l.starts_with('#') && l.contains("queue=\"q\""))
        .count()
}

#[tokio::test]
async fn a_queue_costs_77_series_and_25_without_histograms() {
    let server = RedisServer::start();
    let ns = unique_namespace("metrics-cardinality");
    let q = connect(&server.url(), &ns).await;
    q.add("q", NewJob::new(serde_json::json!(1))).await.unwrap();
    q.close().await;

    let full = Exporter::start(&server.url(), &ns, &[]).await;
    let with = fetch_page(full.addr()).await.0;
    assert_eq!(series_of_q(&with), 77, "{with}");
    assert!(with.contains("redq_job_wait_seconds_bucket{"), "{with}");

    let lean = Exporter::start(&server.url(), &ns, &["--no-histograms"]).await;
    let without = fetch_page(lean.addr()).await.0;
    assert!(without.contains("\nredq_up 1\n"), "{without}");
    assert_eq!(series_of_q(&without), 25, "{without}");
    assert!(
        !without.contains("# TYPE redq_job_wait_seconds"),
        "{without}"
    );
    assert!(
        !without.contains("# TYPE redq_job_run_seconds"),
        "{without}"
    );
    assert!(
        without.contains("redq_jobs_completed_total{queue=\"q\"} 0"),
        "the counters stay: {without}"
    );
}
