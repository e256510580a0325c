//! Listing a queue's blocked jobs (`list_jobs` with `JobState::Blocked`,
//! i.e. `list_blocked`): by ordering key, then in the order each key runs
//! them, paged by offset like every listing, also when other queues' jobs
//! blocked behind the same keys fill more of the namespace's blocked set
//! than one script call examines.

use std::time::Duration;

use redq::{JobState, NewJob, RedisQueue, ShardedQueue, BLOCKED_STEP};
use redq_tests::fixtures::*;
use serde_json::json;

const KEYS: usize = 3;

/// Enqueue `n` jobs to `name` on keys k0..k2 in turn; the first job of each
/// key holds it, the rest are blocked behind it.
async fn add_keyed(queue: &RedisQueue, name: &str, n: usize) -> Vec<(String, String)> {
    let jobs = (0..n)
        .map(|i| NewJob::new(json!({ "q": name, "n": i })).ordering_key(format!("k{}", i % KEYS)))
        .collect();
    let added = queue.add_batch(name, jobs).await.unwrap();
    added
        .iter()
        .enumerate()
        .map(|(i, e)| (format!("k{}", i % KEYS), e.id().to_owned()))
        .collect()
}

/// Every page of `name`'s blocked jobs, `size` at a time: the ids, and the
/// total each page reported.
async fn all_pages(queue: &RedisQueue, name: &str, size: usize) -> (Vec<String>, Vec<u64>) {
    let (mut ids, mut totals) = (Vec::new(), Vec::new());
    loop {
        let page = queue
            .list_jobs(name, JobState::Blocked, ids.len() as u64, size)
            .await
            .unwrap();
        totals.push(page.total);
        for job in &page.items {
            assert_eq!(job.state, JobState::Blocked, "{job:?}");
            assert_eq!(job.queue, name);
            assert!(job.ordering_key.is_some());
        }
        let n = page.items.len();
        ids.extend(page.items.into_iter().map(|j| j.id));
        if n < size {
            return (ids, totals);
        }
    }
}

#[tokio::test]
async fn blocked_jobs_are_listed_by_key_then_run_order_in_pages_past_other_queues() {
    let server = server();
    let queue = queue(&server, "list-blocked").await;
    // b's jobs come first in each key's run order and outnumber one step.
    let b = add_keyed(&queue, "b", BLOCKED_STEP + 200).await;
    let a = add_keyed(&queue, "a", 2 * KEYS + 5).await;
    assert_eq!(b.len(), BLOCKED_STEP + 200);

    // a's jobs are all blocked (b's first jobs hold every key), by key then
    // the order they were enqueued, which is the order the key runs them.
    let mut expected = a.clone();
    expected.sort_by(|x, y| x.0.cmp(&y.0));
    let expected: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();
    let counts = queue.counts("a").await.unwrap();
    assert_eq!(counts.blocked, a.len() as u64);

    let (ids, totals) = all_pages(&queue, "a", 4).await;
    assert_eq!(ids, expected);
    assert!(totals.iter().all(|t| *t == a.len() as u64), "{totals:?}");

    // One page from an offset, as the CLI and the console ask for it.
    let page = queue.list_jobs("a", JobState::Blocked, 5, 3).await.unwrap();
    let got: Vec<&str> = page.items.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(got, expected[5..8]);
    let past = queue
        .list_jobs("a", JobState::Blocked, 1000, 3)
        .await
        .unwrap();
    assert_eq!((past.total, past.items.len()), (a.len() as u64, 0));

    // b, alone past one step: listed whole, its holders not among them.
    let (b_ids, _) = all_pages(&queue, "b", 1000).await;
    assert_eq!(b_ids.len() as u64, queue.counts("b").await.unwrap().blocked);
    assert_eq!(b_ids.len(), BLOCKED_STEP + 200 - KEYS);
}

/// The first page of q's blocked jobs: its total and ids.
async fn first_page(queue: &RedisQueue) -> (u64, Vec<String>) {
    let page = queue
        .list_jobs("q", JobState::Blocked, 0, 50)
        .await
        .unwrap();
    (page.total, page.items.into_iter().map(|j| j.id).collect())
}

#[tokio::test]
async fn a_blocked_job_whose_key_is_released_leaves_the_listing() {
    let server = server();
    let queue = queue(&server, "list-blocked-release").await;
    let jobs = add_keyed(&queue, "q", 2 * KEYS).await;
    let (total, ids) = first_page(&queue).await;
    assert_eq!(total, KEYS as u64);
    let seconds: Vec<String> = jobs[KEYS..].iter().map(|(_, id)| id.clone()).collect();
    assert_eq!(ids, seconds);

    // The holder of k0 completes: the next job of k0 may run, so it is no
    // longer blocked; the other two still are.
    let holders = queue.claim("q", 1, Duration::from_secs(30)).await.unwrap();
    assert_eq!(holders[0].id, jobs[0].1);
    queue.ack(&holders[0].lease()).await.unwrap();
    let (total, ids) = first_page(&queue).await;
    assert_eq!(total, KEYS as u64 - 1);
    assert_eq!(ids, seconds[1..]);
}

#[tokio::test]
async fn a_page_size_out_of_bounds_is_refused_in_words() {
    let server = server();
    let queue = queue(&server, "list-blocked-bounds").await;
    for size in [0, 1001] {
        let err = queue
            .list_jobs("q", JobState::Blocked, 0, size)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("page size"), "{err}");
    }
}

/// Over shards, each ordering key's jobs are on the key's own shard: the
/// merged listing reads as one namespace's would, by key then run order,
/// page after page, with the shards' totals summed.
#[tokio::test]
async fn blocked_jobs_over_shards_merge_as_one_namespace_lists_them() {
    const SHARDED_KEYS: usize = 8;
    let server = server();
    let namespace = redq_tests::unique_namespace("list-blocked-shards");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &namespace, 3)
        .await
        .unwrap();
    let jobs: Vec<NewJob> = (0..5 * SHARDED_KEYS)
        .map(|i| NewJob::new(json!({ "n": i })).ordering_key(format!("k{}", i % SHARDED_KEYS)))
        .collect();
    let added = sharded.add_batch("q", jobs).await.unwrap();
    // The first job of each key holds it; the rest wait behind it.
    let mut expected: Vec<(String, usize, String)> = added
        .iter()
        .enumerate()
        .skip(SHARDED_KEYS)
        .map(|(i, e)| (format!("k{}", i % SHARDED_KEYS), i, e.id().to_owned()))
        .collect();
    expected.sort();
    let expected: Vec<String> = expected.into_iter().map(|(_, _, id)| id).collect();

    let operator = sharded.operator();
    let holding: Vec<u64> = {
        let mut per_shard = Vec::new();
        for shard in operator.shards() {
            per_shard.push(shard.counts("q").await.unwrap().blocked);
        }
        per_shard
    };
    assert!(
        holding.iter().filter(|n| **n > 0).count() >= 2,
        "the keys must spread over shards for the merge to be tested: {holding:?}"
    );

    let mut ids = Vec::new();
    loop {
        let page = operator
            .list_jobs("q", JobState::Blocked, ids.len() as u64, 3)
            .await
            .unwrap();
        assert_eq!(page.total, expected.len() as u64);
        let n = page.items.len();
        ids.extend(page.items.into_iter().map(|j| j.id));
        if n < 3 {
            break;
        }
    }
    assert_eq!(ids, expected);
}
