//! Quieting and stopping a running worker: a message on its holder channel,
//! which it already listens on for cancels (`worker::control` says why the
//! two cannot be mistaken for each other).

use super::Operator;
use crate::scripts::{self, reply, text, Op};
use crate::worker::{QUIET_MESSAGE, STOP_MESSAGE};
use crate::{QueueError, WorkerIdentity};

impl Operator {
    /// Ask worker `id` (`node-instance`, as [`RedisQueue::workers`](crate::RedisQueue::workers)
    /// lists it) to claim nothing more and finish what it runs; it stays
    /// registered, shown as quiet. Whether any worker heard it (`false`:
    /// none listens under that id, e.g. it is gone, or pub/sub is denied).
    /// A worker that heard it is a `worker_quieted` event (with `by`).
    pub async fn quiet_worker(&self, id: &str) -> Result<bool, QueueError> {
        self.tell_worker(id, Word::Quiet).await
    }

    /// Quiet worker `id`, and have it exit once its running jobs are done.
    /// Whether any worker heard it; if one did, a `worker_stopping` event.
    pub async fn stop_worker(&self, id: &str) -> Result<bool, QueueError> {
        self.tell_worker(id, Word::Stop).await
    }

    async fn tell_worker(&self, id: &str, word: Word) -> Result<bool, QueueError> {
        let identity = parse_worker_id(id)?;
        let (name, body) = match word {
            Word::Quiet => ("quiet", QUIET_MESSAGE),
            Word::Stop => ("stop", STOP_MESSAGE),
        };
        let mut heard = 0;
        // A worker of a sharded queue listens on one shard's channel; the
        // others have no subscriber, count nothing and record nothing.
        for shard in &self.shards {
            let mut args = vec![
                text(id),
                text(shard.holder_channel(identity)),
                text(name),
                text(body),
            ];
            shard.attribute(Op::WorkerControl, &mut args);
            let reply = scripts::run(
                shard.caller(),
                Op::WorkerControl,
                &shard.inner.keys.worker_control(),
                args,
            )
            .await
            .map_err(|e| scripts::map_error(e, shard.inner.timeout))?;
            heard += reply::int(&reply)?;
        }
        Ok(heard > 0)
    }
}

/// What an operator tells a worker.
#[derive(Debug, Clone, Copy)]
enum Word {
    Quiet,
    Stop,
}

/// `node-instance` → its identity; anything else is refused, naming the form.
fn parse_worker_id(id: &str) -> Result<WorkerIdentity, QueueError> {
    let parsed = id
        .split_once('-')
        .and_then(|(node, instance)| Some((node.parse().ok()?, instance.parse().ok()?)));
    match parsed {
        Some((node, instance)) => Ok(WorkerIdentity { node, instance }),
        None => Err(QueueError::invalid(
            "worker id",
            id,
            "<node>-<instance>, as `redq workers` lists it",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ids_read_as_the_registry_writes_them() {
        let id = parse_worker_id("1234567-3").unwrap();
        assert_eq!((id.node, id.instance), (1234567, 3));
        for bad in ["", "12", "a-1", "1-b", "1-2-3"] {
            assert!(parse_worker_id(bad).is_err(), "{bad}");
        }
    }
}
