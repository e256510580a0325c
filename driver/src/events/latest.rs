//! The latest events, newest first: what the console's Events screen shows.

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};

use super::{entry, EVENTS_CAP};
use crate::limits;
use crate::{QueueError, QueueEvent, RedisQueue};

impl RedisQueue {
    /// The latest `count` events (every kind), newest first.
    pub async fn events(&self, count: usize) -> Result<Vec<QueueEvent>, QueueError> {
        limits::check_limit("event count", count, EVENTS_CAP)?;
        let command = CustomCommand::new_static("XREVRANGE", ClusterHash::FirstKey, false);
        let args: Vec<Value> = vec![
            self.inner.keys.events().into(),
            "+".into(),
            "-".into(),
            "COUNT".into(),
            count.to_string().into(),
        ];
        let raw: Value = self
            .client()
            .custom(command, args)
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        entry::range_events(raw, self.namespace())
    }
}
