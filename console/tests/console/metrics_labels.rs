//! `redq metrics --max-queues`: which queues get a label of their own is
//! kept for the exporter's life, so a new queue never moves a named one
//! into `queue="_other"`, whose counters would then rise with no event
//! behind them (an `increase(...) > 0` alert firing on nothing).

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::metrics::Exporter;
use crate::seed::{connect, dead_letters};

const DEAD: &str = "redq_jobs_dead_lettered_total";

#[tokio::test]
async fn a_new_queue_does_not_push_a_named_one_into_other() {
    let server = RedisServer::start();
    let ns = unique_namespace("metrics-labels");
    let q = connect(&server.url(), &ns).await;
    q.add("q1", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    dead_letters(&q, "q2", 1, "boom").await;
    q.add("q3", NewJob::new(serde_json::json!(3)))
        .await
        .unwrap();
    let exporter = Exporter::start(&server.url(), &ns, &["--max-queues", "2"]).await;
    let before = exporter.scrape().await;
    assert_eq!(before.value(DEAD, &[("queue", "q2")]), 1.0);
    assert_eq!(before.value(DEAD, &[("queue", "_other")]), 0.0);

    // A queue that sorts first: on "the first 2 by name" it would take q2's
    // label and put q2's dead letter under _other.
    q.add("a0", NewJob::new(serde_json::json!(0)))
        .await
        .unwrap();
    let after = exporter.scrape().await;
    assert_eq!(
        after.value(DEAD, &[("queue", "q2")]),
        1.0,
        "q2 keeps its label"
    );
    assert_eq!(
        after.value(DEAD, &[("queue", "_other")]),
        0.0,
        "no dead letter happened"
    );
    assert_eq!(
        after.value("redq_jobs", &[("queue", "_other"), ("state", "waiting")]),
        2.0
    );
    assert_eq!(after.value("redq_queues", &[]), 4.0);
    q.close().await;
}
