//! Sleeping without polling: a dedicated subscriber connection listens on
//! the namespace's wake channel, where the scripts publish a queue's name
//! whenever it gets due work, and on this worker's own hand-off channel,
//! where an enqueue publishes the jobs it leased to the worker while it was
//! parked (see `crate::park`).
//!
//! Both are subscribed twice, as plain channels (an earlier driver's
//! scripts `PUBLISH`) and as shard channels (this version's `SPUBLISH`,
//! which on Redis Cluster stays on the namespace's shard:
//! `lua/lib/notify.lua`); the holder channel, where operators' rare messages
//! go, is plain only.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::clients::{SubscriberClient, WithOptions};
use fred::interfaces::{ClientLike, ClusterInterface, EventInterface, PubsubInterface};
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

use super::cancels::RunningJobs;
use super::control::{Control, HolderMessage};
use super::wake_ups::{WakeUps, WakeUpsCell};
use crate::park::{decode_handoff, fence_number, parked_number};
use crate::{Job, RedisQueue};

/// What the listener shares with its worker loop.
pub(crate) struct Inbox {
    /// This worker's hand-off token (its channel is the wake channel ..
    /// ":" .. token).
    pub token: u64,
    /// Set once both channels are subscribed: only then may the worker park.
    pub listening: AtomicBool,
    /// Set while the wake-up and hand-off channels are also subscribed as
    /// shard channels, where this version's scripts publish
    /// (`lua/lib/notify.lua`): a park says so, and its hand-offs go there.
    pub shard_listening: AtomicBool,
    /// The number of the last park whose fence arrived (`unpark` publishes
    /// one after the park's last hand-off).
    pub fenced: AtomicU64,
    /// How many times messages may have been lost (`Inbox::messages_lost`):
    /// a park that saw one looks for the hand-offs that never reached it
    /// (`super::unheard`).
    pub gaps: AtomicU64,
    /// Set by a wake-up for one of the worker's queues: work became due
    /// that was not handed over, so a parked worker must claim. Cleared by
    /// the message of a park (`park_seen`): what was due before it, the
    /// park found claimed.
    pub due: AtomicBool,
    /// The number of the last park whose message arrived: until the
    /// worker's latest park's has, every wake-up it has seen predates that
    /// park (`super::parking`). Messages lost (a lagging listener, a broken
    /// subscription) set it to `u64::MAX`, so that `due` counts at once.
    pub park_seen: AtomicU64,
    /// Wakes the worker: due work somewhere, a hand-off, or a fence.
    /// `Notify` keeps one pending permit, so a wake-up that arrives between
    /// an empty claim and the worker going to sleep is not lost.
    pub wake: Notify,
    /// The jobs running now: an operator's cancel on the holder channel
    /// fires theirs (`super::cancels`).
    pub running: Arc<RunningJobs>,
    /// An operator's quiet or stop, also on the holder channel
    /// (`super::control`).
    pub control: Arc<Control>,
}

impl Inbox {
    pub fn new(running: Arc<RunningJobs>, control: Arc<Control>) -> Self {
        Inbox {
            running,
            control,
            token: rand::random::<u64>() >> 1,
            listening: AtomicBool::new(false),
            shard_listening: AtomicBool::new(false),
            fenced: AtomicU64::new(0),
            gaps: AtomicU64::new(0),
            due: AtomicBool::new(false),
            park_seen: AtomicU64::new(0),
            wake: Notify::new(),
        }
    }

    /// Messages may have been lost (a broken or lagging subscription, a
    /// moved slot): count the gap, so that the parks it touched look for
    /// hand-offs that never arrived, and wake the worker to look at its
    /// queues, where any wake-up counts from now on.
    fn messages_lost(&self) {
        self.gaps.fetch_add(1, Ordering::AcqRel);
        self.park_seen.store(u64::MAX, Ordering::Release);
        self.due.store(true, Ordering::Release);
        self.wake.notify_one();
    }
}

