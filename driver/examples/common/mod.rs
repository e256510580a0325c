//! The job type the examples share, where they find Redis, their logs and
//! their exit.

// Each example uses a part of this.
#![allow(dead_code)]

use std::time::Duration;

use redq::worker::{JobCx, JobError, TypedJob};
use serde::{Deserialize, Serialize};

/// Log at `RUST_LOG`'s levels, else INFO and above, and only the errors of
/// fred (the Redis client): its warnings about a lost connection are in its
/// `Debug` text, and redq says the same in words.
pub fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,fred=error"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
}

/// The process's exit: an error said as its sentence on stderr, where a
/// `main` returning `Result` would print the error's `Debug` text.
pub fn exit(outcome: Result<(), redq::QueueError>) -> std::process::ExitCode {
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `REDIS_URL`, or a local Redis on the default port.
pub fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

/// Send a welcome mail (pretend: it sleeps, and fails now and then).
#[derive(Debug, Serialize, Deserialize)]
pub struct WelcomeMail {
    pub user_id: u64,
    pub address: String,
}

impl TypedJob for WelcomeMail {
    const NAME: &'static str = "examples::welcome_mail";
    const QUEUE: &'static str = "mail";
    const MAX_ATTEMPTS: u32 = 5;
    const TIMEOUT: Duration = Duration::from_secs(10);

    /// One mail per user: pushing again while one is pending is a no-op.
    fn dedup_key(&self) -> Option<String> {
        Some(format!("welcome:{}", self.user_id))
    }

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if self.user_id.is_multiple_of(7) && cx.attempt() < 3 {
            // Any error converts with `?`; this one is retried with backoff.
            Err(std::io::Error::other("smtp server busy"))?;
        }
        println!(
            "sent welcome mail to {} (attempt {})",
            self.address,
            cx.attempt()
        );
        Ok(())
    }
}
