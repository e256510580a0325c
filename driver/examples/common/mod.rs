//! The job type the examples share, and where they find Redis.

use std::time::Duration;

use redq::worker::{JobCx, JobError, TypedJob};
use serde::{Deserialize, Serialize};

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
