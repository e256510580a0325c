//! Demo traffic: producers and workers with the shapes an operator meets —
//! steady fast jobs, slow jobs holding leases, flaky jobs that retry and
//! end in the dead-letter set (or go there at once on a permanent error),
//! jobs ordered per customer, delayed jobs, a cron schedule, a queue
//! nobody works on, and webhooks under flow control (one delivery at a time
//! per tenant, the odd remote 429 pushing a tenant back), so the Limits
//! screen has limits, held jobs and push-backs to show; and workflows (see
//! `demo/workflows.rs`) for the Workflows screen.
//!
//! Workers are the driver's own runtime (`redq::worker::Worker`) with typed
//! jobs, so the Workers screen shows real heartbeats and the schedule is
//! fired by the scheduler every worker runs.

use std::time::Duration;

use rand::Rng;
use redq::flow::{Limit, LimitScope};
use redq::schedule::Schedule;
use redq::worker::{JobCx, JobError, Registry, TypedJob, WorkOptions, Worker};
use redq::{NewJob, RedisQueue};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cli::Connection;
use crate::failure::Failure;

/// Sleep `ms` (or until the worker shuts down), then fail with `error` at
/// probability `fail`.
async fn simulate(cx: &JobCx, (lo, hi): (u64, u64), fail: f64) -> bool {
    let (ms, fails) = (
        rand::rng().random_range(lo..=hi),
        rand::random::<f64>() < fail,
    );
    tokio::select! {
        _ = cx.cancelled() => {}
        _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
    }
    fails
}

#[derive(Serialize, Deserialize)]
pub(super) struct SendEmail {
    pub(super) to: String,
    pub(super) template: String,
}

