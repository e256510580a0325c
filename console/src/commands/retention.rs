//! `redq retention show|set|clear QUEUE`: what a queue keeps of its
//! finished jobs (see `redq::kept`).
//!
//! A set replaces the queue's policy whole (as `redq limits set` replaces a
//! limit), so its reply says what it replaced (`was at most 10 of each
//! outcome, within 1024 bytes`) and names each bound the new policy no
//! longer has, with the command that would keep it: a `--max-age` alone on
//! a policy that also had a count must not drop the count unseen.

use redq::Retention;
use serde_json::{json, Value};

use crate::aggregate::Target;
use crate::cli::RetentionCommand;
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
            let was = queue.retention(&name).await?.policy;
            queue.set_retention(&name, &policy).await?;
            tracing::info!(queue = %name, ?policy, ?was, "retention set");
            set_reply(queue, &name, &policy, was.as_ref(), json).await
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
    let shards = queue.shards().len();
    if json {
        print_json(&state_json(name, shards, &state));
        return Ok(());
    }
    match &state.policy {
        None => outln!("{} keeps no finished jobs", inert(name)),
        Some(p) => outln!("{} keeps {}", inert(name), policy_text(p, shards)),
    }
    kept_now(&state);
    Ok(())
}

/// The reply of a set: the policy now, what it replaced, and each bound it
/// no longer has.
async fn set_reply(
    queue: &Target,
    name: &str,
    policy: &Retention,
    was: Option<&Retention>,
    json: bool,
) -> Result<(), Failure> {
    let state = queue.retention(name).await?;
    let shards = queue.shards().len();
    let dropped = dropped_bounds(policy, was);
    if json {
        let mut reply = state_json(name, shards, &state);
        reply["was"] = was.map_or(Value::Null, bounds_json);
        reply["no_longer_bounded_by"] = json!(dropped.iter().map(|d| d.flag).collect::<Vec<_>>());
        print_json(&reply);
        return Ok(());
    }
    let now = state.policy.as_ref().unwrap_or(policy);
    let mut text = match was {
        Some(was) if was == now => {
            format!("{} already keeps {}", inert(name), policy_text(now, shards))
        }
        Some(was) => {
            let mut before = bounds_text(was);
            if was.tombstone_age() != now.tombstone_age() {
                before.push_str(&format!(
                    "; tombstones lasted {}",
                    crate::clock::as_flag(was.tombstone_age())
                ));
            }
            format!(
                "{} now keeps {} (was {before})",
                inert(name),
                policy_text(now, shards)
            )
        }
        None => format!("{} now keeps {}", inert(name), policy_text(now, shards)),
    };
    if !dropped.is_empty() {
        let names: Vec<String> = dropped.iter().map(|d| d.words.to_owned()).collect();
        let mut keep = vec![
            "redq retention set".to_owned(),
            inert(name).to_string(),
            flags(now),
        ];
        keep.extend(dropped.iter().map(|d| format!("{} {}", d.flag, d.value)));
        let (bounds, are, them) = match dropped.len() {
            1 => ("bound", "is", "it"),
            _ => ("bounds", "are", "them"),
        };
        text.push_str(&format!(
            "; the {} {bounds} {are} no longer set: a set replaces the whole policy \
             (to keep {them}: {})",
            join_and(&names),
            keep.join(" ")
        ));
    }
    outln!("{text}");
    kept_now(&state);
    Ok(())
}

/// A bound the previous policy had and the new one has not.
struct Dropped {
    /// Its option (`--max-count`).
    flag: &'static str,
    /// Its value, as the option takes it (`10`, `7d`).
    value: String,
    /// Which bound (`count`).
    words: &'static str,
}

fn dropped_bounds(now: &Retention, was: Option<&Retention>) -> Vec<Dropped> {
    let Some(was) = was else { return Vec::new() };
    let mut dropped = Vec::new();
    if was.count_bound() > 0 && now.count_bound() == 0 {
        dropped.push(Dropped {
            flag: "--max-count",
            value: was.count_bound().to_string(),
            words: "count",
        });
    }
    if let (Some(age), None) = (was.age_bound(), now.age_bound()) {
        dropped.push(Dropped {
            flag: "--max-age",
            value: crate::clock::as_flag(age),
            words: "age",
        });
    }
    if was.bytes_bound() > 0 && now.bytes_bound() == 0 {
        dropped.push(Dropped {
            flag: "--max-bytes",
            value: was.bytes_bound().to_string(),
            words: "size",
        });
    }
    dropped
}

