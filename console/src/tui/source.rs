//! The console's one I/O task. It talks to Redis only through the driver's
//! API, sends whole snapshots to the UI over a channel, and carries out the
//! mutations the UI asks for (each one through the driver's scripts, in
//! bounded batches, reporting progress).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::try_join_all;
use redq::{limits, JobState, QueueError};
use tokio::sync::{mpsc, Notify};
use tokio::time::{sleep_until, timeout, Instant};
use tokio_util::sync::CancellationToken;

use crate::aggregate::Target;

use super::state::{
    plural, DeadWindow, Focus, JobsPage, Mutation, QueueRow, Snapshot, Update, JOBS_PAGE,
};

/// Dead letters loaded per queue for the Dead letters screen.
pub const DEAD_WINDOW: usize = 500;
/// Leases loaded per queue for the Leases screen.
pub const LEASE_WINDOW: usize = 200;
/// Events loaded for the Events screen.
pub const EVENT_WINDOW: usize = 200;
/// A refresh that takes longer than this counts as a failure.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// What the UI asks of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Load what this focus needs from now on (and refresh at once).
    Focus(Focus),
    /// Carry out a mutation.
    Mutate(Mutation),
}

/// Run until `cancel` fires or the UI hangs up.
pub async fn run(
    queue: Target,
    refresh: Duration,
    mut requests: mpsc::UnboundedReceiver<Request>,
    updates: mpsc::UnboundedSender<Update>,
    cancel: CancellationToken,
) {
    let mut focus = Focus::Overview;
    let refresh_now = Arc::new(Notify::new());
    let mut next = Instant::now();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            request = requests.recv() => match request {
                None => break,
                Some(Request::Focus(f)) => {
                    focus = f;
                    next = Instant::now();
                }
                Some(Request::Mutate(m)) => {
                    let (queue, updates, done) = (queue.clone(), updates.clone(), refresh_now.clone());
                    let cancel = cancel.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = cancel.cancelled() => {}
                            _ = mutate(&queue, m, &updates) => done.notify_one(),
                        }
                    });
                }
            },
            _ = refresh_now.notified() => next = Instant::now(),
            _ = sleep_until(next) => {
                let update = match timeout(FETCH_TIMEOUT, fetch(&queue, &focus)).await {
                    Ok(Ok(snapshot)) => Update::Snapshot {
                        snapshot: Box::new(snapshot),
                        received_at: SystemTime::now(),
                    },
                    Ok(Err(e)) => unreachable_update(e.to_string()),
                    Err(_) => unreachable_update(format!("no answer within {FETCH_TIMEOUT:?}")),
                };
                if updates.send(update).is_err() {
                    break;
                }
                next = Instant::now() + refresh;
            }
        }
    }
}

fn unreachable_update(error: String) -> Update {
    tracing::warn!(%error, "refresh failed");
    Update::Unreachable {
        error,
        at: SystemTime::now(),
    }
}

