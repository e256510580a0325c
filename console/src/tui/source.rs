//! The console's one I/O task. It talks to Redis only through the driver's
//! API, sends whole snapshots to the UI over a channel, and carries out the
//! mutations the UI asks for (each one through the driver's scripts, in
//! bounded batches, reporting progress).
//!
//! Outages: each refresh starts with one small read that must answer within
//! [`PING_TIMEOUT`], so a dead Redis shows within about a refresh. The
//! handle in use cannot say why it waits (its client queues commands while
//! it reconnects), so a failed read is explained by a fresh connection
//! attempt: "refused" when nothing listens, "did not answer" when something
//! does but is silent. Without a handle at all (Redis down at start) the
//! source keeps connecting, once per refresh.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Most limit keys a queue shows on the Limits screen (per shard; whole
/// pages of 1000 are read).
const SCREEN_LIMIT_KEYS: usize = 1000;

use futures::future::{try_join_all, BoxFuture};
use redq::events::EventStream;
use redq::{limits, CancelOutcome, DeadAction, IfLeased, JobState, QueueError, RetriedNow};
use tokio::sync::{mpsc, Notify};
use tokio::time::{sleep_until, timeout, Instant};
use tokio_util::sync::CancellationToken;

use crate::aggregate::Target;
use crate::dead_census::CensusCache;
use crate::failure::ReadFailure;

use super::state::{
    plural, DeadIds, DeadWindow, Focus, JobsPage, MetricsView, Mutation, QueueRow, SearchRun,
    Snapshot, Update, JOBS_PAGE,
};

/// Dead letters loaded per queue for the Dead letters screen's list (its
/// groups count further: [`DEAD_CENSUS_BOUND`]).
pub const DEAD_WINDOW: usize = 500;
/// Most dead letters a queue (per shard) has counted into the Dead letters
/// screen's groups each refresh.
pub const DEAD_CENSUS_BOUND: usize = crate::dead_census::SCREEN_BOUND;
/// How long a refresh spends counting dead letters into groups, well
/// inside [`FETCH_TIMEOUT`]: a queue not counted whole by then shows
/// lower bounds (`≥600`) until a later refresh counts it.
const CENSUS_TIME: Duration = Duration::from_secs(2);
/// Leases loaded per queue for the Leases screen.
pub const LEASE_WINDOW: usize = 200;
/// Events loaded for the Events screen.
pub const EVENT_WINDOW: usize = 200;
/// The 24 h and 90 d Metrics windows are read at most this often (each
/// read walks many rollup fields); the others with every refresh.
pub const METRICS_SLOW_EVERY: Duration = Duration::from_secs(30);
/// A refresh that takes longer than this counts as a failure.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Each refresh starts with one small read that must answer within this:
/// a Redis that died is noticed within about one refresh, not after the
/// driver's command timeout.
pub const PING_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a connection attempt (at start, or to find out why reads
/// fail) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Opens a new handle on the queues (the console's connect, with its URL,
/// namespace and shards).
pub type Connector = Arc<dyn Fn() -> BoxFuture<'static, Result<Target, QueueError>> + Send + Sync>;

/// How the source reaches Redis: the handle it has (none while Redis was
/// down from the start), and how to open a new one.
#[derive(Clone)]
pub struct Link {
    target: Option<Target>,
    connect: Option<Connector>,
}

impl Link {
    /// An open handle, never replaced (the demo's own server).
    pub fn connected(target: Target) -> Link {
        Link {
            target: Some(target),
            connect: None,
        }
    }

    /// `target` if connecting worked, else none yet; `connect` opens one
    /// when there is none, and tells a refused connection from a silent
    /// server when reads fail.
    pub fn new(target: Option<Target>, connect: Connector) -> Link {
        Link {
            target,
            connect: Some(connect),
        }
    }
}

/// What the UI asks of the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Load what this focus needs from now on (and refresh at once).
    Focus(Focus),
    /// Read this job again with every refresh (the detail view), or none.
    Watch(Option<String>),
    /// Carry out a mutation.
    Mutate(Mutation),
    /// Walk this payload search (a new one replaces the one walking), or
    /// stop walking.
    Search(Option<SearchRun>),
}

