//! What a running job sees: its identity, its attempt, its lease, a
//! cancellation signal, and the services the worker was given.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

/// Typed shared services (a DB pool, an HTTP client) handed to every job.
/// Cheap to clone.
#[derive(Clone, Default)]
pub struct Services {
    by_type: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Services({} registered)", self.by_type.len())
    }
}

impl Services {
    /// No services.
    pub fn new() -> Self {
        Services::default()
    }

    /// Add a service, found again by its type; a second value of the same
    /// type replaces the first.
    #[must_use]
    pub fn with<T: Send + Sync + 'static>(mut self, service: T) -> Self {
        Arc::make_mut(&mut self.by_type).insert(TypeId::of::<T>(), Arc::new(service));
        self
    }

    /// The service of type `T`, if one was added.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.by_type
            .get(&TypeId::of::<T>())
            .and_then(|s| s.downcast_ref::<T>())
    }
}

/// What a running job sees.
#[derive(Debug, Clone)]
pub struct JobCx {
    pub(crate) id: String,
    pub(crate) queue: String,
    pub(crate) name: String,
    pub(crate) attempt: u32,
    pub(crate) lease_expires_at: Arc<Mutex<SystemTime>>,
    pub(crate) cancel: CancellationToken,
    pub(crate) services: Services,
    /// The result set with [`JobCx::set_result`], as JSON.
    pub(crate) result: Arc<Mutex<Option<String>>>,
    /// Progress and log lines not sent yet, and whether the job has notes
    /// stored (see [`crate::notes`]).
    pub(crate) notes: Arc<Mutex<Notes>>,
    /// The gate the job waited on and the namespace holding it, when it
    /// has one ([`JobCx::dependencies`]).
    pub(crate) awaits: Option<Awaits>,
}

/// Where a job's dependencies are read: its gate, in its namespace.
#[derive(Debug, Clone)]
pub(crate) struct Awaits {
    pub namespace: crate::RedisQueue,
    pub gate: String,
}

/// A running job's notes as its worker tracks them.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    /// Not sent yet: they ride the next heartbeat, or the nack.
    pub unsent: crate::NoteBatch,
    /// The job may have notes stored (from an earlier attempt, or sent by
    /// this one), so its ack must forget them. Set before a send, since a
    /// send cut short may still have landed.
    pub stored: bool,
}

impl Notes {
    /// Take the unsent notes to send, marking the job as noted when there
    /// are any.
    pub fn take_for_send(&mut self) -> crate::NoteBatch {
        if !self.unsent.is_empty() {
            self.stored = true;
        }
        self.unsent.take()
    }
}

impl JobCx {
    /// The job id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The queue the job was claimed from.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// The job type name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This run's attempt number: 1 on the first run, 2 after one failure…
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// When the current lease lapses; heartbeats push it forward while the
    /// job runs.
    pub fn lease_expires_at(&self) -> SystemTime {
        *self
            .lease_expires_at
            .lock()
            .expect("lease deadline poisoned")
    }

    /// True once the job should wrap up: the worker began shutting down
    /// (at once, not at the grace period's end: the handler has the rest
    /// of the grace to finish or checkpoint, then its future is dropped and
    /// the job released, no attempt counted), or an operator cancelled or
    /// deleted the job (see [`crate::kept`]; the job is gone for good and
    /// its ack would change nothing).
    ///
    /// A lost lease (found reclaimed or gone by a lease extension) and the
    /// job's timeout are not signalled to the handler: its future is
    /// dropped at once. After a lost lease this fires too, for tasks the
    /// handler spawned with a clone of this context.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the job should stop (see [`JobCx::is_cancelled`]). A
    /// handler stopping for the worker's shutdown returns
    /// [`JobError::stopped`](super::JobError::stopped) to be given back
    /// without an attempt counted.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }

