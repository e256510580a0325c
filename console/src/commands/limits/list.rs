//! `redq limits list [QUEUE]`: every queue with flow control (or one), each
//! limit with its use now and the jobs it holds back, then its keys.

use std::time::SystemTime;

use redq::flow::QueueLimits;
use serde_json::{json, Value};

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::flow::rows_of;
use crate::output::{outln, print_json, Table};
use crate::text::inert;

use super::{limit_json, pushed_back_json, require_known_or_limited};

pub async fn run(queue: &Target, name: Option<&str>, json: bool) -> Result<(), Failure> {
    let names = match name {
        Some(name) => {
            require_known_or_limited(queue, name, "").await?;
            vec![name.to_owned()]
        }
        None => queue.limited_queues().await?,
    };
    let mut all = Vec::new();
    for name in &names {
        all.push(queue.limits(name).await?);
    }
    if json {
        print_json(&Value::Array(all.iter().map(queue_json).collect()));
        return Ok(());
    }
    if all.is_empty() {
        outln!(
            "no queue of namespace {} has flow control; \
             redq limits set QUEUE --concurrency N --rate 100/1s sets a limit",
            inert(queue.namespace())
        );
        return Ok(());
    }
    let mut table = Table::new(&[
        "QUEUE",
        "SCOPE",
        "KEY",
        "LIMIT",
        ">IN USE",
        ">STARTED",
        ">HELD",
        "PUSHED BACK",
        "WHY",
    ]);
    let now = SystemTime::now();
    for row in all.iter().flat_map(rows_of) {
        table.row(vec![
            row.queue.clone(),
            row.scope_text().to_owned(),
            row.key_text(),
            row.limit_text(),
            row.in_use_text(),
            row.started_text(),
            row.held_text(),
            row.pushed_back_text(now),
            row.why_text(),
        ]);
    }
    table.print();
    Ok(())
}

fn queue_json(limits: &QueueLimits) -> Value {
    let keys: Vec<Value> = limits
        .keys
        .iter()
        .map(|k| {
            json!({
                "key": k.key,
                "limit": limit_json(&k.limit),
                "overridden": k.overridden,
                "leased": k.leased,
                "started_in_window": k.started_in_window,
                "held": k.held,
                "pushed_back_until": pushed_back_json(k.pushed_back_until),
                "ready": k.ready,
                "held_by": limits.why_key_held(k).map(|why| why.to_string()),
            })
        })
        .collect();
    let shards: Vec<Value> = limits
        .shards
        .iter()
        .map(|s| {
            json!({
                "limit": limit_json(&s.limit),
                "leased": s.leased,
                "started_in_window": s.started_in_window,
                "held": s.held,
                "held_by_queue": s.held_by_queue,
                "paused": s.paused,
                "blocked": s.blocked.map(|b| b.to_string()),
            })
        })
        .collect();
    json!({
        "queue": limits.queue,
        "limit": limit_json(&limits.limit),
        "each_key": limit_json(&limits.each_key),
        "leased": limits.leased,
        "started_in_window": limits.started_in_window,
        "held": limits.held,
        "waiting": limits.waiting,
        "held_by_queue": limits.held_by_queue,
        "blocked": limits.queue_blocked().map(|b| b.to_string()),
        "paused": limits.paused,
        "pushed_back_until": pushed_back_json(limits.pushed_back_until),
        "split": crate::flow::split_text(limits),
        "shards": shards,
        "keys": keys,
    })
}
