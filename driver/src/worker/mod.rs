//! Typed jobs and the `Worker` runtime.
//!
//! A job type is a serde struct implementing [`TypedJob`]. Producers push
//! it ([`RedisQueue::push`](crate::RedisQueue::push), [`ShardedQueue::push`](crate::ShardedQueue::push), or [`JobQueue`] for inline mode); a [`Worker`]
//! claims jobs in batches, runs up to `concurrency` at once, each under its
//! timeout with panics caught, extends the leases of long jobs, and reports
//! each outcome: success acks, [`JobError::Retry`] (or any `?` error) retries
//! after an exponential backoff with jitter, [`JobError::Fail`] dead-letters,
//! and [`JobError::rate_limited`] (a remote 429) gives the job back with no
//! attempt counted, its limit key pushed back (see [`crate::flow`]).
//! Attempts and the retry window are enforced by the scripts; a job
//! enqueued by name without a limit of its own (`NewJob::name`, a
//! schedule's `job_name`, `redq enqueue`) is held to its type's
//! `MAX_ATTEMPTS` by the worker. A job whose name no handler is registered
//! for is retried as a failed attempt by default, since in a rolling deploy
//! a newer worker may have its type ([`UnknownNames`]); one whose payload
//! does not decode, or that has no name, is dead-lettered at once with the
//! reason: retrying cannot fix it.
//!
//! Unless its options name queues, a worker serves the `QUEUE` of every
//! type in its registry ([`WorkOptions::queues`]).
//!
//! An idle worker sleeps until the next job is due or an enqueue wakes it
//! (pub/sub on a dedicated connection): no polling. An idle worker of a
//! single queue also parks on it, and the next enqueue leases the job
//! straight to it and publishes it on the worker's own channel, saving the
//! claim round trip ([`WorkOptions::handoff`]). A handed job is leased like a
//! claimed one: if the worker dies first, it comes back when the lease lapses.
//! If the worker lives but its message is lost (a broken subscriber
//! connection, a moved slot), the worker finds the job when it leaves the
//! park and gives it back at once, no attempt counted. Each `Worker` leases
//! under an identity of its own, so that look finds only its own jobs, and
//! the worker registry lists each once: the first `Worker` made on a handle
//! takes the handle's identity, each later one on that handle or its clones
//! the same node with an instance of its own
//! ([`RedisQueue::identity`](crate::RedisQueue::identity)).
//!
//! A claim whose reply is lost (a dropped connection, a timeout) may have
//! leased jobs the worker never saw. The worker looks for them on the
//! claim's namespace (its shard, over shards) before it claims or parks
//! again, once Redis's clock has passed the claim's deadline (at most half
//! the command timeout after it was sent), and gives them back at once, no
//! attempt counted, each with a `claim_lost` event (`crate::lost_claim`
//! has how the look is exact). Jobs already running go on meanwhile.
//!
//! # Backends
//!
//! [`Worker::new`] and [`JobQueue::new`] take a [`RedisQueue`](crate::RedisQueue), a
//! [`ShardedQueue`](crate::ShardedQueue) or a [`MemoryQueue`](crate::MemoryQueue)
//! ([`WorkerBackend`]), so a service that outgrows one primary changes the
//! line that connects its queue, not its jobs or its worker:
//!
//! ```no_run
//! # use redq::{RedisQueue, ShardedQueue};
//! # use redq::worker::{Registry, WorkOptions, Worker};
//! # async fn demo(registry: Registry) -> Result<(), redq::QueueError> {
//! let url = "redis-cluster://10.0.0.1:6379?node=10.0.0.2:6379";
//! // let queue = RedisQueue::connect(url).await?;
//! let queue = ShardedQueue::connect(RedisQueue::builder(url), "app", 3).await?;
//! let worker = Worker::new(queue, registry, WorkOptions::new())?;
//! # Ok(()) }
//! ```
//!
//! Every backend gives the same job lifecycle: fenced leases kept alive
//! while a job runs, acks in batches, retries with the job type's backoff,
//! attempts counted against `MAX_ATTEMPTS`, dead letters, graceful
//! shutdown. What differs:
//!
//! - **[`ShardedQueue`](crate::ShardedQueue)**: each claim visits every
//!   shard in turn, starting one shard further along each time, so no shard
//!   is starved; a shard that has not answered a claim within a second is
//!   left to answer in the background while the worker claims from the
//!   others, and its jobs run (or are given back) when it does. Each job is
//!   acked (by an acker of each shard's own), retried, extended and
//!   released on the shard it came from. The worker subscribes to the wake
//!   channel of every shard and sleeps no longer than the soonest
//!   `next_due` of all of them, so work on any shard wakes it. It does not
//!   park for hand-offs (that would offer its free slots to every shard at
//!   once); `handoff` is ignored. Heartbeats and (with `schedules`) a
//!   scheduler run on every shard, under the one worker identity of the
//!   `ShardedQueue`.
//! - **[`MemoryQueue`](crate::MemoryQueue)**: for tests and apps without
//!   Redis. Jobs pushed with [`MemoryQueue::push`](crate::MemoryQueue::push)
//!   keep their name and `MAX_ATTEMPTS`; priority, dedup keys and the retry
//!   window are not kept. The queue wakes the worker in process on every
//!   enqueue, retry and release; there is no hand-off, no heartbeat record
//!   and no scheduler.
//!
//! The seam is one closed enum, not a public trait; `backend.rs` says why.
//!
//! Shutdown is driven by a [`CancellationToken`]; the library installs no
//! signal handler of itself. [`shutdown_on_signals`] gives a token that
//! SIGTERM (what Kubernetes, Docker and systemd send) or SIGINT (Ctrl-C)
//! cancels. On cancel the worker stops claiming, its registry record says
//! `stopping` (as after an operator's stop), and running jobs may finish
//! within the grace period: their [`JobCx::cancelled`] fires at once, so
//! they may wrap up early. At the grace period's end it drops the rest and
//! releases them at once: due again immediately, no attempt counted. A job
//! that finished meanwhile but whose acknowledgement Redis has not taken
//! (down, paused) has it sent again until the grace ends. The worker logs
//! at INFO when it starts, when shutdown begins (how many jobs run, the
//! grace) and when it stops (how many ended within the grace, how many were
//! released, how long it took).
//!
//! ```no_run
//! use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
//! use redq::RedisQueue;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Resize { image: String }
//!
//! impl TypedJob for Resize {
//!     const NAME: &'static str = "images::resize";
//!     async fn run(&self, _cx: &JobCx) -> Result<(), JobError> { Ok(()) }
//! }
//!
//! # async fn demo() -> Result<(), redq::QueueError> {
//! let queue = RedisQueue::connect("redis://127.0.0.1:6379").await?;
//! queue.push(&Resize { image: "cat.png".into() }).await?;
//!
//! let mut registry = Registry::new();
//! registry.add_job::<Resize>();
//! let worker = Worker::new(queue, registry, WorkOptions::new().concurrency(8))?;
//! // Cancelled by SIGTERM or Ctrl-C; any `CancellationToken` will do.
//! let shutdown = redq::worker::shutdown_on_signals();
//! worker.run(shutdown).await?;
//! # Ok(()) }
//! ```

