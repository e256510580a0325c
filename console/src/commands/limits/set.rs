//! `redq limits set QUEUE [--key K | --each-key] [--concurrency N]
//! [--rate MAX/INTERVAL]`.

use redq::flow::{Limit, LimitScope};
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
    let changed = queue.set_limit(name, scope.clone(), limit).await?;
    tracing::info!(queue = %name, %scope, %limit, changed, "limit set");
    if json {
        let (scope_name, key) = scope_json(&scope);
        print_json(&json!({
            "queue": name,
            "scope": scope_name,
            "key": key,
            "limit": limit_json(&limit),
            "changed": changed,
        }));
        return Ok(());
    }
    let verb = if changed { "is now" } else { "was already" };
    outln!(
        "{}: the {} limit {verb} {limit}",
        inert(name),
        scope_text(&scope)
    );
    Ok(())
}
