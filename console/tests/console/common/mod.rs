//! Fixtures shared by the console's tests: a fixed clock and a state full
//! of believable data, built without Redis.

mod workflows;
pub use workflows::*;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redq::flow::{KeyLimitUse, Limit, QueueLimits};
use redq::{JobRecord, JobState, QueueCounts, QueueEvent, StatsBucket};
use redq_console::flow::{rows_of, LimiterRow};
use redq_console::tui::state::{
    Action, DeadWindow, QueueRow, ScheduleInfo, Settings, Snapshot, State, Update, WorkerInfo,
};

/// The fixed "now" of every rendered screen: 2025-11-29 22:37:05 UTC.
pub fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_764_455_825)
}

pub fn ago(secs: u64) -> SystemTime {
    now() - Duration::from_secs(secs)
}

pub fn settings() -> Settings {
    Settings {
        url: "redis://ops@redis.internal:6379/0".into(),
        namespace: "redq".into(),
        shards: Vec::new(),
        read_only: false,
        refresh: Duration::from_secs(1),
    }
}

pub fn counts(queue: &str, waiting: u64, scheduled: u64, leased: u64, dead: u64) -> QueueCounts {
    QueueCounts {
        queue: queue.into(),
        waiting,
        scheduled,
        leased,
        dead,
        blocked: 0,
        lapsed: 0,
        completed: 0,
        cancelled: 0,
        held: 0,
        awaiting: 0,
        due: 0,
        due_since: None,
        paused: false,
        paused_shards: 0,
        shards: 1,
        head_enqueued_at: (waiting > 0).then(|| ago(95)),
        now: now(),
    }
}

/// Buckets over the last 15 minutes with a recognisable shape.
pub fn stats(per_bucket: u64, failed_every: u64) -> Vec<StatsBucket> {
    let width = 5;
    let end = 1_764_455_825 / width * width;
    (0..180)
        .map(|i| {
            let start = end - i * width;
            StatsBucket {
                start: UNIX_EPOCH + Duration::from_secs(start),
                processed: per_bucket * (1 + (i % 36) / 6),
                failed: u64::from(failed_every > 0 && i % failed_every == 0),
            }
        })
        .rev()
        .collect()
}

pub fn job(id: &str, queue: &str, state: JobState) -> JobRecord {
    JobRecord {
        id: id.into(),
        queue: queue.into(),
        state,
        payload: serde_json::json!({"to": "ada@example.com", "template": "welcome"}),
        name: Some("send_email".into()),
        priority: 0,
        attempts: 0,
        max_attempts: 5,
        enqueued_at: ago(600),
        due_at: None,
        lease_id: None,
        lease_expires_at: None,
        holder: None,
        last_error: None,
        died_at: None,
        dedup_key: None,
        ordering_key: None,
        limit_key: None,
        trace_parent: None,
        retry_window: None,
        reclaim_backoff: redq::Backoff::NONE,
        finished_at: None,
        namespace: "redq".into(),
        gate: None,
        awaits: None,
    }
}

pub fn leased(id: &str, queue: &str, expires_in: i64, instance: u32) -> JobRecord {
    let mut j = job(id, queue, JobState::Leased);
    j.lease_id = Some(41 + instance as u64);
    j.lease_expires_at = Some(if expires_in >= 0 {
        now() + Duration::from_secs(expires_in as u64)
    } else {
        now() - Duration::from_secs(expires_in.unsigned_abs())
    });
    j.holder = Some((0x9cd2_5af9, instance));
    j.attempts = 1;
    j
}

pub fn dead(id: &str, queue: &str, error: &str, died_ago: u64) -> JobRecord {
    let mut j = job(id, queue, JobState::Dead);
    j.attempts = 3;
    j.max_attempts = 3;
    j.name = Some("deliver_webhook".into());
    j.last_error = Some(error.into());
    j.died_at = Some(ago(died_ago));
    j.payload = serde_json::json!({"url": "https://hooks.example.com/acme", "event": "order.created", "order": 1042});
    j
}