mod acker;
mod attempts;
mod backend;
mod cancels;
mod context;
mod control;
mod error;
mod events;
mod execute;
mod lost_claims;
mod options;
mod parking;
mod presence;
mod push;
mod registry;
mod resend;
mod served;
mod shard_claims;
mod slots;
mod typed;
mod typed_schedule;
mod unheard;
mod unknown;
mod wake;
mod wake_ups;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::task::JoinSet;
pub use tokio_util::sync::CancellationToken;

pub use crate::backoff::{backoff_ceiling, exponential_backoff, Backoff};
pub use backend::WorkerBackend;
pub use context::{JobCx, Services};
pub use control::{WorkerState, QUIET_MESSAGE, STOP_MESSAGE};
pub use error::JobError;
pub use events::JobFailed;
pub use options::{QueueOrder, WorkOptions};
pub use presence::{WorkerInfo, GONE_KEPT, HEARTBEAT_EVERY, WORKER_TTL};
pub(crate) use push::new_job;
pub use push::{JobQueue, Mode, Pushed};
pub use registry::Registry;
pub use typed::{TypedJob, DEFAULT_QUEUE};
pub use unknown::UnknownNames;
pub use wake_ups::WakeUps;

use crate::limits::{check_lease, check_limit, check_queue_name, MAX_CLAIM};
use crate::lost_claim::LostClaim;
use crate::QueueError;
use backend::{Backend, Claimed, Held};
use execute::{execute, Shared};
use presence::Totals;

