//! Waiting on one shard at most so long: a shard whose primary hangs
//! (stopped, swapping, cut off without a reset) answers nothing until the
//! command timeout (10 s by default), and held every other shard's jobs up
//! with it (docs/cluster.md, "A shard that does not answer").

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::ShardedQueue;
use crate::{Job, QueueError, RedisQueue};

/// How long a claim (or a look at what is due) waits for one shard before
/// it goes on with the others. Far above a claim's usual round trip (well
/// under a millisecond on a local network, tens of milliseconds across
/// regions), far below the command timeout.
pub(crate) const SHARD_PATIENCE: Duration = Duration::from_secs(1);

/// A claim still running on a shard that did not answer in time.
pub(crate) type LateClaim = Pin<Box<dyn Future<Output = Result<Vec<Job>, QueueError>> + Send>>;

/// What a claim on one shard came to within [`SHARD_PATIENCE`].
pub(crate) enum ShardClaim {
    /// It answered.
    Answered(Result<Vec<Job>, QueueError>),
    /// It did not: the claim goes on, for the caller to await in the
    /// background and deal with the jobs it leases.
    Late(LateClaim),
}

impl ShardedQueue {
    /// Run `claim` on shard `shard`'s handle (owned, so that the claim can go
    /// on without the caller), waiting for it at most [`SHARD_PATIENCE`].
    pub(crate) async fn claim_patiently<F>(
        &self,
        shard: usize,
        claim: impl FnOnce(RedisQueue) -> F,
    ) -> ShardClaim
    where
        F: Future<Output = Result<Vec<Job>, QueueError>> + Send + 'static,
    {
        let mut running: LateClaim = Box::pin(claim(self.shards()[shard].clone()));
        match tokio::time::timeout(SHARD_PATIENCE, &mut running).await {
            Ok(answer) => ShardClaim::Answered(answer),
            Err(_) => {
                tracing::warn!(
                    shard,
                    patience_ms = SHARD_PATIENCE.as_millis() as u64,
                    "a shard has not answered a claim; claiming from the others while it does"
                );
                ShardClaim::Late(running)
            }
        }
    }
}
