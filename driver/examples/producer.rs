//! Push typed jobs and plain JSON jobs.
//!
//! `cargo run -p redq --example producer` (Redis at `REDIS_URL`, default
//! `redis://127.0.0.1:6379`), then run the `worker` example to process them.

mod common;

use std::time::Duration;

use redq::worker::Pushed;
use redq::{NewJob, RedisQueue};

fn welcome(user_id: u64) -> common::WelcomeMail {
    common::WelcomeMail {
        user_id,
        address: format!("user{user_id}@example.com"),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    common::exit(run().await)
}

async fn run() -> Result<(), redq::QueueError> {
    let queue = RedisQueue::connect(&common::redis_url()).await?;
    let mails: Vec<_> = (1..=20).map(welcome).collect();
    // Many typed jobs in one round trip, each with its type's name,
    // MAX_ATTEMPTS, backoff and dedup key.
    for (mail, pushed) in mails.iter().zip(queue.push_batch(&mails).await?) {
        match pushed {
            Pushed::Queued { id } => println!("queued {id} for user {}", mail.user_id),
            Pushed::Duplicate { id } => {
                println!("user {} already has mail {id} pending", mail.user_id)
            }
            Pushed::Ran { .. } => unreachable!("a RedisQueue never runs inline"),
        }
    }
    // One typed job, later and ahead of the rest: the options a NewJob
    // takes, on top of what the type declares.
    let reminder = welcome(21);
    let pushed = queue
        .push_with(&reminder, |job| {
            job.delay(Duration::from_secs(30)).priority(5)
        })
        .await?;
    println!("reminder for user 21: {pushed:?}");
    // Untyped jobs: any JSON, with options.
    let report = NewJob::new(serde_json::json!({"report": "daily"}))
        .name("reports::daily")
        .delay(Duration::from_secs(60))
        .priority(9);
    println!("{:?}", queue.add("reports", report).await?);
    println!("{:?}", queue.counts("mail").await?);
    Ok(())
}
