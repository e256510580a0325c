//! Logs go to `--log-file` or nowhere: never to the terminal, which belongs
//! to the console (and to the output of subcommands).

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// Send logs to `path` (appending). The level comes from `REDQ_LOG`
/// (default `info`); the Redis client's own chatter is kept at `warn`, and
/// nothing logged anywhere contains the URL's password.
pub fn to_file(path: &Path) -> std::io::Result<()> {
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let filter = EnvFilter::try_from_env("REDQ_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,fred=warn,rustls=warn"));
    let _ = tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
    Ok(())
}