/// Run until `cancel` fires or the UI hangs up.
pub async fn run(
    link: Link,
    refresh: Duration,
    mut requests: mpsc::UnboundedReceiver<Request>,
    updates: mpsc::UnboundedSender<Update>,
    cancel: CancellationToken,
) {
    let Link {
        mut target,
        connect,
    } = link;
    let mut focus = Focus::Overview;
    let mut watched: Option<String> = None;
    // The Metrics view last read, and when: the wide windows wait
    // `METRICS_SLOW_EVERY` between reads.
    let mut metrics_read: Option<(MetricsView, Instant)> = None;
    // The Dead letters screen's groups, counted again only now and then.
    let mut censuses = CensusCache::default();
    let refresh_now = Arc::new(Notify::new());
    let mut next = Instant::now();
    // The walking search's own stop: Esc or a new search ends it.
    let mut searching = cancel.child_token();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            request = requests.recv() => match request {
                None => break,
                Some(Request::Focus(f)) => {
                    if f != focus {
                        metrics_read = None;
                    }
                    focus = f;
                    next = Instant::now();
                }
                Some(Request::Watch(id)) => {
                    watched = id;
                    next = Instant::now();
                }
                Some(Request::Search(run)) => {
                    searching.cancel();
                    searching = cancel.child_token();
                    let Some(run) = run else { continue };
                    let Some(queue) = target.clone() else {
                        let step = super::state::SearchStep {
                            run: run.run,
                            jobs: Vec::new(),
                            examined: 0,
                            outcome: Err("not connected to Redis yet".to_owned()),
                        };
                        let _ = updates.send(Update::Search(step));
                        continue;
                    };
                    let (updates, stop) = (updates.clone(), searching.clone());
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = stop.cancelled() => {}
                            _ = super::search::walk(&queue, &run, &updates) => {}
                        }
                    });
                }
                Some(Request::Mutate(m)) => {
                    let Some(queue) = target.clone() else {
                        let message = format!(
                            "{} failed: not connected to Redis yet; nothing was changed",
                            m.label()
                        );
                        let _ = updates.send(Update::Finished { message, ok: false });
                        continue;
                    };
                    let (updates, done) = (updates.clone(), refresh_now.clone());
                    let cancel = cancel.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = cancel.cancelled() => {}
                            _ = mutate(&queue, m, &updates) => done.notify_one(),
                        }
                    });
                }
            },
            // A change was made: everything is read again at once, a slow
            // metrics window too (the change may be its switch).
            _ = refresh_now.notified() => {
                metrics_read = None;
                next = Instant::now();
            }
            _ = sleep_until(next) => {
                if target.is_none() {
                    match open(connect.as_ref()).await {
                        Ok(t) => target = Some(t),
                        Err(error) => {
                            if updates.send(unreachable_update(error)).is_err() {
                                break;
                            }
                            next = Instant::now() + refresh;
                            continue;
                        }
                    }
                }
                let Some(queue) = &target else { continue };
                let (update, servers) = match read(queue, &focus, &mut censuses).await {
                    Ok((snapshot, servers)) => {
                        let snapshot = Update::Snapshot {
                            snapshot: Box::new(snapshot),
                            received_at: SystemTime::now(),
                        };
                        (snapshot, Some(servers))
                    }
                    Err(error) => (unreachable_update(why(connect.as_ref(), error).await), None),
                };
                let live = matches!(update, Update::Snapshot { .. });
                if updates.send(update).is_err() {
                    break;
                }
                // After its snapshot: a restart is told by comparing the
                // jobs of the snapshots on either side of it.
                if let Some(servers) = servers {
                    let _ = updates.send(Update::Server(servers));
                    if let Ok(Ok(names)) =
                        timeout(PING_TIMEOUT, queue.refused_queue_names()).await
                    {
                        let _ = updates.send(Update::RefusedQueueNames(names));
                    }
                }
                if let (true, Some(id)) = (live, &watched) {
                    for update in read_watched(queue, id).await {
                        let _ = updates.send(update);
                    }
                }
                if let (true, Focus::Schedule { name, shard }) = (live, &focus) {
                    // An error or no answer: the detail keeps what it
                    // showed; the next refresh tries again.
                    if let Ok(Ok(update)) =
                        timeout(FETCH_TIMEOUT, read_schedule(queue, name, *shard)).await
                    {
                        let _ = updates.send(update);
                    }
                }
                if let (true, Focus::Metrics(view)) = (live, &focus) {
                    if metrics_due(view, metrics_read.as_ref()) {
                        match timeout(FETCH_TIMEOUT, read_metrics(queue, view)).await {
                            Ok(Ok(update)) => {
                                metrics_read = Some((view.clone(), Instant::now()));
                                let _ = updates.send(update);
                            }
                            // The view keeps what it showed and says why;
                            // the next refresh tries again.
                            Ok(Err(error)) => {
                                tracing::warn!(%error, "metrics read failed");
                                let error = error.to_string();
                                let view = view.clone();
                                let _ = updates.send(Update::MetricsUnread { view, error });
                            }
                            Err(_) => {
                                tracing::warn!("metrics read timed out");
                                let error = "no answer within the read timeout".to_owned();
                                let view = view.clone();
                                let _ = updates.send(Update::MetricsUnread { view, error });
                            }
                        }
                    }
                }
                next = Instant::now() + refresh;
            }
        }
    }
}

