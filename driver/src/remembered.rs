//! What a handle remembers about the jobs it claimed through the seed
//! [`crate::Queue`] trait, which names jobs by id alone: the lease (for
//! `RedisQueue`, so calls stay fenced) or the shard (for `ShardedQueue`, so
//! calls go where the job is).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::QueueError;

/// Most ids remembered: callers that never resolve their jobs must not grow
/// the map forever. Past it the map starts over; a forgotten job is then
/// looked up in Redis, as one claimed by another handle would be.
const MOST: usize = 100_000;

/// A bounded id → `V` map shared by a handle's clones.
#[derive(Debug)]
pub(crate) struct Remembered<V>(Mutex<HashMap<String, V>>);

impl<V: Clone> Remembered<V> {
    pub fn new() -> Self {
        Remembered(Mutex::new(HashMap::new()))
    }

    /// Remember `entries` (job id, what to remember).
    pub fn remember(&self, entries: impl IntoIterator<Item = (String, V)>) {
        let mut map = self.0.lock().expect("remembered jobs poisoned");
        if map.len() > MOST {
            map.clear();
        }
        map.extend(entries);
    }

    pub fn get(&self, id: &str) -> Option<V> {
        self.0
            .lock()
            .expect("remembered jobs poisoned")
            .get(id)
            .cloned()
    }

    /// Forget `id` once a call settled it one way or the other; keep it
    /// when the outcome is unknown (a timeout, a dropped connection), so a
    /// retried call is handled the same way.
    pub fn forget_unless_transient<T>(&self, id: &str, result: &Result<T, QueueError>) {
        if matches!(
            result,
            Ok(_) | Err(QueueError::LeaseLost { .. } | QueueError::JobCancelled { .. })
        ) {
            self.0.lock().expect("remembered jobs poisoned").remove(id);
        }
    }
}
