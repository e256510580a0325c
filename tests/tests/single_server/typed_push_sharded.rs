//! Typed pushes with options and in bulk over a `ShardedQueue`: each job
//! lands on the shard its keys route to, with its type's settings, and
//! duplicates are reported as on one namespace.

use std::time::Duration;

use redq::worker::{JobCx, JobError, Pushed, TypedJob};
use redq::{JobState, RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct Refund {
    order: u64,
}

impl TypedJob for Refund {
    const NAME: &'static str = "billing::refund";
    const QUEUE: &'static str = "refunds";
    const MAX_ATTEMPTS: u32 = 3;

    fn dedup_key(&self) -> Option<String> {
        Some(format!("refund:{}", self.order))
    }

    async fn run(&self, _: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

/// Two namespaces on one server as the two shards of a ShardedQueue.
async fn two_shards(server: &redq_tests::RedisServer, test: &str) -> ShardedQueue {
    let builder = RedisQueue::builder(&server.url());
    ShardedQueue::connect(builder, &redq_tests::unique_namespace(test), 2)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_sharded_bulk_push_routes_each_job_by_its_key_and_reports_duplicates() {
    let server = server();
    let sharded = two_shards(&server, "typed-push-sharded").await;
    let refunds: Vec<Refund> = [1, 2, 3, 4, 5, 6, 2]
        .into_iter()
        .map(|order| Refund { order })
        .collect();
    let pushed = sharded.push_batch(&refunds).await.unwrap();

    assert_eq!(pushed.len(), refunds.len());
    assert_eq!(
        pushed[6],
        Pushed::Duplicate {
            id: pushed[1].id().to_owned()
        }
    );
    for (refund, outcome) in refunds.iter().zip(&pushed).take(6) {
        assert!(matches!(outcome, Pushed::Queued { .. }), "{outcome:?}");
        let shard = &sharded.shards()[sharded.shard_of_key(&format!("refund:{}", refund.order))];
        let record = shard
            .inspect(outcome.id())
            .await
            .unwrap()
            .expect("on its key's shard");
        assert_eq!(record.name.as_deref(), Some(Refund::NAME));
        assert_eq!(record.max_attempts, Refund::MAX_ATTEMPTS);
    }
    let waiting: u64 = waiting_over_shards(&sharded).await;
    assert_eq!(waiting, 6);
}

#[tokio::test]
async fn a_sharded_push_with_options_routes_by_the_ordering_key_it_sets() {
    let server = server();
    let sharded = two_shards(&server, "typed-push-with-sharded").await;
    // An ordering key that routes elsewhere than the type's dedup key, so
    // the job's shard says which of the two routed it.
    let dedup_shard = sharded.shard_of_key("refund:9");
    let key = (0..)
        .map(|n| format!("customer-{n}"))
        .find(|key| sharded.shard_of_key(key) != dedup_shard)
        .unwrap();
    let pushed = sharded
        .push_with(&Refund { order: 9 }, |job| {
            job.ordering_key(key.clone())
                .delay(Duration::from_secs(600))
        })
        .await
        .unwrap();
    let shard = &sharded.shards()[sharded.shard_of_key(&key)];
    let record = shard
        .inspect(pushed.id())
        .await
        .unwrap()
        .expect("on the ordering key's shard");
    assert_eq!(record.state, JobState::Scheduled);
    assert_eq!(record.name.as_deref(), Some(Refund::NAME));
    assert_eq!(record.dedup_key.as_deref(), Some("refund:9"));
}

/// The waiting jobs of `refunds` over every shard.
async fn waiting_over_shards(sharded: &ShardedQueue) -> u64 {
    let mut total = 0;
    for shard in sharded.shards() {
        total += shard.counts(Refund::QUEUE).await.unwrap().waiting;
    }
    total
}
