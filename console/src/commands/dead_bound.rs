//! `redq dead bound show|set|clear|trim QUEUE`: a queue's dead-letter
//! bound (see `redq::kept::dead_bound`).
//!
//! A set replaces the queue's bound whole (as `redq retention set` replaces
//! a policy), so its reply says what it replaced and names a bound the new
//! one no longer has; it also says how many dead letters it deleted at once
//! (those already past the new bound).

use redq::kept::{DeadBound, DeadBoundState};
use serde_json::{json, Value};

use crate::aggregate::Target;
use crate::cli::DeadBoundCommand;
use crate::clock::as_flag;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::text::inert;

use super::known::{require_known, require_known_with};

/// Whether a `dead bound` subcommand changes Redis.
pub fn mutates(command: &DeadBoundCommand) -> Option<&'static str> {
    match command {
        DeadBoundCommand::Show { .. } => None,
        DeadBoundCommand::Set { .. } => Some("dead bound set"),
        DeadBoundCommand::Clear { .. } => Some("dead bound clear"),
        DeadBoundCommand::Trim { .. } => Some("dead bound trim"),
    }
}

pub async fn run(queue: &Target, command: DeadBoundCommand, json: bool) -> Result<(), Failure> {
    match command {
        DeadBoundCommand::Show { queue: name } => {
            require_known_or_bounded(queue, &name).await?;
            let state = queue.dead_bound(&name).await?;
            if json {
                print_json(&state_json(&name, queue.shards().len(), &state));
                return Ok(());
            }
            let now = dead_now(state.dead);
            match &state.bound {
                None => outln!(
                    "{} has no dead-letter bound: its dead letters stay until deleted ({now})",
                    inert(&name)
                ),
                Some(bound) => outln!(
                    "{} keeps {} ({now})",
                    inert(&name),
                    bound_text(bound, queue.shards().len())
                ),
            }
            Ok(())
        }
        DeadBoundCommand::Set {
            queue: name,
            max_count,
            max_age,
            allow_unknown,
        } => {
            if !allow_unknown {
                require_known_with(
                    queue,
                    &name,
                    "; to bound its dead letters from its first one, add --allow-unknown",
                )
                .await?;
            }
            if max_count.is_none() && max_age.is_none() {
                return Err(Failure::Usage(
                    "give at least one bound: --max-count, --max-age or both".into(),
                ));
            }
            let mut bound = DeadBound::new();
            if let Some(n) = max_count {
                bound = bound.max_count(n);
            }
            if let Some(age) = max_age {
                bound = bound.max_age(age);
            }
            let set = queue.set_dead_bound(&name, &bound).await?;
            tracing::info!(queue = %name, ?bound, was = ?set.replaced, trimmed = set.trimmed, "dead-letter bound set");
            let state = queue.dead_bound(&name).await?;
            let shards = queue.shards().len();
            let dropped = dropped(&bound, set.replaced.as_ref());
            if json {
                let mut reply = state_json(&name, shards, &state);
                reply["was"] = set.replaced.as_ref().map_or(Value::Null, bounds_json);
                reply["trimmed"] = json!(set.trimmed);
                reply["no_longer_bounded_by"] =
                    json!(dropped.iter().map(|(flag, _)| *flag).collect::<Vec<_>>());
                print_json(&reply);
                return Ok(());
            }
            let mut text = match &set.replaced {
                Some(was) if *was == bound => {
                    format!(
                        "{} already keeps {}",
                        inert(&name),
                        bound_text(&bound, shards)
                    )
                }
                Some(was) => format!(
                    "{} now keeps {} (was {})",
                    inert(&name),
                    bound_text(&bound, shards),
                    bound_text(was, 1)
                ),
                None => format!(
                    "{} now keeps {} (it had no bound)",
                    inert(&name),
                    bound_text(&bound, shards)
                ),
            };
            for (flag, value) in &dropped {
                text.push_str(&format!(
                    "; its {} bound is no longer set: a set replaces the whole bound (to keep it, \
                     add {flag} {value})",
                    if *flag == "--max-count" {
                        "count"
                    } else {
                        "age"
                    }
                ));
            }
            outln!("{text}");
            outln!(
                "deleted {} past it at once; {}",
                count(set.trimmed, "dead letter", "dead letters"),
                dead_now(state.dead)
            );
            Ok(())
        }
        DeadBoundCommand::Clear { queue: name } => {
            require_known_or_bounded(queue, &name).await?;
            let had = queue.clear_dead_bound(&name).await?;
            tracing::info!(queue = %name, ?had, "dead-letter bound cleared");
            let dead = queue.dead_bound(&name).await?.dead;
            if json {
                print_json(&json!({
                    "queue": name,
                    "action": "cleared",
                    "was": had.as_ref().map_or(Value::Null, bounds_json),
                    "dead": dead,
                }));
                return Ok(());
            }
            match had {
                Some(was) => outln!(
                    "{} has no dead-letter bound now (was {}); its dead letters stay ({})",
                    inert(&name),
                    bound_text(&was, 1),
                    dead_now(dead)
                ),
                None => outln!(
                    "{} had no dead-letter bound; nothing changed ({})",
                    inert(&name),
                    dead_now(dead)
                ),
            }
            Ok(())
        }
        DeadBoundCommand::Trim { queue: name } => {
            require_known_or_bounded(queue, &name).await?;
            let trimmed = queue.trim_dead(&name).await?;
            tracing::info!(queue = %name, trimmed, "dead letters trimmed to their bound");
            let state = queue.dead_bound(&name).await?;
            if json {
                let mut reply = state_json(&name, queue.shards().len(), &state);
                reply["trimmed"] = json!(trimmed);
                print_json(&reply);
                return Ok(());
            }
            match &state.bound {
                None => outln!(
                    "{} has no dead-letter bound: nothing to trim ({})",
                    inert(&name),
                    dead_now(state.dead)
                ),
                Some(bound) => outln!(
                    "deleted {} of {} past its bound ({}); {}",
                    count(trimmed, "dead letter", "dead letters"),
                    inert(&name),
                    bound_text(bound, 1),
                    dead_now(state.dead)
                ),
            }
            Ok(())
        }
    }
}

