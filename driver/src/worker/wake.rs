//! Sleeping without polling: a dedicated subscriber connection listens on
//! the namespace's wake channel, where the scripts publish a queue's name
//! whenever it gets due work.

use std::collections::HashSet;
use std::sync::Arc;

use fred::interfaces::{ClientLike, EventInterface, PubsubInterface};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::RedisQueue;

/// Subscribe and forward wake-ups for `queues` to `wake` until `stop`.
///
/// `Notify` keeps one pending permit, so a wake-up that arrives between an
/// empty claim and the worker going to sleep is not lost. If the subscription
/// fails (e.g. an ACL forbids pub/sub) the worker still works, sleeping at
/// most its `max_idle` between checks.
pub(crate) async fn listen_owned(
    queue: RedisQueue,
    queues: Vec<String>,
    wake: Arc<Notify>,
    stop: CancellationToken,
) {
    listen(&queue, &queues, wake, stop).await
}

async fn listen(queue: &RedisQueue, queues: &[String], wake: Arc<Notify>, stop: CancellationToken) {
    let subscriber = match queue.inner.client_builder.build_subscriber_client() {
        Ok(client) => client,
        Err(e) => {
            tracing::warn!(error = %e.details(), "cannot create the wake-up subscriber; falling back to polling");
            return;
        }
    };
    if let Err(e) = subscriber.init().await {
        tracing::warn!(error = %e.details(), "cannot connect the wake-up subscriber; falling back to polling");
        return;
    }
    let channel = queue.wake_channel();
    let mut messages = subscriber.message_rx();
    let resubscribe = subscriber.manage_subscriptions();
    if let Err(e) = subscriber.subscribe(channel.as_str()).await {
        tracing::warn!(error = %e.details(), "cannot subscribe to wake-ups; falling back to polling");
    }
    let ours: HashSet<&str> = queues.iter().map(String::as_str).collect();
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            message = messages.recv() => match message {
                Ok(message) => {
                    let name = message.value.as_str().map(|s| s.to_string()).unwrap_or_default();
                    if ours.contains(name.as_str()) {
                        wake.notify_one();
                    }
                }
                // Lagged behind a burst: some of those were surely ours.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => wake.notify_one(),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    resubscribe.abort();
    let _ = subscriber.quit().await;
}
