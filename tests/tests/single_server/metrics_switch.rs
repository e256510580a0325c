//! A queue's metrics turned off and back on (`lua/metrics_switch.lua`):
//! while off, no claim, ack, nack, dead letter, reclaim or cancel adds to
//! them, in a call of one job name or of several; readers say since when;
//! each change is one operator event, naming who made it.

use std::time::{Duration, SystemTime};

use redq::metrics::{MetricsWindow, Recording};
use redq::{Completion, NewJob, RedisQueue};
use redq_tests::events::{acting, events_after, newest_event_id};
use redq_tests::fixtures::*;
use redq_tests::{unique_namespace, wait_until};
use serde_json::json;

const ACTOR: &str = "ops@bastion";

/// Every outcome the scripts record: two names claimed and acked in one
/// call each, a retry (due in an hour), a dead letter, a lapsed lease
/// reclaimed (its one attempt spent: dead too), and a cancel. Nothing of it
/// is left due, so the next round claims only its own jobs.
async fn one_of_everything(queue: &RedisQueue) {
    let batch = ["a", "b", "retry", "die", "lapse", "cancel"].map(|name| {
        let attempts = if name == "lapse" { 1 } else { 3 };
        NewJob::new(json!(name)).name(name).max_attempts(attempts)
    });
    let ids = queue.add_batch("q", batch.to_vec()).await.unwrap();
    let both = queue.claim("q", 2, LONG).await.unwrap();
    let leases: Vec<_> = both.iter().map(|j| j.lease()).collect();
    let runs = vec![Completion::new().run_time(Duration::from_millis(7)); 2];
    let acked = queue.ack_batch_with(&leases, &runs).await.unwrap();
    assert!(acked.iter().all(Result::is_ok), "{acked:?}");
    let failing = queue.claim("q", 2, LONG).await.unwrap();
    queue
        .nack(&failing[0].lease(), Duration::from_secs(3600), "once")
        .await
        .unwrap();
    queue.dead_letter(&failing[1].lease(), "bad").await.unwrap();
    let lapsing = queue.claim("q", 1, SHORT).await.unwrap();
    assert_eq!(lapsing[0].name.as_deref(), Some("lapse"));
    wait_until(DEADLINE, "the short lease to be reclaimed", async || {
        queue.reclaim("q", 10).await.unwrap().dead_lettered == 1
    })
    .await;
    queue.cancel(ids[5].id(), "test").await.unwrap();
}

/// Turn `name`'s metrics on: whether that changed anything.
async fn turned_on(queue: &RedisQueue, name: &str) -> bool {
    queue
        .set_metrics_recording(name, true)
        .await
        .unwrap()
        .changed
}

