//! Job ids sort in the order one process made them, so what lists by id
//! (a batch's members, `gate_members`, `JobCx::dependencies`) lists a
//! batch in the order it was enqueued, even within one millisecond.

use redq::workflow::Batch;
use redq::NewJob;
use redq_tests::fixtures::handle;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

#[tokio::test]
async fn a_batchs_members_list_in_the_order_they_were_enqueued() {
    let server = RedisServer::start();
    let queue = handle(&server, &unique_namespace("ids-in-order")).await;
    // 200 pages made in a few milliseconds: random ULID suffixes would
    // shuffle those of each millisecond.
    let pages: Vec<NewJob> = (0..200)
        .map(|page| NewJob::new(json!({ "page": page })))
        .collect();
    let batch = queue
        .enqueue_batch(Batch::new().jobs("pages", pages))
        .await
        .unwrap();
    let enqueued: Vec<String> = batch.jobs.iter().map(|j| j.id().to_owned()).collect();

    let mut listed = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = queue
            .gate_members(batch.id.as_str(), &cursor, 50)
            .await
            .unwrap();
        listed.extend(page.members.into_iter().map(|m| m.id));
        match page.next {
            Some(next) => cursor = next,
            None => break,
        }
    }
    assert_eq!(listed, enqueued, "members listed out of enqueue order");
}
