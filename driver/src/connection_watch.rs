//! A handle says, once, that it lost its connection to Redis, and when it
//! has it back. Without it, an outage showed only as each call's own
//! timeout ("timed out after 10 s"), which reads as a slow Redis when
//! nothing is listening at all, and as fred's own lines in `Debug` text.
//!
//! A connection that is back within [`SAY_AFTER`] (a killed client, a
//! blip) is not worth a line: fred reconnects by itself, and the calls it
//! failed say so. One line per handle, not per pooled connection: they all
//! lose the same Redis.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fred::clients::Pool;
use fred::interfaces::EventInterface;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::connection_fault::{of_client_error, ConnectionFault};

/// How long a connection is lost before it is said.
const SAY_AFTER: Duration = Duration::from_secs(1);

/// Watch every connection of `pool` (to Redis at `url`, its password
/// removed) until the pool is dropped.
pub(crate) fn watch(pool: &Pool, url: &str) {
    let watch = Arc::new(Watch {
        url: url.to_owned(),
        down: Mutex::new(None),
    });
    for client in pool.clients() {
        let (mut errors, mut reconnects) = (client.error_rx(), client.reconnect_rx());
        let watch = watch.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    error = errors.recv() => match error {
                        Ok((error, _)) => watch.lost(of_client_error(&error)),
                        Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => break,
                    },
                    back = reconnects.recv() => match back {
                        Ok(_) => watch.back(),
                        Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => break,
                    },
                }
            }
        });
    }
}

struct Watch {
    url: String,
    down: Mutex<Option<Down>>,
}

/// A loss not yet over.
struct Down {
    since: Instant,
    /// What the last failure said (a closed connection first, then each
    /// refused reconnect).
    fault: Option<ConnectionFault>,
    said: bool,
}

impl Watch {
    fn lost(self: &Arc<Self>, fault: Option<ConnectionFault>) {
        let mut down = self.down.lock().expect("connection watch poisoned");
        match down.as_mut() {
            Some(down) => down.fault = fault.or(down.fault),
            None => {
                let since = Instant::now();
                *down = Some(Down {
                    since,
                    fault,
                    said: false,
                });
                let watch = self.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(SAY_AFTER).await;
                    watch.say_if_still_down(since);
                });
            }
        }
    }

    fn say_if_still_down(&self, since: Instant) {
        let mut down = self.down.lock().expect("connection watch poisoned");
        let Some(down) = down.as_mut().filter(|d| d.since == since) else {
            return;
        };
        down.said = true;
        tracing::warn!(
            "lost the connection to Redis at {} ({}); reconnecting: until then each call waits \
             for it up to its command timeout",
            self.url,
            why(down.fault)
        );
    }

    fn back(&self) {
        let down = self.down.lock().expect("connection watch poisoned").take();
        if let Some(down) = down.filter(|d| d.said) {
            let without = Duration::from_millis(down.since.elapsed().as_millis() as u64);
            tracing::info!(
                "reconnected to Redis at {} after {} without it",
                self.url,
                crate::human::duration_text(without)
            );
        }
    }
}

/// The loss in words, without the client's `Debug` text.
fn why(fault: Option<ConnectionFault>) -> &'static str {
    match fault {
        Some(ConnectionFault::Refused) => "connection refused: nothing listens there",
        Some(ConnectionFault::Closed) => "the connection was closed",
        Some(ConnectionFault::NoAnswer) => "it did not answer",
        Some(ConnectionFault::NoRoute) => "no route to it",
        Some(ConnectionFault::LoginRefused) => "it refused the login",
        Some(ConnectionFault::Tls) => "the TLS handshake failed",
        _ => "a connection error",
    }
}
