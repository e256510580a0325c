//! `redq limits clear QUEUE [--key K | --each-key]`, and `--all --yes`:
//! the queue's own limit, its each-key default and every key's own.

use redq::flow::LimitScope;
use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{count, outln, print_json};
use crate::text::inert;

use super::{require_known_or_limited, scope_json, scope_text};

pub async fn one(queue: &Target, name: &str, scope: LimitScope, json: bool) -> Result<(), Failure> {
    scope.validate()?;
    require_known_or_limited(queue, name, "").await?;
    let changed = queue.clear_limit(name, scope.clone()).await?;
    tracing::info!(queue = %name, %scope, changed, "limit cleared");
    if json {
        let (scope_name, key) = scope_json(&scope);
        print_json(&json!({
            "queue": name,
            "scope": scope_name,
            "key": key,
            "changed": changed,
        }));
        return Ok(());
    }
    let shown = scope_text(&scope);
    if changed {
        outln!("{}: the {shown} limit is cleared", inert(name));
    } else {
        outln!("{}: there was no {shown} limit to clear", inert(name));
    }
    Ok(())
}

pub async fn all(queue: &Target, name: &str, yes: bool, json: bool) -> Result<(), Failure> {
    require_known_or_limited(queue, name, "").await?;
    let limits = queue.limits(name).await?;
    let mut scopes = Vec::new();
    if !limits.limit.is_none() {
        scopes.push(LimitScope::Queue);
    }
    if !limits.each_key.is_none() {
        scopes.push(LimitScope::EachKey);
    }
    let own = limits.keys.iter().filter(|k| k.overridden);
    scopes.extend(own.map(|k| LimitScope::Key(k.key.clone())));
    // Nothing to lift: nothing to confirm either.
    if scopes.is_empty() {
        if json {
            print_json(&json!({ "queue": name, "action": "cleared_all", "cleared": 0 }));
        } else {
            outln!("{} has no limit to clear; nothing changed", inert(name));
        }
        return Ok(());
    }
    if !yes {
        return Err(Failure::Usage(format!(
            "clear --all lifts every limit of {} ({}); add --yes to do it",
            inert(name),
            count(scopes.len() as u64, "limit", "limits")
        )));
    }
    let mut cleared = 0u64;
    for scope in scopes {
        if queue.clear_limit(name, scope).await? {
            cleared += 1;
        }
    }
    tracing::info!(queue = %name, cleared, "every limit cleared");
    if json {
        print_json(&json!({ "queue": name, "action": "cleared_all", "cleared": cleared }));
    } else {
        outln!(
            "{}: cleared {}; nothing limits it now",
            inert(name),
            count(cleared, "limit", "limits")
        );
    }
    Ok(())
}
