//! Typed pushes with options and in bulk: the job lands with everything its
//! type declares (name, attempts, backoff, retry window, keys) plus what the
//! call set, a bulk push is one script call that reports duplicates as
//! `add_batch` does, and a job that does not serialize writes nothing.

use std::time::{Duration, SystemTime};

use redq::worker::{JobCx, JobError, Pushed, TypedJob};
use redq::{Backoff, JobState, NewJob, QueueError};
use redq_tests::fixtures::*;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;

/// A job type that sets every per-type option, each to something other than
/// its default, so a push that drops one shows.
#[derive(Debug, Serialize, Deserialize)]
struct Invoice {
    id: u64,
}

impl TypedJob for Invoice {
    const NAME: &'static str = "billing::invoice";
    const QUEUE: &'static str = "billing";
    const MAX_ATTEMPTS: u32 = 4;
    const RETRY_WINDOW: Option<Duration> = Some(Duration::from_secs(7200));
    const BACKOFF: Backoff = Backoff::exponential(Duration::from_secs(3), Duration::from_secs(90));

    fn dedup_key(&self) -> Option<String> {
        Some(format!("invoice:{}", self.id))
    }

    fn priority(&self) -> u8 {
        3
    }

    async fn run(&self, _: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

/// Assert the job `id` carries what `Invoice` declares for invoice `n`.
async fn assert_carries_the_type(queue: &redq::RedisQueue, id: &str, n: u64) -> redq::JobRecord {
    let record = queue.inspect(id).await.unwrap().expect("the pushed job");
    assert_eq!(record.queue, Invoice::QUEUE);
    assert_eq!(record.name.as_deref(), Some(Invoice::NAME));
    assert_eq!(record.payload, json!({ "id": n }));
    assert_eq!(record.max_attempts, Invoice::MAX_ATTEMPTS);
    assert_eq!(record.retry_window, Invoice::RETRY_WINDOW);
    assert_eq!(record.reclaim_backoff, Invoice::BACKOFF);
    assert_eq!(record.dedup_key, Some(format!("invoice:{n}")));
    record
}

#[tokio::test]
async fn a_typed_push_with_a_delay_and_priority_lands_delayed_with_its_types_settings() {
    let server = server();
    let queue = queue(&server, "typed-push-with").await;
    let delay = Duration::from_secs(3600);
    let before = SystemTime::now();
    let pushed = queue
        .push_with(&Invoice { id: 1 }, |job| job.delay(delay).priority(9))
        .await
        .unwrap();
    let Pushed::Queued { id } = pushed else {
        panic!("a first push queues: {pushed:?}");
    };

    let record = assert_carries_the_type(&queue, &id, 1).await;
    assert_eq!(record.state, JobState::Scheduled);
    assert_eq!(
        record.priority, 9,
        "the call's priority replaces the type's"
    );
    let due = record.due_at.expect("a delayed job has a due time");
    // Redis's clock and ours may differ a little; an undelayed job would be
    // due about now, an hour early.
    assert!(
        due >= before + delay - Duration::from_secs(60),
        "due {:?} after the push, not about an hour",
        due.duration_since(before)
    );
    assert!(queue.claim("billing", 10, LONG).await.unwrap().is_empty());

    // What the call leaves alone stays the type's: here its priority.
    let keyed = queue
        .push_with(&Invoice { id: 2 }, |job| job.ordering_key("customer-7"))
        .await
        .unwrap();
    let record = assert_carries_the_type(&queue, keyed.id(), 2).await;
    assert_eq!(record.priority, 3);
    assert_eq!(record.ordering_key.as_deref(), Some("customer-7"));
    assert_eq!(record.state, JobState::Waiting);
}

#[tokio::test]
async fn new_job_typed_carries_the_types_settings_into_add() {
    let server = server();
    let queue = queue(&server, "typed-new-job").await;
    let job = NewJob::typed(&Invoice { id: 5 })
        .unwrap()
        .delay(Duration::from_secs(600));
    let added = queue.add(Invoice::QUEUE, job).await.unwrap();
    let record = assert_carries_the_type(&queue, added.id(), 5).await;
    assert_eq!((record.state, record.priority), (JobState::Scheduled, 3));
}

#[tokio::test]
async fn a_typed_bulk_push_lands_every_job_in_one_call_and_reports_duplicates() {
    let server = server();
    let queue = queue(&server, "typed-push-batch").await;
    let earlier = queue.push(&Invoice { id: 3 }).await.unwrap();
    assert!(matches!(earlier, Pushed::Queued { .. }), "{earlier:?}");

    // Invoices 0..10, then 5 again: 3 is pending from before, and the
    // second 5 meets the first, queued earlier in this very batch.
    let mut invoices: Vec<Invoice> = (0..10).map(|id| Invoice { id }).collect();
    invoices.push(Invoice { id: 5 });
    let calls_before = server.script_calls().await;
    let pushed = queue.push_batch(&invoices).await.unwrap();
    assert_eq!(
        server.script_calls().await - calls_before,
        1,
        "a bulk push is one enqueue call"
    );

    assert_eq!(
        pushed.len(),
        invoices.len(),
        "one outcome per job, in order"
    );
    assert_eq!(
        pushed[3],
        Pushed::Duplicate {
            id: earlier.id().to_owned()
        }
    );
    assert_eq!(
        pushed[10],
        Pushed::Duplicate {
            id: pushed[5].id().to_owned()
        }
    );
    for (n, outcome) in pushed.iter().enumerate().take(10) {
        if n == 3 {
            continue;
        }
        assert!(
            matches!(outcome, Pushed::Queued { .. }),
            "job {n}: {outcome:?}"
        );
        let record = assert_carries_the_type(&queue, outcome.id(), n as u64).await;
        assert_eq!((record.state, record.priority), (JobState::Waiting, 3));
    }
    // Nine new jobs beside the earlier one, and no more.
    assert_eq!(queue.counts("billing").await.unwrap().waiting, 10);
    assert_eq!(hlen(&server, &queue, "jobs").await, 10);
}

/// A job whose `poisoned` field refuses to serialize, as a `Serialize` impl
/// may (serde_json also refuses maps whose keys are not strings).
#[derive(Debug, Serialize, Deserialize)]
struct Fragile {
    n: u64,
    #[serde(serialize_with = "refuse_when_set")]
    poisoned: bool,
}

fn refuse_when_set<S: Serializer>(poisoned: &bool, s: S) -> Result<S::Ok, S::Error> {
    if *poisoned {
        return Err(serde::ser::Error::custom("this one cannot be stored"));
    }
    s.serialize_bool(false)
}

impl TypedJob for Fragile {
    const NAME: &'static str = "tests::fragile";

    async fn run(&self, _: &JobCx) -> Result<(), JobError> {
        Ok(())
    }
}

/// Assert `result` refuses a `Fragile` job that does not serialize, saying
/// which job and why; returns the message.
#[track_caller]
fn assert_refused<T: std::fmt::Debug>(result: Result<T, QueueError>) -> String {
    let error = result.expect_err("a job that does not serialize is refused");
    assert!(
        matches!(error, QueueError::Invalid { what: "job", .. }),
        "{error:?}"
    );
    let message = error.to_string();
    for part in [
        Fragile::NAME,
        "serializes to JSON",
        "this one cannot be stored",
    ] {
        assert!(message.contains(part), "{message:?} lacks {part:?}");
    }
    message
}

#[tokio::test]
async fn a_job_that_does_not_serialize_is_refused_with_nothing_written() {
    let server = server();
    let queue = queue(&server, "typed-push-fragile").await;
    let fine = |n| Fragile { n, poisoned: false };
    let poisoned = Fragile {
        n: 9,
        poisoned: true,
    };
    let before = digest(&server).await;

    assert_refused(queue.push(&poisoned).await);
    assert_refused(
        queue
            .push_with(&poisoned, |job| job.delay(Duration::from_secs(5)))
            .await,
    );
    assert_refused(NewJob::typed(&poisoned));
    // In bulk, the good jobs before it are not written either, and the
    // message says which of the batch it was.
    let message = assert_refused(queue.push_batch(&[fine(1), fine(2), poisoned]).await);
    assert!(message.contains("number 3 of 3"), "{message:?}");

    assert_eq!(
        digest(&server).await,
        before,
        "a refused push wrote something"
    );
    // The same handle pushes the good ones afterwards.
    let pushed = queue.push_batch(&[fine(1), fine(2)]).await.unwrap();
    assert_eq!(pushed.len(), 2);
    assert_eq!(queue.counts(Fragile::QUEUE).await.unwrap().waiting, 2);
}
