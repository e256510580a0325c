//! `redq metrics` when Redis stalls in the middle of a scrape: the scrape's
//! reads share one deadline, so the page says `redq_up 0` and why in about
//! 4 s, not after one 5 s command timeout per read still to go.

use std::time::Duration;

use redq::NewJob;
use redq_tests::{unique_namespace, wait_until, RedisServer};

use crate::metrics::{fetch_page, Exporter};
use crate::seed::connect;

/// Enough queues that a scrape still reads when the pause comes.
const QUEUES: usize = 1500;

#[tokio::test]
async fn redis_pausing_mid_scrape_answers_up_0_within_the_scrape_deadline() {
    let server = RedisServer::start();
    let ns = unique_namespace("metrics-deadline");
    let q = connect(&server.url(), &ns).await;
    for i in 0..QUEUES {
        q.add(&format!("q{i:04}"), NewJob::new(serde_json::json!(i)))
            .await
            .unwrap();
    }
    q.close().await;
    let exporter = Exporter::start(&server.url(), &ns, &[]).await;
    let (page, healthy) = fetch_page(exporter.addr()).await;
    assert!(page.contains("\nredq_up 1\n"), "{page}");
    assert!(
        healthy > Duration::from_millis(300),
        "a scrape of {QUEUES} queues took {healthy:?}: too quick to pause in the middle"
    );

    let addr = exporter.addr().to_owned();
    let scraping = tokio::spawn(async move { fetch_page(&addr).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    server.cmd(&["CLIENT", "PAUSE", "8000", "ALL"]).await;
    let (page, took) = scraping.await.unwrap();
    assert!(page.contains("\nredq_up 0\n"), "{page}");
    assert!(
        page.contains("Redis did not answer within 3s"),
        "the reason names the deadline:\n{page}"
    );
    assert!(
        took < Duration::from_millis(4800),
        "a scrape stalled mid-way took {took:?}:\n{page}"
    );
    server.cmd(&["CLIENT", "UNPAUSE"]).await;
    wait_until(
        Duration::from_secs(30),
        "a scrape to read Redis again",
        async || {
            fetch_page(exporter.addr())
                .await
                .0
                .contains("\nredq_up 1\n")
        },
    )
    .await;
}
