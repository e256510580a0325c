//! Searching payloads server-side: every step examines at most the bound,
//! and the union of the steps is exactly the queue's matching jobs, in
//! whatever state they are, and no other queue's.

use std::collections::BTreeSet;
use std::time::Duration;

use redq::search::{SEARCH_BOUND, SEARCH_START};
use redq::{JobState, NewJob, Operator, QueueError, RedisQueue, ShardedQueue};
use redq_tests::fixtures::*;
use serde_json::json;

/// Every step of a search of `queue` for `needle`, as (examined, ids).
async fn walk(operator: &Operator, queue: &str, needle: &str) -> Vec<(u64, Vec<String>)> {
    let mut cursor = SEARCH_START.to_owned();
    let mut steps = Vec::new();
    loop {
        let page = operator.search(queue, needle, &cursor).await.unwrap();
        steps.push((
            page.examined,
            page.jobs.iter().map(|j| j.id.clone()).collect(),
        ));
        assert!(steps.len() < 10_000, "the search never ends");
        match page.next {
            Some(next) => cursor = next,
            None => return steps,
        }
    }
}

/// 5 000 jobs of `orders`, one in ten for customer cus_3; the ids of those.
async fn orders(queue: &RedisQueue) -> BTreeSet<String> {
    let mut matching = BTreeSet::new();
    for chunk in (0..5000).collect::<Vec<u32>>().chunks(500) {
        let jobs = chunk
            .iter()
            .map(|i| NewJob::new(json!({ "customer": format!("cus_{}", i % 10), "n": i })))
            .collect();
        let added = queue.add_batch("orders", jobs).await.unwrap();
        for (i, job) in chunk.iter().zip(added) {
            if i % 10 == 3 {
                matching.insert(job.id().to_owned());
            }
        }
    }
    matching
}

#[tokio::test]
async fn a_search_of_5000_jobs_examines_at_most_the_bound_per_call_and_finds_exactly_the_matches() {
    let server = server();
    let queue = queue(&server, "search-bound").await;
    let expected = orders(&queue).await;
    // The same customer in another queue is not this queue's match.
    queue
        .add_batch(
            "refunds",
            (0..300)
                .map(|_| NewJob::new(json!({ "customer": "cus_3" })))
                .collect(),
        )
        .await
        .unwrap();
    // Matches in other states are found too: some leased.
    let leased = queue
        .claim("orders", 40, Duration::from_secs(600))
        .await
        .unwrap();
    assert_eq!(leased.len(), 40);

    let steps = walk(&queue.operator(), "orders", "cus_3").await;
    for (examined, _) in &steps {
        assert!(
            *examined as usize <= SEARCH_BOUND,
            "one call examined {examined} records, more than the bound {SEARCH_BOUND}"
        );
    }
    let examined: u64 = steps.iter().map(|(n, _)| n).sum();
    let most = steps.iter().map(|(n, _)| *n).max().unwrap_or(0);
    // The figures the README quotes.
    println!(
        "search of 5 300 records: {} steps, at most {most} examined in one, {examined} in all",
        steps.len()
    );
    assert!(
        examined >= 5300,
        "the walk examined only {examined} of 5 300 records"
    );
    assert!(steps.len() >= 5300 / SEARCH_BOUND, "{} steps", steps.len());
    let found: BTreeSet<String> = steps.into_iter().flat_map(|(_, ids)| ids).collect();
    assert_eq!(found.len(), 500);
    assert_eq!(found, expected);

    // A leased match says so.
    let first = queue
        .operator()
        .search("orders", "\"n\":3}", SEARCH_START)
        .await
        .unwrap();
    let mut cursor = first.next.clone();
    let mut hits = first.jobs;
    while let Some(at) = cursor {
        let page = queue
            .operator()
            .search("orders", "\"n\":3}", &at)
            .await
            .unwrap();
        hits.extend(page.jobs);
        cursor = page.next;
    }
    hits.dedup_by(|a, b| a.id == b.id);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].state, JobState::Leased);
}

#[tokio::test]
async fn a_search_is_plain_case_sensitive_text_and_refuses_bad_input() {
    let server = server();
    let queue = queue(&server, "search-text").await;
    queue
        .add_batch(
            "q",
            vec![
                NewJob::new(json!({ "note": "a.b" })),
                NewJob::new(json!({ "note": "axb" })),
                NewJob::new(json!({ "note": "A.B" })),
            ],
        )
        .await
        .unwrap();
    let page = queue.search("q", "a.b", SEARCH_START).await.unwrap();
    let notes: Vec<_> = page
        .jobs
        .iter()
        .map(|j| j.payload["note"].clone())
        .collect();
    assert_eq!(notes, vec![json!("a.b")], "a dot is a dot, and case counts");
    assert_eq!(page.next, None, "a small queue is searched in one step");
    assert!(matches!(
        queue.search("q", "", SEARCH_START).await,
        Err(QueueError::Invalid {
            what: "search text",
            ..
        })
    ));
    assert!(matches!(
        queue.search("q", "x", "nope").await,
        Err(QueueError::Invalid {
            what: "search cursor",
            ..
        })
    ));
}

#[tokio::test]
async fn a_search_over_shards_walks_each_shard_in_turn() {
    let server = server();
    let namespace = redq_tests::unique_namespace("search-shards");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &namespace, 3)
        .await
        .unwrap();
    let mut expected = BTreeSet::new();
    for i in 0..60 {
        let job = sharded
            .add("q", NewJob::new(json!({ "who": format!("cus_{}", i % 3) })))
            .await
            .unwrap();
        if i % 3 == 1 {
            expected.insert(job.id().to_owned());
        }
    }
    let steps = walk(&sharded.operator(), "q", "cus_1").await;
    assert!(
        steps.len() >= 3,
        "one step a shard at least: {}",
        steps.len()
    );
    let found: BTreeSet<String> = steps.into_iter().flat_map(|(_, ids)| ids).collect();
    assert_eq!(found, expected);
}
