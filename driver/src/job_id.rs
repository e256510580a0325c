//! Fresh job and batch ids: ULIDs, monotonic within this process.
//!
//! A plain ULID's 80 random bits order the ids of one millisecond at
//! random, so the jobs of a batch enqueued together would list (in
//! `gate_members`, `JobCx::dependencies`, `redq batches show`) and tie-break
//! in an order unrelated to the order they were made in. One generator per
//! process makes each id greater than the last: ids sort in the order this
//! process made them. Ids of different processes still interleave by
//! millisecond only, as with any ULID.

use std::sync::Mutex;

use ulid::{Generator, Ulid};

static IDS: Mutex<Generator> = Mutex::new(Generator::new());

/// A fresh id, greater than every id this process made before.
pub(crate) fn next() -> Ulid {
    let made = IDS.lock().map(|mut ids| ids.generate());
    match made {
        Ok(Ok(id)) => id,
        // 2^80 ids in one millisecond, or a poisoned lock (a panic while
        // holding it cannot leave the generator half-updated): an
        // unordered id is still unique.
        _ => Ulid::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_made_in_turn_sort_in_turn() {
        let ids: Vec<String> = (0..10_000).map(|_| next().to_string()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
    }
}