    /// The job's result, kept with it when its queue keeps finished jobs
    /// (see [`crate::kept`]) and sent with its acknowledgement (no extra
    /// round trip). A later call replaces an earlier one. Refused, never
    /// cut, when its JSON is over [`crate::kept::MAX_RESULT_BYTES`]; the
    /// job may still succeed without one. Returning that error
    /// (`cx.set_result(&v)?`) fails the attempt: the job is retried from
    /// the start, side effects included. A queue without a retention
    /// policy keeps no result (the driver warns once per queue).
    pub fn set_result<T: serde::Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<(), crate::QueueError> {
        let json = crate::kept::result_json(value)?;
        *self.result.lock().expect("job result poisoned") = Some(json);
        Ok(())
    }

    /// The result set so far, as JSON text (inline mode and tests read it).
    pub fn result_json(&self) -> Option<String> {
        self.result.lock().expect("job result poisoned").clone()
    }

    /// Report the job's progress (a serde value; the latest wins), shown in
    /// `redq jobs show` and the console's job detail. Buffered and sent
    /// with the worker's next lease extension (no round trip of its own);
    /// what is unsent when the job fails goes with its nack. Refused, never
    /// cut, when its JSON is over [`crate::notes::MAX_PROGRESS_BYTES`].
    pub fn progress<T: serde::Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<(), crate::QueueError> {
        self.notes
            .lock()
            .expect("job notes poisoned")
            .unsent
            .progress(value)
    }

    /// Append a log line (a newline starts another), sent like
    /// [`JobCx::progress`]. Bounded: a line keeps
    /// [`crate::notes::MAX_LINE_BYTES`], a job its last
    /// [`crate::notes::MAX_LOG_LINES`] lines and
    /// [`crate::notes::MAX_LOG_BYTES`], the oldest dropped.
    pub fn log(&self, line: &str) {
        self.notes
            .lock()
            .expect("job notes poisoned")
            .unsent
            .log(line)
    }

    /// The progress and lines not sent yet (inline mode and tests read
    /// them: a detached context sends nothing).
    pub fn unsent_notes(&self) -> crate::NoteBatch {
        self.notes
            .lock()
            .expect("job notes poisoned")
            .unsent
            .clone()
    }

    /// The gate this job waited on before it was released (its batch's id
    /// for a callback, its own id for a job with dependencies or a tree
    /// parent), if any (see [`crate::workflow`]).
    pub fn awaited_gate(&self) -> Option<&str> {
        self.awaits.as_ref().map(|a| a.gate.as_str())
    }

    /// A page of the jobs this job waited on (its dependencies, its
    /// batch's jobs, its children) with their outcomes and results, in id
    /// order from `cursor` ("" for the start, then the page's `next`), at
    /// most `count` (1 to [`crate::workflow::MAX_MEMBERS_PAGE`]). Empty when
    /// it waited on nothing. The outcomes stay readable until 24 hours after
    /// its gate finished.
    pub async fn dependencies(
        &self,
        cursor: &str,
        count: usize,
    ) -> Result<crate::gate::MemberPage, crate::QueueError> {
        match &self.awaits {
            Some(a) => a.namespace.gate_members(&a.gate, cursor, count).await,
            None => Ok(crate::gate::MemberPage {
                members: Vec::new(),
                next: None,
            }),
        }
    }

    /// The service of type `T` registered on the worker.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.services.get::<T>()
    }

    /// A context for running a job outside a worker (inline mode, tests).
    pub fn detached(
        id: impl Into<String>,
        queue: impl Into<String>,
        name: impl Into<String>,
        services: Services,
    ) -> Self {
        JobCx {
            id: id.into(),
            queue: queue.into(),
            name: name.into(),
            attempt: 1,
            lease_expires_at: Arc::new(Mutex::new(SystemTime::UNIX_EPOCH)),
            cancel: CancellationToken::new(),
            services,
            result: Arc::default(),
            notes: Arc::default(),
            awaits: None,
        }
    }
}
