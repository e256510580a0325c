//! `redq enqueue QUEUE JSON`.

use std::time::Duration;

use redq::{Enqueued, NewJob};

use crate::aggregate::Target;
use serde_json::json;

use crate::failure::Failure;
use crate::output::{outln, print_json};

/// Options of one enqueue.
pub struct Options {
    pub priority: u8,
    pub delay: Option<Duration>,
    pub dedup_key: Option<String>,
    pub ordering_key: Option<String>,
    pub name: Option<String>,
    pub max_attempts: u32,
    pub attempts: u32,
}

pub async fn run(
    queue: &Target,
    name: &str,
    payload: &str,
    options: Options,
    json: bool,
) -> Result<(), Failure> {
    let payload: serde_json::Value = serde_json::from_str(payload)
        .map_err(|e| Failure::Usage(format!("the payload is not JSON: {e}")))?;
    let mut job = NewJob::new(payload)
        .priority(options.priority)
        .max_attempts(options.max_attempts)
        .attempts(options.attempts);
    if let Some(delay) = options.delay {
        job = job.delay(delay);
    }
    if let Some(key) = options.dedup_key {
        job = job.dedup_key(key);
    }
    if let Some(key) = options.ordering_key {
        job = job.ordering_key(key);
    }
    if let Some(job_name) = options.name {
        job = job.name(job_name);
    }
    let outcome = queue.add(name, job).await?;
    let (kind, id) = match &outcome {
        Enqueued::Created(id) => ("created", id),
        Enqueued::Duplicate(id) => ("duplicate", id),
    };
    if json {
        print_json(&json!({"outcome": kind, "id": id, "queue": name}));
    } else {
        match outcome {
            Enqueued::Created(_) => outln!("created {id}"),
            Enqueued::Duplicate(_) => {
                outln!("duplicate: {id} already holds the dedup key; nothing was created")
            }
        }
    }
    Ok(())
}
