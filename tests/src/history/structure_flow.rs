//! The structural check's flow-control invariants (lib/flow.lua's keys):
//! every member of a queue's held set names its job's limit key and
//! waiting score, and each key's leased and held counts (`{ns}:q:Q:lim`
//! "u\nK", "h\nK") equal the jobs leased and held under it, and a ready key
//! (`{ns}:q:Q:lim_ready`) has held jobs, scored as its best one.

use std::collections::BTreeMap;

use super::structure::Dump;
use super::violation::{Violation, ViolationKind};

/// The waiting score lib/waiting.lua gives a job, as the held set writes it
/// (16 digits): (255 − priority)·2^44 + seq.
fn held_score(priority: u64, seq: u64) -> String {
    format!("{:016}", ((255 - priority.min(255)) << 44) + seq)
}

impl Dump {
    pub(super) fn check_flow(&self, out: &mut Vec<Violation>) {
        for (queue, members) in &self.held {
            // Limit key -> (leased, held) as the jobs say.
            let mut counted: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
            for meta in self.jobs.values() {
                if meta.queue == *queue && !meta.limit_key.is_empty() && meta.lease_id != 0 {
                    counted.entry(&meta.limit_key).or_default().0 += 1;
                }
            }
            // Limit key -> the score of its best held job (its first member).
            let mut best: BTreeMap<&str, f64> = BTreeMap::new();
            for member in members {
                if let Some((key, rest)) = member.split_once('\n') {
                    let score = rest.split('\n').next().unwrap_or_default();
                    let score: f64 = score.parse().unwrap_or(f64::NAN);
                    let b = best.entry(key).or_insert(score);
                    *b = b.min(score);
                }
            }
            for (key, score) in self.lim_ready.get(queue).into_iter().flatten() {
                match best.get(key.as_str()) {
                    Some(b) if b == score => {}
                    found => out.push(Violation::new(
                        ViolationKind::ReadyKeyWrong,
                        match found {
                            None => format!(
                                "limit key {key:?} of queue {queue:?} is ready but has no held job"
                            ),
                            Some(b) => format!(
                                "limit key {key:?} of queue {queue:?} is ready at score {score}, \
                                 its best held job at {b}"
                            ),
                        },
                    )),
                }
            }
            for member in members {
                let mut parts = member.splitn(3, '\n');
                let (Some(key), Some(score), Some(id)) = (parts.next(), parts.next(), parts.next())
                else {
                    out.push(Violation::new(
                        ViolationKind::HeldMemberMismatch,
                        format!(
                            "held set of queue {queue:?}: member {member:?} is not key, score, id"
                        ),
                    ));
                    continue;
                };
                counted.entry(key).or_default().1 += 1;
                // A member without a record is reported with the placements.
                let Some(meta) = self.jobs.get(id) else {
                    continue;
                };
                let expected = held_score(meta.priority, meta.seq);
                if meta.limit_key != key || score != expected {
                    out.push(Violation::new(
                        ViolationKind::HeldMemberMismatch,
                        format!(
                            "job {id} is held under key {key:?} with score {score}; its record \
                             says key {:?}, score {expected}",
                            meta.limit_key
                        ),
                    ));
                }
            }
            let lim = self.lim.get(queue).cloned().unwrap_or_default();
            let stored = |prefix: &str, key: &str| -> u64 {
                lim.get(&format!("{prefix}\n{key}"))
                    .map_or(0, |v| v.parse().unwrap_or(u64::MAX))
            };
            let mut keys: Vec<&str> = counted.keys().copied().collect();
            for field in lim.keys() {
                if let Some(key) = field
                    .strip_prefix("u\n")
                    .or_else(|| field.strip_prefix("h\n"))
                {
                    keys.push(key);
                }
            }
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                let (leased, held) = counted.get(key).copied().unwrap_or_default();
                let (u, h) = (stored("u", key), stored("h", key));
                if (u, h) != (leased, held) {
                    out.push(Violation::new(
                        ViolationKind::LimitCountWrong,
                        format!(
                            "limit key {key:?} of queue {queue:?}: its counts say {u} leased, \
                             {h} held; its jobs are {leased} leased, {held} held"
                        ),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_held_score_is_the_waiting_score_in_sixteen_digits() {
        assert_eq!(super::held_score(0, 7), "4486007441326087");
        assert_eq!(super::held_score(255, 1), "0000000000000001");
    }
}
