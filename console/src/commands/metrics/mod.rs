//! `redq metrics --listen ADDR`: a Prometheus endpoint whose figures are
//! read from Redis at each scrape through the driver's operator API (one
//! namespace, or the shards summed), so applications need no
//! instrumentation. `collect` reads, `families` names and explains,
//! `encode` writes the text format, `serve` answers HTTP.
//!
//! Redis out of reach is an answer, not an error: the page then has
//! `redq_up 0` and the reason as a plain sentence in a comment, and the
//! next scrape tries again. It is a quick answer too, found as the live
//! console finds it (`tui::source`): a scrape's first read must answer
//! within [`PING_TIMEOUT`] and all of them within `SCRAPE_WITHIN` (3 s), not
//! the driver's command timeout each (the client queues commands while it
//! reconnects, so a dead Redis would hold every scrape that long), and a
//! failed read is explained by a fresh connection
//! attempt (`Exporter::why`): refused, unknown host, wrong password, or,
//! when it connects or does not answer either, the read's own error.

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
use std::time::{Duration, Instant};

use redq::QueueError;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio::time::timeout;

use crate::aggregate::Target;
use crate::cli::Connection;
use crate::commands::{builder, check_url, connect_failure};
use crate::failure::{is_unreachable, read_failed, Failure};
use crate::tui::source::PING_TIMEOUT;

/// How long a scrape waits for a connection attempt: the first one while
/// there is no handle yet, or the one that finds out why reads fail. With
/// [`PING_TIMEOUT`], a scrape of a Redis that is down or silent answers
/// within about two seconds, far inside Prometheus's default 10 s scrape
/// timeout (a dead one, whose refusal is at once, within about one).
const CONNECT_WAIT: Duration = Duration::from_secs(1);

/// How long one scrape's reads may take together, the first one's
/// [`PING_TIMEOUT`] included: a Redis that stalls after the first read
/// (`CLIENT PAUSE`, a long script) would otherwise hold each later read for
/// the driver's 5 s command timeout. A healthy scrape of 1 000 queues reads
/// in about 0.6 s; with the explanation's [`CONNECT_WAIT`] after it, a
/// stalled scrape answers within about 4 s, inside Prometheus's default
/// 10 s scrape timeout.
const SCRAPE_WITHIN: Duration = Duration::from_secs(3);

/// A connection attempt, in a task of its own: a scrape that stops
/// waiting for it leaves it under way, and the next scrape waits on it
/// again instead of starting another.
type Attempt = JoinHandle<Result<Target, QueueError>>;

/// The exporter's handle on Redis.
enum Link {
    /// None, and no attempt under way (at start with Redis down, or after
    /// an attempt failed): the next scrape starts one.
    Idle,
    /// An attempt that outlasted the scrape that started it: the next
    /// scrape waits on it again.
    Connecting(Attempt),
    /// Kept for good: the driver reconnects by itself.
    Connected(Target),
}

/// The exporter: where to read, and what it counts itself.
pub struct Exporter {
    builder: redq::RedisQueueBuilder,
    base: String,
    shards: usize,
    url: String,
    max_queues: usize,
    /// Whether the page has the wait and run histograms.
    histograms: bool,
    /// Which queues have their own label: kept from scrape to scrape.
    labels: std::sync::Mutex<collect::Labels>,
    link: Mutex<Link>,
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

    /// Connect once. The driver's connect is safe to stop waiting for: what
    /// it connects after the caller left, it closes.
    async fn connect(&self) -> Result<Target, QueueError> {
        Target::connect(self.builder.clone(), &self.base, self.shards).await
    }

    /// Start a connection attempt in its own task, which a later scrape
    /// can wait on again.
    fn attempt(&self) -> Attempt {
        let (builder, base, shards) = (self.builder.clone(), self.base.clone(), self.shards);
        tokio::spawn(async move { Target::connect(builder, &base, shards).await })
    }