/// One worker loop over some queues of a [`RedisQueue`](crate::RedisQueue), a
/// [`ShardedQueue`](crate::ShardedQueue) or a [`MemoryQueue`](crate::MemoryQueue)
/// (see [Backends](self#backends)).
pub struct Worker {
    shared: Arc<Shared>,
    options: WorkOptions,
    ack_requests: Option<tokio::sync::mpsc::UnboundedReceiver<acker::AckRequest>>,
}

/// What a worker did before it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerReport {
    /// Jobs completed.
    pub processed: u64,
    /// Failed attempts (retried or dead-lettered).
    pub failed: u64,
    /// Jobs handed to it whose messages never reached it, which it gave
    /// back ([`WorkerInfo::handoffs_lost`]).
    pub handoffs_lost: u64,
    /// Jobs its claims leased whose replies never reached it, which it
    /// gave back ([`WorkerInfo::claims_lost`]).
    pub claims_lost: u64,
    /// Jobs it was running at its shutdown that it gave back for another
    /// worker, no attempt counted: interrupted at the grace period's end,
    /// or stopped early by their handlers (each a `given_back` event).
    pub released: u64,
}

/// Live counters of a running [`Worker`]; cheap to clone and to read.
#[derive(Debug, Clone)]
pub struct WorkerProgress(Arc<Totals>);

impl WorkerProgress {
    /// Jobs completed (acknowledged in Redis) so far.
    pub fn processed(&self) -> u64 {
        self.0.processed.load(Ordering::Relaxed)
    }
    /// Failed attempts so far.
    pub fn failed(&self) -> u64 {
        self.0.failed.load(Ordering::Relaxed)
    }
    /// Jobs running now: their handlers have not returned.
    pub fn in_flight(&self) -> u64 {
        self.0.in_flight.load(Ordering::Relaxed)
    }
    /// Jobs whose handlers returned and whose outcome (ack, retry or
    /// dead-letter) is being recorded now: sent, or sent again after a
    /// connection's trouble.
    pub fn recording(&self) -> u64 {
        self.0.recording.load(Ordering::Relaxed)
    }
    /// Jobs handed to it whose messages never reached it, which it gave
    /// back so far ([`WorkerInfo::handoffs_lost`]).
    pub fn handoffs_lost(&self) -> u64 {
        self.0.handoffs_lost.load(Ordering::Relaxed)
    }
    /// Jobs its claims leased whose replies never reached it, which it
    /// gave back so far ([`WorkerInfo::claims_lost`]).
    pub fn claims_lost(&self) -> u64 {
        self.0.claims_lost.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("queue", &self.shared.queue)
            .field("registry", &self.shared.registry)
            .field("options", &self.options)
            .finish()
    }
}

impl Worker {
    /// A worker running the job types of `registry` with `options`.
    /// Options are checked here: no queues, a bad queue name, concurrency or
    /// claim batch 0 (or over 1000), or a lease under 30 ms are refused.
    /// Without queues named in `options` it serves the registered types'
    /// queues; with them, a registered type whose queue is not among them
    /// is named in a warning ([`WorkOptions::queues`]).
    pub fn new(
        queue: impl Into<WorkerBackend>,
        registry: Registry,
        mut options: WorkOptions,
    ) -> Result<Worker, QueueError> {
        served::settle(&mut options, &registry);
        if options.queues.is_empty() {
            return Err(QueueError::invalid(
                "worker queues",
                "[]",
                "at least one queue",
            ));
        }
        for (name, _) in &options.queues {
            check_queue_name(name)?;
        }
        check_limit("concurrency", options.concurrency, 10_000)?;
        if let Some(batch) = options.claim_batch {
            check_limit("claim batch", batch, MAX_CLAIM)?;
        }
        check_lease(options.lease)?;
        if options.lease < Duration::from_millis(30) {
            return Err(QueueError::invalid(
                "lease",
                crate::human::duration_text(options.lease),
                "at least 30 ms, so heartbeats can keep it",
            ));
        }
        let (failures, _) = broadcast::channel(1024);
        let (acks, ack_requests) = tokio::sync::mpsc::unbounded_channel();
        Ok(Worker {
            ack_requests: Some(ack_requests),
            shared: Arc::new(Shared {
                // Each Worker holds its own leases (`RedisQueue::identity`).
                queue: match queue.into().0 {
                    Backend::Redis(queue) => Backend::Redis(queue.for_a_worker()),
                    Backend::Sharded(queue) => Backend::Sharded(queue.for_a_worker()),
                    memory @ Backend::Memory(_) => memory,
                },
                registry: Arc::new(registry),
                unknown_names: options.unknown_names,
                services: Services::new(),
                lease: options.lease,
                totals: Arc::new(Totals::default()),
                failures,
                acks,
                shutdown: CancellationToken::new(),
                hard_stop: CancellationToken::new(),
                running: Arc::default(),
            }),
            options,
        })
    }

