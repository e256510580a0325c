//! Demo traffic: producers and workers with the shapes an operator meets —
//! steady fast jobs, slow jobs holding leases, flaky jobs that retry and
//! end in the dead-letter set, jobs ordered per customer, delayed jobs, and
//! a queue nobody works on.
//!
//! Workers are plain claim / ack / nack loops over the driver's API (the
//! driver's worker runtime had not landed when this was written). Each loop
//! has its own worker identity, so the Leases screen shows distinct holders.

use std::time::Duration;

use rand::Rng;
use redq::{NewJob, RedisQueue};
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cli::Connection;
use crate::failure::Failure;

/// One kind of demo work.
struct Profile {
    queue: &'static str,
    name: &'static str,
    /// Jobs enqueued per second.
    rate: f64,
    /// Worker loops (0: nobody works on this queue).
    workers: usize,
    /// Run time range in ms.
    run_ms: (u64, u64),
    /// Chance an attempt fails.
    fail: f64,
    max_attempts: u32,
    errors: &'static [&'static str],
}

const PROFILES: &[Profile] = &[
    Profile {
        queue: "emails",
        name: "send_email",
        rate: 6.0,
        workers: 2,
        run_ms: (30, 250),
        fail: 0.03,
        max_attempts: 5,
        errors: &["smtp: 421 service not available, try again later"],
    },
    Profile {
        queue: "thumbnails",
        name: "render_thumbnail",
        rate: 0.8,
        workers: 3,
        run_ms: (2_000, 9_000),
        fail: 0.08,
        max_attempts: 3,
        errors: &["image decode failed: unexpected EOF at byte 48213"],
    },
    Profile {
        queue: "webhooks",
        name: "deliver_webhook",
        rate: 2.0,
        workers: 1,
        run_ms: (50, 400),
        fail: 0.35,
        max_attempts: 3,
        errors: &[
            "HTTP 503 from hooks.example.com after 3012ms",
            "HTTP 410 Gone: endpoint https://hooks.example.com/acme was removed",
            "timeout after 5000ms",
        ],
    },
    Profile {
        queue: "billing",
        name: "charge_invoice",
        rate: 1.0,
        workers: 1,
        run_ms: (200, 700),
        fail: 0.12,
        max_attempts: 2,
        errors: &["card declined: insufficient funds"],
    },
    Profile {
        queue: "reports",
        name: "build_report",
        rate: 0.1,
        workers: 0,
        run_ms: (0, 0),
        fail: 0.0,
        max_attempts: 1,
        errors: &[],
    },
];

/// Start producers and workers; they stop when `cancel` fires.
pub async fn start(
    connection: &Connection,
    cancel: CancellationToken,
) -> Result<Vec<JoinHandle<()>>, Failure> {
    let node: u64 = rand::random::<u64>() >> 16;
    let mut tasks = Vec::new();
    let producer = crate::commands::connect(connection).await?;
    for (p, profile) in PROFILES.iter().enumerate() {
        tasks.push(tokio::spawn(produce(
            producer.clone(),
            profile,
            cancel.clone(),
        )));
        for w in 0..profile.workers {
            let instance = (p * 10 + w) as u32 + 1;
            let worker = RedisQueue::builder(connection.url())
                .namespace(connection.namespace.clone())
                .identity(node, instance)
                .pool_size(1)
                .connect()
                .await?;
            tasks.push(tokio::spawn(work(worker, profile, cancel.clone())));
        }
    }
    Ok(tasks)
}

fn payload(profile: &Profile, n: u64) -> (serde_json::Value, Option<String>) {
    let mut rng = rand::rng();
    match profile.queue {
        "emails" => (
            json!({"to": format!("user{}@example.com", rng.random_range(1..5000)), "template": "welcome", "locale": "en"}),
            None,
        ),
        "thumbnails" => (
            json!({"image": format!("s3://uploads/{n:08}.jpg"), "sizes": [64, 256, 1024]}),
            None,
        ),
        "webhooks" => (
            json!({"url": "https://hooks.example.com/acme", "event": "order.created", "order": n}),
            None,
        ),
        "billing" => {
            let customer = format!("cus_{}", rng.random_range(1..6));
            (
                json!({"customer": customer, "invoice": format!("in_{n:06}"), "amount_cents": rng.random_range(500..50_000)}),
                Some(customer),
            )
        }
        _ => (json!({"report": "monthly", "month": "2025-11"}), None),
    }
}

async fn produce(queue: RedisQueue, profile: &'static Profile, cancel: CancellationToken) {
    let mut n: u64 = 0;
    while !cancel.is_cancelled() {
        n += 1;
        let (body, ordering) = payload(profile, n);
        let mut job = NewJob::new(body)
            .name(profile.name)
            .max_attempts(profile.max_attempts);
        if let Some(key) = ordering {
            job = job.ordering_key(key);
        }
        // Some emails are scheduled for later.
        if profile.queue == "emails" && n % 10 == 0 {
            job = job.delay(Duration::from_secs(rand::rng().random_range(20..90)));
        }
        if let Err(e) = queue.add(profile.queue, job).await {
            tracing::warn!(queue = profile.queue, error = %e, "demo enqueue failed");
        }
        let pause = rand::rng().random_range(0.5..1.5) / profile.rate;
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(Duration::from_secs_f64(pause)) => {}
        }
    }
}

async fn work(queue: RedisQueue, profile: &'static Profile, cancel: CancellationToken) {
    let lease = Duration::from_secs(30);
    while !cancel.is_cancelled() {
        let jobs = match queue.claim(profile.queue, 1, lease).await {
            Ok(jobs) => jobs,
            Err(e) => {
                tracing::warn!(queue = profile.queue, error = %e, "demo claim failed");
                Vec::new()
            }
        };
        if jobs.is_empty() {
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_millis(150)) => {}
            }
            continue;
        }
        for job in jobs {
            let held = job.lease();
            let run = rand::rng().random_range(profile.run_ms.0..=profile.run_ms.1);
            tokio::select! {
                _ = cancel.cancelled() => {
                    let _ = queue.release(&held).await;
                    return;
                }
                _ = tokio::time::sleep(Duration::from_millis(run)) => {}
            }
            let fails = rand::rng().random_bool(profile.fail);
            let result = if fails {
                let i = rand::rng().random_range(0..profile.errors.len());
                let backoff = Duration::from_secs(1 << job.attempts.min(4));
                queue
                    .nack(&held, backoff, profile.errors[i])
                    .await
                    .map(|_| ())
            } else {
                queue.ack(&held).await.map(|_| ())
            };
            if let Err(e) = result {
                tracing::warn!(queue = profile.queue, error = %e, "demo ack/nack failed");
            }
        }
    }
}
