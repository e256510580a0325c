//! Edit and promote racing a claim: each is one script that checks the
//! job's state, so Redis orders the two, and whichever ran second sees the
//! first's result. Two clients, both orders, then both at full speed.

use std::collections::HashMap;
use std::time::Duration;

use redq::{JobState, NewJob, QueueError};
use redq_tests::fixtures::*;
use serde_json::json;

use super::surgery_promote::assert_refused;

const LATER: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn an_edit_before_a_claim_is_what_the_claim_hands_out_and_one_after_is_refused() {
    let server = server();
    let operator = queue(&server, "race-edit").await;
    let worker = handle(&server, operator.namespace()).await;
    let first = operator.add("q", NewJob::new(json!("old"))).await.unwrap();
    let second = operator.add("q", NewJob::new(json!("old"))).await.unwrap();

    // Edit, then claim: the claim hands out the new payload.
    operator
        .edit_payload(first.id(), &json!("new"))
        .await
        .unwrap();
    let claimed = worker.claim("q", 1, LONG).await.unwrap();
    assert_eq!(
        (claimed[0].id.as_str(), &claimed[0].payload),
        (first.id(), &json!("new"))
    );

    // Claim, then edit: the edit is refused and the holder's job unchanged.
    let claimed = worker.claim("q", 1, LONG).await.unwrap();
    assert_eq!(claimed[0].id, second.id());
    assert_refused(
        operator.edit_payload(second.id(), &json!("new")).await,
        second.id(),
        "edit",
        "leased",
    );
    assert_eq!(
        operator
            .inspect(second.id())
            .await
            .unwrap()
            .unwrap()
            .payload,
        json!("old")
    );
}

#[tokio::test]
async fn a_promote_before_a_claim_is_claimed_and_one_after_is_refused() {
    let server = server();
    let operator = queue(&server, "race-promote").await;
    let worker = handle(&server, operator.namespace()).await;
    let delayed = operator
        .add("q", NewJob::new(json!(0)).delay(LATER))
        .await
        .unwrap();
    assert!(worker.claim("q", 1, LONG).await.unwrap().is_empty());

    operator.promote(delayed.id()).await.unwrap();
    let claimed = worker.claim("q", 1, LONG).await.unwrap();
    assert_eq!(claimed[0].id, delayed.id());
    assert_refused(
        operator.promote(delayed.id()).await,
        delayed.id(),
        "promote",
        "leased",
    );
    assert_eq!(
        operator.inspect(delayed.id()).await.unwrap().unwrap().state,
        JobState::Leased
    );
}

/// Workers claim as fast as they can while an operator edits every job:
/// an edit that answers "edited" ran before the job's claim, so the claim
/// handed out the new payload; one refused as leased ran after, so the
/// claim handed out the old one. No other answer, and every job once.
#[tokio::test]
async fn edits_racing_claims_are_each_wholly_before_or_after_the_claim() {
    let server = server();
    let operator = queue(&server, "race-edit-loop").await;
    let n = 300;
    let ids: Vec<String> = operator
        .add_batch(
            "q",
            (0..n).map(|i| NewJob::new(json!({ "old": i }))).collect(),
        )
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id().to_owned())
        .collect();

    let mut workers = Vec::new();
    for _ in 0..2 {
        let worker = handle(&server, operator.namespace()).await;
        workers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                let jobs = worker.claim("q", 3, LONG).await.unwrap();
                if jobs.is_empty() && worker.counts("q").await.unwrap().waiting == 0 {
                    return seen;
                }
                seen.extend(jobs.into_iter().map(|j| (j.id, j.payload)));
            }
        }));
    }
    let mut edited = HashMap::new();
    for id in &ids {
        let outcome = match operator.edit_payload(id, &json!({ "new": id })).await {
            Ok(JobState::Waiting) => true,
            Err(QueueError::WrongState { state, .. }) if state.starts_with("leased") => false,
            other => panic!("edit of {id}: {other:?}"),
        };
        edited.insert(id.clone(), outcome);
    }
    let mut claimed = HashMap::new();
    for worker in workers {
        for (id, payload) in worker.await.unwrap() {
            assert!(
                claimed.insert(id.clone(), payload).is_none(),
                "{id} claimed twice"
            );
        }
    }
    assert_eq!(claimed.len(), n);
    let (mut before, mut after) = (0, 0);
    for (id, was_edited) in edited {
        let payload = &claimed[&id];
        if was_edited {
            assert_eq!(payload, &json!({ "new": id }));
            before += 1;
        } else {
            assert!(payload.get("old").is_some(), "{id} handed out {payload}");
            after += 1;
        }
    }
    assert_eq!(before + after, n);
}

/// Workers claim while an operator promotes every delayed job: each job is
/// claimed exactly once, and each promote either promoted it or found it
/// already running.
#[tokio::test]
async fn promotes_racing_claims_run_every_job_once() {
    let server = server();
    let operator = queue(&server, "race-promote-loop").await;
    let n = 300;
    let ids: Vec<String> = operator
        .add_batch(
            "q",
            (0..n).map(|i| NewJob::new(json!(i)).delay(LATER)).collect(),
        )
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id().to_owned())
        .collect();
    let mut workers = Vec::new();
    for _ in 0..2 {
        let worker = handle(&server, operator.namespace()).await;
        workers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while seen.len() < 300 {
                let jobs = worker.claim("q", 2, LONG).await.unwrap();
                let counts = worker.counts("q").await.unwrap();
                seen.extend(jobs.into_iter().map(|j| j.id));
                if counts.scheduled + counts.waiting == 0 {
                    break;
                }
            }
            seen
        }));
    }
    for id in &ids {
        match operator.promote(id).await {
            Ok(()) => {}
            Err(QueueError::WrongState { state, .. }) if state.starts_with("leased") => {}
            other => panic!("promote of {id}: {other:?}"),
        }
    }
    let mut claimed = std::collections::HashSet::new();
    for worker in workers {
        for id in worker.await.unwrap() {
            assert!(claimed.insert(id.clone()), "{id} claimed twice");
        }
    }
    // Whatever the workers had not reached when they stopped is due now.
    for job in operator.claim("q", 1000, LONG).await.unwrap() {
        assert!(claimed.insert(job.id.clone()), "{} claimed twice", job.id);
    }
    assert_eq!(claimed.len(), n);
}
