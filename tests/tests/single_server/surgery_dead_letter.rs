//! Dead-letter a job that waits its turn (`lua/dead_letter_job.lua`): a
//! waiting, scheduled, backing-off, held or blocked job goes to the
//! dead-letter set unrun, as a failed job dies (attempts kept, the
//! operator's words as its error, its ordering key passed on, its dedup key
//! freed, a `dead` event naming who); a running, awaiting or dead job is
//! refused and nothing is written; requeued, it runs.

use std::time::Duration;

use redq::events::EventKind;
use redq::flow::{Limit, LimitScope};
use redq::{DeadAction, Enqueued, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::events::{acting, latest_of_kind};
use redq_tests::fixtures::*;
use redq_tests::unique_namespace;
use serde_json::json;

use super::surgery_promote::{assert_refused, backing_off};

const LATER: Duration = Duration::from_secs(3600);
const ACTOR: &str = "cli ops@bastion";

fn job(n: i64) -> NewJob {
    NewJob::new(json!({ "n": n }))
}

async fn state(queue: &RedisQueue, id: &str) -> JobState {
    queue.inspect(id).await.unwrap().expect("the job").state
}

#[tokio::test]
async fn a_job_waiting_its_turn_is_dead_lettered_from_each_state_as_a_failed_job_dies() {
    let server = server();
    let queue = acting(&server, &unique_namespace("dead-letter-states"), ACTOR).await;
    let fifo = queue.add("q", job(0)).await.unwrap().id().to_owned();
    let prioritised = queue.add("q", job(1).priority(3)).await.unwrap();
    let scheduled = queue.add("q", job(2).delay(LATER)).await.unwrap();
    let retrying = backing_off(&queue, "r", 3).await;
    queue
        .set_limit("h", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    for n in 0..2 {
        queue.add("h", job(n).limit_key("acme")).await.unwrap();
    }
    queue.claim("h", 10, LATER).await.unwrap();
    let held = queue.list_jobs("h", JobState::Held, 0, 10).await.unwrap();
    let held = held.items[0].id.clone();
    queue.add("k", job(4).ordering_key("key")).await.unwrap();
    let blocked = queue.add("k", job(5).ordering_key("key")).await.unwrap();

    let cases = [
        (fifo.as_str(), JobState::Waiting, 0),
        (prioritised.id(), JobState::Waiting, 0),
        (scheduled.id(), JobState::Scheduled, 0),
        (retrying.as_str(), JobState::Scheduled, 1),
        (held.as_str(), JobState::Held, 0),
        (blocked.id(), JobState::Blocked, 0),
    ];
    for (id, from, attempts) in cases {
        assert_eq!(state(&queue, id).await, from, "{id} before");
        let done = queue.dead_letter_job(id, "bad payload").await.unwrap();
        assert_eq!((done.from, done.bound_deleted), (from, 0), "{id}");
        let record = queue.inspect(id).await.unwrap().unwrap();
        assert_eq!(record.state, JobState::Dead, "{id}");
        assert_eq!(record.attempts, attempts, "{id}: attempts kept");
        assert_eq!(
            record.last_error.as_deref(),
            Some("dead-lettered by an operator (cli ops@bastion): bad payload"),
        );
    }
    let counts = |name| {
        let queue = queue.clone();
        async move {
            let c = queue.counts(name).await.unwrap();
            (c.waiting, c.scheduled, c.held, c.blocked, c.dead)
        }
    };
    assert_eq!(counts("q").await, (0, 0, 0, 0, 3));
    assert_eq!(counts("r").await, (0, 0, 0, 0, 1));
    assert_eq!(counts("h").await, (0, 0, 0, 0, 1));
    // The holder of the ordering key still waits, and runs alone.
    assert_eq!(counts("k").await, (1, 0, 0, 0, 1));
    assert_eq!(
        numbers(&queue.claim("k", 10, LATER).await.unwrap()),
        vec![4]
    );
    // Nothing of the dead-lettered ones is claimed.
    for name in ["q", "r", "h"] {
        assert!(queue.claim(name, 10, LATER).await.unwrap().is_empty());
    }

    // Each is a `dead` event naming the job, its error and who did it.
    let events = latest_of_kind(&queue, EventKind::Dead).await;
    assert_eq!(events.len(), cases.len(), "{events:?}");
    for (id, _, _) in cases {
        let event = events.iter().find(|e| e.job_id == id).expect("its event");
        assert_eq!(event.by.as_deref(), Some(ACTOR));
        let from = cases.iter().find(|c| c.0 == id).unwrap().1;
        assert_eq!(
            event.detail.as_deref(),
            Some(format!("from {}", from.as_str()).as_str())
        );
        assert!(event.error.ends_with(": bad payload"), "{event:?}");
    }

    // Requeued, a job runs, and the error is the operator's until then.
    let report = queue
        .change_dead(
            DeadAction::Requeue { attempts: 0 },
            "q",
            std::slice::from_ref(&fifo),
        )
        .await
        .unwrap();
    assert_eq!(report.done, 1);
    assert_eq!(
        numbers(&queue.claim("q", 10, LATER).await.unwrap()),
        vec![0]
    );
}

#[tokio::test]
async fn dead_lettering_the_holder_of_an_ordering_key_lets_the_next_job_run() {
    let server = server();
    let queue = queue(&server, "dead-letter-ordering").await;
    let holder = queue.add("q", job(0).ordering_key("a")).await.unwrap();
    let next = queue.add("q", job(1).ordering_key("a")).await.unwrap();
    assert_eq!(state(&queue, next.id()).await, JobState::Blocked);

    queue.dead_letter_job(holder.id(), "").await.unwrap();
    let record = queue.inspect(holder.id()).await.unwrap().unwrap();
    assert_eq!(
        record.last_error.as_deref(),
        Some("dead-lettered by an operator"),
        "no reason, no actor: the plain words"
    );
    // The released successor waits (it enters the claim order at the next
    // claim): listed as waiting, as it is counted, before any claim.
    let listed = queue
        .list_jobs("q", JobState::Waiting, 0, 10)
        .await
        .unwrap();
    assert_eq!(listed.total, 1);
    let ids: Vec<&str> = listed.items.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, [next.id()]);
    assert_eq!(queue.counts("q").await.unwrap().waiting, 1);
    assert_eq!(
        numbers(&queue.claim("q", 10, LATER).await.unwrap()),
        vec![1]
    );
}

#[tokio::test]
async fn a_dead_lettered_jobs_dedup_key_can_be_used_again() {
    let server = server();
    let queue = queue(&server, "dead-letter-dedup").await;
    let first = queue.add("q", job(0).dedup_key("order-7")).await.unwrap();
    assert!(matches!(
        queue.add("q", job(1).dedup_key("order-7")).await.unwrap(),
        Enqueued::Duplicate(_)
    ));
    queue.dead_letter_job(first.id(), "stuck").await.unwrap();
    assert!(matches!(
        queue.add("q", job(2).dedup_key("order-7")).await.unwrap(),
        Enqueued::Created(_)
    ));
}

#[tokio::test]
async fn a_running_awaiting_or_dead_job_is_refused_and_nothing_is_written() {
    let server = server();
    let queue = queue(&server, "dead-letter-refused").await;
    queue.add("q", job(0)).await.unwrap();
    let leased = claim_n(&queue, "q", 1).await.remove(0);
    let first = queue.add("charges", job(1)).await.unwrap();
    let awaiting = queue
        .add("orders", job(2).after([first.id()]))
        .await
        .unwrap();
    queue.add("d", job(3)).await.unwrap();
    let dead = claim_n(&queue, "d", 1).await.remove(0);
    queue.dead_letter(&dead.lease(), "poison").await.unwrap();

    let before = digest(&server).await;
    assert_refused(
        queue.dead_letter_job(&leased.id, "x").await,
        &leased.id,
        "dead-letter",
        "leased",
    );
    assert_refused(
        queue.dead_letter_job(awaiting.id(), "x").await,
        awaiting.id(),
        "dead-letter",
        "awaiting",
    );
    assert_refused(
        queue.dead_letter_job(&dead.id, "x").await,
        &dead.id,
        "dead-letter",
        "dead",
    );
    let refusal = queue
        .dead_letter_job(&leased.id, "x")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refusal.contains("cancel or delete a running job"),
        "{refusal}"
    );
    assert!(matches!(
        queue.dead_letter_job("no-such-job", "x").await,
        Err(QueueError::JobNotFound { .. })
    ));
    assert_invalid(
        queue
            .dead_letter_job(awaiting.id(), &"r".repeat(1025))
            .await,
        "reason",
    );
    assert_eq!(digest(&server).await, before, "a refusal writes nothing");
}

