//! `redq jobs promote ID... | --all QUEUE --yes`: scheduled jobs due now,
//! in their place by priority.

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::count;
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
        let scheduled = queue.counts(&name).await?.scheduled;
        if !yes {
            return Err(confirm_first(format!(
                "promote --all makes all {} of {} due now",
                count(scheduled, "scheduled job", "scheduled jobs"),
                inert(&name)
            )));
        }
        let done = queue.promote_all(&name, |_, _| {}).await?;
        tracing::info!(queue = %name, done, "promoted all scheduled jobs");
        let left = queue.counts(&name).await?.scheduled;
        report_all("promoted", &name, done, left, json);
        return Ok(());
    }
    let mut outcomes = Vec::new();
    for id in ids {
        let outcome = queue.promote(&id).await.map(|()| "promoted");
        tracing::info!(id = %id, ok = outcome.is_ok(), "promote");
        outcomes.push((id, outcome));
    }
    report("promote", outcomes, json)
}
