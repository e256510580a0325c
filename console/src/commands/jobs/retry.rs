//! `redq jobs retry ID... | --queue QUEUE --yes`: retry now. A job backing
//! off after a failure runs at once, its attempts kept; a dead job is
//! requeued with its attempts reset to 0 (as `redq dead requeue`). The bulk
//! form retries the jobs backing off (the dead: `redq dead requeue QUEUE --all`).

use redq::RetriedNow;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::text::inert;

use super::super::known::require_known;
use super::changes::{confirm_first, report, report_all};

pub async fn run(
    queue: &Target,
    ids: Vec<String>,
    all: Option<String>,
    yes: bool,
    json: bool,
) -> Result<(), Failure> {
    if let Some(name) = all {
        require_known(queue, &name).await?;
        if !yes {
            let shown = inert(&name);
            return Err(confirm_first(format!(
                "jobs retry --queue {shown} would run every job of {shown} that is backing off after a failure now",
            )));
        }
        let done = queue.retry_all_now(&name, |_, _| {}).await?;
        tracing::info!(queue = %name, done, "retried all jobs backing off");
        let left = queue.counts(&name).await?.scheduled;
        report_all("retried", &name, done, left, json);
        return Ok(());
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