/// Subscribe and forward wake-ups for `queues`, and jobs handed to this
/// worker, until `stop`.
///
/// A connection that fails is tried again (`connect_subscriber`). If the
/// subscription fails (e.g. an ACL forbids pub/sub) the worker still works,
/// never parks, and sleeps at most its `max_idle` between checks.
/// `settled` is cancelled once the first subscription is made or has
/// failed: the worker's registry record waits for it (`super::presence`).
pub(crate) async fn listen_owned(
    queue: RedisQueue,
    queues: Vec<String>,
    inbox: Arc<Inbox>,
    handed: mpsc::UnboundedSender<Job>,
    stop: CancellationToken,
    settled: CancellationToken,
    wake_ups: Arc<WakeUpsCell>,
) {
    // Whatever way the listener ends, nothing waits for it any longer.
    let _settled = settled.clone().drop_guard();
    let heard = Heard {
        inbox: &inbox,
        wake_ups: &wake_ups,
    };
    listen(&queue, &queues, heard, &handed, stop, settled).await;
    inbox.listening.store(false, Ordering::Release);
    wake_ups.set(WakeUps::Polls);
}

/// Where a listener says what it hears: the worker loop's inbox (whether
/// it may park, and how its park is handed jobs) and its namespace's
/// registry record (`super::presence`).
#[derive(Clone, Copy)]
struct Heard<'a> {
    inbox: &'a Inbox,
    wake_ups: &'a WakeUpsCell,
}

/// First wait, then twice as long each time up to the last, between tries
/// to connect the wake-up subscriber.
const SUBSCRIBER_RETRY_FIRST: Duration = Duration::from_secs(1);
const SUBSCRIBER_RETRY_LAST: Duration = Duration::from_secs(30);

/// The wake-up subscriber, connected. A connection that fails is tried
/// again until `stop`, the worker polling meanwhile (every `max_idle`): on
/// a cluster the subscriber connects to every primary, so one that hangs
/// when the worker starts failed it for good, and the worker never heard a
/// wake-up again, even once every primary answered (docs/cluster.md, "A
/// shard that does not answer"). `settled` is cancelled at the first
/// failure, so the worker is listed meanwhile. None: stopped, or a client
/// that cannot be built (its configuration, which no retry mends).
async fn connect_subscriber(
    queue: &RedisQueue,
    stop: &CancellationToken,
    settled: &CancellationToken,
) -> Option<SubscriberClient> {
    // Room for bursts: a message dropped here (a lagging receiver) is a
    // hand-off the worker must look for and give back (`super::unheard`).
    let mut builder = queue.inner.client_builder.clone();
    builder.with_performance_config(|perf| perf.broadcast_channel_capacity = 4096);
    let mut wait = SUBSCRIBER_RETRY_FIRST;
    loop {
        let subscriber = match builder.build_subscriber_client() {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(error = %e.details(), "cannot create the wake-up subscriber; falling back to polling");
                return None;
            }
        };
        match subscriber.init().await {
            Ok(_) => return Some(subscriber),
            Err(e) => {
                tracing::warn!(
                    error = %e.details(),
                    retry_in_ms = wait.as_millis() as u64,
                    "cannot connect the wake-up subscriber; polling until it connects"
                );
                settled.cancel();
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return None,
            _ = tokio::time::sleep(wait) => {}
        }
        wait = (wait * 2).min(SUBSCRIBER_RETRY_LAST);
    }
}

