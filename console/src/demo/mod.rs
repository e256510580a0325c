//! `redq demo`: a private Redis, realistic traffic, and the console on it.
//!
//! Without `--url` it starts its own `redis-server` (see [`server`]); with
//! `--url` it fills that Redis instead. Producers and workers (see
//! [`traffic`]) run in this process through the driver's API, so quitting
//! the console stops everything: traffic first (held leases are released),
//! then the private server, whose temporary directory is removed.

pub mod server;
pub mod traffic;

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cli::{Connection, Global};
use crate::failure::Failure;
use crate::tui::state::Settings;
use crate::tui::theme::Theme;

/// Run the demo until the console quits.
pub async fn run(connection: &Connection, global: &Global) -> Result<(), Failure> {
    if global.read_only {
        return Err(Failure::read_only("demo"));
    }
    if connection.shards > 1 {
        // The demo's traffic is one namespace; a sharded view of it would
        // watch namespaces nothing writes to.
        return Err(Failure::Usage(
            "the demo runs on one namespace: drop --shards".into(),
        ));
    }
    let server = match &connection.url {
        Some(_) => None,
        None => Some(server::PrivateRedis::start().await?),
    };
    let connection = Connection {
        url: Some(match &server {
            Some(s) => s.url(),
            None => connection.url().to_owned(),
        }),
        namespace: connection.namespace.clone(),
        shards: 1,
    };
    let queue = crate::commands::connect(&connection).await?;
    let cancel = CancellationToken::new();
    let traffic = traffic::start(&connection, cancel.clone()).await?;
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
