//! The recorded workload the fault scenarios run: producers enqueueing
//! tagged jobs, and workers that claim them and, by a seeded roll, ack,
//! fail, dead-letter, release, extend or abandon them (an abandoned job is
//! left to lapse, like a crashed worker's).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use redq::QueueError;

use crate::history::record::classify;
use crate::history::{JobSpec, RecordingQueue, Reply};

/// How a worker treats the jobs it claims.
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    pub lease: Duration,
    pub batch: usize,
    /// Simulated work per job, milliseconds (min, max).
    pub work_ms: (u64, u64),
    /// Probabilities of each outcome; the rest is a plain ack.
    pub nack: f64,
    pub dead: f64,
    pub release: f64,
    pub abandon: f64,
    /// Extend the lease before acking.
    pub extend: f64,
    /// Retry delay of a nack.
    pub retry_delay: Duration,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            lease: Duration::from_millis(1000),
            batch: 5,
            work_ms: (0, 3),
            nack: 0.05,
            dead: 0.01,
            release: 0.02,
            abandon: 0.02,
            extend: 0.05,
            retry_delay: Duration::from_millis(20),
        }
    }
}

impl Behaviour {
    /// Only acks: every job completes at its first claim.
    pub fn ack_only(lease: Duration) -> Behaviour {
        Behaviour {
            lease,
            nack: 0.0,
            dead: 0.0,
            release: 0.0,
            abandon: 0.0,
            extend: 0.0,
            work_ms: (0, 0),
            ..Behaviour::default()
        }
    }

    /// As a command-line word for the worker process:
    /// `lease_ms,batch,work_min,work_max,nack,dead,release,abandon,extend`.
    pub fn to_arg(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{}",
            self.lease.as_millis(),
            self.batch,
            self.work_ms.0,
            self.work_ms.1,
            self.nack,
            self.dead,
            self.release,
            self.abandon,
            self.extend
        )
    }

    /// Parses [`Behaviour::to_arg`].
    pub fn from_arg(arg: &str) -> Option<Behaviour> {
        let f: Vec<&str> = arg.split(',').collect();
        if f.len() != 9 {
            return None;
        }
        Some(Behaviour {
            lease: Duration::from_millis(f[0].parse().ok()?),
            batch: f[1].parse().ok()?,
            work_ms: (f[2].parse().ok()?, f[3].parse().ok()?),
            nack: f[4].parse().ok()?,
            dead: f[5].parse().ok()?,
            release: f[6].parse().ok()?,
            abandon: f[7].parse().ok()?,
            extend: f[8].parse().ok()?,
            ..Behaviour::default()
        })
    }
}

/// Jobs `from..to` tagged `<prefix>-<n>`; every `keys`-th job group shares
/// an ordering key when `keys > 0`; `max_attempts` on each.
pub fn specs(prefix: &str, from: usize, to: usize, keys: usize, max_attempts: u32) -> Vec<JobSpec> {
    (from..to)
        .map(|n| JobSpec {
            tag: format!("{prefix}-{n}"),
            ordering_key: if keys > 0 {
                format!("k{}", n % keys)
            } else {
                String::new()
            },
            max_attempts,
            pad: 16,
            ..JobSpec::default()
        })
        .collect()
}

/// What a producer's run came to.
#[derive(Debug, Default)]
pub struct Produced {
    /// Jobs whose enqueue was acknowledged.
    pub created: usize,
    /// Each enqueue batch that failed, with its jobs.
    pub refusals: Vec<Refusal>,
}

/// One enqueue batch that failed.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub jobs: usize,
    pub kind: Refused,
    /// The error as the driver worded it.
    pub error: String,
}

/// Why an enqueue batch failed, as far as a fault can explain it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Redis reached `maxmemory` and wrote nothing.
    OutOfMemory,
    /// No definite answer (timeout, dropped connection): maybe applied.
    NoAnswer,
    /// Anything else: invalid input, a protocol error… never explained by a fault.
    Other,
}

impl Refused {
    fn of(err: &QueueError) -> Refused {
        match (err, classify(err)) {
            (QueueError::OutOfMemory, _) => Refused::OutOfMemory,
            (_, Reply::Unknown { .. }) => Refused::NoAnswer,
            _ => Refused::Other,
        }
    }
}

