//! redq's function libraries on the server: listing them, and dropping
//! those of other driver versions (`scripts/libraries.rs` says why nothing
//! drops them on its own).

use super::Operator;
use crate::scripts::libraries;
use crate::{FunctionLibrary, QueueError};

impl Operator {
    /// redq's function libraries on the server, by name: the ones this
    /// build calls ([`FunctionLibrary::current`]) and those of other
    /// versions. Libraries belong to a server, not a namespace: every
    /// namespace (and shard) on it shares them. On a cluster this is one
    /// node's list; the driver loads each library on every primary.
    pub async fn function_libraries(&self) -> Result<Vec<FunctionLibrary>, QueueError> {
        let shard = &self.shards[0];
        libraries::list(shard.client())
            .await
            .map_err(|e| QueueError::from_redis(e, shard.inner.timeout))
    }

    /// Drop redq's function libraries that this build does not call (an
    /// earlier or later driver version's), from every primary; returns
    /// what was dropped. A driver still running that version reloads the
    /// library it needs at its next call, so this is safe at any time, and
    /// worth doing once a deploy has replaced every older driver.
    pub async fn prune_function_libraries(&self) -> Result<Vec<FunctionLibrary>, QueueError> {
        let shard = &self.shards[0];
        let mut dropped = Vec::new();
        for library in self.function_libraries().await? {
            if library.current {
                continue;
            }
            libraries::delete(shard.client(), &library.name)
                .await
                .map_err(|e| QueueError::from_redis(e, shard.inner.timeout))?;
            dropped.push(library);
        }
        Ok(dropped)
    }
}
