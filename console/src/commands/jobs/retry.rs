//! `redq jobs retry ID... | --queue QUEUE --yes`: retry now. A job backing
//! off after a failure runs at once, its attempts kept; a dead job is
//! requeued with its attempts reset to 0 (as `redq dead requeue`). The bulk
//! form retries the jobs backing off, and counts only them: a scheduled job
//! that never failed is not a retry (`redq jobs promote` makes it due), and
//! the dead are `redq dead requeue QUEUE --all`.

use serde_json::json;

use redq::{QueueError, RetriedNow};

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::text::inert;

use super::super::known::require_known;
use super::changes::{all_of, confirm_first, report};

pub async fn run(
    queue: &Target,
    ids: Vec<String>,
    all: Option<String>,
    yes: bool,
    json: bool,
) -> Result<(), Failure> {
    if let Some(name) = all {
        return retry_all(queue, &name, yes, json).await;
    }
    let mut outcomes = Vec::new();
    for id in ids {
        let outcome = queue.retry_now(&id).await.map(|how| match how {
            RetriedNow::Promoted => "retrying now",
            RetriedNow::Requeued => "requeued (was dead)",
        });
        tracing::info!(id = %id, ok = outcome.is_ok(), "retry now");
        outcomes.push((id, outcome));
    }
    report("retry", outcomes, json)
}

/// The bulk form: asks with the count of jobs backing off, and reports
/// what is left backing off, never the delayed jobs it leaves alone.
async fn retry_all(queue: &Target, name: &str, yes: bool, json: bool) -> Result<(), Failure> {
    require_known(queue, name).await?;
    let shown = inert(name);
    let backing_off = backing_off(queue, name).await?;
    let delayed = queue
        .counts(name)
        .await?
        .scheduled
        .saturating_sub(backing_off);
    let aside = delayed_aside(delayed, &shown);
    if backing_off == 0 {
        if json {
            print_json(&summary(name, 0, 0, delayed));
        } else {
            outln!("no job of {shown} is backing off after a failure: nothing to retry{aside}");
        }
        return Ok(());
    }
    if !yes {
        return Err(confirm_first(format!(
            "jobs retry --queue {shown} would retry now {} of {shown} backing off after a \
             failure{aside}",
            all_of(backing_off, "job", "jobs"),
        )));
    }
    let done = queue.retry_all_now(name, |_, _| {}).await?;
    tracing::info!(queue = %name, done, "retried all jobs backing off");
    let left = self::backing_off(queue, name).await?;
    let delayed = queue.counts(name).await?.scheduled.saturating_sub(left);
    if json {
        print_json(&summary(name, done, left, delayed));
    } else {
        outln!(
            "retried {} of {shown}; {} left backing off{}",
            count(done, "job", "jobs"),
            left,
            delayed_aside(delayed, &shown)
        );
    }
    Ok(())
}

/// The jobs of `name` backing off, over every shard.
async fn backing_off(queue: &Target, name: &str) -> Result<u64, QueueError> {
    let mut n = 0;
    for shard in queue.shards() {
        n += shard.backing_off(name).await?;
    }
    Ok(n)
}

/// What a bulk retry leaves alone, said beside its count: nothing when
/// there are no delayed jobs.
fn delayed_aside(delayed: u64, shown: &str) -> String {
    match delayed {
        0 => String::new(),
        1 => format!(
            "; 1 scheduled job never failed: not a retry, it stays scheduled \
             (redq jobs promote --queue {shown} makes it due)"
        ),
        n => format!(
            "; {n} scheduled jobs never failed: not retries, they stay scheduled \
             (redq jobs promote --queue {shown} makes them due)"
        ),
    }
}

fn summary(name: &str, done: u64, left: u64, delayed: u64) -> serde_json::Value {
    json!({
        "queue": name,
        "action": "retried",
        "done": done,
        "left": left,
        "scheduled_never_failed": delayed,
    })
}
