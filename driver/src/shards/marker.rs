//! Which shard count a sharded queue's namespaces belong to.
//!
//! The shard namespaces of `base` depend on `n` (`shard_namespaces`), and
//! those of different counts can overlap: `orders` over 3 and over 4 shards
//! may share shard 0's name. An operator's tool connected with the wrong
//! count would then show part of the queue, plausibly, and act on part of
//! it. So a [`ShardedQueue`](crate::ShardedQueue) that connects marks its
//! base and each of its namespaces with its count (`{ns}:sharded_as`,
//! `"<n> <base>"`; the base's mark is found whatever count is asked, the
//! shards' also when the base was marked by another count's handle), and
//! [`ShardedQueue::attach`](crate::ShardedQueue::attach), an operator's
//! connect, refuses a count the marks contradict.
//!
//! The mark is best effort: a connect to a Redis that is full
//! (`maxmemory`) or read-only still succeeds, only unmarked, and a
//! namespace no current version marked yet is not checked.

use fred::interfaces::KeysInterface;

use crate::keys::Keys;
use crate::{QueueError, RedisQueue};

fn mark_text(n: usize, base: &str) -> String {
    format!("{n} {base}")
}

/// The shard count in a mark, if it reads as one.
fn marked_count(mark: &str) -> Option<usize> {
    mark.split(' ').next()?.parse().ok()
}

/// The mark keys of `base` and of each shard, each with its namespace.
fn marks(handles: &[RedisQueue], base: &str) -> Vec<(String, String)> {
    std::iter::once((base.to_owned(), Keys::new(base).sharded_as()))
        .chain(
            handles
                .iter()
                .map(|h| (h.namespace().to_owned(), h.inner.keys.sharded_as())),
        )
        .collect()
}

/// Mark `base` and every shard as one of `n` shards of `base`. A differing
/// earlier mark is logged: another handle connects this base with another
/// count.
pub(super) async fn mark(handles: &[RedisQueue], base: &str, n: usize) {
    let Some(client) = handles.first().map(RedisQueue::client) else {
        return;
    };
    for (namespace, key) in marks(handles, base) {
        let earlier: Result<Option<String>, _> =
            client.set(&key, mark_text(n, base), None, None, true).await;
        match earlier {
            Ok(Some(earlier)) if marked_count(&earlier) != Some(n) => tracing::warn!(
                %namespace,
                earlier = %earlier,
                now = n,
                "this namespace was last connected as part of another count of shards: \
                 handles with different counts reach different namespaces"
            ),
            Ok(_) => {}
            Err(e) => tracing::debug!(
                %namespace,
                error = %e,
                "the shard count mark was not written"
            ),
        }
    }
}

/// Refuse `n` when `base` or a shard is marked as part of another count of
/// `base`'s shards. Reads only.
pub(super) async fn check(handles: &[RedisQueue], base: &str, n: usize) -> Result<(), QueueError> {
    let Some(first) = handles.first() else {
        return Ok(());
    };
    for (namespace, key) in marks(handles, base) {
        let mark: Option<String> = first
            .client()
            .get(&key)
            .await
            .map_err(|e| QueueError::from_redis(e, first.inner.timeout))?;
        let Some(marked) = mark.as_deref().and_then(marked_count) else {
            continue;
        };
        if marked != n {
            return Err(QueueError::invalid(
                "shard count",
                n.to_string(),
                format!(
                    "{base} is spread over {marked} shards: its producers and workers last \
                     connected it with {marked} (namespace {namespace} says so), and another \
                     count reaches other namespaces, showing part of the queue or none"
                ),
            ));
        }
    }
    Ok(())
}

impl RedisQueue {
    /// When this namespace is the base of a [`ShardedQueue`](crate::ShardedQueue),
    /// or one of its shards, the shard count its producers and workers last
    /// connected it with: the queue's jobs are in the shards' namespaces,
    /// which a tool looking at one namespace alone can say.
    pub async fn spread_over(&self) -> Result<Option<usize>, QueueError> {
        Ok(self.sharded_as().await?.map(|(n, _)| n))
    }

    /// [`RedisQueue::spread_over`] with the base the count belongs to: this
    /// namespace when it is the base, else the base it is a shard of (so a
    /// tool pointed at a shard can name the namespace to watch instead).
    pub async fn sharded_as(&self) -> Result<Option<(usize, String)>, QueueError> {
        let mark: Option<String> = self
            .client()
            .get(Keys::new(self.namespace()).sharded_as())
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        Ok(mark.as_deref().and_then(|mark| {
            let n = marked_count(mark)?;
            let base = mark.split_once(' ').map(|(_, base)| base.to_owned())?;
            Some((n, base))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_reads_back_its_count() {
        assert_eq!(marked_count(&mark_text(3, "orders")), Some(3));
        assert_eq!(marked_count("x orders"), None);
    }
}