/// The options that set `p`'s bounds (its tombstone age too, unless the default).
fn flags(p: &Retention) -> String {
    let mut flags = Vec::new();
    if p.count_bound() > 0 {
        flags.push(format!("--max-count {}", p.count_bound()));
    }
    if let Some(age) = p.age_bound() {
        flags.push(format!("--max-age {}", crate::clock::as_flag(age)));
    }
    if p.bytes_bound() > 0 {
        flags.push(format!("--max-bytes {}", p.bytes_bound()));
    }
    if p.tombstone_age() != Retention::new().tombstone_age() {
        flags.push(format!(
            "--tombstone-age {}",
            crate::clock::as_flag(p.tombstone_age())
        ));
    }
    flags.join(" ")
}

/// `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `finished jobs at most 5 of each outcome, for 7d; tombstones last 1d`,
/// with what a bound means over several shards.
fn policy_text(p: &Retention, shards: usize) -> String {
    let each_shard = match shards {
        1 => String::new(),
        n if p.count_bound() > 0 || p.bytes_bound() > 0 => {
            format!(" on each of its {n} shards (up to {n} times that in all)")
        }
        n => format!(" on each of its {n} shards"),
    };
    format!(
        "finished jobs {}{each_shard}; tombstones last {}",
        bounds_text(p),
        crate::clock::as_flag(p.tombstone_age())
    )
}

/// A policy's bounds: `at most 5 of each outcome, for 7d, within 1024 bytes`.
fn bounds_text(p: &Retention) -> String {
    let mut bounds = Vec::new();
    if p.count_bound() > 0 {
        bounds.push(format!("at most {} of each outcome", p.count_bound()));
    }
    if let Some(age) = p.age_bound() {
        bounds.push(format!("for {}", crate::clock::as_flag(age)));
    }
    if p.bytes_bound() > 0 {
        bounds.push(format!("within {} bytes", p.bytes_bound()));
    }
    bounds.join(", ")
}

/// `kept now: 1 completed, 0 cancelled, 805 bytes`, and the jobs past the
/// age bound whose memory the next ack or cancel frees.
fn kept_now(state: &redq::kept::RetentionState) {
    let mut line = format!(
        "kept now: {} completed, {} cancelled, {} bytes",
        state.completed, state.cancelled, state.kept_bytes
    );
    if state.expired > 0 {
        line.push_str(&format!(
            " ({} past the age bound, no longer shown, {} until the queue's next ack or cancel frees {})",
            count(state.expired, "job", "jobs"),
            if state.expired == 1 { "holds its memory" } else { "hold their memory" },
            if state.expired == 1 { "it" } else { "them" },
        ));
    }
    outln!("{line}");
}

fn bounds_json(p: &Retention) -> Value {
    json!({
        "max_count": Some(p.count_bound()).filter(|n| *n > 0),
        "max_age_ms": p.age_bound().map(|a| a.as_millis() as u64),
        "max_bytes": Some(p.bytes_bound()).filter(|n| *n > 0),
        "tombstone_age_ms": p.tombstone_age().as_millis() as u64,
    })
}

fn state_json(name: &str, shards: usize, state: &redq::kept::RetentionState) -> Value {
    // Each shard keeps to the bounds on its own (`Operator::set_retention`):
    // over N shards a queue keeps up to N times as many jobs or bytes.
    let policy = state.policy;
    json!({
        "queue": name,
        "shards": shards,
        "keeps": policy.is_some(),
        "max_count": policy.map(|p| p.count_bound()).filter(|n| *n > 0),
        "max_age_ms": policy.and_then(|p| p.age_bound()).map(|a| a.as_millis() as u64),
        "max_bytes": policy.map(|p| p.bytes_bound()).filter(|n| *n > 0),
        "tombstone_age_ms": policy.map(|p| p.tombstone_age().as_millis() as u64),
        "completed": state.completed,
        "cancelled": state.cancelled,
        "expired": state.expired,
        "kept_bytes": state.kept_bytes,
    })
}