async fn listen(
    queue: &RedisQueue,
    queues: &[String],
    heard: Heard<'_>,
    handed: &mpsc::UnboundedSender<Job>,
    stop: CancellationToken,
    settled: CancellationToken,
) {
    let Some(subscriber) = connect_subscriber(queue, &stop, &settled).await else {
        return;
    };
    let inbox = heard.inbox;
    let channel = queue.wake_channel();
    let own = queue.handoff_channel(inbox.token);
    // Cancels of jobs this worker holds: the channel follows from the lease
    // holder's identity, which every job record carries.
    let holder = queue.holder_channel(queue.identity());
    let mut messages = subscriber.message_rx();
    let mut errors = subscriber.error_rx();
    let mut reconnects = subscriber.reconnect_rx();
    // On a cluster, subscribed on this namespace's primary, so that no other
    // primary that hangs deafens the worker (crate::own_primary).
    let on_own_primary = crate::own_primary::on_own_primary(&subscriber, &channel);
    let subscribe = || subscribe_all(&on_own_primary, heard, [&channel, &own, &holder]);
    // Whether this listener's shard subscription was made: its own, where
    // `inbox.shard_listening` is the last word of any listener of the
    // worker (a sharded worker has one a shard, and does not park).
    let (plain, mut shard) = subscribe().await;
    if plain {
        // A worker that went idle before this moment slept without
        // parking: let it look again, now that it may park.
        inbox.wake.notify_one();
    }
    settled.cancel();
    let ours: HashSet<&str> = queues.iter().map(String::as_str).collect();
    let mut shard_check = tokio::time::interval_at(
        tokio::time::Instant::now() + SHARD_CHECK_EVERY,
        SHARD_CHECK_EVERY,
    );
    shard_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            // The shard subscription ended with the connection up again or
            // still up (its slot moved, or its connection dropped or the
            // server restarted and the client reconnected without it):
            // subscribe again, on the
            // slot's primary now, and have the worker look at the queue and
            // park afresh; hand-offs since are looked for and given back
            // (`super::unheard`).
            _ = shard_check.tick() => {
                if shard && !still_shard_subscribed(queue, &own).await {
                    tracing::warn!(
                        "the shard channel subscription was lost (its connection dropped, the \
                         server restarted, or on a cluster its slot moved); subscribing again"
                    );
                    // Where the slot is now: without it the subscription
                    // goes back to the old node, which as the new primary's
                    // replica takes it, while this check asks the primary.
                    let _ = subscriber.sync_cluster().await;
                    shard = subscribe().await.1;
                    inbox.messages_lost();
                }
            }
            message = messages.recv() => match message {
                Ok(message) if message.channel.as_bytes() == own.as_bytes() => {
                    let body = message.value.as_bytes().unwrap_or_default();
                    if let Some(number) = fence_number(body) {
                        inbox.fenced.fetch_max(number, Ordering::AcqRel);
                    } else if let Some(number) = parked_number(body) {
                        // Cleared before the number is shown: a worker
                        // that sees its park's number sees no wake-up
                        // older than the park.
                        inbox.due.store(false, Ordering::Release);
                        inbox.park_seen.store(number, Ordering::Release);
                        continue;
                    } else {
                        match decode_handoff(body) {
                            Ok(job) => {
                                let _ = handed.send(job);
                            }
                            // Leased to us but unreadable: its lease lapses and
                            // it is retried, as after a crash.
                            Err(e) => tracing::error!(error = %e, "undecodable hand-off"),
                        }
                    }
                    inbox.wake.notify_one();
                }
                Ok(message) if message.channel.as_bytes() == holder.as_bytes() => {
                    let body = message.value.as_str().map(|s| s.to_string()).unwrap_or_default();
                    match HolderMessage::parse(&body) {
                        Some(HolderMessage::Cancel { id, lease }) => {
                            if inbox.running.cancel(id, lease) {
                                tracing::info!(id, "an operator cancelled or deleted a running job; its cancellation fired");
                            }
                        }
                        Some(HolderMessage::Quiet) => {
                            tracing::info!("an operator quieted this worker: it claims nothing more");
                            inbox.control.quiet();
                        }
                        Some(HolderMessage::Stop) => {
                            tracing::info!("an operator stopped this worker: it exits once its running jobs end");
                            inbox.control.stop();
                        }
                        None => tracing::warn!(message = %body, "unreadable holder channel message"),
                    }
                }
                Ok(message) => {
                    let name = message.value.as_str().map(|s| s.to_string()).unwrap_or_default();
                    if ours.contains(name.as_str()) {
                        inbox.due.store(true, Ordering::Release);
                        inbox.wake.notify_one();
                    }
                }
                // Lagged behind a burst: some of those were surely ours. A
                // hand-off among them is looked for and given back
                // (`super::unheard`).
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "wake-up listener lagged; hand-offs among the missed messages are given back to the queue");
                    inbox.messages_lost();
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            },
            // The connection broke: what is published now is lost. Stop
            // parking (the worker leaves its park and looks at the queue) until
            // the subscription is back. A job handed in the gap is leased to
            // the worker, which looks for it once it has left its park and
            // gives it back (`super::unheard`).
            Ok(_) = errors.recv() => {
                inbox.listening.store(false, Ordering::Release);
                heard.wake_ups.set(WakeUps::Polls);
                inbox.messages_lost();
            }
            // Reconnected: subscribe again (fred restores only subscriptions
            // it tracks, and these go through options it does not track;
            // subscribing twice on one connection is harmless) before parking
            // is allowed again, and have the worker look at what became due
            // meanwhile.
            Ok(_) = reconnects.recv() => {
                shard = subscribe().await.1;
                inbox.messages_lost();
            }
        }
    }
    let _ = subscriber.quit().await;
}

