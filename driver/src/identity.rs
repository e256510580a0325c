//! Who holds a lease: a worker node id and an instance within it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use serde::Serialize;

/// The identity recorded on every lease this connection takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct WorkerIdentity {
    /// The node (process or host) id.
    pub node: u64,
    /// The instance within the node.
    pub instance: u32,
}

impl WorkerIdentity {
    /// A random node id drawn once per process, and a fresh instance number
    /// for every call: unique per process without any configuration.
    pub fn unique() -> WorkerIdentity {
        static NODE: OnceLock<u64> = OnceLock::new();
        static NEXT_INSTANCE: AtomicU32 = AtomicU32::new(0);
        WorkerIdentity {
            node: *NODE.get_or_init(|| rand::random::<u64>() >> 1),
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl std::fmt::Display for WorkerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.node, self.instance)
    }
}