    /// Hand `services` to every job ([`JobCx::service`]).
    #[must_use]
    pub fn services(mut self, services: Services) -> Self {
        Arc::get_mut(&mut self.shared)
            .expect("worker not running yet")
            .services = services;
        self
    }

    /// Dead-letter events of this worker's jobs, as they happen.
    pub fn failures(&self) -> broadcast::Receiver<JobFailed> {
        self.shared.failures.subscribe()
    }

    /// Live counters of this worker, readable while it runs (no Redis
    /// round trip): what its heartbeat record publishes.
    pub fn progress(&self) -> WorkerProgress {
        WorkerProgress(self.shared.totals.clone())
    }

    /// Run until `shutdown` is cancelled, then shut down gracefully (see the
    /// module docs) and return what was done.
    pub async fn run(mut self, shutdown: CancellationToken) -> Result<WorkerReport, QueueError> {
        let ack_requests = self.ack_requests.take().expect("a worker runs once");
        let shared = self.shared;
        let options = self.options;
        // The acker stops once every job (each holding a sender through
        // `shared`) is done and the worker has dropped its own handle.
        // It sends again an ack a connection's trouble held up, until the
        // grace period's end at the latest (`acker`).
        let acker = tokio::spawn(acker::run(
            shared.queue.clone(),
            ack_requests,
            shared.hard_stop.clone(),
        ));
        let queues: Vec<String> = options.queues.iter().map(|(q, _)| q.clone()).collect();
        tracing::info!(
            id = shared.queue.namespaces().first().map(presence::worker_id),
            queues = %queues.join(", "),
            concurrency = options.concurrency,
            "worker started"
        );
        let background = CancellationToken::new();
        let control = shared.totals.control.clone();
        // The shutdown begins when it is asked for, not when the claim loop
        // next looks: a claim or unpark that Redis does not answer holds the
        // loop for up to the command timeout, while a platform counts its
        // own deadline from its signal. The running jobs hear of it at once
        // (`cx.cancelled()`), and the grace period counts from it.
        let asked_at = {
            let (asked, told) = (shutdown.clone(), shared.shutdown.clone());
            let control = control.clone();
            tokio::spawn(async move {
                asked.cancelled().await;
                told.cancel();
                // The registry record says `stopping` at once too.
                control.shutting_down();
                tokio::time::Instant::now()
            })
        };
        let inbox = Arc::new(wake::Inbox::new(shared.running.clone(), control.clone()));
        // The claim loop ends on shutdown, or on an operator's quiet.
        let claiming = control.claiming(&shutdown);
        let (handed_tx, handed_rx) = tokio::sync::mpsc::unbounded_channel();
        let may_park = options.handoff && shared.queue.handoff().is_some();
        let mut parking = parking::Parking::new(
            inbox.clone(),
            handed_rx,
            &queues,
            may_park,
            shared.totals.clone(),
        );
        let mut duties = JoinSet::new();
        shared.queue.spawn_duties(
            &mut duties,
            Duties {
                queues: queues.clone(),
                inbox: inbox.clone(),
                handed: handed_tx,
                concurrency: options.concurrency,
                totals: shared.totals.clone(),
                schedules: options.schedules,
                stop: background.clone(),
            },
        );

        let slots = slots::Slots::new(options.concurrency);
        let mut running = JoinSet::new();
        let mut claims =
            shard_claims::ShardClaims::new(shared.queue.namespaces().len(), inbox.clone());
        let mut heard = lost_claims::HeardLeases::new(shared.queue.namespaces().len());
        loop {
            let first = tokio::select! {
                biased;
                _ = claiming.cancelled() => break,
                slot = slots.acquire() => slot,
            };
            let mut permits = vec![first];
            // Jobs handed over while parked first: they are leased to us and
            // start before the unpark's round trip, each in a slot taken as
            // it starts (only this loop takes slots, so as many as are free
            // now are there to take). A whole claim's worth is gathered only
            // for a claim: gathered and given back at every hand-off, it
            // cost a handed job about 20k instructions on its way to its
            // handler (docs/performance.md, round fifteen).
            let handed = parking.take_handed(permits.len() + slots.free());
            if !handed.is_empty() {
                for job in handed {
                    heard.heard(0, job.lease_id);
                    let permit = permits
                        .pop()
                        .or_else(|| slots.try_acquire())
                        .expect("never more jobs than free slots");
                    let job = Claimed { job, shard: 0 };
                    running.spawn(execute(shared.clone(), job, permit));
                }
                continue;
            }
            // Jobs of a slow shard's claim, come after the worker went on
            // without them: leased to it, so each runs if a slot is free
            // and is given back otherwise.
            let late = claims.late();
            for job in &late {
                heard.heard(job.shard, job.job.lease_id);
            }
            if !late.is_empty() {
                start_or_give_back(&shared, &slots, &mut running, late, Some(permits));
                continue;
            }
            if parking.may_stay() {
                drop(permits);
                parking.wait(&claiming).await;
                continue;
            }
            while permits.len() < options.effective_claim_batch() {
                match slots.try_acquire() {
                    Some(slot) => permits.push(slot),
                    None => break,
                }
            }
            if !parking.leave(&shared.queue).await {
                // Still parked (Redis out of reach): no claim until it has
                // left (`Parking::leave`).
                drop(permits);
                tokio::select! {
                    _ = claiming.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(250)) => continue,
                }
            }
            heard.heard(0, parking.unparked_through());
            // Lost claims of shards claimed from in the background, before
            // those shards are claimed from again (`lost_claims`).
            let earlier = claims.take_lost();
            lost_claims::give_back_all(&shared, earlier, &mut heard, &mut parking, &claiming).await;
            let mut lost = Vec::new();
            let claimed = claim_some(
                &shared.queue,
                &mut claims,
                &options,
                permits.len(),
                &mut lost,
            );
            let jobs = match claimed.await {
                Ok(jobs) => jobs,
                Err(e) => {
                    tracing::warn!(error = %e, "claim failed; retrying shortly");
                    drop(permits);
                    // Before any other claim or park, which would lease
                    // more to this worker.
                    lost_claims::give_back_all(&shared, lost, &mut heard, &mut parking, &claiming)
                        .await;
                    tokio::select! {
                        _ = claiming.cancelled() => break,
                        _ = tokio::time::sleep(Duration::from_millis(250)) => continue,
                    }
                }
            };
            if jobs.is_empty() {
                drop(permits);
                lost_claims::give_back_all(&shared, lost, &mut heard, &mut parking, &claiming)
                    .await;
                let free = slots.free();
                parking
                    .idle(
                        &shared.queue,
                        &queues,
                        options.max_idle,
                        options.lease,
                        free,
                        &claiming,
                    )
                    .await;
                continue;
            }
            for job in jobs {
                heard.heard(job.shard, job.job.lease_id);
                let permit = permits.pop().expect("never more jobs than permits");
                running.spawn(execute(shared.clone(), job, permit));
            }
            // A shard whose claim was lost while others answered.
            lost_claims::give_back_all(&shared, lost, &mut heard, &mut parking, &claiming).await;
            while running.try_join_next().is_some() {}
        }

