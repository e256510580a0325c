//! Rate limits on real Redis: a queue-wide rate and one key's rate hold in
//! every window of their interval over more than ten seconds of starts,
//! counted exactly from the server's record of every lease (the stated
//! tolerance is none: the window is a log of starts on the Redis clock).

use std::time::Duration;

use redq::flow::{Limit, LimitScope};

use super::flow_support::{Bench, Tenant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_rate_and_a_keys_rate_hold_in_every_window_over_ten_seconds() {
    let bench = Bench::new("flow-rate").await;
    let per = Duration::from_secs(1);
    bench.limit(LimitScope::Queue, Limit::rate(30, per)).await;
    bench
        .limit(LimitScope::Key("metered".into()), Limit::rate(10, per))
        .await;
    // 120 jobs of the metered key (12 s at its rate) among 330 in all (11 s
    // at the queue's).
    for n in 0..330u64 {
        let key = match n % 11 {
            0..=3 => Some("metered".to_owned()),
            4..=7 => Some(format!("free{}", n % 3)),
            _ => None,
        };
        bench
            .queue
            .push(&Tenant { key, ms: 1 })
            .await
            .expect("push");
    }
    let workers: Vec<_> = (0..3).map(|_| bench.worker(8)).collect();
    bench.await_drained(Duration::from_secs(90)).await;
    for w in workers {
        w.shutdown().await;
    }
    let report = bench.check().await;
    report.assert_ok();
    assert_eq!(report.get("server_grants"), 330, "{report}");
    // Each rate was reached in some window (so it bound), never exceeded
    // (the checker), over more than ten seconds of starts.
    assert_eq!(
        report.get("limit_max_starts_in_window_queue"),
        30,
        "{report}"
    );
    assert_eq!(report.get("limit_max_starts_in_window_key"), 10, "{report}");
    assert!(
        report.get("limit_rated_starts_span_ms") >= 10_000,
        "the starts spanned under 10 s: {report}"
    );
}