/// The schedule detail's schedule read again (after each snapshot while
/// it is open): its record on `shard`, `None` once no schedule has that name
/// there.
pub async fn read_schedule(queue: &Target, name: &str, shard: usize) -> Result<Update, QueueError> {
    let record = match queue.shards().get(shard) {
        Some(on) => on.schedule(name).await?.map(Box::new),
        None => None,
    };
    Ok(Update::Schedule(super::state::ScheduleRead {
        name: name.to_owned(),
        shard,
        record,
        gone: false,
    }))
}

/// The watched job (the detail's) read again: why it is held, the gate it
/// awaits, then the job itself, or, once it left the queue, what its queue
/// kept of it. Nothing when the job's read fails (the detail keeps what it
/// showed; the next refresh tries again).
pub async fn read_watched(queue: &Target, id: &str) -> Vec<Update> {
    let mut updates = Vec::new();
    let Ok(Ok(record)) = timeout(PING_TIMEOUT, queue.inspect(id)).await else {
        return updates;
    };
    // Notes that cannot be read leave the detail without
    // them rather than without the job.
    let notes = match &record {
        Some(_) => timeout(PING_TIMEOUT, queue.notes(id))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default(),
        None => redq::JobNotes::default(),
    };
    // Gone from the queue: what its queue kept of it.
    let finished = match &record {
        Some(_) => None,
        None => match timeout(PING_TIMEOUT, queue.result(id)).await {
            Ok(Ok(redq::JobResult::Kept(kept))) => Some(kept),
            _ => None,
        },
    };
    // Why a due job of a limited queue is held: "held
    // by the queue-wide limit: …". Not its push-backs,
    // read from the events only by `redq jobs show`.
    if let Some(job) = &record {
        let read = crate::flow::held::why_lines(queue, job);
        if let Ok(Ok(lines)) = timeout(PING_TIMEOUT, read).await {
            updates.push(Update::JobHeld {
                id: id.to_owned(),
                lines,
            });
        }
    }
    // The gate it waits on: "awaits G (7 of 10 finished)".
    let awaits = record.as_ref().and_then(|r| r.awaits.clone());
    let record = record.map(Box::new);
    if let Some(gate) = awaits {
        let read = crate::workflow::read::gate(queue, &gate);
        if let Ok(Ok(gate)) = timeout(PING_TIMEOUT, read).await {
            let gate = gate.map(Box::new);
            updates.push(Update::JobAwaits {
                id: id.to_owned(),
                gate,
            });
        }
    }
    updates.push(Update::Job {
        id: id.to_owned(),
        record,
        notes,
        finished,
    });
    updates
}

/// The Metrics view's figures for `view`, as the update the UI takes.
pub async fn read_metrics(queue: &Target, view: &MetricsView) -> Result<Update, QueueError> {
    let history = queue.metrics_history(&view.queue, view.window).await?;
    Ok(Update::Metrics {
        view: view.clone(),
        history: Box::new(history),
    })
}

/// Whether the Metrics view `view` is read this refresh: always when it
/// was not the last one read, and for the 24 h and 90 d windows only
/// [`METRICS_SLOW_EVERY`] after the last read.
fn metrics_due(view: &MetricsView, last: Option<&(MetricsView, Instant)>) -> bool {
    use redq::metrics::MetricsWindow::{Last90Days, LastDay};
    match last {
        Some((read, at)) if read == view && matches!(view.window, LastDay | Last90Days) => {
            at.elapsed() >= METRICS_SLOW_EVERY
        }
        _ => true,
    }
}

