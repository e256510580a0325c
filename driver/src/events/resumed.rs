//! The one event the driver writes itself: `resumed`. Resuming is a plain
//! `SREM` (no script), so that it works while Redis is out of memory; its
//! event is a second command after it, with the fields `lua/lib/events.lua`
//! writes, and is skipped (with a warning) when Redis refuses it.

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use super::EVENTS_CAP;
use crate::RedisQueue;

impl RedisQueue {
    /// Append `resumed` for `queue`, with this handle's actor as `by`.
    pub(crate) async fn record_resumed(&self, queue: &str) {
        let client = self.client();
        // No `at`: the entry id's milliseconds are Redis's clock at the
        // XADD, which the parser reads instead (entry.rs).
        let mut args: Vec<Value> = vec![
            self.inner.keys.events().into(),
            "MAXLEN".into(),
            "~".into(),
            EVENTS_CAP.to_string().into(),
            "*".into(),
            "kind".into(),
            "resumed".into(),
            "queue".into(),
            queue.into(),
        ];
        if let Some(actor) = &self.inner.actor {
            args.extend(["by".into(), actor.as_str().into()]);
        }
        let command = CustomCommand::new_static("XADD", ClusterHash::FirstKey, false);
        let written: Result<Value, _> = client.custom(command, args).await;
        if let Err(e) = written {
            tracing::warn!(queue, error = %e, "the queue resumed, but its event was not written");
        }
    }
}
