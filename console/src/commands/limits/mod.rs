//! `redq limits list|set|clear`: flow control (see `redq::flow`), through
//! the driver's operator calls, so `--shards N` splits a queue-wide limit
//! over the shards and reads their use back as one.

mod clear;
mod list;
mod set;

use redq::flow::{Limit, LimitScope};
use serde_json::{json, Value};

use crate::aggregate::Target;
use crate::cli::{LimitScopeArgs, LimitsCommand};
use crate::failure::Failure;
use crate::flow::scope_text;
use crate::output::opt_time;

pub async fn run(queue: &Target, command: LimitsCommand, json: bool) -> Result<(), Failure> {
    match command {
        LimitsCommand::List { queue: name } => list::run(queue, name.as_deref(), json).await,
        LimitsCommand::Set {
            queue: name,
            scope,
            concurrency,
            rate,
            allow_unknown,
        } => {
            let limit = Limit { concurrency, rate };
            set::run(queue, &name, scope_of(&scope), limit, allow_unknown, json).await
        }
        LimitsCommand::Clear {
            queue: name,
            scope,
            all,
            yes,
        } => match all {
            true => clear::all(queue, &name, yes, json).await,
            false => clear::one(queue, &name, scope_of(&scope), json).await,
        },
    }
}

/// The scope the flags name: the queue's own limit unless --each-key or
/// --key says otherwise.
fn scope_of(args: &LimitScopeArgs) -> LimitScope {
    match (&args.key, args.each_key) {
        (Some(key), _) => LimitScope::Key(key.clone()),
        (None, true) => LimitScope::EachKey,
        (None, false) => LimitScope::Queue,
    }
}

/// Fail (exit 1) unless `name` is a queue the namespace knows: one that
/// had jobs, or one with flow control already.
async fn require_known_or_limited(queue: &Target, name: &str, advice: &str) -> Result<(), Failure> {
    if queue.limited_queues().await?.iter().any(|q| q == name) {
        return Ok(());
    }
    super::known::require_known_with(queue, name, advice).await
}

/// A scope in JSON: `{"scope": "queue"|"each_key"|"key", "key": K|null}`.
fn scope_json(scope: &LimitScope) -> (Value, Value) {
    match scope {
        LimitScope::Queue => (json!("queue"), Value::Null),
        LimitScope::EachKey => (json!("each_key"), Value::Null),
        LimitScope::Key(key) => (json!("key"), json!(key)),
    }
}

/// A limit in JSON: `{"concurrency": N|null, "rate": {"max", "per_ms",
/// "text"}|null}`.
fn limit_json(limit: &Limit) -> Value {
    json!({
        "concurrency": limit.concurrency,
        "rate": limit.rate.map(|r| json!({
            "max": r.max,
            "per_ms": r.per.as_millis() as u64,
            "text": r.to_string(),
        })),
    })
}

/// A push-back in JSON: RFC 3339 while it lasts, else null.
fn pushed_back_json(until: Option<std::time::SystemTime>) -> Value {
    opt_time(until)
}