/// One refresh: a quick first read, the server's `INFO` (each shard's
/// server; `None` where refused, which is no failure), then the snapshot.
/// `INFO` comes first so that a server run it reads as new also holds
/// the snapshot read after it. The error is the banner's sentence.
async fn read(
    queue: &Target,
    focus: &Focus,
    censuses: &mut CensusCache,
) -> Result<(Snapshot, Vec<Option<redq::ServerStats>>), ReadFailure> {
    match timeout(PING_TIMEOUT, queue.queues()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(crate::failure::read_failed(&e)),
        Err(_) => return Err(ReadFailure::silent(PING_TIMEOUT)),
    }
    let servers = crate::server::read(queue, PING_TIMEOUT).await;
    match timeout(FETCH_TIMEOUT, fetch_with(queue, focus, censuses)).await {
        Ok(Ok(snapshot)) => Ok((snapshot, servers)),
        Ok(Err(e)) => Err(crate::failure::read_failed(&e)),
        Err(_) => Err(ReadFailure::silent(FETCH_TIMEOUT)),
    }
}

/// Open a handle, or say why not, within [`CONNECT_TIMEOUT`]. Giving up on
/// an attempt that outlasts it (a Redis that accepts but does not answer)
/// leaves nothing behind: the driver closes what it connects after its
/// caller left, so a probe each refresh during a pause does not become a
/// connection kept each refresh.
async fn open(connect: Option<&Connector>) -> Result<Target, ReadFailure> {
    let Some(connect) = connect else {
        return Err(ReadFailure {
            sentence: "no way to connect to Redis".to_owned(),
            fault: None,
        });
    };
    match timeout(CONNECT_TIMEOUT, connect()).await {
        Ok(Ok(target)) => Ok(target),
        Ok(Err(e)) => Err(crate::failure::read_failed(&e)),
        Err(_) => Err(ReadFailure::silent(CONNECT_TIMEOUT)),
    }
}

/// Close a handle no one will use (a probe that connected).
async fn close(target: &Target) {
    for shard in target.shards() {
        shard.close().await;
    }
}

/// Why reads fail. The handle in use only reports that it waited (its
/// client queues commands while it reconnects), so a fresh connection is
/// tried: its error is the current one (connection refused, say, after a
/// timeout at the moment Redis died). When it connects, Redis is back or
/// only slow, and the read's own error stands; the probe is closed, not
/// dropped, so it leaves nothing reconnecting behind.
async fn why(connect: Option<&Connector>, read_error: ReadFailure) -> ReadFailure {
    if connect.is_none() {
        return read_error;
    }
    match open(connect).await {
        Err(connect_error) => connect_error,
        Ok(probe) => {
            close(&probe).await;
            read_error
        }
    }
}

fn unreachable_update(error: ReadFailure) -> Update {
    tracing::warn!(%error, "refresh failed");
    Update::Unreachable {
        error,
        at: SystemTime::now(),
    }
}

/// Read one snapshot for `focus`, every dead-letter census counted anew.
pub async fn fetch(queue: &Target, focus: &Focus) -> Result<Snapshot, QueueError> {
    fetch_with(queue, focus, &mut CensusCache::default()).await
}

