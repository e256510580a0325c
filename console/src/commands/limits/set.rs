//! `redq limits set QUEUE [--key K | --each-key] [--concurrency N]
//! [--rate MAX/INTERVAL]`.
//!
//! The limit given replaces the scope's limit whole, so the reply says what
//! it replaced (`was 5 at once, 20/1s`): a `--rate` alone on a limit that
//! also had a concurrency drops the concurrency, and that must not pass
//! unseen. A concurrency below what is running now is said too: a lowered
//! limit takes nothing back, the jobs over it finish.

use redq::flow::{Limit, LimitScope, QueueLimits};
use serde_json::json;

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;

use super::{limit_json, require_known_or_limited, scope_json, scope_text};

pub async fn run(
    queue: &Target,
    name: &str,
    scope: LimitScope,
    limit: Limit,
    allow_unknown: bool,
    json: bool,
) -> Result<(), Failure> {
    // A bad spec is a usage error said before anything is read or written.
    scope.validate()?;
    limit.validate()?;
    if !allow_unknown {
        let advice = "; to limit it before its first job, add --allow-unknown";
        require_known_or_limited(queue, name, advice).await?;
    }
    let before = before(queue, name, &scope).await?;
    let (was, was_text, over) = was_and_over(&before, &scope, limit);
    let changed = queue.set_limit(name, scope.clone(), limit).await?;
    tracing::info!(queue = %name, %scope, %limit, %was, changed, "limit set");
    if json {
        let (scope_name, key) = scope_json(&scope);
        print_json(&json!({
            "queue": name,
            "scope": scope_name,
            "key": key,
            "limit": limit_json(&limit),
            "was": limit_json(&was),
            "over": over,
            "changed": changed,
        }));
        return Ok(());
    }
    let shown = scope_text(&scope);
    if !changed {
        outln!("{}: the {shown} limit was already {limit}", inert(name));
        return Ok(());
    }
    let mut text = format!("{}: the {shown} limit is now {limit}", inert(name));
    if was_text != "none" {
        text.push_str(&format!(" (was {was_text})"));
    }
    let mut dropped = Vec::new();
    if was.concurrency.is_some() && limit.concurrency.is_none() {
        dropped.push("how many run at once");
    }
    if was.rate.is_some() && limit.rate.is_none() {
        dropped.push("how many start per interval");
    }
    if !dropped.is_empty() && !was.is_none() {
        text.push_str(&format!("; it no longer bounds {}", dropped.join(" or ")));
    }
    if over > 0 {
        text.push_str(&format!(
            "; {} and will finish (a lowered limit takes nothing back)",
            over_text(over)
        ));
    }
    outln!("{text}");
    Ok(())
}

/// The limits as they were: the first page is enough for the queue-wide
/// and each-key limits (they are whole on it); a key's own needs its row.
async fn before(queue: &Target, name: &str, scope: &LimitScope) -> Result<QueueLimits, Failure> {
    Ok(match scope {
        LimitScope::Queue => queue.limits_up_to(name, 1).await?,
        LimitScope::EachKey | LimitScope::Key(_) => queue.limits(name).await?,
    })
}

/// The scope's own limit before (for JSON), the words for it, and how many
/// leased jobs the new concurrency leaves over it (each key on its own for
/// the each-key default). A key without a limit of its own was under the
/// each-key default, and says so.
fn was_and_over(before: &QueueLimits, scope: &LimitScope, limit: Limit) -> (Limit, String, u64) {
    let over = |leased: u64| match limit.concurrency {
        Some(n) => leased.saturating_sub(u64::from(n)),
        None => 0,
    };
    let own = |was: Limit, leased: u64| (was, was.to_string(), over(leased));
    match scope {
        LimitScope::Queue => own(before.limit, before.leased),
        LimitScope::EachKey => {
            let under_default = before.keys.iter().filter(|k| !k.overridden);
            let over = under_default.map(|k| over(k.leased)).sum();
            (before.each_key, before.each_key.to_string(), over)
        }
        LimitScope::Key(key) => {
            let row = before.keys.iter().find(|k| &k.key == key);
            let leased = row.map_or(0, |k| k.leased);
            match row {
                Some(k) if k.overridden => own(k.limit, leased),
                _ if before.each_key.is_none() => own(Limit::none(), leased),
                _ => (
                    Limit::none(),
                    format!("the each-key default, {}", before.each_key),
                    over(leased),
                ),
            }
        }
    }
}

/// `3 jobs running are over it`, `1 job running is over it`.
fn over_text(n: u64) -> String {
    match n {
        1 => "1 job running is over it".to_owned(),
        n => format!("{n} jobs running are over it"),
    }
}
