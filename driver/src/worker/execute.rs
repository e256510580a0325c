//! Running one claimed job: decode, run under its timeout with panics
//! caught, keep its lease alive, and report the outcome.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::FutureExt;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::acker::{AckReply, AckRequest};
use super::backend::{Backend, Claimed, Held};
use super::cancels::RunningJobs;
use super::context::{JobCx, Notes, Services};
use super::error::JobError;
use super::events::JobFailed;
use super::presence::Totals;
use super::registry::Registry;
use super::resend::GivenUp;
use super::slots::Slot;
use crate::kept::Completion;
use crate::queue::ShutdownRelease;
use crate::{Acked, Job, Nacked, NoteBatch, QueueError};

/// What every job task of one worker shares.
pub(crate) struct Shared {
    pub queue: Backend,
    pub registry: Arc<Registry>,
    pub unknown_names: super::UnknownNames,
    pub services: Services,
    pub lease: Duration,
    pub totals: Arc<Totals>,
    pub failures: broadcast::Sender<JobFailed>,
    /// Finished jobs' leases, acknowledged in batches by the acker task.
    pub acks: tokio::sync::mpsc::UnboundedSender<super::acker::AckRequest>,
    /// Cancelled when shutdown begins: jobs may notice and wrap up.
    pub shutdown: CancellationToken,
    /// Cancelled when the grace period is over: running jobs are dropped and
    /// released.
    pub hard_stop: CancellationToken,
    /// The jobs running now, for operators' cancels (`super::cancels`).
    pub running: Arc<RunningJobs>,
}

enum Outcome {
    Succeeded,
    Failed(JobError),
    LeaseLost,
    /// An operator cancelled the job (its heartbeat said so).
    Cancelled,
    /// An operator deleted the job while it ran (its holder channel told
    /// the worker, and its heartbeat found the lease gone).
    Deleted,
    Interrupted,
    /// The handler returned [`JobError::Stopped`] during the shutdown.
    StoppedForShutdown,
}

/// Why the lease could not be kept.
enum Lost {
    ToAnother,
    Cancelled,
}

/// Counts a job as running until its handler returns, then as recording
/// its outcome until it is done with: an operator reading "running" at a
/// shutdown means handlers, not acks waiting on a Redis that is away.
struct InFlight {
    totals: Arc<Totals>,
    handler_done: bool,
}

impl InFlight {
    fn new(totals: &Arc<Totals>) -> Self {
        totals.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight {
            totals: totals.clone(),
            handler_done: false,
        }
    }

