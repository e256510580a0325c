//! Pushing typed jobs: into a backend (one Redis namespace, shards, or
//! memory), or run at once in inline mode.

mod backends;
mod new_job;

use serde::Serialize;

use super::backend::{Backend, WorkerBackend};
use super::context::{JobCx, Services};
use super::typed::TypedJob;
use crate::{Enqueued, NewJob, QueueError};
pub(crate) use new_job::{new_job, payload};

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

impl From<Enqueued> for Pushed {
    fn from(outcome: Enqueued) -> Self {
        match outcome {
            Enqueued::Created(id) => Pushed::Queued { id },
            Enqueued::Duplicate(id) => Pushed::Duplicate { id },
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
    /// Push into `queue`: a [`RedisQueue`](crate::RedisQueue), a
    /// [`ShardedQueue`](crate::ShardedQueue) or a
    /// [`MemoryQueue`](crate::MemoryQueue), whichever the workers claim from.
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

    /// Push `job`, as its backend's `push` does (e.g.
    /// [`RedisQueue::push`](crate::RedisQueue::push)). Inline, it is
    /// serialized as a queued push would serialize it, so a job a backend
    /// would refuse is refused here too, then run.
    pub async fn push<T: TypedJob>(&self, job: &T) -> Result<Pushed, QueueError> {
        self.push_with(job, |new| new).await
    }

    /// Push `job` after `options` set more on it, as its backend's
    /// `push_with` does (e.g.
    /// [`RedisQueue::push_with`](crate::RedisQueue::push_with)). Inline, the
    /// job is serialized and `options` called as for a backend, but they do
    /// not apply: the job runs now, whatever its delay, priority or
    /// ordering key.
    pub async fn push_with<T: TypedJob>(
        &self,
        job: &T,
        options: impl FnOnce(NewJob) -> NewJob,
    ) -> Result<Pushed, QueueError> {
        match &self.backend {
            Some(Backend::Redis(redis)) => redis.push_with(job, options).await,
            Some(Backend::Sharded(sharded)) => sharded.push_with(job, options).await,
            Some(Backend::Memory(memory)) => memory.push_with(job, options).await,
            None => {
                options(new_job(job)?);
                Ok(run_inline(job, &self.services).await)
            }
        }
    }

    /// Push many jobs, as its backend's `push_batch` does (e.g.
    /// [`RedisQueue::push_batch`](crate::RedisQueue::push_batch)): one
    /// outcome per job, in input order. Inline, every job is serialized
    /// first, then each runs in turn.
    pub async fn push_batch<T: TypedJob>(&self, jobs: &[T]) -> Result<Vec<Pushed>, QueueError> {
        match &self.backend {
            Some(Backend::Redis(redis)) => redis.push_batch(jobs).await,
            Some(Backend::Sharded(sharded)) => sharded.push_batch(jobs).await,
            Some(Backend::Memory(memory)) => memory.push_batch(jobs).await,
            None => {
                new_job::new_jobs(jobs)?;
                let mut ran = Vec::with_capacity(jobs.len());
                for job in jobs {
                    ran.push(run_inline(job, &self.services).await);
                }
                Ok(ran)
            }
        }
    }
}

async fn run_inline<T: TypedJob>(job: &T, services: &Services) -> Pushed {
    let id = crate::job_id::next().to_string();
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