pub fn dead_letters() -> Vec<JobRecord> {
    vec![
        dead(
            "01JDQ2X7K5M3N8P9R2S4T6V8W0",
            "webhooks",
            "HTTP 503 from hooks.example.com after 3012ms",
            12,
        ),
        dead(
            "01JDQ2X7K5M3N8P9R2S4T6V8W1",
            "webhooks",
            "HTTP 503 from hooks.example.com after 5120ms",
            40,
        ),
        dead(
            "01JDQ2X7K5M3N8P9R2S4T6V8W2",
            "billing",
            "card declined: insufficient funds",
            75,
        ),
        dead(
            "01JDQ2X7K5M3N8P9R2S4T6V8W3",
            "webhooks",
            "timeout after 5000ms",
            300,
        ),
        dead(
            "01JDQ2X7K5M3N8P9R2S4T6V8W4",
            "webhooks",
            "HTTP 503 from hooks.example.com after 2999ms",
            86_400 + 60,
        ),
    ]
}

pub fn events() -> Vec<QueueEvent> {
    dead_letters()
        .iter()
        .enumerate()
        .map(|(i, j)| QueueEvent {
            event_id: format!("1764455825000-{i}"),
            kind: "dead".into(),
            queue: j.queue.clone(),
            job_id: j.id.clone(),
            name: j.name.clone(),
            error: j.last_error.clone().unwrap_or_default(),
            attempts: j.attempts,
            count: None,
            by: None,
            detail: None,
            at: j.died_at.unwrap_or(now()),
            namespace: j.namespace.clone(),
        })
        .collect()
}

pub fn workers() -> Vec<WorkerInfo> {
    vec![
        WorkerInfo {
            id: "2636283641-1".into(),
            node: 0x9cd2_5af9,
            instance: 1,
            host: "web-1".into(),
            pid: 4242,
            started_at: ago(7200),
            queues: vec!["emails".into(), "webhooks".into()],
            in_flight: 3,
            processed: 12_345,
            failed: 17,
            last_heartbeat: ago(2),
            shards: Vec::new(),
            gone_shards: Vec::new(),
            state: redq::worker::WorkerState::Running,
            gone: false,
            wake_ups: Some(redq::worker::WakeUps::Shard),
            version: Some("0.1.0".into()),
            handoffs_lost: Some(0),
            claims_lost: Some(0),
        },
        WorkerInfo {
            id: "2636283641-2".into(),
            node: 0x9cd2_5af9,
            instance: 2,
            host: "web-2".into(),
            pid: 4243,
            started_at: ago(3600),
            queues: vec!["thumbnails".into()],
            in_flight: 0,
            processed: 800,
            failed: 2,
            last_heartbeat: ago(45),
            shards: Vec::new(),
            gone_shards: Vec::new(),
            state: redq::worker::WorkerState::Running,
            gone: false,
            wake_ups: Some(redq::worker::WakeUps::Shard),
            version: Some("0.1.0".into()),
            handoffs_lost: Some(0),
            claims_lost: Some(0),
        },
    ]
}

pub fn schedules() -> Vec<ScheduleInfo> {
    vec![
        ScheduleInfo {
            name: "digest-every-minute".into(),
            queue: "emails".into(),
            expression: "* * * * *".into(),
            timezone: "UTC".into(),
            next_run: Some(now() + Duration::from_secs(55)),
            last_run: Some(ago(5)),
            paused: false,
            shard: None,
        },
        ScheduleInfo {
            name: "nightly-report".into(),
            queue: "reports".into(),
            expression: "30 2 * * *".into(),
            timezone: "Europe/Paris".into(),
            next_run: None,
            last_run: Some(ago(86_400 + 3600)),
            paused: true,
            shard: None,
        },
    ]
}

