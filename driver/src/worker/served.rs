//! Which queues a worker serves.
//!
//! A registered job type is pushed to its `QUEUE`, so a worker that does
//! not serve that queue never runs it. When the options name no queues, the
//! worker serves its registered types' queues (an empty registry keeps the
//! `default` queue). When they do, a registered type whose queue is not
//! among them is named in a warning, once, when the worker is made: not
//! refused, because one registry may be shared by workers that serve
//! different queues.

use std::collections::BTreeSet;

use super::options::WorkOptions;
use super::registry::Registry;

/// Settle `options.queues` for a worker of `registry`.
pub(super) fn settle(options: &mut WorkOptions, registry: &Registry) {
    if !options.queues_chosen {
        let queues: BTreeSet<&str> = registry.queues().map(|(_, queue)| queue).collect();
        if !queues.is_empty() {
            options.queues = queues.into_iter().map(|q| (q.to_owned(), 1)).collect();
        }
        return;
    }
    for (name, queue) in registry.queues() {
        if !options.queues.iter().any(|(served, _)| served == queue) {
            tracing::warn!(
                job_type = name,
                queue,
                "job type {name} is pushed to queue {queue:?}, which this worker does not serve: its jobs run only on a worker that serves {queue:?}"
            );
        }
    }
}
