//! redq: a Redis-backed job queue.
//!
//! # Quick start
//!
//! A job is a serde type with a stable name ([`TypedJob`](worker::TypedJob)).
//! Producers push it; a [`Worker`](worker::Worker) claims it, runs it,
//! acknowledges or retries it, keeps its lease alive and shuts down
//! gracefully. Shared services such as a database pool are handed to the
//! worker once and read by type in each handler.
//!
//! ```no_run
//! use redq::worker::{
//!     shutdown_on_signals, JobCx, JobError, Registry, Services, TypedJob, WorkOptions, Worker,
//! };
//! use redq::RedisQueue;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Resize { image_id: u64 }
//!
//! impl TypedJob for Resize {
//!     const NAME: &'static str = "images::resize"; // stored with each job: keep it stable
//!     const QUEUE: &'static str = "images";
//!
//!     async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
//!         let db = cx.service::<Pool>().ok_or_else(|| JobError::fail("no pool"))?;
//!         db.mark_resized(self.image_id).await?; // an error retries with backoff
//!         Ok(())
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), redq::QueueError> {
//!     let queue = RedisQueue::connect("redis://127.0.0.1:6379").await?;
//!     queue.push(&Resize { image_id: 7 }).await?;
//!
//!     let mut registry = Registry::new();
//!     registry.add_job::<Resize>();
//!     let pool = Pool::default(); // your database pool, HTTP client…
//!     let worker = Worker::new(queue, registry, WorkOptions::new())?
//!         .services(Services::new().with(pool));
//!     worker.run(shutdown_on_signals()).await?; // until SIGTERM or Ctrl-C
//!     Ok(())
//! }
//! # #[derive(Default)]
//! # struct Pool;
//! # impl Pool {
//! #     async fn mark_resized(&self, _: u64) -> Result<(), std::io::Error> { Ok(()) }
//! # }
//! ```
//!
//! With no queues in its [`WorkOptions`](worker::WorkOptions), the worker
//! serves the queues of the types it has registered. A service is found by
//! its exact type: register an `Arc<Pool>` and the handler asks for
//! `cx.service::<Arc<Pool>>()`; asking for `Pool` then finds nothing.
//! [`JobError::fail`](worker::JobError::fail) dead-letters a job at once
//! instead of retrying it. Two attempt numbers exist side by side:
//! [`JobCx::attempt`](worker::JobCx::attempt) numbers the run, 1 on the
//! first, while [`Job::attempts`] counts failed tries, 0 at the first
//! claim, so a run sees `attempt()` equal to `attempts + 1`.
//!
//! Any JSON can be enqueued too, with options per job:
//! `queue.add("reports", NewJob::new(json).priority(5).delay(d))`
//! ([`NewJob`]). Priorities run higher first (0 by default, up to 255).
//! BullMQ and River run the other way (1 is their highest), so a
//! `priority(1)` carried over from them is nearly the lowest here.
//!
//! # The model
//!
//! Producers enqueue JSON jobs into named queues. A job is **waiting** when it
//! is due, **scheduled** while delayed or backing off before a retry,
//! **blocked** while an earlier job with its ordering key is unfinished,
//! **held** while its limit key has no room under its limits
//! ([`flow`]), **leased** once a worker claimed it, and **dead** in the
//! dead-letter set once it may not be tried again. Completed jobs are
//! removed, unless their queue keeps results ([`kept`]).
//!
//! Every transition is one Lua script (in `lua/`) run atomically inside
//! Redis, reading Redis's own clock, so any number of producers, workers and
//! consoles can share one Redis, whatever their clocks say.
//!
//! A claim takes a **lease**: the job is held until the lease expires, and
//! carries a lease id, a fencing token. Ack, nack, extend and release present
//! that token; after the lease lapsed and the job was reclaimed or claimed
//! again, they fail with [`QueueError::LeaseLost`] and change nothing. A lapsed
//! lease counts a failed attempt and returns the job to its queue (first in
//! line), or dead-letters it when its attempts or retry window are spent.
//!
//! Delivery is **at least once**: a worker that dies mid-job has its job run
//! again after the lease lapses. Make handlers idempotent. Not promised:
//! exactly-once execution, or ordering between jobs without an ordering key
//! beyond "higher priority first, then oldest first".
//!
//! # Low-level API: claiming yourself
//!
//! [`RedisQueue`] also hands out leases directly, for a loop of your own.
//! Such a loop gets none of what the [`Worker`](worker::Worker) does for
//! you: heartbeats that extend a long job's lease, retries with its type's
//! backoff, timeouts, a graceful shutdown that releases what did not finish
//! in time, and giving back the jobs of a claim whose reply was lost.
//!
//! ```no_run
//! use std::time::Duration;
//! use redq::{NewJob, RedisQueue};
//!
//! # async fn demo() -> Result<(), redq::QueueError> {
//! let queue = RedisQueue::connect("redis://127.0.0.1:6379").await?;
//! queue.add("emails", NewJob::new(serde_json::json!({"to": "ada@example.com"})).max_attempts(5)).await?;
//!
//! for job in queue.claim("emails", 10, Duration::from_secs(30)).await? {
//!     match send(&job.payload).await {
//!         Ok(()) => { queue.ack(&job.lease()).await?; }
//!         Err(e) => { queue.nack(&job.lease(), Duration::from_secs(5), &e).await?; }
//!     }
//! }
//! # Ok(()) }
//! # async fn send(_: &serde_json::Value) -> Result<(), String> { Ok(()) }
//! ```
//!
//! The seed trait [`Queue`] offers the same core as seven methods.
//!
//! A namespace may store its waiting jobs in a smaller record, 16 bytes a
//! job less, once every driver on it is this version or later:
//! [`RecordFormat`] (`redq record-format compact`).
//!
//! # Operating queues
//!
//! Counts, listings, dead letters and pausing are one API, [`Operator`], over
//! one namespace (`Operator::from(queue)`) or the shards of a
//! [`ShardedQueue`] alike; the `redq` CLI and console use only it. It is one
//! type holding the namespaces it covers rather than a trait implemented for
//! each handle, so that every call, and the progress of bulk work
//! (requeue-all, purge), is written once, and a caller choosing the shard
//! count at run time holds one concrete type; see [`Operator`].
//!
//! # Flow control
//!
//! Concurrency and rate limits per queue and per limit key (a job option,
//! like the ordering key but N-wide and unordered), stored in Redis and set
//! live: "at most 100 a second to the mail provider", "at most 5 of tenant
//! acme's jobs at once, across all workers". A slot is the lease itself, so
//! it frees exactly when the lease ends, fenced like every lease; a rate is
//! a sliding window on the Redis clock; a handler that hits a remote 429
//! returns [`worker::JobError::rate_limited`]. The model, the bounds, what a
//! claim costs and how limits split over shards: [`flow`].
//!
//! ```no_run
//! # async fn demo(queue: redq::RedisQueue) -> Result<(), redq::QueueError> {
//! use std::time::Duration;
//! use redq::flow::{Limit, LimitScope};
//! queue.set_limit("emails", LimitScope::Queue, Limit::rate(100, Duration::from_secs(1))).await?;
//! queue.set_limit("emails", LimitScope::EachKey, Limit::concurrency(5)).await?;
//! # Ok(()) }
//! ```
//!
//! # Configured by the deployment
//!
//! [`from_config`] connects the queue the environment (`REDIS_URL`,
//! `REDQ_NAMESPACE`, `REDQ_SHARDS`, …) and an optional config file
//! (`REDQ_CONFIG`) describe: one namespace, a [`ShardedQueue`], or a
//! [`MemoryQueue`] in inline mode, each behind the seed [`Queue`] trait as
//! a [`ConfiguredQueue`]. Every key, its variable and its default are in
//! [`config`].
//!
//! # Workflows
//!
//! Batches with callbacks, jobs that wait for other jobs, trees of parent
//! and child jobs, across the queues of a namespace: released exactly
//! once when what they wait for finished, with an explicit policy when a
//! dependency fails, status in O(1). The model and its bounds:
//! [`workflow`].
//!
//! Scripts answer expected outcomes with small codes, each declared in its
//! script's header (`-- code 1 acknowledged: …`); the driver names them once
//! and turns them into the outcome types and [`QueueError`] in one module,
//! checked against those headers by a test.
//!
//! # Where to go next
//!
//! - [`worker`]: the runtime, [`TypedJob`](worker::TypedJob),
//!   [`WorkOptions`](worker::WorkOptions), [`JobCx`](worker::JobCx),
//!   [`shutdown_on_signals`](worker::shutdown_on_signals).
//! - [`RedisQueue`]: connecting ([`RedisQueue::builder`]), pushing, and the
//!   fenced calls of the low-level API; [`ShardedQueue`] and [`MemoryQueue`]
//!   take its place.
//! - [`NewJob`]: every job option (priority, delay, ordering key, limit key,
//!   attempts, retry window).
//! - [`kept`]: kept results of finished jobs, waiting for a job's result,
//!   and cancelling.
//! - [`schedule`]: recurring cron and `@every` schedules.
//! - [`flow`]: concurrency and rate limits.
//! - [`workflow`]: batches, dependencies and trees of jobs.
//! - [`Operator`]: counts, listings, dead letters and pausing.
//! - [`events`]: following a namespace's event streams.
//! - `driver/examples/`: runnable producer, worker, graceful shutdown and
//!   in-memory programs.
#![warn(missing_docs)]

mod actor;
mod admin;
mod backoff;
mod blocked;
mod coalesce;
mod codes;
pub mod config;
mod connect;
mod connection_fault;
mod connection_watch;
mod dead_forms;
mod durable;
mod enqueue_args;
mod error;
mod event_kind;
mod event_stream;
pub mod events;
pub mod flow;
mod gate;
mod handle;
mod human;
mod identity;
mod job;
mod job_id;
pub mod kept;
pub mod keys;
mod layout;
mod leased;
pub mod limits;
mod lost_claim;
mod memory;
mod meta;
pub mod metrics;
#[cfg(test)]
mod module_graph;
mod msgpack_fields;
pub mod notes;
mod operator;
mod options;
mod outcome;
mod own_primary;
mod page;
mod park;
mod queue;
mod record_format;
mod record_rewrite;
mod redact;
mod redis_clock;
mod remembered;
pub mod schedule;
mod scripts;
pub mod search;
mod seed;
pub mod shards;
pub mod surgery;
mod trace;
mod unwaited;
pub mod worker;
pub mod workflow;

pub use admin::{DeadAction, QueueCounts, QueueEvent, ServerStats, StatsBucket, STATS_BUCKET};
pub use backoff::Backoff;
pub use blocked::BLOCKED_STEP;
pub use config::{from_config, ConfiguredQueue};
pub use connect::{
    RedisQueueBuilder, DEFAULT_COMMAND_TIMEOUT, DEFAULT_NAMESPACE, DEFAULT_PAYLOAD_LIMIT,
    DEFAULT_POOL_SIZE,
};
pub use connection_fault::ConnectionFault;
pub use durable::Durable;
pub use error::{QueueError, RedisError};
pub use handle::RedisQueue;
pub use identity::WorkerIdentity;
pub use job::{Job, JobRecord, JobState, Lease};
pub use kept::{CancelOutcome, Completion, DeadBound, JobResult, KeptJob, Retention};
pub use memory::MemoryQueue;
pub use notes::{JobNotes, NoteBatch};
pub use operator::Operator;
pub use options::NewJob;
pub use outcome::{Acked, DeadLetterReport, Enqueued, Nacked, Reclaimed};
pub use page::Page;
pub use record_format::RecordFormat;
pub use record_rewrite::{NewerRecords, RecordsRewritten};
pub use redact::redact_url;
/// The script list, its composition and the job record decoder, for the
/// tests crate (not part of the API).
#[doc(hidden)]
pub use scripts::exposed as lua;
pub use scripts::{FunctionLibrary, ScriptCalls};
pub use seed::Queue;
pub use shards::ShardedQueue;
pub use surgery::{DeadLettered, IfLeased, RetriedNow};

/// The README's Rust examples, compiled as doctests so they stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