    /// The handler returned (or never ran): its outcome is being recorded.
    fn handler_done(&mut self) {
        if !std::mem::replace(&mut self.handler_done, true) {
            self.totals.in_flight.fetch_sub(1, Ordering::Relaxed);
            self.totals.recording.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let count = match self.handler_done {
            true => &self.totals.recording,
            false => &self.totals.in_flight,
        };
        count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Run `job` to its end in `slot`: its handler holds the slot, and the job
/// its lease room until its outcome is recorded (`super::slots`).
pub(crate) async fn execute(shared: Arc<Shared>, claimed: Claimed, mut slot: Slot) {
    let Claimed { job, shard } = claimed;
    let mut in_flight = InFlight::new(&shared.totals);
    // `redq.process`, continuing the producer's trace (crate::trace).
    let span = crate::trace::process_span(&job);
    // Unboxed: a task's future is copied whole when spawned, and the rare
    // outcomes' script calls (a failure, a release, a lease extension) are
    // boxed where they are awaited, so what each job carries is ~1.3 KB
    // (it was ~9.5 KB, and its copies showed in `perf` as the client's top
    // cost while it stayed inline).
    run_one(&shared, job, shard, &mut slot, &mut in_flight)
        .instrument(span)
        .await;
}

async fn run_one(
    shared: &Shared,
    job: Job,
    shard: usize,
    slot: &mut Slot,
    in_flight: &mut InFlight,
) {
    let lease = Held {
        lease: job.lease(),
        shard,
    };
    let Some(runner) = job
        .name
        .as_deref()
        .and_then(|name| shared.registry.get(name))
    else {
        // No handler runs: what remains is recording the failure.
        in_flight.handler_done();
        let why = shared.registry.unknown(job.name.as_deref());
        let (delay, dead) = shared.unknown_names.failure(&job);
        let notes = NoteBatch::new();
        let failure = Failure {
            error: &why,
            delay,
            dead,
            deleted: false,
            lease_ends: job.lease_expires_at,
        };
        return report_failure(shared, &job, &lease, failure, &notes).await;
    };
    let cx = JobCx {
        id: job.id.clone(),
        queue: job.queue.clone(),
        name: job.name.clone().unwrap_or_default(),
        attempt: job.attempts + 1,
        lease_expires_at: Arc::new(Mutex::new(job.lease_expires_at)),
        cancel: shared.shutdown.child_token(),
        services: shared.services.clone(),
        result: Arc::default(),
        notes: Arc::new(Mutex::new(Notes {
            stored: job.noted,
            ..Notes::default()
        })),
        awaits: job.awaits.as_ref().and_then(|gate| {
            Some(super::context::Awaits {
                namespace: shared.queue.namespaces().get(shard)?.clone(),
                gate: gate.clone(),
            })
        }),
    };
    // An operator's cancel fires `cx.cancel` through the holder channel.
    let _running = shared
        .running
        .start(&job.id, job.lease_id, cx.cancel.clone());
    let started = std::time::Instant::now();
    let future = match runner.start(&job.payload, &cx) {
        Ok(future) => future,
        Err(why) => {
            in_flight.handler_done();
            return dead_letter(shared, &job, &lease, &why).await;
        }
    };
    // The payload's size, never its bytes: a payload may hold anything a
    // producer put there (addresses, tokens), and logs travel further than
    // Redis does. Measured only when this line is logged.
    if tracing::enabled!(tracing::Level::TRACE) {
        let payload_bytes = serde_json::to_vec(&job.payload).map_or(0, |bytes| bytes.len());
        tracing::trace!(payload_bytes, "running");
    }
    let timeout = runner.timeout();
    let guarded = tokio::time::timeout(timeout, AssertUnwindSafe(future).catch_unwind());
    let outcome = tokio::select! {
        result = guarded => match result {
            Ok(Ok(Ok(()))) => Outcome::Succeeded,
            Ok(Ok(Err(error))) => Outcome::Failed(error),
            Ok(Err(panic)) => Outcome::Failed(JobError::retry(format!("panicked: {}", panic_message(&*panic)))),
            Err(_) => Outcome::Failed(JobError::retry(format!(
                "timed out after {}",
                crate::human::duration_text(timeout)
            ))),
        },
        lost = keep_lease(&shared.queue, &lease, shared.lease, &cx) => match lost {
            Lost::ToAnother if operator_told(shared, &cx) => Outcome::Deleted,
            Lost::ToAnother => Outcome::LeaseLost,
            Lost::Cancelled => Outcome::Cancelled,
        },
        () = shared.hard_stop.cancelled() => Outcome::Interrupted,
    };
    // A run stopped for the shutdown is given back like one the grace
    // period's end interrupts; stopped at any other time, it is a retry.
    let outcome = match outcome {
        Outcome::Failed(JobError::Stopped) if shared.shutdown.is_cancelled() => {
            Outcome::StoppedForShutdown
        }
        Outcome::Failed(JobError::Stopped) => Outcome::Failed(JobError::retry(
            "the handler returned JobError::stopped() while the worker was not shutting down",
        )),
        other => other,
    };
    // The handler is done: the next job may start while this one's outcome
    // is recorded (batched with others' for an ack).
    slot.handler_done();
    in_flight.handler_done();
    match outcome {
        Outcome::Succeeded => {
            let done = completion(&cx, started.elapsed());
            let acked = acknowledge(shared, lease, done, cx.lease_expires_at()).await;
            match acked.outcome {
                Ok(Acked::Completed) => {
                    shared.totals.processed.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!("completed");
                }
                // Nothing was recorded: not a processed job.
                Ok(Acked::AlreadyGone) if operator_told(shared, &cx) => tracing::info!(
                    "finished, but an operator had deleted it while it ran: not acknowledged"
                ),
                // Sent again after an earlier send went unanswered.
                Ok(Acked::AlreadyGone) if acked.sent_before => {
                    shared.totals.processed.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(
                        "completed: an acknowledgement that went unanswered had been applied \
                         (sent again, it found the job done)"
                    );
                }
                Ok(Acked::AlreadyGone) => tracing::warn!(
                    "finished, but the job was gone: an operator deleted it, or another worker \
                     completed it after this lease lapsed; not acknowledged"
                ),
                Err(QueueError::LeaseLost { .. }) => tracing::warn!(
                    "finished, but the lease was lost meanwhile; another worker may run it again"
                ),
                Err(QueueError::JobCancelled { .. }) => {
                    tracing::info!("finished, but an operator had cancelled it: not acknowledged")
                }
                Err(e) => ack_failed(shared, &e, acked.sent_before),
            }
        }
        Outcome::Failed(JobError::Retry { error, after }) => {
            let delay = after.unwrap_or_else(|| runner.backoff(job.attempts + 1));
            // A job enqueued by name is held to its type's MAX_ATTEMPTS.
            let dead = super::attempts::spent(&job, runner.max_attempts());
            let notes = cx.notes.lock().expect("job notes poisoned").take_for_send();
            let failure = Failure {
                error: &error,
                delay,
                dead,
                deleted: operator_told(shared, &cx),
                lease_ends: cx.lease_expires_at(),
            };
            report_failure(shared, &job, &lease, failure, &notes).await;
        }
        Outcome::Failed(JobError::Fail { error }) => {
            let notes = cx.notes.lock().expect("job notes poisoned").take_for_send();
            let failure = Failure {
                error: &error,
                delay: Duration::ZERO,
                dead: true,
                deleted: operator_told(shared, &cx),
                lease_ends: cx.lease_expires_at(),
            };
            report_failure(shared, &job, &lease, failure, &notes).await
        }
        Outcome::Failed(JobError::RateLimited { retry_after }) => {
            let retry_after =
                retry_after.clamp(Duration::from_millis(1), crate::flow::MAX_PUSHBACK);
            match Box::pin(shared.queue.release_pushing_back(&lease, retry_after)).await {
                Ok(()) => tracing::info!(
                    retry_after_ms = retry_after.as_millis() as u64,
                    "rate limited; released without an attempt, its limiter pushed back"
                ),
                Err(QueueError::LeaseLost { .. }) => {
                    tracing::warn!("rate limited, but the lease was lost meanwhile")
                }
                Err(e) => tracing::warn!(
                    error = %e,
                    "rate limited, and releasing it failed; it returns after its lease lapses"
                ),
            }
        }
        Outcome::LeaseLost => {
            cx.cancel.cancel();
            tracing::warn!(
                "lease lost: the job was reclaimed for another worker, or deleted; \
                 job stopped and not acknowledged"
            );
        }
        Outcome::Cancelled => {
            cx.cancel.cancel();
            tracing::info!("cancelled by an operator: job stopped");
        }
        Outcome::Deleted => {
            cx.cancel.cancel();
            tracing::info!("deleted by an operator while it ran: job stopped");
        }
        Outcome::Interrupted => {
            cx.cancel.cancel();
            give_back(shared, &lease, ShutdownRelease::Interrupted).await;
        }
        Outcome::StoppedForShutdown => {
            give_back(shared, &lease, ShutdownRelease::Stopped).await;
        }
        Outcome::Failed(JobError::Stopped) => unreachable!("mapped to a retry above"),
    }
}

/// Release a job this worker stops running because it shuts down: due
/// again at once, no attempt counted, and a `given_back` event says why.
async fn give_back(shared: &Shared, lease: &Held, why: ShutdownRelease) {
    let why_text = match why {
        ShutdownRelease::Interrupted => "shutdown grace period over",
        ShutdownRelease::Stopped => "stopped early for the shutdown",
    };
    match Box::pin(shared.queue.release_for_shutdown(lease, why)).await {
        Ok(()) => {
            shared.totals.released.fetch_add(1, Ordering::Relaxed);
            tracing::info!("{why_text}: job released for another worker, no attempt counted")
        }
        Err(e) => {
            tracing::warn!(error = %e, "{why_text}, but the job could not be released; it returns after its lease lapses")
        }
    }
}

/// Whether an operator's word on the holder channel (a cancel, or a
/// forced delete: `super::cancels`) fired the job's cancellation: the only
/// other thing that fires it before its outcome is the worker's shutdown.
/// After it, a lease found gone (or an ack that finds no job) was deleted,
/// since a cancel answers `JobCancelled`. A word that did not arrive (the
/// listener reconnecting) leaves the heartbeat's answer alone.
fn operator_told(shared: &Shared, cx: &JobCx) -> bool {
    cx.cancel.is_cancelled() && !shared.shutdown.is_cancelled()
}

/// What the ack of a succeeded job tells: its result and run time, and
/// whether it has notes to forget. Notes not sent yet are dropped: the ack
/// would delete them.
fn completion(cx: &JobCx, run_time: Duration) -> Completion {
    let done = Completion::with_json(cx.result_json(), run_time);
    if cx.notes.lock().expect("job notes poisoned").stored {
        done.noted()
    } else {
        done
    }
}

/// Hand the lease to the acker and wait for this job's own outcome; the
/// acker sends it again on a connection's trouble until `lease_ends`.
async fn acknowledge(
    shared: &Shared,
    held: Held,
    completion: Completion,
    lease_ends: SystemTime,
) -> AckReply {
    let (reply, outcome) = tokio::sync::oneshot::channel();
    let request = AckRequest {
        held,
        completion,
        lease_ends,
        reply,
    };
    if let Err(unsent) = shared.acks.send(request) {
        // The acker is gone (only while the worker winds down): ack directly.
        let AckRequest {
            held, completion, ..
        } = unsent.0;
        let leases = std::slice::from_ref(&held.lease);
        let completions = std::slice::from_ref(&completion);
        let mut outcomes = Box::pin(shared.queue.ack_batch(held.shard, leases, completions)).await;
        let outcome = outcomes
            .pop()
            .unwrap_or_else(|| Err(QueueError::Protocol("ack returned no outcome".into())));
        return AckReply {
            outcome,
            sent_before: false,
        };
    }
    outcome.await.unwrap_or_else(|_| AckReply {
        outcome: Err(QueueError::Protocol("the acker stopped".into())),
        sent_before: false,
    })
}

/// Log a finished job's ack that failed for good, saying what is known:
/// whether it may have been applied, and until when the acker sent it
/// again (`super::acker`).
fn ack_failed(shared: &Shared, e: &QueueError, sent_before: bool) {
    shared.totals.unrecorded.fetch_add(1, Ordering::Relaxed);
    match GivenUp::after(e, sent_before, &shared.hard_stop) {
        GivenUp::Refused => tracing::error!(
            error = %e,
            "finished, but the acknowledgement failed; the job will run again after its lease lapses"
        ),
        GivenUp::Unanswered { until } => tracing::error!(
            error = %e,
            "finished, but Redis did not answer its acknowledgement before {until}; it may or \
             may not have been applied; if not, the job runs again after its lease lapses"
        ),
        GivenUp::Unsent { until } => tracing::error!(
            error = %e,
            "finished, but its acknowledgement could not be sent before {until}; the job runs \
             again after its lease lapses"
        ),
    }
}

/// Log a failure whose record failed for good, saying what is known, as
/// [`ack_failed`] does for an ack.
fn failure_unrecorded(shared: &Shared, error: &str, e: &QueueError, sent_before: bool) {
    shared.totals.unrecorded.fetch_add(1, Ordering::Relaxed);
    match GivenUp::after(e, sent_before, &shared.hard_stop) {
        GivenUp::Unanswered { until } => tracing::error!(
            error,
            report_error = %e,
            "failed, but Redis did not answer the failure's record before {until}; it may or may \
             not have been recorded; if not, the job returns after its lease lapses"
        ),
        GivenUp::Refused | GivenUp::Unsent { .. } => tracing::error!(
            error,
            report_error = %e,
            "failed, and recording the failure failed; it returns after its lease lapses"
        ),
    }
}

/// Extend the lease every third of its length for as long as the job runs;
/// return only when the lease was lost or the job cancelled (the caller then
/// drops the job).
async fn keep_lease(queue: &Backend, lease: &Held, length: Duration, cx: &JobCx) -> Lost {
    let every = length / 3;
    loop {
        tokio::time::sleep(every).await;
        let notes = cx.notes.lock().expect("job notes poisoned").take_for_send();
        match Box::pin(queue.extend(lease, length, &notes)).await {
            Ok(expiry) => *cx.lease_expires_at.lock().expect("lease deadline poisoned") = expiry,
            Err(QueueError::LeaseLost { .. }) => return Lost::ToAnother,
            Err(QueueError::JobCancelled { .. }) => return Lost::Cancelled,
            Err(e) => {
                // Sent again with the next extension, before newer notes.
                cx.notes
                    .lock()
                    .expect("job notes poisoned")
                    .unsent
                    .restore(notes);
                tracing::warn!(error = %e, "lease extension failed; retrying")
            }
        }
    }
}

async fn dead_letter(shared: &Shared, job: &Job, lease: &Held, why: &str) {
    let failure = Failure {
        error: why,
        delay: Duration::ZERO,
        dead: true,
        deleted: false,
        lease_ends: job.lease_expires_at,
    };
    report_failure(shared, job, lease, failure, &NoteBatch::new()).await;
}

/// A failed run to record.
struct Failure<'a> {
    error: &'a str,
    /// Before the retry.
    delay: Duration,
    /// Dead-letter it now.
    dead: bool,
    /// An operator's word fired its cancellation ([`operator_told`]).
    deleted: bool,
    /// When its lease lapses: the report is not sent again after it.
    lease_ends: SystemTime,
}

async fn report_failure(
    shared: &Shared,
    job: &Job,
    lease: &Held,
    failure: Failure<'_>,
    notes: &NoteBatch,
) {
    let Failure {
        error,
        delay,
        dead,
        deleted,
        lease_ends,
    } = failure;
    shared.totals.failed.fetch_add(1, Ordering::Relaxed);
    let sent = super::resend::until_answered(lease_ends, &shared.hard_stop, || {
        Box::pin(shared.queue.fail(lease, delay, error, dead, notes))
    })
    .await;
    match sent.outcome {
        Ok(Nacked::Retrying { attempts, due_at }) => {
            let in_ms = due_at
                .duration_since(SystemTime::now())
                .unwrap_or_default()
                .as_millis();
            tracing::warn!(
                error,
                attempts,
                retry_in_ms = in_ms as u64,
                "failed; will retry"
            );
        }
        Ok(Nacked::DeadLettered { attempts }) => {
            tracing::error!(error, attempts, "failed; dead-lettered");
            let _ = shared.failures.send(JobFailed {
                queue: job.queue.clone(),
                id: job.id.clone(),
                name: job.name.clone(),
                error: error.to_owned(),
                attempts,
            });
        }
        Err(QueueError::LeaseLost { .. }) if deleted => {
            tracing::info!(
                error,
                "failed, but an operator had deleted it while it ran: not retried"
            )
        }
        // Sent again after an earlier send went unanswered, within the
        // lease: that send had ended it.
        Err(QueueError::LeaseLost { .. }) if sent.sent_before => tracing::info!(
            error,
            "failed; a report of it that went unanswered had been recorded (sent again, it \
             found the lease ended)"
        ),
        Err(QueueError::LeaseLost { .. }) => {
            tracing::warn!(error, "failed, but the lease was lost meanwhile")
        }
        Err(QueueError::JobCancelled { .. }) => {
            tracing::info!(
                error,
                "failed, but an operator had cancelled it: not retried"
            )
        }
        Err(e) => failure_unrecorded(shared, error, &e, sent.sent_before),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}
