//! Delete (`lua/delete_job.lua`): a job in any state is gone at once and
//! whole, its ordering key passed on and its dedup key freed; a leased job
//! only when forced, which voids the holder's lease.

use std::time::Duration;

use redq::{Acked, Enqueued, IfLeased, JobState, NewJob, QueueError, RedisQueue};
use redq_tests::fixtures::*;
use serde_json::json;

use super::surgery_promote::{assert_refused, backing_off};

const LATER: Duration = Duration::from_secs(3600);

fn job(n: i64) -> NewJob {
    NewJob::new(json!({ "n": n }))
}

async fn assert_gone(queue: &RedisQueue, id: &str) {
    assert!(
        queue.inspect(id).await.unwrap().is_none(),
        "job {id} is still there"
    );
    assert!(matches!(
        queue.delete_job(id, IfLeased::Refuse).await,
        Err(QueueError::JobNotFound { .. })
    ));
}

#[tokio::test]
async fn a_job_is_deleted_from_every_state_and_nothing_of_it_is_left() {
    let server = server();
    let queue = queue(&server, "delete-states").await;
    let fifo = queue.add("q", job(0)).await.unwrap().id().to_owned();
    let prioritised = queue
        .add("q", job(1).priority(3))
        .await
        .unwrap()
        .id()
        .to_owned();
    let scheduled = queue
        .add("q", job(2).delay(LATER))
        .await
        .unwrap()
        .id()
        .to_owned();
    let retrying = backing_off(&queue, "r", 3).await;
    let holder = queue
        .add("k", job(4).ordering_key("key"))
        .await
        .unwrap()
        .id()
        .to_owned();
    let blocked = queue
        .add("k", job(5).ordering_key("key"))
        .await
        .unwrap()
        .id()
        .to_owned();
    queue.add("d", job(6)).await.unwrap();
    let dead = claim_n(&queue, "d", 1).await.remove(0);
    queue.dead_letter(&dead.lease(), "poison").await.unwrap();
    assert_eq!(
        queue.inspect(&blocked).await.unwrap().unwrap().state,
        JobState::Blocked
    );

    for id in [
        &fifo,
        &prioritised,
        &scheduled,
        &retrying,
        &blocked,
        &holder,
        &dead.id,
    ] {
        queue.delete_job(id, IfLeased::Refuse).await.unwrap();
        assert_gone(&queue, id).await;
    }
    for name in ["q", "r", "k", "d"] {
        let counts = queue.counts(name).await.unwrap();
        let sizes = (
            counts.waiting,
            counts.scheduled,
            counts.leased,
            counts.dead,
            counts.blocked,
        );
        assert_eq!(sizes, (0, 0, 0, 0, 0), "queue {name}");
        assert!(queue.claim(name, 10, LONG).await.unwrap().is_empty());
    }
    assert_eq!(hlen(&server, &queue, "jobs").await, 0);
    assert_eq!(hlen(&server, &queue, "ord:active").await, 0);
    assert_eq!(hlen(&server, &queue, "ord:blocked:n").await, 0);
}

#[tokio::test]
async fn a_leased_job_is_refused_unless_forced_and_forcing_voids_the_holders_lease() {
    let server = server();
    let queue = queue(&server, "delete-leased").await;
    queue.add("q", job(0)).await.unwrap();
    let held = claim_n(&queue, "q", 1).await.remove(0);

    let before = digest(&server).await;
    assert_refused(
        queue.delete_job(&held.id, IfLeased::Refuse).await,
        &held.id,
        "delete",
        "leased",
    );
    assert_eq!(
        digest(&server).await,
        before,
        "a refused delete wrote something"
    );

    queue
        .delete_job(&held.id, IfLeased::VoidLease)
        .await
        .unwrap();
    assert_gone(&queue, &held.id).await;
    assert_lease_lost(queue.extend(&held.lease(), LONG).await, &held.id);
    assert_lease_lost(
        queue.nack(&held.lease(), Duration::ZERO, "late").await,
        &held.id,
    );
    assert_eq!(queue.ack(&held.lease()).await.unwrap(), Acked::AlreadyGone);
    assert_eq!(queue.counts("q").await.unwrap().leased, 0);
}