/// A queue that exists, or one a bound was set for before its first job
/// (`set --allow-unknown`): that bound must stay in reach of show, clear
/// and trim, or a typo's bound could be neither seen nor removed.
async fn require_known_or_bounded(queue: &Target, name: &str) -> Result<(), Failure> {
    if queue.dead_bound(name).await?.bound.is_some() {
        return Ok(());
    }
    require_known(queue, name).await
}

/// `3 dead letters now`.
fn dead_now(dead: u64) -> String {
    format!("{} now", count(dead, "dead letter", "dead letters"))
}

/// `at most 10000 dead letters, none older than 30d`, with what a count
/// means over several shards.
pub fn bound_text(bound: &DeadBound, shards: usize) -> String {
    let mut parts = Vec::new();
    if let Some(n) = bound.count_bound() {
        parts.push(format!(
            "at most {}",
            count(n, "dead letter", "dead letters")
        ));
    }
    if let Some(age) = bound.age_bound() {
        let what = if parts.is_empty() {
            "dead letters no older than"
        } else {
            "none older than"
        };
        parts.push(format!("{what} {}", as_flag(age)));
    }
    let mut text = parts.join(", ");
    if shards > 1 {
        text.push_str(&format!(" on each of its {shards} shards"));
        if bound.count_bound().is_some() {
            text.push_str(&format!(" (up to {shards} times that in all)"));
        }
    }
    text
}

/// The bounds `was` had that `now` has not: (flag, value).
fn dropped(now: &DeadBound, was: Option<&DeadBound>) -> Vec<(&'static str, String)> {
    let Some(was) = was else { return Vec::new() };
    let mut dropped = Vec::new();
    if let (Some(n), None) = (was.count_bound(), now.count_bound()) {
        dropped.push(("--max-count", n.to_string()));
    }
    if let (Some(age), None) = (was.age_bound(), now.age_bound()) {
        dropped.push(("--max-age", as_flag(age)));
    }
    dropped
}

fn bounds_json(bound: &DeadBound) -> Value {
    json!({
        "max_count": bound.count_bound(),
        "max_age_ms": bound.age_bound().map(|a| a.as_millis() as u64),
    })
}

fn state_json(name: &str, shards: usize, state: &DeadBoundState) -> Value {
    // Each shard keeps to the bound on its own (`Operator::set_dead_bound`).
    json!({
        "queue": name,
        "shards": shards,
        "bounded": state.bound.is_some(),
        "max_count": state.bound.and_then(|b| b.count_bound()),
        "max_age_ms": state.bound.and_then(|b| b.age_bound()).map(|a| a.as_millis() as u64),
        "dead": state.dead,
    })
}
