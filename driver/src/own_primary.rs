//! Subscriptions sent to the primary that serves their namespace.
//!
//! On Redis Cluster a `PUBLISH` reaches the subscribers of every node, so a
//! subscription may sit on any node; fred sends a subscriber's `SUBSCRIBE`
//! to the primary of the slot of the subscriber's own client id, which is
//! random. A primary that hangs (stopped, swapping, cut off without a reset)
//! answers nothing and forwards nothing, so it deafened every subscription
//! that happened to sit on it, other namespaces' included: a worker over
//! three shards, one primary stopped, heard no wake-up of a shard whose
//! listener sat there and polled it only every `max_idle` (docs/cluster.md,
//! "A shard that does not answer"). Sent to the namespace's own primary, a
//! subscription is deafened only by the primary that holds that namespace's
//! jobs, which it holds up anyway. Outside a cluster the slot is ignored.
//! A shard channel's subscription (`SSUBSCRIBE`) must sit on that shard in
//! any case; sent this way it goes to the same connection as the plain
//! ones, so the two kinds' messages arrive in publish order
//! (`crate::worker::wake`).

use fred::clients::WithOptions;
use fred::interfaces::ClientLike;
use fred::types::config::Options;
use fred::types::ClusterHash;
use fred::util::redis_keyslot;

/// `client` (a subscriber, or a command client asking about a channel),
/// its commands sent to the primary serving `channel`'s slot: the
/// namespace's own, since each of a namespace's channels carries its hash
/// tag `{ns}` (`crate::keys`).
/// Subscriptions made through it are not tracked by fred (its
/// `manage_subscriptions` would send them to its own choice of node):
/// whoever subscribes renews them on reconnect.
pub(crate) fn on_own_primary<C: ClientLike>(client: &C, channel: &str) -> WithOptions<C> {
    client.with_options(&Options {
        cluster_hash: Some(ClusterHash::Custom(redis_keyslot(channel.as_bytes()))),
        ..Options::default()
    })
}
