//! `redq dead list|groups|show|requeue|delete|purge` (`redq dead bound`:
//! `dead_bound.rs`).

use redq::DeadLetterReport;

use crate::aggregate::Target;
use serde_json::json;

use crate::cli::DeadCommand;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::requeue_attempts::{refuse_at_or_above_max, Requeued};

use super::jobs::changes::{all_of, confirm_first};
use super::known::require_known;
use super::listing::print_jobs;

/// The furthest into the merged list `dead list` reads: each queue's
/// newest `offset + limit` are read and merged, so the pair is bounded.
const LIST_WINDOW: u64 = 10_000;

/// Most dead letters read a call while reading a queue's head.
const LIST_PAGE: u64 = 1000;

/// The page `offset..offset + limit` of the dead letters of `names` merged
/// newest first (ties by id), and how many they hold in all. Each queue's
/// newest `offset + limit` are read (a page at a time): no dead letter of
/// the page can be further down its own queue.
async fn merged_page(
    queue: &Target,
    names: &[String],
    offset: u64,
    limit: usize,
) -> Result<(Vec<redq::JobRecord>, u64), Failure> {
    if !(1..=1000).contains(&limit) {
        return Err(Failure::Usage(format!(
            "--limit {limit} refused: accepted are 1 to 1000"
        )));
    }
    let window = offset.saturating_add(limit as u64);
    if window > LIST_WINDOW {
        return Err(Failure::Usage(format!(
            "--offset {offset} with --limit {limit} reaches row {window}: accepted are up to \
             {LIST_WINDOW} rows into the list (the newest dead letters of each queue are read \
             and merged); list one queue's older ones with redq jobs list QUEUE --state dead"
        )));
    }
    let (mut jobs, mut total) = (Vec::new(), 0);
    for name in names {
        let mut read = 0;
        loop {
            let want = (window - read).min(LIST_PAGE) as usize;
            let page = queue.dead_letters(name, read, want).await?;
            let got = page.items.len() as u64;
            jobs.extend(page.items);
            read += got;
            if got < want as u64 || read >= window || read >= page.total {
                total += page.total;
                break;
            }
        }
    }
    jobs.sort_by(|a, b| b.died_at.cmp(&a.died_at).then(b.id.cmp(&a.id)));
    let page = jobs.into_iter().skip(offset as usize).take(limit).collect();
    Ok((page, total))
}

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
            let (jobs, total) = merged_page(queue, &names, offset, limit).await?;
            print_jobs(&jobs, &queue.shard_namespaces(), total, offset, json);
            super::known::note_if_empty(queue, &names).await
        }
        DeadCommand::Groups { queue: only } => {
            let names = match only {
                Some(name) => {
                    require_known(queue, &name).await?;
                    vec![name]
                }
                None => queue.queues().await?,
            };
            super::dead_groups::run(queue, &names, json).await?;
            super::known::note_if_empty(queue, &names).await
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
            yes,
        } => {
            require_known(queue, &name).await?;
            if let Some(signature) = group {
                // A group's jobs are checked once they are known (dead_group).
                let group = super::dead_group::Group {
                    queue: name,
                    signature,
                    requeue_at: Some(attempts),
                    canary,
                    watch,
                    yes,
                };
                return super::dead_group::run(queue, group, json).await;
            }
            let which = if all {
                Requeued::All
            } else {
                Requeued::Ids(&ids)
            };
            refuse_at_or_above_max(queue, &name, which, attempts).await?;
            if all {
                if !yes {
                    let dead = queue.counts(&name).await?.dead;
                    let shown = crate::text::inert(&name);
                    return Err(confirm_first(format!(
                        "dead requeue {shown} --all would requeue {} of {shown}",
                        all_of(dead, "dead letter", "dead letters"),
                    )));
                }
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
        DeadCommand::Delete {
            queue: name,
            ids,
            group,
            yes,
        } => {
            require_known(queue, &name).await?;
            if let Some(signature) = group {
                let group = super::dead_group::Group {
                    queue: name,
                    signature,
                    requeue_at: None,
                    canary: None,
                    watch: std::time::Duration::ZERO,
                    yes,
                };
                return super::dead_group::run(queue, group, json).await;
            }
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
        DeadCommand::Bound { command } => super::dead_bound::run(queue, command, json).await,
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
