//! `redq retention show|set|clear QUEUE`: what a queue keeps of its
//! finished jobs (see `redq::kept`).

use redq::Retention;
use serde_json::json;

use crate::aggregate::Target;
use crate::cli::RetentionCommand;
use crate::clock::compact as format_duration;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::text::inert;

use super::known::{require_known, require_known_with};

pub async fn run(queue: &Target, command: RetentionCommand, json: bool) -> Result<(), Failure> {
    match command {
        RetentionCommand::Show { queue: name } => {
            require_known(queue, &name).await?;
            show(queue, &name, json).await
        }
        RetentionCommand::Set {
            queue: name,
            max_count,
            max_age,
            max_bytes,
            tombstone_age,
            allow_unknown,
        } => {
            if !allow_unknown {
                require_known_with(
                    queue,
                    &name,
                    "; to keep its jobs from its first one, add --allow-unknown",
                )
                .await?;
            }
            if max_count.is_none() && max_age.is_none() && max_bytes.is_none() {
                return Err(Failure::Usage(
                    "give at least one bound: --max-count, --max-age or --max-bytes".into(),
                ));
            }
            let mut policy = Retention::new().keep_tombstones_for(tombstone_age);
            if let Some(n) = max_count {
                policy = policy.max_count(n);
            }
            if let Some(age) = max_age {
                policy = policy.max_age(age);
            }
            if let Some(bytes) = max_bytes {
                policy = policy.max_bytes(bytes);
            }
            queue.set_retention(&name, &policy).await?;
            tracing::info!(queue = %name, ?policy, "retention set");
            show(queue, &name, json).await
        }
        RetentionCommand::Clear { queue: name, yes } => {
            require_known(queue, &name).await?;
            if !yes {
                let state = queue.retention(&name).await?;
                return Err(Failure::Usage(format!(
                    "clear stops keeping {}'s finished jobs and forgets {} for good; add --yes to do it",
                    inert(&name),
                    count(state.completed + state.cancelled, "kept job", "kept jobs"),
                )));
            }
            let forgotten = queue.clear_retention(&name, |_, _| {}).await?;
            tracing::info!(queue = %name, forgotten, "retention cleared");
            if json {
                print_json(&json!({ "queue": name, "action": "cleared", "forgotten": forgotten }));
            } else {
                outln!(
                    "{} keeps nothing now; forgot {}",
                    inert(&name),
                    count(forgotten, "kept job", "kept jobs")
                );
            }
            Ok(())
        }
    }
}

async fn show(queue: &Target, name: &str, json: bool) -> Result<(), Failure> {
    let state = queue.retention(name).await?;
    let policy = state.policy;
    // Each shard keeps to the bounds on its own (`Operator::set_retention`):
    // over N shards a queue keeps up to N times as many jobs or bytes.
    let shards = queue.shards().len();
    if json {
        print_json(&json!({
            "queue": name,
            "shards": shards,
            "keeps": policy.is_some(),
            "max_count": policy.map(|p| p.count_bound()).filter(|n| *n > 0),
            "max_age_ms": policy.and_then(|p| p.age_bound()).map(|a| a.as_millis() as u64),
            "max_bytes": policy.map(|p| p.bytes_bound()).filter(|n| *n > 0),
            "tombstone_age_ms": policy.map(|p| p.tombstone_age().as_millis() as u64),
            "completed": state.completed,
            "cancelled": state.cancelled,
            "kept_bytes": state.kept_bytes,
        }));
        return Ok(());
    }
    match policy {
        None => outln!("{} keeps no finished jobs", inert(name)),
        Some(p) => {
            let mut bounds = Vec::new();
            if p.count_bound() > 0 {
                bounds.push(format!("at most {} of each outcome", p.count_bound()));
            }
            if let Some(age) = p.age_bound() {
                bounds.push(format!("for {}", format_duration(age)));
            }
            if p.bytes_bound() > 0 {
                bounds.push(format!("within {} bytes", p.bytes_bound()));
            }
            let each_shard = match shards {
                1 => String::new(),
                n if p.count_bound() > 0 || p.bytes_bound() > 0 => {
                    format!(" on each of its {n} shards (up to {n} times that in all)")
                }
                n => format!(" on each of its {n} shards"),
            };
            outln!(
                "{} keeps finished jobs {}{each_shard}; tombstones last {}",
                inert(name),
                bounds.join(", "),
                format_duration(p.tombstone_age())
            );
        }
    }
    outln!(
        "kept now: {} completed, {} cancelled, {} bytes",
        state.completed,
        state.cancelled,
        state.kept_bytes
    );
    Ok(())
}
