//! Capturing what the code logs through `tracing`, to assert on it.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A buffer that a `tracing` subscriber writes formatted events into
/// (no ANSI colours), shared by every clone.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    /// A new, empty capture.
    pub fn new() -> LogCapture {
        LogCapture::default()
    }

    /// Everything captured so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// A subscriber writing every event at `level` and above here.
    pub fn subscriber(&self, level: tracing::Level) -> impl tracing::Subscriber + Send + Sync {
        let writer = self.clone();
        tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish()
    }

    /// Capture events at `level` and above from every thread, for the rest
    /// of the process, and route the `log` crate's records here too; a no-op
    /// when a global subscriber is already set.
    pub fn try_init_global(&self, level: tracing::Level) {
        let writer = self.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .try_init();
    }

    /// Capture events at `level` and above on this thread until the guard
    /// drops (use a current-thread runtime so every await stays here).
    pub fn set_default(&self, level: tracing::Level) -> tracing::subscriber::DefaultGuard {
        tracing::subscriber::set_default(self.subscriber(level))
    }
}

impl Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
