//! Lost hand-offs counted for an operator: a job given back by
//! `release.lua`'s `handoff_lost` form (what a worker does with a hand-off
//! whose message never reached it) is counted once per queue, while the
//! queue's metrics are off too, and shows in the driver's metrics, in
//! `redq metrics show`, in the Metrics view and on the Prometheus page. A
//! lost claim's job given back (the `claim_lost` form) has a count of its
//! own, shown in the same places.

use std::time::Duration;

use fred::types::Value;
use redq::metrics::MetricsWindow;
use redq::{NewJob, Operator};
use redq_tests::lua::{compose, evalsha, load, source};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

use crate::metrics::Exporter;
use crate::metrics_show::drawn;
use crate::seed::{assert_exit, connect, json as stdout_json, redq};

const LONG: Duration = Duration::from_secs(60);

/// The Metrics view of `queue` over the last 5 minutes, as drawn at 140×42.
async fn view(operator: &Operator, queue: &str) -> String {
    let window = MetricsWindow::Last5Minutes;
    let history = operator.metrics_history(queue, window).await.unwrap();
    drawn(&history, window, 140, 42)
}

#[tokio::test]
async fn a_lost_hand_off_is_counted_and_shown_wherever_the_queues_figures_are() {
    let server = RedisServer::builder().start();
    let (url, ns) = (server.url(), unique_namespace("handoffs_lost"));
    let q = connect(&url, &ns).await;
    for i in 0..2 {
        q.add("images", NewJob::new(json!(i)).name("resize"))
            .await
            .unwrap();
    }
    q.add("audio", NewJob::new(json!(0))).await.unwrap();
    let leased = q.claim("images", 2, LONG).await.unwrap();
    // Counted while the metrics are off too: an alarm, not a figure.
    q.set_metrics_recording("images", false).await.unwrap();
    let operator = Operator::from(q.clone());
    let show = || {
        redq(
            &url,
            &ns,
            &["metrics", "show", "images", "--window", "5m", "-o", "json"],
        )
    };

    // None lost yet: nothing said.
    let before = show();
    assert_exit(&before, 0);
    assert_eq!(stdout_json(&before)["handoffs_lost"], 0);
    assert!(!view(&operator, "images").await.contains("lost since"));

    let admin = server.client().await;
    let release = load(&admin, &compose(source("release"))).await;
    let give_back_as = async |index: usize, why: &str| {
        let job = &leased[index];
        let args: Vec<Value> = vec![
            job.id.clone().into(),
            job.lease_id.to_string().into(),
            why.into(),
        ];
        evalsha(&admin, &release, &ns, "images", &args)
            .await
            .unwrap()
            .as_i64()
    };
    let give_back = async |index: usize| give_back_as(index, "handoff_lost").await;
    assert_eq!(give_back(0).await, Some(1), "released");
    assert_eq!(give_back(0).await, Some(2), "a resend counts nothing more");

    let totals = q.metric_totals("images").await.unwrap();
    assert_eq!(totals.handoffs_lost, 1);
    assert!(!totals.recording.is_on());
    let window = q.metrics("images", MetricsWindow::LastHour).await.unwrap();
    assert_eq!(window.handoffs_lost, 1, "since the queue began, any window");
    let other = q.metric_totals("audio").await.unwrap();
    assert_eq!(other.handoffs_lost, 0, "another queue's count is its own");

    let after = show();
    assert_exit(&after, 0);
    assert_eq!(stdout_json(&after)["handoffs_lost"], 1);
    let table = redq(&url, &ns, &["metrics", "show", "images", "--window", "5m"]);
    assert_exit(&table, 0);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(
        text.contains("1 job handed to parked workers since the queue began was given back"),
        "{text}"
    );
    assert!(text.contains("redq events --kind handoff_lost"), "{text}");
    let drawn = view(&operator, "images").await;
    assert!(
        drawn.contains("1 hand-off lost since the queue began (see Events)"),
        "{drawn}"
    );

    let exporter = Exporter::start(&url, &ns, &[]).await;
    let page = exporter.scrape().await;
    let lost = "redq_handoffs_lost_total";
    assert_eq!(page.value(lost, &[("queue", "images")]), 1.0);
    assert_eq!(page.value(lost, &[("queue", "audio")]), 0.0);
    assert_eq!(
        page.value("redq_claims_lost_total", &[("queue", "images")]),
        0.0
    );

    // A lost claim's job, counted apart.
    assert_eq!(give_back_as(1, "claim_lost").await, Some(1), "released");
    let totals = q.metric_totals("images").await.unwrap();
    assert_eq!((totals.handoffs_lost, totals.claims_lost), (1, 1));
    let after = show();
    assert_exit(&after, 0);
    assert_eq!(stdout_json(&after)["claims_lost"], 1);
    let table = redq(&url, &ns, &["metrics", "show", "images", "--window", "5m"]);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(
        text.contains("1 job leased by workers' claims since the queue began was given back"),
        "{text}"
    );
    assert!(text.contains("redq events --kind claim_lost"), "{text}");
    let drawn = view(&operator, "images").await;
    assert!(
        drawn.contains("1 claim's job lost since the queue began (see Events)"),
        "{drawn}"
    );
    let page = exporter.scrape().await;
    assert_eq!(
        page.value("redq_claims_lost_total", &[("queue", "images")]),
        1.0
    );
    assert_eq!(page.value(lost, &[("queue", "images")]), 1.0);
}
