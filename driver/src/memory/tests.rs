//! The state machine driven directly with a synthetic clock; the
//! behaviour through the trait, against both backends, is tested in
//! `tests/tests/single_server/queue_trait.rs`.

use std::collections::HashSet;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::state::*;
use super::*;

const QUEUES: [&str; 2] = ["a", "b"];
const KEYS: [&str; 2] = ["k", "j"];

/// Every job is in exactly the index its place names, the counts agree,
/// and each ordering key lets at most one job out of line.
fn check_invariants(state: &State) {
    let mut indexed = 0;
    for (name, index) in &state.queues {
        indexed += index.waiting.len()
            + index.scheduled.len()
            + index.leased.len()
            + index.blocked
            + index.dead.len();
        for (seq, id) in &index.waiting {
            let job = &state.jobs[id];
            assert!(matches!(job.place, Place::Waiting) && job.seq == *seq);
        }
        for ((due, seq), id) in &index.scheduled {
            let job = &state.jobs[id];
            assert!(matches!(job.place, Place::Scheduled(at) if at == *due) && job.seq == *seq);
        }
        for ((expiry, seq), id) in &index.leased {
            let job = &state.jobs[id];
            assert!(
                matches!(job.place, Place::Leased { expires } if expires == *expiry)
                    && job.seq == *seq
            );
        }
        for (id, _) in &index.dead {
            assert!(matches!(state.jobs[id].place, Place::Dead));
        }
        let blocked = state
            .jobs
            .values()
            .filter(|job| &job.queue == name && matches!(job.place, Place::Blocked))
            .count();
        assert_eq!(index.blocked, blocked, "blocked count of {name}");
    }
    assert_eq!(indexed, state.jobs.len(), "every job indexed once");

    for (key, hold) in &state.keys {
        let holder = &state.jobs[&hold.holder];
        assert!(!matches!(holder.place, Place::Blocked | Place::Dead));
        let seqs: Vec<u64> = hold.queued.iter().map(|id| state.jobs[id].seq).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{key} queue in order");
        assert!(
            seqs.iter().all(|seq| *seq > holder.seq),
            "{key} holder first"
        );
    }
    for (id, job) in &state.jobs {
        let Some(key) = &job.ordering_key else {
            continue;
        };
        match job.place {
            Place::Dead => {}
            Place::Blocked => assert!(state.keys[key].queued.contains(id)),
            _ => assert_eq!(
                &state.keys[key].holder, id,
                "only the holder of {key} is out"
            ),
        }
    }
}

#[test]
fn random_operations_keep_the_state_consistent() {
    for seed in 0..20 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut state = State::default();
        let mut now = Instant::now();
        let mut claimed: Vec<String> = Vec::new();
        let mut ever: HashSet<String> = HashSet::new();
        for _ in 0..400 {
            let queue = QUEUES[rng.random_range(0..QUEUES.len())];
            match rng.random_range(0..10) {
                0..=2 => {
                    let key = rng
                        .random_bool(0.6)
                        .then(|| KEYS[rng.random_range(0..KEYS.len())].to_owned());
                    // Some with an attempt limit, as typed pushes have:
                    // lapsed leases then dead-letter them too.
                    let max_attempts = rng.random_range(0..3);
                    state.enqueue_job(queue, Value::Null, key, None, max_attempts);
                }
                3..=4 => {
                    let lease = Duration::from_millis(rng.random_range(1..20));
                    let limit = rng.random_range(1..4);
                    for job in state.claim(queue, limit, lease, now) {
                        assert_eq!(job.queue, queue);
                        ever.insert(job.id.clone());
                        claimed.push(job.id);
                    }
                }
                5..=8 if !claimed.is_empty() => {
                    let id = claimed.swap_remove(rng.random_range(0..claimed.len()));
                    let outcome = match rng.random_range(0..4) {
                        0 => state.complete(&id),
                        // The caller answers JobNotFound for these.
                        _ if !state.jobs.contains_key(&id) => Ok(()),
                        1 => state.fail_attempt(&id, None, "dead", now),
                        _ => {
                            let delay = Duration::from_millis(rng.random_range(0..10));
                            state.fail_attempt(&id, Some(delay), "again", now)
                        }
                    };
                    // Lapsed and reclaimed meanwhile, or resolved twice.
                    if let Err(e) = outcome {
                        assert!(matches!(e, QueueError::LeaseLost { .. }), "{e}");
                    }
                }
                _ => now += Duration::from_millis(rng.random_range(0..8)),
            }
            check_invariants(&state);
        }
        assert!(!ever.is_empty());
    }
}

