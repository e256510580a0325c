//! `redq dead list|show|requeue|delete|purge`.

use redq::DeadLetterReport;

use crate::aggregate::Target;
use serde_json::json;

use crate::cli::DeadCommand;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::requeue_attempts::{refuse_at_or_above_max, Requeued};

use super::known::require_known;
use super::listing::print_jobs;

pub async fn run(queue: &Target, command: DeadCommand, json: bool) -> Result<(), Failure> {
    match command {
        DeadCommand::List {
            queue: only,
            offset,
            limit,
        } => {
            let names = match only {
                Some(name) => {
                    require_known(queue, &name).await?;
                    vec![name]
                }
                None => queue.queues().await?,
            };
            let (mut jobs, mut total) = (Vec::new(), 0);
            for name in names {
                let page = queue.dead_letters(&name, offset, limit).await?;
                total += page.total;
                jobs.extend(page.items);
            }
            jobs.sort_by_key(|j| std::cmp::Reverse(j.died_at));
            print_jobs(&jobs, &queue.shard_namespaces(), total, offset, json);
            Ok(())
        }
        // One job's detail is the same whatever its state.
        DeadCommand::Show { id } => super::jobs::show(queue, &id, json).await,
        DeadCommand::Requeue {
            queue: name,
            ids,
            all,
            attempts,
            group,
            canary,
            watch,
        } => {
            require_known(queue, &name).await?;
            // A group's jobs are checked once they are known (dead_group).
            if group.is_none() {
                let which = if all {
                    Requeued::All
                } else {
                    Requeued::Ids(&ids)
                };
                refuse_at_or_above_max(queue, &name, which, attempts).await?;
            }
            if let Some(signature) = group {
                let group = super::dead_group::Group {
                    queue: name,
                    signature,
                    attempts,
                    canary,
                    watch,
                };
                return super::dead_group::run(queue, group, json).await;
            }
            if all {
                let done = queue
                    .requeue_all_dead_with_attempts(&name, attempts, |_, _| {})
                    .await?;
                tracing::info!(queue = %name, done, "requeued all dead letters");
                report_all(queue, json, "requeued", &name, done).await
            } else {
                let report = queue
                    .requeue_dead_with_attempts(&name, &ids, attempts)
                    .await?;
                tracing::info!(queue = %name, done = report.done, "requeued dead letters");
                print_report(json, "requeued", &name, &report);
                check_found(&report)
            }
        }
        DeadCommand::Delete { queue: name, ids } => {
            require_known(queue, &name).await?;
            let report = queue.delete_dead(&name, &ids).await?;
            tracing::info!(queue = %name, done = report.done, "deleted dead letters");
            print_report(json, "deleted", &name, &report);
            check_found(&report)
        }
        DeadCommand::Purge { queue: name, yes } => {
            require_known(queue, &name).await?;
            if !yes {
                let dead = queue.counts(&name).await?.dead;
                return Err(Failure::Usage(format!(
                    "purge deletes all {} of {} for good; add --yes to do it",
                    count(dead, "dead letter", "dead letters"),
                    crate::text::inert(&name)
                )));
            }
            let done = queue.purge_dead(&name, |_, _| {}).await?;
            tracing::info!(queue = %name, done, "purged dead letters");
            report_all(queue, json, "purged", &name, done).await
        }
    }
}

/// After `--all` or a purge: what was done and what the queue holds now
/// (dead letters that arrived meanwhile are left, and counted).
async fn report_all(
    queue: &Target,
    json: bool,
    verb: &str,
    name: &str,
    done: u64,
) -> Result<(), Failure> {
    let now = queue.counts(name).await?;
    if json {
        print_json(&json!({
            "queue": name,
            "action": verb,
            "done": done,
            "dead_left": now.dead,
            "waiting": now.waiting,
        }));
    } else {
        outln!(
            "{verb} {} of {}; {} left",
            count(done, "dead letter", "dead letters"),
            crate::text::inert(name),
            count(now.dead, "dead letter", "dead letters"),
        );
    }
    Ok(())
}

fn print_report(json: bool, verb: &str, name: &str, report: &DeadLetterReport) {
    if json {
        print_json(&json!({
            "queue": name,
            "action": verb,
            "done": report.done,
            "not_found": report.not_found,
            "dead_left": report.dead_left,
        }));
    } else {
        outln!(
            "{verb} {} of {}, {} not found; {} left",
            count(report.done, "dead letter", "dead letters"),
            crate::text::inert(name),
            report.not_found,
            count(report.dead_left, "dead letter", "dead letters"),
        );
    }
}

/// Ids that were not dead letters make the run fail (exit 1), after the
/// others were handled.
fn check_found(report: &DeadLetterReport) -> Result<(), Failure> {
    if report.not_found > 0 {
        return Err(Failure::Failed(format!(
            "{} not a dead letter of that queue",
            if report.not_found == 1 {
                "1 of the ids is".to_owned()
            } else {
                format!("{} of the ids are", report.not_found)
            }
        )));
    }
    Ok(())
}
