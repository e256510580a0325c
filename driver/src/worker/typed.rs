//! Typed jobs: a serde struct that knows how to run itself.

use std::future::Future;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::context::JobCx;
use crate::backoff::Backoff;

/// The queue a typed job lands on when it names none.
pub const DEFAULT_QUEUE: &str = "default";

/// [`TypedJob::MAX_ATTEMPTS`] when a type sets none; also the limit of a job
/// whose name no handler is registered for ([`super::UnknownNames::Retry`]).
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// [`TypedJob::BACKOFF`] when a type sets none; also the backoff of a job
/// whose name no handler is registered for.
pub(crate) const DEFAULT_BACKOFF: Backoff =
    Backoff::exponential(Duration::from_secs(1), Duration::from_secs(3600));

/// Work to run later. The struct is the payload: its fields are stored as
/// JSON and read back by the worker, which looks the type up by [`NAME`].
///
/// Named `TypedJob` so it does not clash with [`crate::Job`], the claimed
/// job the driver hands out.
///
/// ```no_run
/// use redq::worker::{JobCx, JobError, TypedJob};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct SendDigest { user_id: i64 }
///
/// impl TypedJob for SendDigest {
///     const NAME: &'static str = "acme.blog::send_digest";
///     const MAX_ATTEMPTS: u32 = 5;
///
///     async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
///         let http = cx.service::<reqwest_like::Client>().ok_or_else(|| JobError::fail("no http client"))?;
///         http.post(self.user_id).await?; // any error converts with `?`
///         Ok(())
///     }
/// }
/// # mod reqwest_like {
/// #   pub struct Client;
/// #   impl Client { pub async fn post(&self, _: i64) -> Result<(), std::io::Error> { Ok(()) } }
/// # }
/// ```
///
/// [`NAME`]: TypedJob::NAME
pub trait TypedJob: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// A stable name: it is stored with every job, so renaming the Rust type
    /// is fine but changing this strands jobs already queued.
    const NAME: &'static str;
    /// The queue pushes go to (default [`DEFAULT_QUEUE`]). A worker whose
    /// options name no queues serves its registered types' queues.
    const QUEUE: &'static str = DEFAULT_QUEUE;
    /// Failed attempts before the job is dead-lettered (default 10; 0 means
    /// unlimited). Pushes store it with each job; a job enqueued by name
    /// without a limit of its own (`NewJob::name`, a schedule's `job_name`,
    /// `redq enqueue`) is held to it by the worker that runs it.
    const MAX_ATTEMPTS: u32 = DEFAULT_MAX_ATTEMPTS;
    /// How long one run may take before it counts as a failed attempt and
    /// its future is dropped (default 5 minutes).
    const TIMEOUT: Duration = Duration::from_secs(300);
    /// Once enqueue time + this window has passed, a failure dead-letters the
    /// job instead of retrying (default: none).
    const RETRY_WINDOW: Option<Duration> = None;

    /// The job type's backoff (default: exponential from 1 s, doubling,
    /// capped at 1 hour, with jitter; see [`super::exponential_backoff`]).
    /// Pushes store it with each job, so a job whose lease lapses (its
    /// worker died) also comes back after it, not at once.
    const BACKOFF: Backoff = DEFAULT_BACKOFF;

    /// The delay before retry number `attempt` (1 for the first retry) after
    /// a failed run: [`TypedJob::BACKOFF`]'s. Override it for a policy that
    /// is not exponential; reclaims still follow `BACKOFF`.
    fn backoff(attempt: u32) -> Duration {
        Self::BACKOFF.delay(attempt)
    }

    /// A dedup key: while a job with this key is pending, pushing another
    /// returns the existing one (default: none).
    fn dedup_key(&self) -> Option<String> {
        None
    }

    /// An ordering key: jobs sharing it run one at a time, in push order
    /// (default: none).
    fn ordering_key(&self) -> Option<String> {
        None
    }

    /// A limit key: jobs sharing it are held to that key's limits within
    /// `QUEUE` (how many run at once, how many start per interval; see
    /// [`crate::flow`]), unordered (default: none).
    fn limit_key(&self) -> Option<String> {
        None
    }

    /// Priority, higher first (default 0).
    fn priority(&self) -> u8 {
        0
    }

    /// Do the work. Return [`super::JobError::retry`] to try again later,
    /// [`super::JobError::fail`] to dead-letter now; any other error
    /// converted with `?` is a retry.
    fn run(&self, cx: &JobCx) -> impl Future<Output = Result<(), super::JobError>> + Send;
}