        // Shutdown: stop claiming (done), hand back jobs handed over but not
        // started and jobs of slow shards' claims, tell jobs, give them the
        // grace period.
        parking.finish(&shared.queue).await;
        let late = claims.finish(crate::shards::SHARD_PATIENCE).await;
        start_or_give_back(&shared, &slots, &mut running, late, None);
        // Quieted: claim nothing more, let running jobs finish, and stay
        // (registered, heartbeating) until shutdown; a stop ends the wait
        // once nothing runs.
        if !shutdown.is_cancelled() {
            loop {
                tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => break,
                    _ = control.stopped().cancelled(), if running.is_empty() => break,
                    Some(_) = running.join_next(), if !running.is_empty() => {}
                }
            }
        }
        let began = match shutdown.is_cancelled() {
            true => asked_at
                .await
                .unwrap_or_else(|_| tokio::time::Instant::now()),
            false => {
                // An operator's stop, or a quiet ended by one: from now.
                asked_at.abort();
                tokio::time::Instant::now()
            }
        };
        let in_flight = || shared.totals.in_flight.load(Ordering::Relaxed);
        let running_then = in_flight();
        // Jobs whose handlers returned, their outcomes on the way: not
        // running, so not "ended within the grace period" either way.
        let recording = match shared.totals.recording.load(Ordering::Relaxed) {
            0 => String::new(),
            1 => " (1 more finished, its outcome being recorded)".to_owned(),
            n => format!(" ({n} more finished, their outcomes being recorded)"),
        };
        tracing::info!(
            cause = if shutdown.is_cancelled() {
                "asked to stop"
            } else {
                "an operator's stop"
            },
            "shutting down: {running_then} jobs running{recording}, given up to {} to finish; \
             the rest are then released for another worker",
            crate::human::duration_text(options.grace),
        );
        // The registry record says so at once, as after an operator's stop.
        control.shutting_down();
        shared.shutdown.cancel();
        let grace = tokio::time::sleep_until(began + options.grace);
        tokio::pin!(grace);
        let mut left_at_grace_end = 0;
        loop {
            tokio::select! {
                next = running.join_next() => match next {
                    None => break,
                    // The record's count of running jobs, kept fresh.
                    Some(_) => shared.totals.beat_now.notify_one(),
                },
                _ = &mut grace => {
                    left_at_grace_end = in_flight();
                    shared.hard_stop.cancel();
                    while running.join_next().await.is_some() {}
                    break;
                }
            }
        }
        background.cancel();
        // The duties' last words (the record's removal) wait on Redis; past
        // the grace they get a little more, then are left: the record
        // expires by itself (`presence`), and a platform's kill is near.
        let duties_end = async { while duties.join_next().await.is_some() {} };
        if tokio::time::timeout(DUTIES_PATIENCE, duties_end)
            .await
            .is_err()
        {
            duties.abort_all();
            tracing::warn!(
                "the worker's background duties (its record's removal, its heartbeat) did not \
                 end within {} of the grace period's end; left: its record expires by itself",
                crate::human::duration_text(DUTIES_PATIENCE)
            );
        }
        let released = shared.totals.released.load(Ordering::Relaxed);
        let ended = running_then.saturating_sub(left_at_grace_end);
        let took = Duration::from_millis(began.elapsed().as_millis() as u64);
        let unrecorded = match shared.totals.unrecorded.load(Ordering::Relaxed) {
            0 => String::new(),
            1 => "; a finished job's outcome was never confirmed by Redis (logged above: it \
                  may run again after its lease lapses)"
                .to_owned(),
            n => format!(
                "; {n} finished jobs' outcomes were never confirmed by Redis (logged above: \
                 each may run again after its lease lapses)"
            ),
        };
        tracing::info!(
            "worker stopped after {}: {ended} of {running_then} running jobs ended within the \
             grace period, {released} released for another worker{unrecorded}",
            crate::human::duration_text(took),
        );
        let report = WorkerReport {
            processed: shared.totals.processed.load(Ordering::Relaxed),
            failed: shared.totals.failed.load(Ordering::Relaxed),
            handoffs_lost: shared.totals.handoffs_lost.load(Ordering::Relaxed),
            claims_lost: shared.totals.claims_lost.load(Ordering::Relaxed),
            released,
        };
        drop(shared);
        let _ = acker.await;
        Ok(report)
    }
}