/// [`fetch`], with the dead-letter censuses kept between refreshes.
async fn fetch_with(
    queue: &Target,
    focus: &Focus,
    censuses: &mut CensusCache,
) -> Result<Snapshot, QueueError> {
    let names = queue.queues().await?;
    let read = try_join_all(names.iter().map(|name| async move {
        let (counts, stats) = tokio::join!(queue.counts_by_shard(name), queue.stats(name));
        let (counts, each) = counts?;
        let row = QueueRow {
            counts,
            stats: stats?,
        };
        Ok::<_, QueueError>((row, each))
    }))
    .await?;
    // Each shard's jobs, for the restart notice of the server holding it.
    let mut shard_jobs = vec![0; queue.shards().len()];
    for (_, each) in &read {
        for (jobs, counts) in shard_jobs.iter_mut().zip(each) {
            *jobs += crate::server::jobs(counts);
        }
    }
    let rows: Vec<QueueRow> = read.into_iter().map(|(row, _)| row).collect();
    let redis_now = rows
        .first()
        .map(|r| r.counts.now)
        .unwrap_or_else(SystemTime::now);
    let events = match focus {
        // A filter is applied to the whole of both streams (at most their
        // caps), the traffic's too (a job's id finds its enqueued and
        // completed events), not only to the latest events: a rare kind is
        // found behind floods of others. Without one the screen shows the
        // main stream: the traffic's flood would bury what happened.
        Focus::Events(filter) => {
            let keep = |e: &redq::QueueEvent| crate::tui::state::event_matches(filter, e);
            queue
                .events_matching_in(&EventStream::BOTH, EVENT_WINDOW, keep)
                .await?
        }
        _ => queue.events(EVENT_WINDOW).await?,
    };
    // How far back the Events screen's history goes: one XRANGE of one
    // entry and a TIME a refresh.
    let event_reach = queue.event_history(EventStream::Main).await?;
    let workers = queue.workers().await?;
    let schedules = queue.schedules().await?;
    // Which jobs views offer the held tab: one small read per refresh.
    let limited = queue.limited_queues().await?;
    let mut snapshot = Snapshot {
        redis_now,
        queues: rows,
        shard_jobs,
        events,
        event_reach,
        workers,
        schedules,
        leases: None,
        dead: None,
        jobs: None,
        limits: None,
        limited,
        gates: None,
        gate: None,
    };
    match focus {
        // The Metrics view's figures are read after the snapshot (see `run`).
        Focus::Overview | Focus::Metrics(_) | Focus::Events(_) | Focus::Schedule { .. } => {}
        Focus::Workflows => {
            snapshot.gates = Some(crate::workflow::read::newest(queue).await?);
        }
        Focus::Gate(query) => {
            snapshot.gate = Some(crate::workflow::read::page(queue, query).await?);
        }
        Focus::Limits => {
            // A bounded read: the screen refreshes every second, and a queue
            // may have a hundred thousand keys.
            let all = try_join_all(
                snapshot
                    .limited
                    .iter()
                    .map(|name| queue.limits_up_to(name, SCREEN_LIMIT_KEYS)),
            )
            .await?;
            snapshot.limits = Some(all.iter().flat_map(crate::flow::rows_of).collect());
        }
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
            // The groups count every dead letter of a queue, not only the
            // window above, up to a bound, and again only now and then
            // (dead_census::CensusCache).
            let deadline = std::time::Instant::now() + CENSUS_TIME;
            let mut groups = Vec::new();
            for r in snapshot.queues.iter().filter(|r| r.counts.dead > 0) {
                let (name, dead) = (&r.counts.queue, r.counts.dead);
                groups.push(censuses.census(queue, name, dead, deadline).await?);
            }
            // Each queue's dead-letter bound, shown in the title: one
            // read a queue with dead letters.
            let with_dead = snapshot.queues.iter().filter(|r| r.counts.dead > 0);
            let states = try_join_all(with_dead.map(|r| queue.dead_bound(&r.counts.queue))).await?;
            let named = snapshot.queues.iter().filter(|r| r.counts.dead > 0);
            let bounds = named
                .zip(states)
                .filter_map(|(r, s)| Some((r.counts.queue.clone(), s.bound?)))
                .collect();
            snapshot.dead = Some(DeadWindow {
                items,
                truncated,
                groups,
                bounds,
            });
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
/// Who a console cancel is kept as having come from.
pub(super) const CANCELLED_BY: &str = "console";

pub async fn mutate(queue: &Target, mutation: Mutation, updates: &mpsc::UnboundedSender<Update>) {
    let label = mutation.label();
    tracing::info!(action = %label, "mutation started");
    let result = match &mutation {
        // A workflow change that found nothing to change says so as a
        // failure (nothing was cancelled, released or failed).
        Mutation::CancelGate(id) => {
            let progress = |done: u64, left: u64| {
                let label = label.clone();
                let _ = updates.send(Update::Progress { label, done, left });
            };
            crate::workflow::act::cancel(queue, id, CANCELLED_BY, progress)
                .await
                .map(|o| (o.message, o.ok))
        }
        Mutation::DecideHeld { id, release } => {
            crate::workflow::act::decide(queue, id, *release, CANCELLED_BY)
                .await
                .map(|o| (o.message, o.ok))
        }
        _ => apply(queue, &mutation, &label, updates)
            .await
            .map(|message| (message, true)),
    };
    let (message, ok) = match result {
        Ok(said) => said,
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
        Mutation::RequeueDead { ids, attempts } => {
            let action = DeadAction::Requeue {
                attempts: *attempts,
            };
            let done = change_by_id(queue, action, ids, progress).await?;
            Ok(format!("requeued {done}{}", restart_note(*attempts)))
        }
        Mutation::DeleteDead(ids) => {
            let done = change_by_id(queue, DeadAction::Delete, ids, progress).await?;
            Ok(format!("deleted {done}"))
        }
        Mutation::RequeueAllDead { queues, attempts } => {
            let action = DeadAction::Requeue {
                attempts: *attempts,
            };
            let done = drain(queue, action, queues, progress).await?;
            Ok(format!(
                "requeued {}{}",
                plural(done as usize, "dead letter"),
                restart_note(*attempts)
            ))
        }
        Mutation::RequeueGroup {
            queues,
            signature,
            attempts,
            ..
        } => {
            let action = DeadAction::Requeue {
                attempts: *attempts,
            };
            let set = group_set(queue, queues, signature).await?;
            let done = change_by_id(queue, action, &set, progress).await?;
            Ok(format!("requeued {done}{}", restart_note(*attempts)))
        }
        Mutation::DeleteGroup {
            queues, signature, ..
        } => {
            let set = group_set(queue, queues, signature).await?;
            let done = change_by_id(queue, DeadAction::Delete, &set, progress).await?;
            Ok(format!("deleted {done}"))
        }
        Mutation::PurgeDead(queues) => {
            let done = drain(queue, DeadAction::Delete, queues, progress).await?;
            Ok(format!("purged {}", plural(done as usize, "dead letter")))
        }
        Mutation::Promote(id) => {
            queue.promote(id).await?;
            Ok(format!("promoted {}: due now", crate::text::inert(id)))
        }
        // As `redq jobs retry`: a job backing off runs now, a dead one is
        // requeued.
        Mutation::RetryNow(id) => {
            let shown = crate::text::inert(id);
            Ok(match queue.retry_now(id).await? {
                RetriedNow::Promoted => format!("retrying {shown} now"),
                RetriedNow::Requeued => {
                    format!("requeued {shown} (it was dead), its attempts reset to 0")
                }
            })
        }
        Mutation::DeleteJob { id, force } => {
            let if_leased = if *force {
                IfLeased::VoidLease
            } else {
                IfLeased::Refuse
            };
            queue.delete_job(id, if_leased).await?;
            Ok(format!("deleted {}", crate::text::inert(id)))
        }
        Mutation::PromoteAll(name) => {
            let done = queue.promote_all(name, progress).await?;
            Ok(format!("promoted {}", plural(done as usize, "job")))
        }
        Mutation::RetryAllNow(name) => {
            let done = queue.retry_all_now(name, progress).await?;
            Ok(format!("retrying {} now", plural(done as usize, "job")))
        }
        Mutation::DeleteAll { queue: name, state } => {
            // The console asks first, naming what a leased job's delete does.
            let done = queue
                .delete_all(name, *state, IfLeased::VoidLease, progress)
                .await?;
            Ok(format!("deleted {}", plural(done as usize, "job")))
        }
        Mutation::CancelJob(id) => {
            let shown = crate::text::inert(id);
            Ok(match queue.cancel(id, CANCELLED_BY).await? {
                CancelOutcome::Cancelled { from, .. } => format!("cancelled {shown} ({from})"),
                CancelOutcome::AlreadyCancelled { .. } => format!("{shown} was already cancelled"),
                CancelOutcome::AlreadyCompleted { .. } => format!("{shown} had already completed"),
                CancelOutcome::NotFound => format!("{shown} is gone"),
            })
        }
        Mutation::DeadLetterJob(id) => {
            let done = queue.dead_letter_job(id, "").await?;
            let mut said = format!(
                "dead-lettered {} (it was {}): r on Dead letters requeues it",
                crate::text::inert(id),
                done.from
            );
            if done.bound_deleted > 0 {
                said.push_str(&format!(
                    "; its queue's dead-letter bound deleted {} older",
                    done.bound_deleted
                ));
            }
            Ok(said)
        }
        Mutation::CancelAll { queue: name, state } => {
            let done = queue
                .cancel_all(name, *state, CANCELLED_BY, progress)
                .await?;
            Ok(format!("cancelled {}", plural(done as usize, "job")))
        }
        Mutation::ClearLimit { queue: name, scope } => {
            let (shown, named) = (crate::text::inert(name), crate::flow::scope_text(scope));
            Ok(match queue.clear_limit(name, scope.clone()).await? {
                true => format!("cleared the {named} limit of {shown}"),
                false => format!("{shown} had no {named} limit"),
            })
        }
        Mutation::Pause(name) => {
            queue.pause(name).await?;
            Ok(format!("paused {}", crate::text::inert(name)))
        }
        Mutation::Resume(name) => {
            queue.resume(name).await?;
            Ok(format!("resumed {}", crate::text::inert(name)))
        }
        Mutation::Operate(operate) => super::operate::run(queue, operate, progress).await,
        Mutation::QuietWorker(id) => Ok(crate::commands::workers::told(
            id,
            queue.quiet_worker(id).await?,
            false,
        )),
        Mutation::StopWorker(id) => Ok(crate::commands::workers::told(
            id,
            queue.stop_worker(id).await?,
            true,
        )),
        Mutation::OnMatches { change, ids, .. } => {
            super::search::change_matches(queue, *change, ids, progress).await
        }
        Mutation::CancelGate(_) | Mutation::DecideHeld { .. } => {
            unreachable!("carried out by `mutate` itself")
        }
    }
}

/// Apply `action` to these dead letters, in batches, reporting progress.
/// How many it changed, and how many were no longer dead letters.
async fn change_by_id(
    queue: &Target,
    action: DeadAction,
    set: &DeadIds,
    progress: impl Fn(u64, u64),
) -> Result<String, QueueError> {
    let total: u64 = set.iter().map(|(_, ids)| ids.len() as u64).sum();
    let (mut done, mut missing) = (0, 0);
    for (name, ids) in set {
        for chunk in ids.chunks(limits::DEAD_BATCH) {
            let report = queue.change_dead(action, name, chunk).await?;
            done += report.done;
            missing += report.not_found;
            progress(done + missing, total - done - missing);
        }
    }
    let mut changed = plural(done as usize, "dead letter");
    if missing > 0 {
        changed.push_str(&format!(" ({missing} no longer in the dead-letter set)"));
    }
    Ok(changed)
}

/// Every dead letter of `queues` whose error has signature `signature`,
/// read whole (as `redq dead requeue --group` reads it).
async fn group_set(
    queue: &Target,
    queues: &[String],
    signature: &str,
) -> Result<DeadIds, QueueError> {
    let mut set = Vec::new();
    for name in queues {
        let ids = crate::canary::group_ids(queue, name, signature).await?;
        if !ids.is_empty() {
            set.push((name.clone(), ids));
        }
    }
    Ok(set)
}

/// Apply `action` to every dead letter of these queues, reporting progress
/// across them. How many it changed.
async fn drain(
    queue: &Target,
    action: DeadAction,
    names: &[String],
    progress: impl Fn(u64, u64),
) -> Result<u64, QueueError> {
    let mut done = 0;
    for name in names {
        let before = done;
        let report = |d: u64, left: u64| progress(before + d, left);
        done += queue.drain_dead(action, name, report).await?;
    }
    Ok(done)
}

/// What a result says about the attempt count a requeue restarted at:
/// nothing for the usual 0.
fn restart_note(attempts: u32) -> String {
    match attempts {
        0 => String::new(),
        n => format!(", attempts restart at {n}"),
    }
}

#[cfg(test)]
mod tests {
    use redq::metrics::MetricsWindow;

    use super::*;

    fn images(window: MetricsWindow) -> MetricsView {
        MetricsView {
            queue: "images".into(),
            window,
        }
    }

    #[test]
    fn the_wide_windows_wait_30_seconds_between_reads_the_others_do_not() {
        let just_now = Instant::now();
        for window in [MetricsWindow::Last5Minutes, MetricsWindow::LastHour] {
            let view = images(window);
            assert!(metrics_due(&view, Some(&(view.clone(), just_now))));
        }
        for window in [MetricsWindow::LastDay, MetricsWindow::Last90Days] {
            let view = images(window);
            assert!(metrics_due(&view, None), "the first read is at once");
            assert!(!metrics_due(&view, Some(&(view.clone(), just_now))));
            let other = images(MetricsWindow::LastHour);
            assert!(
                metrics_due(&view, Some(&(other, just_now))),
                "a new window reads at once"
            );
            if let Some(long_ago) = just_now.checked_sub(METRICS_SLOW_EVERY) {
                assert!(metrics_due(&view, Some(&(view.clone(), long_ago))));
            }
        }
    }
}
