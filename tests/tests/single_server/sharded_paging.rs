//! Paging a listing over shards neither repeats nor skips a job, also when
//! many jobs share a millisecond: each shard lists them in its own order
//! (its sequence), which their ids, random past the millisecond, do not
//! show, and the merge keeps that order rather than sort the union anew.

use std::collections::BTreeSet;
use std::time::Duration;

use redq::kept::Outcome;
use redq::{JobState, NewJob, Operator, RedisQueue, Retention, ShardedQueue};
use redq_tests::fixtures::*;
use serde_json::json;

const JOBS: usize = 300;
const PAGE: usize = 7;

/// Every page of `queue`'s jobs in `state`, `PAGE` at a time.
async fn paged(operator: &Operator, state: JobState) -> Vec<String> {
    let mut ids = Vec::new();
    loop {
        let page = operator
            .list_jobs("q", state, ids.len() as u64, PAGE)
            .await
            .unwrap();
        assert_eq!(page.total, JOBS as u64, "{state:?}");
        let n = page.items.len();
        ids.extend(page.items.into_iter().map(|j| j.id));
        if n < PAGE {
            return ids;
        }
    }
}

fn assert_each_once(listed: &[String], added: &BTreeSet<String>, what: &str) {
    let distinct: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(
        distinct.len(),
        listed.len(),
        "{what}: a job listed on two pages"
    );
    assert_eq!(&distinct, added, "{what}: the pages are not the jobs added");
}

#[tokio::test]
async fn pages_over_shards_list_each_job_once() {
    let server = server();
    let namespace = redq_tests::unique_namespace("sharded-paging");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &namespace, 3)
        .await
        .unwrap();
    let batch = |delay: Option<Duration>| {
        (0..JOBS)
            .map(|i| {
                let job = NewJob::new(json!({ "n": i }));
                match delay {
                    Some(delay) => job.delay(delay),
                    None => job,
                }
            })
            .collect::<Vec<_>>()
    };
    let waiting = sharded.add_batch("q", batch(None)).await.unwrap();
    let scheduled = sharded
        .add_batch("q", batch(Some(Duration::from_secs(3600))))
        .await
        .unwrap();
    let ids = |added: &[redq::Enqueued]| -> BTreeSet<String> {
        added.iter().map(|e| e.id().to_owned()).collect()
    };

    let operator = sharded.operator();
    assert_each_once(
        &paged(&operator, JobState::Waiting).await,
        &ids(&waiting),
        "waiting",
    );
    assert_each_once(
        &paged(&operator, JobState::Scheduled).await,
        &ids(&scheduled),
        "scheduled",
    );
}

/// Kept jobs finished by one batched ack share its millisecond: paged over
/// shards, each is listed once.
#[tokio::test]
async fn kept_jobs_over_shards_are_paged_each_once() {
    let server = server();
    let namespace = redq_tests::unique_namespace("sharded-paging-kept");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &namespace, 3)
        .await
        .unwrap();
    let operator = sharded.operator();
    operator
        .set_retention("q", &Retention::new().max_count(1000))
        .await
        .unwrap();
    let jobs = (0..JOBS).map(|i| NewJob::new(json!({ "n": i }))).collect();
    let added = sharded.add_batch("q", jobs).await.unwrap();
    for shard in operator.shards() {
        let leased = shard
            .claim("q", JOBS, Duration::from_secs(60))
            .await
            .unwrap();
        let leases: Vec<_> = leased.iter().map(|job| job.lease()).collect();
        for acked in shard.ack_batch(&leases).await.unwrap() {
            acked.unwrap();
        }
    }
    let mut listed = Vec::new();
    loop {
        let page = operator
            .list_kept("q", Outcome::Completed, listed.len() as u64, PAGE)
            .await
            .unwrap();
        assert_eq!(page.total, JOBS as u64);
        let n = page.items.len();
        listed.extend(page.items.into_iter().map(|k| k.id));
        if n < PAGE {
            break;
        }
    }
    let added: BTreeSet<String> = added.iter().map(|e| e.id().to_owned()).collect();
    assert_each_once(&listed, &added, "completed");
}