#[tokio::test]
async fn deleting_the_holder_of_an_ordering_key_lets_the_next_job_run() {
    let server = server();
    let queue = queue(&server, "delete-ordering").await;
    let waiting_holder = queue.add("q", job(0).ordering_key("a")).await.unwrap();
    queue.add("q", job(1).ordering_key("a")).await.unwrap();
    queue.add("q", job(2).ordering_key("b")).await.unwrap();
    queue.add("q", job(3).ordering_key("b")).await.unwrap();

    // The waiting holder of "a" is deleted: job 1 takes the key.
    queue
        .delete_job(waiting_holder.id(), IfLeased::Refuse)
        .await
        .unwrap();
    let claimed = claim_n(&queue, "q", 2).await;
    assert_eq!(numbers(&claimed), vec![1, 2]);
    // The running holder of "b", forced: job 3 takes the key.
    queue
        .delete_job(&claimed[1].id, IfLeased::VoidLease)
        .await
        .unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![3]);
}

#[tokio::test]
async fn deleting_a_blocked_job_leaves_the_holder_and_the_others_in_place() {
    let server = server();
    let queue = queue(&server, "delete-blocked").await;
    queue.add("q", job(0).ordering_key("a")).await.unwrap();
    let second = queue.add("q", job(1).ordering_key("a")).await.unwrap();
    queue.add("q", job(2).ordering_key("a")).await.unwrap();
    queue
        .delete_job(second.id(), IfLeased::Refuse)
        .await
        .unwrap();
    assert_eq!(queue.counts("q").await.unwrap().blocked, 1);
    let first = claim_n(&queue, "q", 1).await;
    queue.ack(&first[0].lease()).await.unwrap();
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![2]);
}

#[tokio::test]
async fn a_deleted_jobs_dedup_key_can_be_used_again_in_either_mode() {
    let server = server();
    let queue = queue(&server, "delete-dedup").await;
    let held = queue.add("q", job(0).dedup_key("order-1")).await.unwrap();
    let ttl = queue
        .add("q", job(1).dedup_key_for("order-2", LATER))
        .await
        .unwrap();
    assert!(matches!(
        queue.add("q", job(2).dedup_key("order-1")).await.unwrap(),
        Enqueued::Duplicate(_)
    ));

    queue.delete_job(held.id(), IfLeased::Refuse).await.unwrap();
    queue.delete_job(ttl.id(), IfLeased::Refuse).await.unwrap();
    assert!(matches!(
        queue.add("q", job(3).dedup_key("order-1")).await.unwrap(),
        Enqueued::Created(_)
    ));
    assert!(matches!(
        queue
            .add("q", job(4).dedup_key_for("order-2", LATER))
            .await
            .unwrap(),
        Enqueued::Created(_)
    ));
    assert_eq!(numbers(&claim_n(&queue, "q", 2).await), vec![3, 4]);
}

#[tokio::test]
async fn a_released_successor_not_yet_in_the_queue_is_deleted_and_its_key_passed_on() {
    let server = server();
    let queue = queue(&server, "delete-released").await;
    queue.add("q", job(0).ordering_key("a")).await.unwrap();
    let successor = queue.add("q", job(1).ordering_key("a")).await.unwrap();
    queue.add("q", job(2).ordering_key("a")).await.unwrap();
    let holder = claim_n(&queue, "q", 1).await.remove(0);
    // The ack hands the key to job 1, released to the queue's ready set
    // until the next claim moves it in: waiting, in neither list.
    queue.ack(&holder.lease()).await.unwrap();
    assert_eq!(
        queue.inspect(successor.id()).await.unwrap().unwrap().state,
        JobState::Waiting
    );

    queue
        .delete_job(successor.id(), IfLeased::Refuse)
        .await
        .unwrap();
    assert_gone(&queue, successor.id()).await;
    assert_eq!(numbers(&claim_n(&queue, "q", 1).await), vec![2]);
}