pub fn queue_rows() -> Vec<QueueRow> {
    let mut billing = counts("billing", 3, 0, 1, 1);
    billing.blocked = 4;
    let mut reports = counts("reports", 12, 0, 0, 0);
    reports.head_enqueued_at = Some(ago(3 * 3600 + 120));
    let mut thumbnails = counts("thumbnails", 40, 2, 3, 0);
    thumbnails.paused = true;
    let mut webhooks = counts("webhooks", 0, 6, 1, 4);
    webhooks.lapsed = 1;
    vec![
        QueueRow {
            counts: billing,
            stats: stats(1, 12),
        },
        QueueRow {
            counts: counts("emails", 7, 12, 2, 0),
            stats: stats(30, 0),
        },
        QueueRow {
            counts: reports,
            stats: Vec::new(),
        },
        QueueRow {
            counts: thumbnails,
            stats: stats(2, 40),
        },
        QueueRow {
            counts: webhooks,
            stats: stats(10, 3),
        },
    ]
}

pub fn snapshot() -> Snapshot {
    Snapshot {
        redis_now: now(),
        queues: queue_rows(),
        shard_jobs: Vec::new(),
        events: events(),
        event_reach: None,
        workers: Some(workers()),
        schedules: Some(schedules()),
        leases: Some(vec![
            leased("01JDQ3A1B2C3D4E5F6G7H8J9K0", "webhooks", -4, 3),
            leased("01JDQ3A1B2C3D4E5F6G7H8J9K1", "emails", 12, 1),
            leased("01JDQ3A1B2C3D4E5F6G7H8J9K2", "thumbnails", 27, 2),
        ]),
        dead: Some(DeadWindow::whole(dead_letters())),
        jobs: None,
        limits: Some(limiters()),
        limited: vec!["emails".into(), "webhooks".into()],
        gates: Some(gates()),
        gate: None,
    }
}

/// Two queues with flow control: emails (20 at once and 100/1s, 2 at once
/// per tenant, acme 5, globex holding 7 jobs back), webhooks (10/1s, pushed
/// back by a 429 for 12 more seconds).
pub fn queue_limits() -> Vec<QueueLimits> {
    let key = |key: &str, limit: Limit, leased, held, overridden| KeyLimitUse {
        key: key.into(),
        limit,
        overridden,
        leased,
        held,
        started_in_window: leased,
        pushed_back_until: None,
        ready: held > 0 && leased < u64::from(limit.concurrency.unwrap_or(u32::MAX)),
    };
    let each = Limit::concurrency(2);
    vec![
        QueueLimits {
            queue: "emails".into(),
            limit: Limit::concurrency(20).and_rate(100, Duration::from_secs(1)),
            each_key: each,
            leased: 9,
            started_in_window: 87,
            pushed_back_until: None,
            held: 11,
            waiting: 0,
            held_by_queue: 0,
            paused: false,
            shards: Vec::new(),
            keys: vec![
                key("acme", Limit::concurrency(5), 5, 4, true),
                key("globex", each, 2, 7, false),
                key("initech", each, 1, 0, false),
            ],
        },
        QueueLimits {
            queue: "webhooks".into(),
            limit: Limit::rate(10, Duration::from_secs(1)),
            each_key: Limit::none(),
            leased: 1,
            started_in_window: 10,
            pushed_back_until: Some(now() + Duration::from_secs(12)),
            held: 0,
            waiting: 0,
            held_by_queue: 0,
            paused: false,
            shards: Vec::new(),
            keys: Vec::new(),
        },
    ]
}

/// The Limits screen's rows of [`queue_limits`].
pub fn limiters() -> Vec<LimiterRow> {
    queue_limits().iter().flat_map(rows_of).collect()
}

/// A state that received one full snapshot (at the fixed clock).
pub fn loaded() -> State {
    let mut state = State::new(settings());
    state.apply(Action::Resize(100, 30));
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot()),
        received_at: now(),
    }));
    state
}

/// Apply a list of actions.
pub fn press(state: &mut State, actions: &[Action]) -> Vec<redq_console::tui::state::Command> {
    actions.iter().map(|a| state.apply(a.clone())).collect()
}