/// How often a listener checks that its shard channels are still
/// subscribed. A shard channel's subscription ends when its slot leaves the
/// node (a resharding, or a manual failover, which leaves the connection
/// up), and the server says so with an `sunsubscribe` that fred does not
/// pass on; a plain subscription is not affected (a plain `PUBLISH` reaches
/// every node).
const SHARD_CHECK_EVERY: Duration = Duration::from_secs(5);

/// How long the check waits for its answer: it must not hold up the
/// listener behind a primary that hangs.
const SHARD_CHECK_PATIENCE: Duration = Duration::from_secs(1);

/// Whether the primary that serves the namespace has this worker's
/// hand-off channel (`own`, unique to it) subscribed as a shard channel.
/// No answer in time, or a refusal (an ACL without `PUBSUB`), says yes:
/// only a definite "none" subscribes again.
async fn still_shard_subscribed(queue: &RedisQueue, own: &str) -> bool {
    let on_own_primary = crate::own_primary::on_own_primary(queue.client(), own);
    let ask = on_own_primary.pubsub_shardnumsub::<Vec<fred::types::Value>, _>(own);
    match tokio::time::timeout(SHARD_CHECK_PATIENCE, ask).await {
        Ok(Ok(reply)) => reply.get(1).and_then(|n| n.as_i64()) != Some(0),
        _ => true,
    }
}

/// Subscribe `channels` (the wake-up, hand-off and holder channels) as
/// plain channels, where every driver version hears them, and the first two
/// also as shard channels, where this version's scripts publish
/// (`lua/lib/notify.lua`). Sets `listening` and `shard_listening`, and the
/// registry's [`WakeUps`], by what was subscribed; whether the plain and the
/// shard subscriptions were made.
async fn subscribe_all(
    on_own_primary: &WithOptions<SubscriberClient>,
    heard: Heard<'_>,
    [channel, own, holder]: [&String; 3],
) -> (bool, bool) {
    let plain = on_own_primary
        .subscribe(vec![channel.as_str(), own.as_str(), holder.as_str()])
        .await;
    if let Err(e) = &plain {
        tracing::warn!(error = %e.details(), "cannot subscribe to wake-ups; falling back to polling");
    }
    // One channel a call: fred takes the first frame of an SSUBSCRIBE's
    // reply as its answer, and a call naming two channels gets two.
    let mut shard = Ok(());
    for name in [channel, own] {
        if shard.is_ok() {
            shard = on_own_primary.ssubscribe(name.as_str()).await;
        }
    }
    if let Err(e) = &shard {
        // A server before Redis 7.0 (whose scripts publish plainly) or a
        // user without +ssubscribe: the worker parks as one that hears only
        // plain channels, so hand-offs still reach it.
        tracing::warn!(
            error = %e.details(),
            "cannot subscribe to shard channels: where the scripts may SPUBLISH, \
             wake-ups are missed and the worker polls every max_idle (allow +ssubscribe)"
        );
    }
    heard
        .inbox
        .shard_listening
        .store(shard.is_ok(), Ordering::Release);
    heard
        .inbox
        .listening
        .store(plain.is_ok(), Ordering::Release);
    heard
        .wake_ups
        .set(WakeUps::from_subscriptions(plain.is_ok(), shard.is_ok()));
    (plain.is_ok(), shard.is_ok())
}
