//! `redq demo`: a private Redis, realistic traffic, and the console on it.
//!
//! The demo starts its own `redis-server` (see [`server`]) and never writes
//! to a Redis it did not start: `--url` and `REDIS_URL` (often exported in
//! an operator's shell, pointing at production) are ignored. Filling an
//! existing Redis takes both `--into-existing URL` and
//! `--yes-write-demo-traffic` (see [`Destination`]). Producers and workers (see
//! [`traffic`]) run in this process through the driver's API, so quitting
//! the console stops everything: traffic first (held leases are released),
//! then the private server, whose temporary directory is removed.

pub mod server;
pub mod traffic;
mod workflows;

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cli::{Connection, Global};
use crate::failure::Failure;
use crate::tui::state::Settings;
use crate::tui::theme::Theme;

/// Where the demo's traffic goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A redis-server the demo starts, and stops when it ends (the default).
    Private,
    /// A Redis the user named with `--into-existing` and confirmed with
    /// `--yes-write-demo-traffic`.
    Existing(String),
}

impl Destination {
    /// From the flags: a URL without the confirmation is refused (exit 2)
    /// before anything is started or written.
    pub fn from_flags(
        into_existing: Option<String>,
        confirmed: bool,
    ) -> Result<Destination, Failure> {
        match into_existing {
            None => Ok(Destination::Private),
            Some(url) if confirmed => Ok(Destination::Existing(url)),
            Some(url) => Err(Failure::Usage(format!(
                "redq demo --into-existing writes demo jobs, workers and schedules into {} \
                 and leaves them there; add --yes-write-demo-traffic to do it, or drop \
                 --into-existing for a private Redis",
                redq::redact_url(&url)
            ))),
        }
    }
}

/// Run the demo until the console quits.
pub async fn run(
    connection: &Connection,
    global: &Global,
    into_existing: Option<String>,
    confirmed: bool,
) -> Result<(), Failure> {
    if global.read_only {
        return Err(Failure::read_only("demo"));
    }
    let into = Destination::from_flags(into_existing, confirmed)?;
    if connection.shards() > 1 {
        // The demo's traffic is one namespace; a sharded view of it would
        // watch namespaces nothing writes to.
        return Err(Failure::Usage(
            "the demo runs on one namespace: drop --shards".into(),
        ));
    }
    crate::require_terminal()?;
    let mut target = Connection {
        url: None,
        namespace: connection.namespace.clone(),
        shards: None,
        tls_ca_file: connection.tls_ca_file.clone(),
        actor: connection.actor.clone(),
    };
    let server = match into {
        Destination::Private => {
            let server = server::PrivateRedis::start().await?;
            target.url = Some(server.url());
            Some(server)
        }
        Destination::Existing(url) => {
            target.url = Some(url);
            None
        }
    };
    // The console's handle: what an operator does in it is the console's.
    let queue = crate::commands::connect_as(&target, "console").await?;
    let cancel = CancellationToken::new();
    let traffic = traffic::start(&target, cancel.clone()).await?;
    let settings = Settings {
        url: queue.redacted_url().to_owned(),
        namespace: queue.namespace().to_owned(),
        shards: Vec::new(),
        read_only: false,
        refresh: global.refresh,
    };
    let theme = Theme::new(crate::color_wanted(global.no_color));
    let result = crate::tui::app::run(queue, settings, theme).await;
    cancel.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(3), futures::future::join_all(traffic)).await;
    drop(server);
    result.map_err(Failure::from)
}
