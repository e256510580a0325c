//! Paging a listing over shards neither repeats nor skips a job, also when
//! many jobs share a millisecond: each shard lists them in its own order
//! (its sequence), which their ids, random past the millisecond, do not
//! show, and the merge keeps that order rather than sort the union anew.

use std::collections::BTreeSet;
use std::time::Duration;

use redq::{JobState, NewJob, Operator, RedisQueue, ShardedQueue};
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
