//! The worker registry: each running worker keeps a heartbeat record, so
//! operators see live workers and know which lease belongs to which.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::control::{Control, WorkerState};
use super::wake_ups::{WakeUps, WakeUpsCell};
use crate::job::{ms_to_time, time_to_ms};
use crate::scripts::{self, reply, Op};
use crate::scripts::{num, text};
use crate::{QueueError, RedisQueue};

/// How often a worker refreshes its record.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);
/// A worker silent this long is considered gone.
pub const WORKER_TTL: Duration = Duration::from_secs(15);
/// A gone worker (silent past [`WORKER_TTL`], not one that left cleanly) is
/// still listed, as gone, until silent for `WORKER_TTL + GONE_KEPT`: an
/// operator looking after an incident sees who vanished and when.
pub const GONE_KEPT: Duration = Duration::from_secs(600);

/// A live worker as the registry shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkerInfo {
    /// `node-instance`: matches the holder recorded on its leases.
    pub id: String,
    /// Worker node id.
    pub node: u64,
    /// Worker instance.
    pub instance: u32,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// When the worker started.
    pub started_at: SystemTime,
    /// The queues it serves.
    pub queues: Vec<String>,
    /// Its concurrency limit.
    pub concurrency: usize,
    /// Jobs running now.
    pub in_flight: u64,
    /// Jobs completed since it started.
    pub processed: u64,
    /// Failed attempts since it started.
    pub failed: u64,
    /// Its last heartbeat (Redis clock).
    pub last_heartbeat: SystemTime,
    /// Running, quiet or stopping (an operator's
    /// [`quiet_worker`](crate::Operator::quiet_worker) or `stop_worker`, or
    /// the worker's own shutdown, for its whole grace period).
    pub state: WorkerState,
    /// Silent past [`WORKER_TTL`]: lost, listed until [`GONE_KEPT`] more
    /// passed; `last_heartbeat` says when it was last seen.
    pub gone: bool,
    /// How it hears that work is due ([`WakeUps`]); `None` from a worker
    /// of an earlier version, which does not say.
    pub wake_ups: Option<WakeUps>,
    /// The version of the `redq` crate it runs; `None` from a worker of an
    /// earlier version, which does not say.
    pub version: Option<String>,
    /// Jobs handed to it whose messages never reached it, which it found
    /// and gave back since it started (each also a `handoff_lost` event
    /// naming it, and one of its queue's
    /// [`handoffs_lost`](crate::metrics::QueueMetrics::handoffs_lost)):
    /// above 0, its subscription broke or lagged. `None` from a worker of
    /// an earlier version, which does not say.
    pub handoffs_lost: Option<u64>,
    /// Jobs its claims leased whose replies never reached it, which it
    /// gave back since it started (each also a `claim_lost` event naming
    /// it, and one of its queue's
    /// [`claims_lost`](crate::metrics::QueueMetrics::claims_lost)): above
    /// 0, its connection to Redis broke or timed out mid-claim. `None`
    /// from a worker of an earlier version, which does not say.
    pub claims_lost: Option<u64>,
}

/// The JSON stored in `{ns}:workers:info`.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    node: String,
    instance: u32,
    host: String,
    pid: u32,
    started_at_ms: u64,
    queues: Vec<String>,
    concurrency: usize,
    in_flight: u64,
    processed: u64,
    failed: u64,
    /// `running`, `quiet` or `stopping`; absent from earlier versions.
    #[serde(default)]
    state: String,
    /// `shard`, `plain` or `polls`; absent from earlier versions. Kept as
    /// text: a word of a later version reads as unknown here, rather than
    /// making the whole record unreadable and its worker unlisted.
    #[serde(default)]
    wake_ups: Option<String>,
    /// The crate's version; absent from earlier versions.
    #[serde(default)]
    version: Option<String>,
    /// Lost hand-offs given back; absent from earlier versions.
    #[serde(default)]
    handoffs_lost: Option<u64>,
    /// Lost claims' jobs given back; absent from earlier versions.
    #[serde(default)]
    claims_lost: Option<u64>,
}

/// Live counters a worker publishes in its heartbeat.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    /// Jobs whose handlers run now (claimed and started, not yet returned).
    pub in_flight: AtomicU64,
    /// Jobs whose handlers returned and whose outcome (ack, retry or
    /// dead-letter) is being sent: not running, and not yet recorded.
    pub recording: AtomicU64,
    /// Finished jobs whose outcome Redis never confirmed (it failed, or the
    /// shutdown grace ended first): each may run again after its lease
    /// lapses. For the worker's last log line.
    pub unrecorded: AtomicU64,
    pub processed: AtomicU64,
    pub failed: AtomicU64,
    /// Hand-offs whose messages never arrived, given back
    /// (`super::unheard`).
    pub handoffs_lost: AtomicU64,
    /// Jobs of claims whose replies never arrived, given back
    /// (`super::lost_claims`).
    pub claims_lost: AtomicU64,
    /// Jobs still running at the shutdown grace period's end, given back
    /// for another worker (`super::execute`), for the worker's last log
    /// line.
    pub released: AtomicU64,
    /// Rewrite the record now rather than at the next heartbeat: a lost
    /// hand-off or claim is rare and is what an operator looks for in an
    /// incident; while shutting down, each job that ends changes the count
    /// of running ones an operator watches fall.
    pub beat_now: tokio::sync::Notify,
    /// An operator's quiet or stop, which the record reports.
    pub control: Arc<Control>,
}