#[tokio::test]
async fn a_dead_letter_keeps_to_the_queues_dead_letter_bound() {
    let server = server();
    let queue = queue(&server, "dead-letter-bound").await;
    queue
        .set_dead_bound("q", &redq::kept::DeadBound::new().max_count(2))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(queue.add("q", job(n)).await.unwrap().id().to_owned());
    }
    let mut deleted = Vec::new();
    for id in &ids {
        deleted.push(queue.dead_letter_job(id, "").await.unwrap().bound_deleted);
    }
    assert_eq!(
        deleted,
        [0, 0, 1],
        "the third death is said to push one out"
    );
    // The oldest went when the third died: the bound holds at once.
    assert_eq!(queue.counts("q").await.unwrap().dead, 2);
    assert!(queue.inspect(&ids[0]).await.unwrap().is_none());
    for id in &ids[1..] {
        assert_eq!(state(&queue, id).await, JobState::Dead);
    }
}

/// Released successors are listed after the queue's other waiting jobs,
/// page by page, and the total counts them: what `redq jobs list` shows
/// adds up to what `redq queues` counts.
#[tokio::test]
async fn a_released_successor_is_listed_after_the_other_waiting_jobs_page_by_page() {
    let server = server();
    let queue = queue(&server, "dead-letter-listing").await;
    queue.add("q", job(0)).await.unwrap();
    queue.add("q", job(1)).await.unwrap();
    let holder = queue.add("q", job(2).ordering_key("k")).await.unwrap();
    let next = queue.add("q", job(3).ordering_key("k")).await.unwrap();
    queue.dead_letter_job(holder.id(), "").await.unwrap();

    let first = queue.list_jobs("q", JobState::Waiting, 0, 2).await.unwrap();
    assert_eq!(first.total, 3);
    assert_eq!(numbers_of(&first.items), [0, 1]);
    let second = queue.list_jobs("q", JobState::Waiting, 2, 2).await.unwrap();
    assert_eq!(second.total, 3);
    let ids: Vec<&str> = second.items.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, [next.id()]);
    assert_eq!(queue.counts("q").await.unwrap().waiting, 3);
}

fn numbers_of(jobs: &[redq::JobRecord]) -> Vec<i64> {
    jobs.iter()
        .map(|j| j.payload["n"].as_i64().unwrap())
        .collect()
}
