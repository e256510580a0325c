//! Typed pushes with options and in bulk on a `MemoryQueue` and in inline
//! mode, which keep less than Redis: what they keep, and that a delay they
//! cannot keep is refused rather than run at once.

use std::time::Duration;

use redq::worker::{JobCx, JobError, JobQueue, Pushed, Services, TypedJob};
use redq::{MemoryQueue, Queue, QueueError};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Serialize, Deserialize)]
struct Reminder {
    n: u64,
}

impl TypedJob for Reminder {
    const NAME: &'static str = "tests::reminder";
    const QUEUE: &'static str = "reminders";
    const MAX_ATTEMPTS: u32 = 6;

    async fn run(&self, _: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_memory_queue_takes_a_bulk_push_with_names_and_attempts_in_order() {
    let memory = MemoryQueue::new();
    let reminders: Vec<Reminder> = (0..5).map(|n| Reminder { n }).collect();
    let pushed = memory.push_batch(&reminders).await.unwrap();
    assert_eq!(pushed.len(), 5);
    assert!(pushed.iter().all(|p| matches!(p, Pushed::Queued { .. })));

    let jobs = memory
        .claim("reminders", 10, Duration::from_secs(60))
        .await
        .unwrap();
    let ids: Vec<&str> = jobs.iter().map(|job| job.id.as_str()).collect();
    let pushed_ids: Vec<&str> = pushed.iter().map(Pushed::id).collect();
    assert_eq!(ids, pushed_ids, "claimed in push order");
    for (n, job) in jobs.iter().enumerate() {
        assert_eq!(job.payload, json!({ "n": n }));
        assert_eq!(job.name.as_deref(), Some(Reminder::NAME));
        assert_eq!(job.max_attempts, Reminder::MAX_ATTEMPTS);
    }
}

#[tokio::test]
async fn a_memory_queue_refuses_a_delayed_push_with_nothing_queued() {
    let memory = MemoryQueue::new();
    let delayed = memory
        .push_with(&Reminder { n: 1 }, |job| job.delay(Duration::from_secs(60)))
        .await;
    match delayed {
        Err(QueueError::Invalid { rule, .. }) => {
            assert!(rule.contains("keeps no delay"), "{rule:?}");
        }
        other => panic!("a delay a MemoryQueue cannot keep is refused: {other:?}"),
    }
    assert!(memory.is_empty("reminders"));

    // An ordering key set by the call is kept.
    memory
        .push_with(&Reminder { n: 2 }, |job| job.ordering_key("k"))
        .await
        .unwrap();
    memory.push(&Reminder { n: 3 }).await.unwrap();
    let jobs = memory
        .claim("reminders", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].ordering_key.as_deref(), Some("k"));
}

#[tokio::test]
async fn inline_mode_runs_every_job_of_a_bulk_push() {
    let inline = JobQueue::inline(Services::new());
    let reminders: Vec<Reminder> = (0..3).map(|n| Reminder { n }).collect();
    let ran = inline.push_batch(&reminders).await.unwrap();
    assert_eq!(ran.len(), 3);
    assert!(
        ran.iter()
            .all(|p| matches!(p, Pushed::Ran { error: None, .. })),
        "{ran:?}"
    );
}