impl Produced {
    /// Jobs in failed batches.
    pub fn refused(&self) -> usize {
        self.refusals.iter().map(|r| r.jobs).sum()
    }

    /// Failed batches whose kind is not in `explained` (what the scenario's
    /// fault can cause), each as a sentence.
    pub fn unexplained(&self, explained: &[Refused]) -> Vec<String> {
        self.refusals
            .iter()
            .filter(|r| !explained.contains(&r.kind))
            .map(|r| format!("an enqueue of {} jobs failed: {}", r.jobs, r.error))
            .collect()
    }
}

/// Enqueues `specs` in batches of `batch`, pausing `pause` between batches.
/// A failed batch is recorded (in the history and in [`Produced`]) and the
/// run goes on; the scenario decides which failures its fault explains.
pub async fn produce(
    rq: &RecordingQueue,
    queue: &str,
    specs: &[JobSpec],
    batch: usize,
    pause: Duration,
) -> Produced {
    let mut produced = Produced::default();
    for chunk in specs.chunks(batch.max(1)) {
        match rq.add_batch(queue, chunk).await {
            Ok(out) => produced.created += out.len(),
            Err(e) => {
                produced.refusals.push(Refusal {
                    jobs: chunk.len(),
                    kind: Refused::of(&e),
                    error: e.to_string(),
                });
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
    produced
}

/// How many claims in a row may fail before a worker gives up. Each is
/// retried after 50 ms, so this outlasts every outage a scenario injects
/// (a restart of redis-server, a 1.5 s freeze) by far, yet a worker that
/// can never claim fails the run within seconds instead of spinning.
pub const CLAIM_ATTEMPTS: u32 = 200;

/// Claims and handles jobs until `stop` is set. Panics (failing the run,
/// with the last error) after [`CLAIM_ATTEMPTS`] failed claims in a row;
/// every failed claim is in the history, where the scenario counts them.
pub async fn work(
    rq: RecordingQueue,
    queue: String,
    behaviour: Behaviour,
    seed: u64,
    stop: Arc<AtomicBool>,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut failed_in_a_row = 0;
    while !stop.load(Ordering::SeqCst) {
        let jobs = match rq.claim(&queue, behaviour.batch, behaviour.lease).await {
            Ok(jobs) => {
                failed_in_a_row = 0;
                jobs
            }
            Err(e) => {
                failed_in_a_row += 1;
                if failed_in_a_row >= CLAIM_ATTEMPTS {
                    panic!(
                        "the worker gave up: {failed_in_a_row} claims in a row failed, the last with: {e}"
                    );
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if jobs.is_empty() {
            tokio::time::sleep(Duration::from_millis(rng.random_range(2..10))).await;
            continue;
        }
        for job in jobs {
            let (lo, hi) = behaviour.work_ms;
            if hi > 0 {
                tokio::time::sleep(Duration::from_millis(rng.random_range(lo..=hi))).await;
            }
            let lease = job.lease();
            let roll: f64 = rng.random();
            let mut edge = behaviour.abandon;
            if roll < edge {
                continue;
            }
            edge += behaviour.nack;
            if roll < edge {
                let _ = rq.nack(&lease, behaviour.retry_delay, false).await;
                continue;
            }
            edge += behaviour.dead;
            if roll < edge {
                let _ = rq.nack(&lease, Duration::ZERO, true).await;
                continue;
            }
            edge += behaviour.release;
            if roll < edge {
                let _ = rq.release(&lease).await;
                continue;
            }
            edge += behaviour.extend;
            if roll < edge && rq.extend(&lease, behaviour.lease).await.is_err() {
                continue;
            }
            let _ = rq.ack(&lease).await;
        }
    }
}

/// Spawns `n` in-process workers (recorders `first_process..`); returns
/// their stop flag and handles.
pub fn spawn_workers(
    handles: Vec<RecordingQueue>,
    queue: &str,
    behaviour: Behaviour,
    seed: u64,
) -> (Arc<AtomicBool>, Vec<tokio::task::JoinHandle<()>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let tasks = handles
        .into_iter()
        .enumerate()
        .map(|(i, rq)| {
            tokio::spawn(work(
                rq,
                queue.to_owned(),
                behaviour,
                seed.wrapping_add(i as u64 * 7919),
                stop.clone(),
            ))
        })
        .collect();
    (stop, tasks)
}