#[test]
fn next_due_counts_waiting_then_retries_then_leases() {
    let mut state = State::default();
    let now = Instant::now();
    assert_eq!(state.next_due("q", now), None);
    state.enqueue("q", Value::Null, None);
    assert_eq!(state.next_due("q", now), Some(Duration::ZERO));

    let id = state.claim("q", 1, Duration::from_secs(10), now)[0]
        .id
        .clone();
    assert_eq!(state.next_due("q", now), Some(Duration::from_secs(10)));
    let later = now + Duration::from_secs(4);
    assert_eq!(state.next_due("q", later), Some(Duration::from_secs(6)));
    assert_eq!(
        state.next_due("q", now + Duration::from_secs(11)),
        Some(Duration::ZERO),
        "a lapsed lease is due for reclaim"
    );

    state
        .fail_attempt(&id, Some(Duration::from_secs(3)), "later", later)
        .unwrap();
    assert_eq!(state.next_due("q", later), Some(Duration::from_secs(3)));
    let claimed = state.claim(
        "q",
        1,
        Duration::from_secs(1),
        later + Duration::from_secs(3),
    );
    assert_eq!(claimed[0].attempts, 1);
}

#[test]
fn a_typed_job_whose_leases_keep_lapsing_is_dead_once_its_attempts_are_spent() {
    let mut state = State::default();
    let mut now = Instant::now();
    let lease = Duration::from_millis(5);
    let key = Some("k".to_owned());
    let id = state.enqueue_job("q", Value::Null, key.clone(), Some("t".into()), 2);
    state.enqueue("q", Value::Null, key);
    let first = state.claim("q", 1, lease, now).remove(0);
    assert_eq!((first.name.as_deref(), first.max_attempts), (Some("t"), 2));
    now += Duration::from_millis(10);
    let again = state.claim("q", 1, lease, now).remove(0);
    assert_eq!((again.id.as_str(), again.attempts), (id.as_str(), 1));
    now += Duration::from_millis(10);
    // The second lapse spends its attempts: dead, and its key moves on.
    let next = state.claim("q", 1, lease, now);
    assert_eq!(
        state.queues["q"].dead,
        [(id.clone(), "lease expired".into())]
    );
    assert_eq!(next.len(), 1, "the job behind its key is claimed");
    assert_ne!(next[0].id, id);
    check_invariants(&state);
}

#[test]
fn a_workers_lease_calls_are_fenced_once_its_lease_was_reclaimed() {
    let queue = MemoryQueue::new();
    let now = Instant::now();
    queue
        .lock()
        .enqueue_job("q", Value::Null, None, Some("t".into()), 0);
    let old = queue.lock().claim("q", 1, Duration::from_millis(5), now)[0].lease();
    let later = now + Duration::from_millis(10);
    let new = queue.lock().claim("q", 1, Duration::from_secs(60), later)[0].lease();
    assert_eq!(old.id, new.id);
    let fenced = |e: QueueError| matches!(e, QueueError::LeaseLost { .. });
    assert!(fenced(queue.ack_held(&old).unwrap_err()));
    assert!(fenced(queue.fail_held(&old, None, "x").unwrap_err()));
    assert!(fenced(
        queue.extend_held(&old, Duration::from_secs(1)).unwrap_err()
    ));
    assert!(fenced(queue.release_held(&old).unwrap_err()));
    // The new holder's lease still works, and only once.
    queue.release_held(&new).unwrap();
    assert!(fenced(queue.ack_held(&new).unwrap_err()));
    let last = queue.lock().claim("q", 1, Duration::from_secs(60), later)[0].lease();
    assert_eq!(queue.ack_held(&last).unwrap(), Acked::Completed);
    assert_eq!(queue.ack_held(&last).unwrap(), Acked::AlreadyGone);
}

#[test]
fn a_lapsed_lease_belongs_to_its_holder_until_a_claim_reclaims_it() {
    let mut state = State::default();
    let now = Instant::now();
    state.enqueue("q", Value::Null, None);
    let first = state.claim("q", 1, Duration::from_millis(5), now).remove(0);
    let lapsed = now + Duration::from_millis(10);
    assert_eq!(state.next_due("q", lapsed), Some(Duration::ZERO));

    let again = state
        .claim("q", 1, Duration::from_millis(5), lapsed)
        .remove(0);
    assert_eq!((again.id.as_str(), again.attempts), (first.id.as_str(), 1));
    assert!(again.lease_id > first.lease_id);
    state.complete(&again.id).unwrap();
    assert!(state.jobs.is_empty());
    assert_eq!(state.next_due("q", lapsed), None);
}