/// How long a stopping worker waits for its background duties to end
/// after the grace period.
const DUTIES_PATIENCE: Duration = Duration::from_secs(2);

/// A token cancelled when the process is asked to stop: by SIGTERM (what
/// Kubernetes, Docker and systemd send) or SIGINT (Ctrl-C) on Unix, by
/// Ctrl-C elsewhere; pass it to [`Worker::run`]. The signal received is
/// logged at INFO. Without it, a worker stopped by SIGTERM dies at once, and
/// its jobs come back only once their leases lapse, each charged an attempt.
///
/// Call it within a Tokio runtime (it spawns the task that waits). On Unix
/// the handlers are in place before it returns, so a signal that arrives
/// any time after is not missed; from then on neither signal ends the
/// process by itself, and a second one does nothing more: the worker's
/// [grace period](WorkOptions::grace) bounds the wait. Keep that grace
/// shorter than the time your platform allows before it kills the process
/// (Kubernetes' `terminationGracePeriodSeconds`, 30 s by default, as is the
/// grace), so the jobs still running at its end are released, not killed.
///
/// ```no_run
/// # async fn demo(worker: redq::worker::Worker) -> Result<(), redq::QueueError> {
/// let report = worker.run(redq::worker::shutdown_on_signals()).await?;
/// # Ok(()) }
/// ```
pub fn shutdown_on_signals() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                tokio::spawn(async move {
                    let name = tokio::select! {
                        _ = terminate.recv() => "SIGTERM",
                        _ = interrupt.recv() => "SIGINT",
                    };
                    tracing::info!("{name} received: shutting down gracefully");
                    cancel.cancel();
                });
                return token;
            }
            (Err(e), _) | (_, Err(e)) => tracing::error!(
                error = %e,
                "cannot listen for SIGTERM and SIGINT; only Ctrl-C stops the worker gracefully"
            ),
        }
    }
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("Ctrl-C received: shutting down gracefully");
            cancel.cancel();
        }
    });
    token
}

