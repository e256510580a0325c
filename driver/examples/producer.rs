//! Push typed jobs and plain JSON jobs.
//!
//! `cargo run -p redq --example producer` (Redis at `REDIS_URL`, default
//! `redis://127.0.0.1:6379`), then run the `worker` example to process them.

mod common;

use std::time::Duration;

use redq::worker::Pushed;
use redq::{NewJob, RedisQueue};

#[tokio::main]
async fn main() -> Result<(), redq::QueueError> {
    let queue = RedisQueue::connect(&common::redis_url()).await?;
    for user_id in 1..=20 {
        let mail = common::WelcomeMail {
            user_id,
            address: format!("user{user_id}@example.com"),
        };
        match queue.push(&mail).await? {
            Pushed::Queued { id } => println!("queued {id} for user {user_id}"),
            Pushed::Duplicate { id } => println!("user {user_id} already has mail {id} pending"),
            Pushed::Ran { .. } => unreachable!("a RedisQueue never runs inline"),
        }
    }
    // Untyped jobs: any JSON, with options.
    let report = NewJob::new(serde_json::json!({"report": "daily"}))
        .name("reports::daily")
        .delay(Duration::from_secs(60))
        .priority(9);
    println!("{:?}", queue.add("reports", report).await?);
    println!("{:?}", queue.counts("mail").await?);
    Ok(())
}