    /// The handle, connecting first when there is none: waiting up to
    /// `wait` for the attempt (`None`: until it ends), which goes on
    /// without this scrape if it takes longer.
    async fn target(&self, wait: Option<Duration>) -> Result<Target, QueueError> {
        let mut link = self.link.lock().await;
        let mut attempt = match std::mem::replace(&mut *link, Link::Idle) {
            Link::Connected(target) => {
                *link = Link::Connected(target.clone());
                return Ok(target);
            }
            Link::Connecting(attempt) => attempt,
            Link::Idle => self.attempt(),
        };
        let ended = match wait {
            Some(wait) => timeout(wait, &mut attempt).await,
            None => Ok((&mut attempt).await),
        };
        match ended {
            Ok(Ok(Ok(target))) => {
                *link = Link::Connected(target.clone());
                Ok(target)
            }
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(panicked)) => Err(QueueError::Config(format!(
                "the connection attempt ended unexpectedly: {panicked}"
            ))),
            Err(_) => {
                *link = Link::Connecting(attempt);
                Err(QueueError::Timeout(wait.unwrap_or_default()))
            }
        }
    }

    /// Why reads through the handle fail, as a plain sentence. The handle
    /// only reports that it waited (its client queues commands while it
    /// reconnects), so a fresh connection is tried, as the console does:
    /// its error is the current one (the refusal of a Redis that died, an
    /// unknown host, a password no longer accepted). When it connects, or
    /// does not answer within [`CONNECT_WAIT`] either, the read's own error
    /// stands; a probe that connects is closed (now, or by the driver once
    /// it connects after the wait).
    async fn why(&self, read_error: &QueueError) -> String {
        match timeout(CONNECT_WAIT, self.connect()).await {
            Ok(Err(connect_error)) => read_failed(&connect_error).sentence,
            Ok(Ok(probe)) => {
                close(&probe).await;
                read_failed(read_error).sentence
            }
            Err(_) => read_failed(read_error).sentence,
        }
    }

    /// What the page says while the namespace has no queues at all: a
    /// wrong namespace, `/db` or `--shards` reads as an empty, healthy
    /// exporter otherwise (`redq_up 1`, `redq_queues 0`, no queue series).
    async fn empty_note(&self, target: &Target) -> String {
        match timeout(
            PING_TIMEOUT,
            crate::commands::known::empty_namespace(target),
        )
        .await
        {
            Ok(Ok(note)) => format!("redq: {note}"),
            _ => format!(
                "redq: no queues in namespace {}; check --namespace, the database and --shards",
                crate::text::inert(&self.base)
            ),
        }
    }

    /// One scrape: the page in the text format.
    pub async fn scrape(&self) -> String {
        let started = Instant::now();
        let reading = match self.target(Some(CONNECT_WAIT)).await {
            Ok(target) => match timeout(SCRAPE_WITHIN, collect::read(&target, PING_TIMEOUT))
                .await
                .unwrap_or(Err(QueueError::Timeout(SCRAPE_WITHIN)))
            {
                Ok(mut reading) => {
                    let rows = std::mem::take(&mut reading.rows);
                    reading.rows = {
                        let mut labels = self.labels.lock().unwrap_or_else(|e| e.into_inner());
                        collect::fold(rows, self.max_queues, &mut labels)
                    };
                    let notes = match reading.known_queues {
                        0 => vec![self.empty_note(&target).await],
                        _ => Vec::new(),
                    };
                    Ok((reading, notes))
                }
                Err(e) => Err(self.why(&e).await),
            },
            Err(e) => Err(read_failed(&e).sentence),
        };
        let duration = started.elapsed();
        match reading {
            Ok((reading, notes)) => {
                let scrape = families::Scrape {
                    up: true,
                    errors: self.errors.load(Ordering::Relaxed),
                    duration,
                    histograms: self.histograms,
                };
                encode::encode(&notes, &families::families(scrape, Some(&reading)))
            }
            Err(e) => {
                let errors = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
                let why = format!(
                    "redq could not read Redis at {} (namespace {}): {e}",
                    self.url, self.base
                );
                tracing::warn!(reason = %why, "scrape failed");
                crate::failure::say_when_new(&why);
                let scrape = families::Scrape {
                    up: false,
                    errors,
                    duration,
                    histograms: self.histograms,
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
    histograms: bool,
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
        histograms,
        labels: std::sync::Mutex::new(collect::Labels::default()),
        link: Mutex::new(Link::Idle),
        errors: AtomicU64::new(0),
    });
    // At start the attempt is waited out, however long: a wrong password
    // must be refused here, not served as redq_up 0.
    match exporter.target(None).await {
        Ok(target) => match target.queues().await {
            Ok(known) if known.is_empty() => eprintln!(
                "redq metrics: {}; the page says so while it holds",
                crate::commands::known::empty_namespace(&target).await?
            ),
            _ => {}
        },
        Err(e) if is_unreachable(&e) => eprintln!(
            "redq metrics: {}; serving redq_up 0 until it answers",
            read_failed(&e)
        ),
        Err(e) => return Err(connect_failure(e)),
    }
    serve::serve(listen, exporter).await
}

/// Close a handle opened only to learn whether Redis answers.
async fn close(target: &Target) {
    for shard in target.shards() {
        shard.close().await;
    }
}