#[tokio::test]
async fn while_off_nothing_is_recorded_and_readers_say_since_when() {
    let server = server();
    let queue = acting(&server, &unique_namespace("metrics_switch"), ACTOR).await;
    one_of_everything(&queue).await;
    let before = queue.metric_totals("q").await.unwrap();
    assert_eq!(before.recording, Recording::On);
    let recorded = before.total();
    assert_eq!(
        [
            recorded.completed,
            recorded.retried,
            recorded.dead_lettered,
            recorded.reclaimed,
            recorded.cancelled,
            recorded.wait.count()
        ],
        [2, 1, 2, 1, 1, 5],
        "on: every outcome recorded"
    );
    let events_from = newest_event_id(&queue).await;

    let asked = SystemTime::now();
    let first = queue.set_metrics_recording("q", false).await.unwrap();
    assert!(first.changed);
    let again = queue.set_metrics_recording("q", false).await.unwrap();
    assert!(!again.changed, "already off");
    let Recording::Off { since } = queue.metrics_recording("q").await.unwrap() else {
        panic!("the metrics are still on");
    };
    // Both calls answer with the switch as stored: off since the first.
    assert_eq!(
        (first.recording, again.recording),
        (Recording::Off { since }, Recording::Off { since })
    );
    // Redis's clock and this one agree to within a second on one machine.
    let skew = since.duration_since(asked).unwrap_or_else(|e| e.duration());
    assert!(
        skew < Duration::from_secs(1),
        "off since {since:?}, asked at {asked:?}"
    );

    one_of_everything(&queue).await;
    let after = queue.metric_totals("q").await.unwrap();
    assert_eq!(after.total(), recorded, "off: nothing more recorded");
    assert_eq!(after.recording, Recording::Off { since });
    let window = queue
        .metrics("q", MetricsWindow::Last5Minutes)
        .await
        .unwrap();
    assert_eq!(window.total(), recorded);
    assert_eq!(window.recording, Recording::Off { since });

    assert!(turned_on(&queue, "q").await);
    assert!(!turned_on(&queue, "q").await, "already on");
    assert_eq!(queue.metrics_recording("q").await.unwrap(), Recording::On);
    one_of_everything(&queue).await;
    let again = queue.metric_totals("q").await.unwrap().total();
    assert_eq!(
        again.completed,
        2 * recorded.completed,
        "on again: recorded"
    );
    assert_eq!(again.wait.count(), 2 * recorded.wait.count());

    let switches: Vec<_> = events_after(&queue, &events_from)
        .await
        .into_iter()
        .filter(|e| e.kind.starts_with("metrics_"))
        .map(|e| (e.kind, e.queue, e.by))
        .collect();
    let by = Some(ACTOR.to_owned());
    assert_eq!(
        switches,
        [
            ("metrics_off".to_owned(), "q".to_owned(), by.clone()),
            ("metrics_on".to_owned(), "q".to_owned(), by),
        ],
        "one event a change, none for a switch already so"
    );
}

#[tokio::test]
async fn the_switch_is_per_queue_and_refuses_a_bad_queue_name() {
    let server = server();
    let queue = queue(&server, "metrics_switch_per_queue").await;
    assert!(
        queue
            .set_metrics_recording("quiet", false)
            .await
            .unwrap()
            .changed
    );
    for name in ["quiet", "busy"] {
        queue.add(name, NewJob::new(json!(1))).await.unwrap();
        let job = claim_n(&queue, name, 1).await.remove(0);
        queue.ack(&job.lease()).await.unwrap();
    }
    let quiet = queue.metric_totals("quiet").await.unwrap().total();
    assert_eq!((quiet.completed, quiet.wait.count()), (0, 0));
    let busy = queue.metric_totals("busy").await.unwrap().total();
    assert_eq!((busy.completed, busy.wait.count()), (1, 1));
    assert_eq!(
        queue.metrics_recording("busy").await.unwrap(),
        Recording::On
    );
    assert_invalid(queue.set_metrics_recording("", false).await, "queue name");
    assert_invalid(queue.metrics_recording("a\nb").await, "queue name");
}

/// The scripts stop at the `off` field whatever it holds; a value redq never
/// writes (another tool's) reads as off, and turning the metrics on clears it.
#[tokio::test]
async fn any_value_of_the_switch_is_off_and_on_clears_it() {
    let server = server();
    let queue = queue(&server, "metrics_switch_foreign").await;
    let key = format!("{{{}}}:q:q:metrics", queue.namespace());
    server.cmd(&["HSET", &key, "off", "yes"]).await;
    assert_eq!(
        queue.metrics_recording("q").await.unwrap(),
        Recording::Off {
            since: SystemTime::UNIX_EPOCH
        }
    );
    queue.add("q", NewJob::new(json!(1))).await.unwrap();
    let job = claim_n(&queue, "q", 1).await.remove(0);
    queue.ack(&job.lease()).await.unwrap();
    assert_eq!(queue.metric_totals("q").await.unwrap().total().completed, 0);
    assert!(turned_on(&queue, "q").await);
    assert_eq!(queue.metrics_recording("q").await.unwrap(), Recording::On);
}