impl TypedJob for SendEmail {
    const NAME: &'static str = "send_email";
    const QUEUE: &'static str = "emails";
    const MAX_ATTEMPTS: u32 = 5;
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        if simulate(cx, (30, 250), 0.03).await {
            return Err(JobError::retry(
                "smtp: 421 service not available, try again later",
            ));
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct RenderThumbnail {
    pub(super) image: String,
    pub(super) sizes: Vec<u32>,
}

impl TypedJob for RenderThumbnail {
    const NAME: &'static str = "render_thumbnail";
    const QUEUE: &'static str = "thumbnails";
    const MAX_ATTEMPTS: u32 = 3;
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        if simulate(cx, (2_000, 9_000), 0.08).await {
            return Err(JobError::retry(format!(
                "image decode failed: unexpected EOF at byte {}",
                rand::rng().random_range(1_000..90_000)
            )));
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct DeliverWebhook {
    pub(super) tenant: String,
    pub(super) url: String,
    pub(super) event: String,
    pub(super) order: u64,
}

/// The tenants whose webhooks the demo delivers, each its own limit key.
pub(super) const TENANTS: [&str; 3] = ["acme", "globex", "initech"];

impl TypedJob for DeliverWebhook {
    const NAME: &'static str = "deliver_webhook";
    const QUEUE: &'static str = "webhooks";
    const MAX_ATTEMPTS: u32 = 3;
    fn limit_key(&self) -> Option<String> {
        // Each tenant's endpoint gets its own budget (see `start`).
        Some(self.tenant.clone())
    }
    fn backoff(_attempt: u32) -> Duration {
        Duration::from_secs(1)
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        if !simulate(cx, (50, 400), 0.35).await {
            return Ok(());
        }
        let roll = rand::random::<f64>();
        if roll > 0.9 {
            // A remote 429: this tenant starts nothing for a few seconds,
            // and the job comes back without spending an attempt.
            return Err(JobError::rate_limited(Duration::from_secs(5)));
        }
        if roll < 0.15 {
            // Permanent: retrying cannot help, dead-letter it now.
            return Err(JobError::fail(format!(
                "HTTP 410 Gone: endpoint {} was removed",
                self.url
            )));
        }
        let ms = rand::rng().random_range(3_000..5_000);
        Err(JobError::retry(if roll < 0.6 {
            format!("HTTP 503 from hooks.example.com after {ms}ms")
        } else {
            format!("timeout after {ms}ms")
        }))
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct ChargeInvoice {
    pub(super) customer: String,
    pub(super) invoice: String,
    pub(super) amount_cents: u64,
}

impl TypedJob for ChargeInvoice {
    const NAME: &'static str = "charge_invoice";
    const QUEUE: &'static str = "billing";
    const MAX_ATTEMPTS: u32 = 2;
    fn ordering_key(&self) -> Option<String> {
        // One charge at a time per customer, in order.
        Some(self.customer.clone())
    }
    fn backoff(_attempt: u32) -> Duration {
        Duration::from_secs(2)
    }
    async fn run(&self, cx: &JobCx) -> Result<(), JobError> {
        if simulate(cx, (200, 700), 0.12).await {
            return Err(JobError::retry(format!(
                "card declined for {}: insufficient funds",
                self.customer
            )));
        }
        Ok(())
    }
}

/// Start producers, workers and the schedule; they stop when `cancel` fires.
pub async fn start(
    connection: &Connection,
    cancel: CancellationToken,
) -> Result<Vec<JoinHandle<()>>, Failure> {
    // The demo's services call their scripts as a service would: the
    // driver's default, not the console's EVALSHA; what they change (the
    // schedule) is logged as the demo's, not the CLI's.
    let producer = crate::commands::builder(connection)
        .actor(redq::events::local_actor("demo"))
        .script_calls(redq::ScriptCalls::Auto)
        .namespace(connection.namespace())
        .connect()
        .await?;
    producer
        .upsert_schedule(
            Schedule::new("digest-every-minute", "emails", "* * * * *")
                .payload(json!({"to": "ops@example.com", "template": "digest"}))
                .job_name(SendEmail::NAME)
                .max_attempts(5),
        )
        .await?;
    producer
        .upsert_schedule(
            Schedule::new("nightly-report", "reports", "30 2 * * *")
                .timezone("Europe/Paris")
                .payload(json!({"report": "daily"}))
                .job_name("build_report")
                .paused(true),
        )
        .await?;
    // Webhooks: one delivery at a time per tenant, four at once in all.
    producer
        .set_limit("webhooks", LimitScope::EachKey, Limit::concurrency(1))
        .await?;
    producer
        .set_limit("webhooks", LimitScope::Queue, Limit::concurrency(4))
        .await?;

    let mut tasks = Vec::new();
    let mut front = Registry::new();
    front.add_job::<SendEmail>();
    front.add_job::<DeliverWebhook>();
    front.add_job::<ChargeInvoice>();
    let mut media = Registry::new();
    media.add_job::<RenderThumbnail>();
    let workers = [
        (
            front,
            WorkOptions::new()
                .queues(["emails", "webhooks", "billing"])
                .concurrency(6),
        ),
        (
            media,
            WorkOptions::new().queues(["thumbnails"]).concurrency(3),
        ),
    ];
    for (registry, options) in workers {
        let queue = crate::commands::builder(connection)
            .actor(redq::events::local_actor("demo"))
            .script_calls(redq::ScriptCalls::Auto)
            .namespace(connection.namespace())
            .connect()
            .await?;
        let worker = Worker::new(queue, registry, options.grace(Duration::from_secs(2)))?;
        let stop = cancel.clone();
        tasks.push(tokio::spawn(async move {
            if let Err(e) = worker.run(stop).await {
                tracing::warn!(error = %e, "demo worker stopped");
            }
        }));
    }
    // Workflows for screen 8: a batch with callbacks, a small tree, a
    // dependent held if its dependency dies. The console shows whatever of
    // them was made; a failure here leaves the rest of the demo running.
    if let Err(e) = super::workflows::seed(&producer).await {
        tracing::warn!(error = %e, "demo workflows not enqueued");
    }
    tasks.push(tokio::spawn(produce(producer, cancel)));
    Ok(tasks)
}

async fn produce(queue: RedisQueue, cancel: CancellationToken) {
    let mut n: u64 = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !cancel.is_cancelled() {
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tick.tick() => {}
        }
        n += 1;
        if let Err(e) = produce_one(&queue, n).await {
            tracing::warn!(error = %e, "demo enqueue failed");
        }
    }
}

/// Every 100 ms: emails ~6/s, webhooks ~2/s, billing ~1/s, thumbnails
/// ~0.4/s (slow: a few wait their turn), and a report every 10 s into a
/// queue no worker serves.
async fn produce_one(queue: &RedisQueue, n: u64) -> Result<(), redq::QueueError> {
    let (roll, user, customer, amount) = {
        let mut rng = rand::rng();
        (
            rng.random::<f64>(),
            rng.random_range(1..5000),
            rng.random_range(1..6),
            rng.random_range(500..50_000),
        )
    };
    if roll < 0.6 {
        let email = SendEmail {
            to: format!("user{user}@example.com"),
            template: "welcome".into(),
        };
        if n.is_multiple_of(10) {
            // Some mail is scheduled for later.
            let job = NewJob::new(serde_json::to_value(&email).unwrap_or_default())
                .name(SendEmail::NAME)
                .max_attempts(SendEmail::MAX_ATTEMPTS)
                .delay(Duration::from_secs(20 + n % 70));
            queue.add(SendEmail::QUEUE, job).await?;
        } else {
            queue.push(&email).await?;
        }
    }
    if roll < 0.2 {
        queue
            .push(&DeliverWebhook {
                tenant: TENANTS[n as usize % TENANTS.len()].into(),
                url: format!(
                    "https://hooks.example.com/{}",
                    TENANTS[n as usize % TENANTS.len()]
                ),
                event: "order.created".into(),
                order: n,
            })
            .await?;
    }
    if (0.2..0.3).contains(&roll) {
        queue
            .push(&ChargeInvoice {
                customer: format!("cus_{customer}"),
                invoice: format!("in_{n:06}"),
                amount_cents: amount,
            })
            .await?;
    }
    if (0.3..0.34).contains(&roll) {
        queue
            .push(&RenderThumbnail {
                image: format!("s3://uploads/{n:08}.jpg"),
                sizes: vec![64, 256, 1024],
            })
            .await?;
    }
    if n.is_multiple_of(100) {
        let job =
            NewJob::new(json!({"report": "monthly", "month": "2025-11"})).name("build_report");
        queue.add("reports", job).await?;
    }
    Ok(())
}