pub(crate) fn worker_id(queue: &RedisQueue) -> String {
    let identity = queue.identity();
    format!("{}-{}", identity.node, identity.instance)
}

async fn beat(queue: &RedisQueue, id: &str, record: &str) -> Result<(), QueueError> {
    let args = vec![
        text(id),
        text(record),
        num(WORKER_TTL.as_millis() as u64),
        num(GONE_KEPT.as_millis() as u64),
    ];
    scripts::run(
        queue.caller(),
        Op::WorkerBeat,
        &queue.inner.keys.worker_beat(),
        args,
    )
    .await
    .map_err(|e| scripts::map_error(e, queue.inner.timeout))?;
    Ok(())
}

/// Keep this worker's record fresh until `stop`, then remove it.
pub(crate) async fn keep_alive(
    queue: RedisQueue,
    queues: Vec<String>,
    concurrency: usize,
    totals: Arc<Totals>,
    stop: CancellationToken,
    listening: CancellationToken,
    wake_ups: Arc<WakeUpsCell>,
) {
    // First listening (subscribed to the holder channel, or given up on
    // it): a record written before would list a worker deaf to an
    // operator's quiet, stop or cancel. A subscription slower than a
    // heartbeat's interval does not keep the worker unlisted.
    tokio::select! {
        _ = stop.cancelled() => return,
        _ = listening.cancelled() => {}
        _ = tokio::time::sleep(HEARTBEAT_EVERY) => {}
    }
    let id = worker_id(&queue);
    let identity = queue.identity();
    let started_at_ms = time_to_ms(SystemTime::now());
    let host = hostname::get()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let shown = totals.control.state();
        let record = Record {
            node: identity.node.to_string(),
            instance: identity.instance,
            host: host.clone(),
            pid: std::process::id(),
            started_at_ms,
            queues: queues.clone(),
            concurrency,
            in_flight: totals.in_flight.load(Ordering::Relaxed),
            processed: totals.processed.load(Ordering::Relaxed),
            failed: totals.failed.load(Ordering::Relaxed),
            state: shown.as_str().to_owned(),
            wake_ups: Some(wake_ups.get().as_str().to_owned()),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            handoffs_lost: Some(totals.handoffs_lost.load(Ordering::Relaxed)),
            claims_lost: Some(totals.claims_lost.load(Ordering::Relaxed)),
        };
        let json = serde_json::to_string(&record).expect("worker record serializes");
        if let Err(e) = beat(&queue, &id, &json).await {
            tracing::warn!(error = %e, "worker heartbeat failed; will retry");
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(HEARTBEAT_EVERY) => {}
            _ = totals.control.changed_from(shown) => {}
            _ = totals.beat_now.notified() => {}
        }
    }
    if let Err(e) = beat(&queue, &id, "").await {
        tracing::warn!(error = %e, "could not remove the worker record; it expires by itself");
    }
}

impl RedisQueue {
    /// The live workers of this namespace (heartbeat within
    /// [`WORKER_TTL`] on the Redis clock), by id, then the gone ones
    /// (`gone`: silent for longer, but for less than [`GONE_KEPT`] more).
    pub async fn workers(&self) -> Result<Vec<WorkerInfo>, QueueError> {
        let args = vec![
            num(WORKER_TTL.as_millis() as u64),
            num(10_000),
            num(GONE_KEPT.as_millis() as u64),
        ];
        let value = scripts::run(
            self.caller(),
            Op::WorkersList,
            &self.inner.keys.workers(),
            args,
        )
        .await
        .map_err(|e| scripts::map_error(e, self.inner.timeout))?;
        let mut workers = Vec::new();
        let mut items = reply::array(value)?.into_iter().skip(1);
        while let (Some(id), Some(beat), Some(record), Some(gone)) =
            (items.next(), items.next(), items.next(), items.next())
        {
            let id = reply::text(id)?;
            let Ok(record) = serde_json::from_slice::<Record>(&reply::bytes(record)?) else {
                continue;
            };
            workers.push(WorkerInfo {
                id,
                node: record.node.parse().unwrap_or(0),
                instance: record.instance,
                host: record.host,
                pid: record.pid,
                started_at: ms_to_time(record.started_at_ms),
                queues: record.queues,
                concurrency: record.concurrency,
                in_flight: record.in_flight,
                processed: record.processed,
                failed: record.failed,
                last_heartbeat: ms_to_time(reply::score(&beat)? as u64),
                state: WorkerState::parse(&record.state),
                gone: reply::int(&gone)? == 1,
                wake_ups: record.wake_ups.as_deref().and_then(WakeUps::parse),
                version: record.version,
                handoffs_lost: record.handoffs_lost,
                claims_lost: record.claims_lost,
            });
        }
        // Live ones first, each kind by id; a lost id listed twice (its
        // stale heartbeat, and the gone set) once.
        workers.sort_by(|a, b| (a.gone, &a.id).cmp(&(b.gone, &b.id)));
        workers.dedup_by(|a, b| a.id == b.id);
        Ok(workers)
    }
}