/// Claim up to `n` jobs from the first queue (in strict or weighted order)
/// that has any; a claim that failed after it may have leased jobs is
/// noted in `lost`.
async fn claim_some(
    queue: &Backend,
    claims: &mut shard_claims::ShardClaims,
    options: &WorkOptions,
    n: usize,
    lost: &mut Vec<(usize, LostClaim)>,
) -> Result<Vec<Claimed>, QueueError> {
    for name in claim_order(options) {
        let jobs = queue.claim(name, n, options.lease, claims, lost).await?;
        if !jobs.is_empty() {
            return Ok(jobs);
        }
    }
    Ok(Vec::new())
}

/// Start each of `jobs` (leased to this worker already) in one of
/// `permits` or a free slot; give back the rest (released: due at once, no
/// attempt counted). Unused permits are dropped. With no permits (`None`:
/// the worker is shutting down) every job is given back.
fn start_or_give_back(
    shared: &Arc<Shared>,
    slots: &slots::Slots,
    running: &mut JoinSet<()>,
    jobs: Vec<Claimed>,
    mut permits: Option<Vec<slots::Slot>>,
) {
    for claimed in jobs {
        let slot = permits
            .as_mut()
            .and_then(|permits| permits.pop().or_else(|| slots.try_acquire()));
        match slot {
            Some(slot) => {
                running.spawn(execute(shared.clone(), claimed, slot));
            }
            None => {
                let queue = shared.queue.clone();
                running.spawn(async move {
                    let held = Held {
                        lease: claimed.job.lease(),
                        shard: claimed.shard,
                    };
                    if let Err(e) = queue.release(&held).await {
                        tracing::warn!(error = %e, id = %claimed.job.id, "giving back a late claim's job failed; it returns when its lease lapses");
                    }
                });
            }
        }
    }
}

/// The queues in the order to try them this round.
fn claim_order(options: &WorkOptions) -> Vec<&str> {
    let mut pool: Vec<(&str, u32)> = options
        .queues
        .iter()
        .map(|(q, w)| (q.as_str(), (*w).max(1)))
        .collect();
    if options.order == QueueOrder::Strict || pool.len() == 1 {
        return pool.into_iter().map(|(q, _)| q).collect();
    }
    // Weighted draw without replacement.
    let mut order = Vec::with_capacity(pool.len());
    while !pool.is_empty() {
        let total: u64 = pool.iter().map(|(_, w)| *w as u64).sum();
        let mut pick = rand::random_range(0..total);
        let index = pool
            .iter()
            .position(|(_, w)| {
                if pick < *w as u64 {
                    true
                } else {
                    pick -= *w as u64;
                    false
                }
            })
            .expect("pick is below the total weight");
        order.push(pool.remove(index).0);
    }
    order
}

/// What a backend's background duties need from their worker (see
/// `WorkerBackend`'s table): its queues, its inbox for wake-ups and
/// hand-offs, its figures for heartbeats, and when to stop.
pub(crate) struct Duties {
    queues: Vec<String>,
    inbox: Arc<wake::Inbox>,
    handed: tokio::sync::mpsc::UnboundedSender<crate::Job>,
    concurrency: usize,
    totals: Arc<Totals>,
    /// Every worker runs a scheduler by default: any number may run at
    /// once, and each tick still fires exactly once (see [`crate::schedule`]).
    schedules: bool,
    stop: CancellationToken,
}
