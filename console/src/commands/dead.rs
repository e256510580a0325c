//! `redq dead list|show|requeue|delete|purge`.

use redq::DeadLetterReport;

use crate::aggregate::Target;
use serde_json::json;

use crate::cli::DeadCommand;
use crate::failure::Failure;
use crate::output::{job_json, print_json};
use crate::tui::detail_text::detail_lines;

use super::listing::print_jobs;

pub async fn run(queue: &Target, command: DeadCommand, json: bool) -> Result<(), Failure> {
    match command {
        DeadCommand::List {
            queue: only,
            offset,
            limit,
        } => {
            let names = match only {
                Some(name) => vec![name],
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
        DeadCommand::Show { id } => {
            let Some(job) = queue.inspect(&id).await? else {
                return Err(Failure::Failed(format!(
                    "no job {}",
                    crate::text::inert(&id)
                )));
            };
            if json {
                print_json(&job_json(&job, &queue.shard_namespaces()));
            } else {
                for line in detail_lines(
                    &job,
                    &queue.shard_namespaces(),
                    std::time::SystemTime::now(),
                ) {
                    println!("{}", line.trim_end());
                }
            }
            Ok(())
        }
        DeadCommand::Requeue {
            queue: name,
            ids,
            all,
        } => {
            if all {
                let done = queue.requeue_all_dead(&name, |_, _| {}).await?;
                tracing::info!(queue = %name, done, "requeued all dead letters");
                report_all(json, "requeued", done);
            } else {
                let report = queue.requeue_dead(&name, &ids).await?;
                tracing::info!(queue = %name, done = report.done, "requeued dead letters");
                print_report(json, "requeued", &report);
                check_found(&report)?;
            }
            Ok(())
        }
        DeadCommand::Delete { queue: name, ids } => {
            let report = queue.delete_dead(&name, &ids).await?;
            tracing::info!(queue = %name, done = report.done, "deleted dead letters");
            print_report(json, "deleted", &report);
            check_found(&report)
        }
        DeadCommand::Purge { queue: name, yes } => {
            if !yes {
                let dead = queue.counts(&name).await?.dead;
                return Err(Failure::Usage(format!(
                    "purge deletes all {dead} dead letters of {} for good; add --yes to do it",
                    crate::text::inert(&name)
                )));
            }
            let done = queue.purge_dead(&name, |_, _| {}).await?;
            tracing::info!(queue = %name, done, "purged dead letters");
            report_all(json, "purged", done);
            Ok(())
        }
    }
}

fn report_all(json: bool, verb: &str, done: u64) {
    if json {
        print_json(&json!({"done": done}));
    } else {
        println!("{verb} {done} dead letters");
    }
}

fn print_report(json: bool, verb: &str, report: &DeadLetterReport) {
    if json {
        print_json(&json!({
            "done": report.done,
            "not_found": report.not_found,
            "dead_left": report.dead_left,
        }));
    } else {
        println!(
            "{verb} {}, {} not found, {} dead letters left",
            report.done, report.not_found, report.dead_left
        );
    }
}

/// Ids that were not dead letters make the run fail (exit 1), after the
/// others were handled.
fn check_found(report: &DeadLetterReport) -> Result<(), Failure> {
    if report.not_found > 0 {
        return Err(Failure::Failed(format!(
            "{} of the ids were not dead letters of that queue",
            report.not_found
        )));
    }
    Ok(())
}
