//! Cancel and kept results through the `Operator` over the shards of a
//! `ShardedQueue`: a cancel by id and a lookup reach the shard that holds
//! the job, a bulk cancel and a retention policy go to every shard, and
//! counts and listings of kept jobs add up over them.

use std::time::Duration;

use redq::kept::{Outcome, Retention};
use redq::{CancelOutcome, JobResult, JobState, NewJob, RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;
use serde_json::json;

/// Two namespaces on one server as the two shards of a ShardedQueue.
async fn two_shards(server: &redq_tests::RedisServer, test: &str) -> ShardedQueue {
    let builder = RedisQueue::builder(&server.url());
    ShardedQueue::connect(builder, &redq_tests::unique_namespace(test), 2)
        .await
        .unwrap()
}

#[tokio::test]
async fn over_shards_a_cancel_and_a_result_reach_the_shard_holding_the_job() {
    let server = server();
    let sharded = two_shards(&server, "cancel-sharded").await;
    let operator = sharded.operator();
    operator
        .set_retention("q", &Retention::new().max_count(100))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..8 {
        ids.push(
            operator
                .add("q", NewJob::new(json!(n)))
                .await
                .unwrap()
                .id()
                .to_owned(),
        );
    }
    for shard in sharded.shards() {
        assert!(
            shard.counts("q").await.unwrap().waiting > 0,
            "the jobs did not spread"
        );
    }
    for id in &ids[..4] {
        assert!(matches!(
            operator.cancel(id, "ops").await.unwrap(),
            CancelOutcome::Cancelled {
                from: JobState::Waiting,
                ..
            }
        ));
        assert_eq!(
            operator.result(id).await.unwrap().outcome(),
            Some(Outcome::Cancelled)
        );
    }
    assert_eq!(
        operator.cancel("01NOSUCHJOB", "").await.unwrap(),
        CancelOutcome::NotFound
    );
    let kept = operator
        .list_kept("q", Outcome::Cancelled, 0, 10)
        .await
        .unwrap();
    assert_eq!(kept.total, 4);
    let state = operator.retention("q").await.unwrap();
    assert_eq!((state.cancelled, state.policy.is_some()), (4, true));

    // The rest in bulk, over both shards, with progress over both.
    let mut reports = Vec::new();
    let done = operator
        .cancel_all("q", JobState::Waiting, "bulk", |done, left| {
            reports.push((done, left))
        })
        .await
        .unwrap();
    assert_eq!(done, 4);
    assert_eq!(reports.last(), Some(&(4, 0)));
    let counts = operator.counts("q").await.unwrap();
    assert_eq!((counts.waiting, counts.cancelled), (0, 8));
    assert!(matches!(
        operator
            .wait_for(&ids[7], Duration::from_secs(1))
            .await
            .unwrap(),
        JobResult::Kept(_)
    ));
}

/// A delete by id through the `Operator` finds the shard that holds the
/// job, or what was kept of it, and says which it was: a kept cancelled
/// job on either shard reads `Cancelled`, a live one `None`, and a second
/// delete of the same id finds nothing on any shard.
#[tokio::test]
async fn over_shards_a_delete_by_id_says_what_it_deleted() {
    let server = server();
    let sharded = two_shards(&server, "delete-reported-sharded").await;
    let operator = sharded.operator();
    operator
        .set_retention("q", &Retention::new().max_count(100))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..8 {
        let id = operator.add("q", NewJob::new(json!(n))).await.unwrap();
        ids.push(id.id().to_owned());
    }
    let (kept, live) = ids.split_at(4);
    for id in kept {
        operator.cancel(id, "ops").await.unwrap();
    }
    for shard in sharded.shards() {
        assert!(
            shard.counts("q").await.unwrap().cancelled > 0,
            "the kept jobs did not spread over both shards"
        );
    }
    for id in kept {
        assert_eq!(
            operator
                .delete_job_reported(id, redq::IfLeased::Refuse)
                .await
                .unwrap(),
            Some(JobState::Cancelled),
            "{id}"
        );
        assert!(matches!(
            operator
                .delete_job_reported(id, redq::IfLeased::Refuse)
                .await,
            Err(redq::QueueError::JobNotFound { .. })
        ));
    }
    for id in live {
        assert_eq!(
            operator
                .delete_job_reported(id, redq::IfLeased::Refuse)
                .await
                .unwrap(),
            None,
            "{id}"
        );
    }
    assert_eq!(operator.counts("q").await.unwrap().cancelled, 0);
    assert_eq!(operator.counts("q").await.unwrap().waiting, 0);
}
