//! Pushing typed jobs: into a backend (one Redis namespace, shards, or
//! memory), or run at once in inline mode.

use serde::Serialize;

use super::backend::{Backend, WorkerBackend};
use super::context::{JobCx, Services};
use super::typed::TypedJob;
use crate::{Enqueued, MemoryQueue, NewJob, QueueError, RedisQueue, ShardedQueue};

/// A pushed job's fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Pushed {
    /// Queued under a new id.
    Queued {
        /// The new job's id.
        id: String,
    },
    /// A pending job with the same dedup key exists; nothing was queued.
    Duplicate {
        /// The existing job's id.
        id: String,
    },
    /// Inline mode: the job ran in the pushing task.
    Ran {
        /// A fresh id, for logs.
        id: String,
        /// The run's error, if it failed (inline runs are not retried).
        error: Option<String>,
    },
}

impl Pushed {
    /// The job id.
    pub fn id(&self) -> &str {
        match self {
            Pushed::Queued { id } | Pushed::Duplicate { id } | Pushed::Ran { id, .. } => id,
        }
    }
}

/// How a [`JobQueue`] runs pushed jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Into its backend, for workers to run.
    Queued,
    /// At once, in the pushing task: for tests and apps without a worker.
    Inline,
}

/// The typed push handle. Cheap to clone.
#[derive(Debug, Clone)]
pub struct JobQueue {
    backend: Option<Backend>,
    services: Services,
}

impl JobQueue {
    /// Push into `queue`: a [`RedisQueue`], a [`ShardedQueue`] or a
    /// [`MemoryQueue`], whichever the workers claim from.
    pub fn new(queue: impl Into<WorkerBackend>) -> Self {
        JobQueue {
            backend: Some(queue.into().0),
            services: Services::new(),
        }
    }

    /// Run every pushed job at once, in process, with `services`. Each run
    /// gets a detached [`JobCx`] (attempt 1, never cancelled) and the job
    /// type's timeout; it is not retried.
    pub fn inline(services: Services) -> Self {
        JobQueue {
            backend: None,
            services,
        }
    }

    /// Which mode this handle runs in.
    pub fn mode(&self) -> Mode {
        if self.backend.is_some() {
            Mode::Queued
        } else {
            Mode::Inline
        }
    }

    /// Push `job`.
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        match &self.backend {
            Some(Backend::Redis(redis)) => redis.push(job).await,
            Some(Backend::Sharded(sharded)) => sharded.push(job).await,
            Some(Backend::Memory(memory)) => memory.push(job).await,
            None => Ok(run_inline(job, &self.services).await),
        }
    }
}

async fn run_inline<T: TypedJob>(job: &T, services: &Services) -> Pushed {
    let id = ulid::Ulid::new().to_string();
    let cx = JobCx::detached(id.clone(), T::QUEUE, T::NAME, services.clone());
    let error = match tokio::time::timeout(T::TIMEOUT, job.run(&cx)).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.message().to_owned()),
        Err(_) => Some(format!(
            "timed out after {}",
            crate::human::duration_text(T::TIMEOUT)
        )),
    };
    Pushed::Ran { id, error }
}

/// A typed job's payload.
fn payload<T: TypedJob>(job: &T) -> Result<serde_json::Value, QueueError> {
    serde_json::to_value(job).map_err(|e| {
        QueueError::invalid(
            "job",
            T::NAME,
            format!("a job that serializes to JSON ({e})"),
        )
    })
}

/// The enqueue options a typed job carries.
pub(crate) fn new_job<T: TypedJob>(job: &T) -> Result<NewJob, QueueError> {
    let payload = payload(job)?;
    let mut new = NewJob::new(payload)
        .name(T::NAME)
        .max_attempts(T::MAX_ATTEMPTS)
        .reclaim_backoff(T::BACKOFF)
        .priority(job.priority());
    if let Some(window) = T::RETRY_WINDOW {
        new = new.retry_window(window);
    }
    if let Some(key) = job.dedup_key() {
        new = new.dedup_key(key);
    }
    if let Some(key) = job.ordering_key() {
        new = new.ordering_key(key);
    }
    if let Some(key) = job.limit_key() {
        new = new.limit_key(key);
    }
    Ok(new)
}

impl RedisQueue {
    /// Push a typed job onto `T::QUEUE` with its name and options. Pushing a
    /// type no local worker registered is fine: another service may run it.
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        Ok(match self.add(T::QUEUE, new_job(job)?).await? {
            Enqueued::Created(id) => Pushed::Queued { id },
            Enqueued::Duplicate(id) => Pushed::Duplicate { id },
        })
    }
}

impl ShardedQueue {
    /// Push a typed job onto `T::QUEUE`, as [`RedisQueue::push`] does, on
    /// the shard its ordering key (else its limit key, else its dedup key)
    /// routes to, or the next shard in turn when it has none (see
    /// [`ShardedQueue::add`]).
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        Ok(match self.add(T::QUEUE, new_job(job)?).await? {
            Enqueued::Created(id) => Pushed::Queued { id },
            Enqueued::Duplicate(id) => Pushed::Duplicate { id },
        })
    }
}

impl MemoryQueue {
    /// Push a typed job onto `T::QUEUE` with its name, `MAX_ATTEMPTS` and
    /// ordering key, for a [`Worker`](super::Worker) over this queue. What a
    /// `MemoryQueue` does not keep is ignored: priority, dedup key, limit
    /// key and retry window (see [`MemoryQueue`]), so a push is always
    /// `Queued`.
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        let id = self.push_named(
            T::QUEUE,
            payload(job)?,
            T::NAME,
            T::MAX_ATTEMPTS,
            job.ordering_key(),
        )?;
        Ok(Pushed::Queued { id })
    }
}
