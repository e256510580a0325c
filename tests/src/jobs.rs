//! Job types shared by the worker tests and the `redq-test-worker` binary,
//! so a job pushed in a test can be run by a separate worker process.

use std::time::Duration;

use fred::interfaces::ListInterface;
use redq::worker::{JobCx, JobError, TypedJob};
use serde::{Deserialize, Serialize};

/// Records every run (`<job id>:<attempt>`) in the Redis list `log:<tag>`,
/// then sleeps `sleep_ms`. The worker must be given a connected
/// `fred::clients::Client` as a service.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recorded {
    /// Which list to record in.
    pub tag: String,
    /// How long the run takes.
    pub sleep_ms: u64,
}

impl TypedJob for Recorded {
    const NAME: &'static str = "test.recorded";
    const QUEUE: &'static str = "work";
    const MAX_ATTEMPTS: u32 = 5;

    fn backoff(_attempt: u32) -> Duration {
        Duration::ZERO
    }

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        let client = cx
            .service::<fred::clients::Client>()
            .ok_or_else(|| JobError::fail("no redis client service"))?;
        let _: i64 = client
            .rpush(
                format!("log:{}", self.tag),
                format!("{}:{}", cx.id(), cx.attempt()),
            )
            .await?;
        tokio::time::sleep(Duration::from_millis(self.sleep_ms)).await;
        Ok(())
    }
}

/// Fails its first attempt (a retry 1 ms later), so its second runs as a
/// retry: the traces tests see a job's span on each attempt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailsOnce;

impl TypedJob for FailsOnce {
    const NAME: &'static str = "test.fails_once";
    const QUEUE: &'static str = "fails-once";

    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        if cx.attempt() == 1 {
            return Err(JobError::retry_after(
                "the first try fails",
                Duration::from_millis(1),
            ));
        }
        Ok(())
    }
}

/// The runs recorded for `tag`, as (job id, attempt) pairs.
pub async fn recorded_runs(client: &fred::clients::Client, tag: &str) -> Vec<(String, u32)> {
    let entries: Vec<String> = client
        .lrange(format!("log:{tag}"), 0, -1)
        .await
        .expect("LRANGE");
    entries
        .into_iter()
        .filter_map(|e| {
            let (id, attempt) = e.rsplit_once(':')?;
            Some((id.to_owned(), attempt.parse().ok()?))
        })
        .collect()
}
