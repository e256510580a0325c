//! `redq metrics` when the Redis it was reading goes away, against a real
//! private redis-server: a scrape then answers within a bounded time (well
//! under the driver's 5 s command timeout, which it used to wait out while
//! the client queued its reads), with `redq_up 0` and the reason the way
//! the console finds it (a refused connection, not "did not answer"); a
//! Redis that is alive but silent (`CLIENT PAUSE`) still reads as not
//! answering; and once Redis is back a scrape reads it again.

use std::time::{Duration, Instant};

use redq::NewJob;
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::metrics::Exporter;
use crate::seed::connect;

/// How long Redis may take to be read again once it is back.
const RECOVERY: Duration = Duration::from_secs(30);
/// A scrape of a Redis that is down or silent answers within this: well
/// under the driver's 5 s command timeout (and Prometheus's default 10 s
/// scrape timeout). A bound on behaviour, not a performance figure.
const ANSWERED_WITHIN: Duration = Duration::from_secs(3);
/// Longer than the driver's command timeout, so a scrape that waited it
/// out would still fail rather than read Redis once the pause is over.
const PAUSE_MS: &str = "8000";

/// What one scrape showed: its page, and how long it took to answer.
struct Scraped {
    page: String,
    took: Duration,
}

impl Scraped {
    /// The value of the unlabelled sample `name`.
    fn value(&self, name: &str) -> f64 {
        self.page
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no sample {name} in:\n{}", self.page))
    }

    /// The comment that says why Redis could not be read.
    fn reason(&self) -> &str {
        self.page
            .lines()
            .find_map(|l| l.strip_prefix("# redq could not read Redis"))
            .unwrap_or_else(|| panic!("no reason in:\n{}", self.page))
    }
}

/// `GET /metrics`, timed from the request to the last byte of the page.
async fn scrape(addr: &str) -> Scraped {
    let started = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    // Bounded, so a scrape that hangs fails the test instead of stalling it.
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_string(&mut raw))
        .await
        .expect("a scrape answered within 30 s")
        .unwrap();
    let took = started.elapsed();
    let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200 "), "{raw}");
    Scraped {
        page: body.to_owned(),
        took,
    }
}

async fn live_exporter(server: &RedisServer, test: &str) -> (Exporter, String) {
    let url = server.url_with_password();
    let ns = unique_namespace(test);
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    q.close().await;
    let exporter = Exporter::start(&url, &ns, &[]).await;
    let addr = exporter.addr().to_owned();
    let first = scrape(&addr).await;
    assert_eq!(first.value("redq_up"), 1.0, "{}", first.page);
    (exporter, addr)
}

#[tokio::test]
async fn a_dead_redis_is_scraped_at_once_as_refused_and_read_again_once_back() {
    let mut server = RedisServer::builder().password("exporter-s3cret").start();
    let (_exporter, addr) = live_exporter(&server, "exporter_dead").await;

    server.kill9();
    // Twice: the first scrape after the kill, and one while the exporter's
    // client is well into reconnecting.
    for errors in [1.0, 2.0] {
        let scraped = scrape(&addr).await;
        assert!(
            scraped.took < ANSWERED_WITHIN,
            "a scrape of a dead Redis took {:?}:\n{}",
            scraped.took,
            scraped.page
        );
        assert_eq!(scraped.value("redq_up"), 0.0, "{}", scraped.page);
        assert_eq!(scraped.value("redq_scrape_errors_total"), errors);
        let reason = scraped.reason();
        assert!(
            reason.ends_with(
                ": Redis refused the connection: nothing is listening at that \
                 address (is redis-server running?)"
            ),
            "{reason}"
        );
        assert!(
            !scraped.page.contains("exporter-s3cret"),
            "{}",
            scraped.page
        );
    }

    server.restart();
    wait_until(RECOVERY, "the exporter to read Redis again", async || {
        scrape(&addr).await.value("redq_up") == 1.0
    })
    .await;
    let scraped = scrape(&addr).await;
    assert!(
        !scraped.page.contains("# redq could not read Redis"),
        "the reason outlived the outage:\n{}",
        scraped.page
    );
    // A counter: the outage's failed scrapes stay counted (a scrape while
    // the client was still reconnecting may have added one).
    assert!(
        scraped.value("redq_scrape_errors_total") >= 2.0,
        "{}",
        scraped.page
    );
}

#[tokio::test]
async fn a_paused_redis_is_scraped_as_not_answering_and_read_again_after() {
    let server = RedisServer::builder().password("exporter-s3cret").start();
    let (_exporter, addr) = live_exporter(&server, "exporter_paused").await;

    server.cmd(&["CLIENT", "PAUSE", PAUSE_MS, "ALL"]).await;
    let scraped = scrape(&addr).await;
    assert!(
        scraped.took < ANSWERED_WITHIN,
        "a scrape of a paused Redis took {:?}:\n{}",
        scraped.took,
        scraped.page
    );
    assert_eq!(scraped.value("redq_up"), 0.0, "{}", scraped.page);
    let reason = scraped.reason();
    assert!(
        reason.contains(": Redis did not answer within "),
        "alive but silent is not refused: {reason}"
    );

    wait_until(
        RECOVERY,
        "the exporter to read Redis after the pause",
        async || scrape(&addr).await.value("redq_up") == 1.0,
    )
    .await;
}
