//! `redq metrics --listen ADDR`: a Prometheus endpoint whose figures are
//! read from Redis at each scrape through the driver's operator API (one
//! namespace, or the shards summed), so applications need no
//! instrumentation. `collect` reads, `families` names and explains,
//! `encode` writes the text format, `serve` answers HTTP.
//!
//! Redis out of reach is an answer, not an error: the page then has
//! `redq_up 0` and the reason as a plain sentence in a comment, and the
//! next scrape tries again.

mod collect;
mod encode;
mod families;
pub mod figures;
mod serve;
pub mod show;
pub mod switch;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use redq::QueueError;
use tokio::sync::Mutex;

use crate::aggregate::Target;
use crate::cli::Connection;
use crate::commands::{builder, check_url, connect_failure};
use crate::failure::{is_unreachable, read_failed, Failure};

/// The exporter: where to read, and what it counts itself.
pub struct Exporter {
    builder: redq::RedisQueueBuilder,
    base: String,
    shards: usize,
    url: String,
    max_queues: usize,
    /// Connected on the first scrape that reaches Redis, then kept (the
    /// driver reconnects by itself).
    target: Mutex<Option<Target>>,
    errors: AtomicU64,
}

impl Exporter {
    /// The namespace (or the shards' base name) exported.
    pub fn namespace(&self) -> &str {
        &self.base
    }

    /// The URL read, without its password.
    pub fn redacted_url(&self) -> &str {
        &self.url
    }

    async fn target(&self) -> Result<Target, QueueError> {
        let mut held = self.target.lock().await;
        if let Some(target) = held.as_ref() {
            return Ok(target.clone());
        }
        let target = Target::connect(self.builder.clone(), &self.base, self.shards).await?;
        *held = Some(target.clone());
        Ok(target)
    }

    /// One scrape: the page in the text format.
    pub async fn scrape(&self) -> String {
        let started = Instant::now();
        let reading = match self.target().await {
            Ok(target) => collect::read(&target, self.max_queues).await,
            Err(e) => Err(e),
        };
        let duration = started.elapsed();
        match reading {
            Ok(reading) => {
                let scrape = families::Scrape {
                    up: true,
                    errors: self.errors.load(Ordering::Relaxed),
                    duration,
                };
                encode::encode(&[], &families::families(scrape, Some(&reading)))
            }
            Err(e) => {
                let errors = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
                let why = format!(
                    "redq could not read Redis at {} (namespace {}): {}",
                    self.url,
                    self.base,
                    read_failed(&e)
                );
                tracing::warn!(reason = %why, "scrape failed");
                let scrape = families::Scrape {
                    up: false,
                    errors,
                    duration,
                };
                encode::encode(&[why], &families::families(scrape, None))
            }
        }
    }
}

/// Run `redq metrics`: connect (or, with Redis out of reach, start anyway
/// and answer `redq_up 0` until it is back), then serve until interrupted.
/// Settings that waiting cannot fix (a bad URL, a wrong password) are
/// refused at once.
pub async fn run(
    connection: &Connection,
    listen: SocketAddr,
    max_queues: usize,
) -> Result<(), Failure> {
    check_url(connection)?;
    if max_queues == 0 {
        return Err(Failure::Usage(
            "--max-queues must be at least 1 (queues past it are summed under queue=\"_other\")"
                .into(),
        ));
    }
    let exporter = Arc::new(Exporter {
        builder: builder(connection),
        base: connection.namespace().to_owned(),
        shards: connection.shards(),
        url: redq::redact_url(connection.url()),
        max_queues,
        target: Mutex::new(None),
        errors: AtomicU64::new(0),
    });
    match exporter.target().await {
        Ok(_) => {}
        Err(e) if is_unreachable(&e) => eprintln!(
            "redq metrics: {}; serving redq_up 0 until it answers",
            read_failed(&e)
        ),
        Err(e) => return Err(connect_failure(e)),
    }
    serve::serve(listen, exporter).await
}