/// Read one snapshot for `focus`.
pub async fn fetch(queue: &Target, focus: &Focus) -> Result<Snapshot, QueueError> {
    let names = queue.queues().await?;
    let rows = try_join_all(names.iter().map(|name| async move {
        let (counts, stats) = tokio::join!(queue.counts(name), queue.stats(name));
        Ok::<_, QueueError>(QueueRow {
            counts: counts?,
            stats: stats?,
        })
    }))
    .await?;
    let redis_now = rows
        .first()
        .map(|r| r.counts.now)
        .unwrap_or_else(SystemTime::now);
    let events = queue.events(EVENT_WINDOW).await?;
    let workers = queue.workers().await?;
    let schedules = queue.schedules().await?;
    let mut snapshot = Snapshot {
        redis_now,
        queues: rows,
        events,
        workers,
        schedules,
        leases: None,
        dead: None,
        jobs: None,
    };
    match focus {
        Focus::Overview => {}
        Focus::Leases => {
            let held = snapshot.queues.iter().filter(|r| r.counts.leased > 0);
            let pages = try_join_all(
                held.map(|r| queue.list_jobs(&r.counts.queue, JobState::Leased, 0, LEASE_WINDOW)),
            )
            .await?;
            snapshot.leases = Some(pages.into_iter().flat_map(|p| p.items).collect());
        }
        Focus::Dead => {
            let with_dead = snapshot.queues.iter().filter(|r| r.counts.dead > 0);
            let pages = try_join_all(
                with_dead.map(|r| queue.dead_letters(&r.counts.queue, 0, DEAD_WINDOW)),
            )
            .await?;
            let truncated = pages.iter().any(|p| p.total > p.items.len() as u64);
            let mut items: Vec<_> = pages.into_iter().flat_map(|p| p.items).collect();
            items.sort_by(|a, b| b.died_at.cmp(&a.died_at).then(b.id.cmp(&a.id)));
            snapshot.dead = Some(DeadWindow { items, truncated });
        }
        Focus::Jobs(query) => {
            let page = queue
                .list_jobs(&query.queue, query.state, query.offset, JOBS_PAGE)
                .await?;
            snapshot.jobs = Some(JobsPage {
                query: query.clone(),
                page,
            });
        }
    }
    Ok(snapshot)
}

/// Carry out one mutation, reporting progress and the outcome.
pub async fn mutate(queue: &Target, mutation: Mutation, updates: &mpsc::UnboundedSender<Update>) {
    let label = mutation.label();
    tracing::info!(action = %label, "mutation started");
    let result = apply(queue, &mutation, &label, updates).await;
    let (message, ok) = match result {
        Ok(message) => (message, true),
        Err(e) => (
            format!("{label} failed: {}", crate::failure::describe(&e)),
            false,
        ),
    };
    tracing::info!(action = %label, ok, outcome = %message, "mutation finished");
    let _ = updates.send(Update::Finished { message, ok });
}

async fn apply(
    queue: &Target,
    mutation: &Mutation,
    label: &str,
    updates: &mpsc::UnboundedSender<Update>,
) -> Result<String, QueueError> {
    let progress = |done: u64, left: u64| {
        let _ = updates.send(Update::Progress {
            label: label.to_owned(),
            done,
            left,
        });
    };
    match mutation {
        Mutation::RequeueDead(set) | Mutation::DeleteDead(set) => {
            let requeue = matches!(mutation, Mutation::RequeueDead(_));
            let total: u64 = set.iter().map(|(_, ids)| ids.len() as u64).sum();
            let (mut done, mut missing) = (0, 0);
            for (name, ids) in set {
                for chunk in ids.chunks(limits::DEAD_BATCH) {
                    let report = if requeue {
                        queue.requeue_dead(name, chunk).await?
                    } else {
                        queue.delete_dead(name, chunk).await?
                    };
                    done += report.done;
                    missing += report.not_found;
                    progress(done + missing, total - done - missing);
                }
            }
            let verb = if requeue { "requeued" } else { "deleted" };
            let mut message = format!("{verb} {}", plural(done as usize, "dead letter"));
            if missing > 0 {
                message.push_str(&format!(" ({missing} no longer in the dead-letter set)"));
            }
            Ok(message)
        }
        Mutation::RequeueAllDead(names) | Mutation::PurgeDead(names) => {
            let requeue = matches!(mutation, Mutation::RequeueAllDead(_));
            let mut done = 0;
            for name in names {
                let before = done;
                let report = |d: u64, left: u64| progress(before + d, left);
                done += if requeue {
                    queue.requeue_all_dead(name, report).await?
                } else {
                    queue.purge_dead(name, report).await?
                };
            }
            let verb = if requeue { "requeued" } else { "purged" };
            Ok(format!("{verb} {}", plural(done as usize, "dead letter")))
        }
        Mutation::Pause(name) => {
            queue.pause(name).await?;
            Ok(format!("paused {}", crate::text::inert(name)))
        }
        Mutation::Resume(name) => {
            queue.resume(name).await?;
            Ok(format!("resumed {}", crate::text::inert(name)))
        }
    }
}
