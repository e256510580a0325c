//! `redq jobs promote ID... | --queue QUEUE --yes`: scheduled jobs due now,
//! in their place by priority.

use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;

use super::super::known::require_known;
use super::changes::{all_of, confirm_first, report, report_all};

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
        if scheduled == 0 {
            // Nothing to ask about: said, and a success.
            if json {
                print_json(&json!({ "queue": name, "action": "promoted", "done": 0, "left": 0 }));
            } else {
                outln!("no scheduled job in {}: nothing to promote", inert(&name));
            }
            return Ok(());
        }
        if !yes {
            let shown = inert(&name);
            return Err(confirm_first(format!(
                "jobs promote --queue {shown} would make {} of {shown} due now",
                all_of(scheduled, "scheduled job", "scheduled jobs"),
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
