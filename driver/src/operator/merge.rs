//! The shards' pages of one listing as one page.
//!
//! Each shard's list comes in its shard's own order, and that order is kept
//! as it is, never sorted again: it holds what the records do not show (the
//! order of jobs enqueued or finished in the same millisecond, by sequence
//! or by sorted-set member, while ids are random past the millisecond). The
//! next item is always the first of the shards' next ones by the listing's
//! order, so a window's merge is the start of any larger window's, and
//! paging on neither repeats nor skips an item. Sorting the union instead
//! did both when a shard's order and the tie-break disagreed.

use std::cmp::Ordering;
use std::collections::VecDeque;

/// `lists`, each in its shard's order, as one list of at most `take`.
pub(crate) fn merge_heads<T>(
    lists: Vec<Vec<T>>,
    take: usize,
    order: impl Fn(&T, &T) -> Ordering,
) -> Vec<T> {
    let mut lists: Vec<VecDeque<T>> = lists.into_iter().map(VecDeque::from).collect();
    let mut merged = Vec::new();
    while merged.len() < take {
        let next = (0..lists.len())
            .filter(|i| !lists[*i].is_empty())
            .min_by(|a, b| order(&lists[*a][0], &lists[*b][0]));
        match next.and_then(|i| lists[i].pop_front()) {
            Some(item) => merged.push(item),
            None => break,
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::merge_heads;

    #[test]
    fn each_lists_order_is_kept_and_heads_are_taken_in_order() {
        // Pairs of (time, id): the first list's two items of time 5 are in
        // an order their ids contradict, as a shard's sequence can be.
        let a = vec![(5, 9), (5, 1), (7, 0)];
        let b = vec![(4, 3), (6, 2)];
        let by_time = |x: &(u32, u32), y: &(u32, u32)| x.0.cmp(&y.0);
        let all = merge_heads(vec![a.clone(), b.clone()], 10, by_time);
        assert_eq!(all, vec![(4, 3), (5, 9), (5, 1), (6, 2), (7, 0)]);
        // A smaller window is the start of the larger one.
        for take in 0..all.len() {
            let some = merge_heads(vec![a[..take.min(3)].to_vec(), b.clone()], take, by_time);
            assert_eq!(some, all[..take], "{take}");
        }
    }
}
