//! The worker's own sending again of a finished job's report (its ack, its
//! failure) after a connection's trouble: Redis restarting, paused,
//! unreachable, or a reply later than the command timeout. fred does not
//! send these again by itself (`scripts::Caller::resent_by_caller`), so the
//! worker knows which sends went before: a send after one that went
//! unanswered, which finds the job gone (an ack) or its lease ended (a
//! failure), most likely found that first send's doing, not an operator's.
//!
//! Sending again is harmless: every report is fenced by its lease. It stops
//! when the lease lapses (the job is then another worker's to run) or when
//! the worker's shutdown grace ends.

use std::future::Future;
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::connection_fault::ConnectionFault;
use crate::QueueError;

/// The pause before the first send again, doubled each time up to
/// [`LONGEST_PAUSE`].
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(100);
pub(crate) const LONGEST_PAUSE: Duration = Duration::from_secs(2);

/// Whether `e`, met by a report whose lease lasts until `lease_ends`, may
/// be cured by sending it again: a connection's passing trouble, while the
/// lease lasts and the grace has not ended.
pub(crate) fn worth_sending_again(
    e: &QueueError,
    lease_ends: SystemTime,
    grace_over: &CancellationToken,
) -> bool {
    e.connection_fault()
        .is_some_and(ConnectionFault::is_transient)
        && !grace_over.is_cancelled()
        && SystemTime::now() < lease_ends
}

/// Whether a send that failed with `e` may have reached Redis: one that
/// went unanswered (a timeout, a connection closed under it) may have been
/// applied; one refused a connection, or with no route to Redis, was never
/// sent.
pub(crate) fn may_have_been_applied(e: &QueueError) -> bool {
    matches!(
        e.connection_fault(),
        Some(ConnectionFault::NoAnswer | ConnectionFault::Closed)
    )
}

/// What is known of a report (an ack, a failure) given up with `e`: the
/// one reading both a failed ack's and a failed failure's log lines say.
pub(crate) enum GivenUp {
    /// Not a connection's trouble: Redis refused it, or it was malformed.
    Refused,
    /// A send went unanswered: it may or may not have been applied.
    Unanswered { until: &'static str },
    /// No send reached Redis (refused connections, no route).
    Unsent { until: &'static str },
}

impl GivenUp {
    /// `e` ended the last send; `sent_before` says an earlier one went
    /// unanswered; `grace_over` tells which deadline stopped the sends.
    pub fn after(e: &QueueError, sent_before: bool, grace_over: &CancellationToken) -> GivenUp {
        if !e
            .connection_fault()
            .is_some_and(ConnectionFault::is_transient)
        {
            return GivenUp::Refused;
        }
        let until = match grace_over.is_cancelled() {
            true => "the shutdown grace period ended",
            false => "its lease lapsed",
        };
        match sent_before || may_have_been_applied(e) {
            true => GivenUp::Unanswered { until },
            false => GivenUp::Unsent { until },
        }
    }
}

/// What the last send of a report answered, and whether an earlier send
/// may have been applied.
pub(crate) struct Sent<T> {
    pub outcome: Result<T, QueueError>,
    pub sent_before: bool,
}

/// Send a failure's report (`send`) until it is answered, or no longer
/// [`worth_sending_again`], pausing between sends as the acker does (the
/// acker keeps its own loop: it sends acks in batches).
pub(crate) async fn until_answered<T, F, Fut>(
    lease_ends: SystemTime,
    grace_over: &CancellationToken,
    mut send: F,
) -> Sent<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, QueueError>>,
{
    let mut sent_before = false;
    let mut pause = FIRST_PAUSE;
    loop {
        let outcome = send().await;
        match outcome {
            Err(e) if worth_sending_again(&e, lease_ends, grace_over) => {
                sent_before |= may_have_been_applied(&e);
                tracing::warn!(
                    error = %e,
                    again_in_ms = pause.as_millis() as u64,
                    "recording the job's failure failed; sending it again while its lease lasts"
                );
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = grace_over.cancelled() => {}
                }
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            outcome => {
                return Sent {
                    outcome,
                    sent_before,
                }
            }
        }
    }
}
