//! When a long-running subcommand (`metrics`, `events --follow`) stops:
//! Ctrl-C (SIGINT) or SIGTERM, so that a terminal and a service manager
//! both end it cleanly, with exit code 0.

/// Resolves at the first interrupt or termination signal.
pub async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
