//! `redq jobs delete ID` of a finished job: its kept record (with its
//! result) or its tombstone is deleted, and the line says what the job
//! was; an id with no trace at all is still `no job ID` (exit 1).

use std::time::Duration;

use crate::seed::*;
use redq::kept::Retention;
use redq::{Completion, JobResult, NewJob};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

const LATER: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn deleting_a_completed_job_deletes_its_kept_result() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-delete-kept");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.set_retention("emails", &Retention::new().max_count(10))
        .await
        .unwrap();
    let mut ids = Vec::new();
    for n in 0..2 {
        q.add("emails", NewJob::new(value!(n))).await.unwrap();
        let held = q.claim("emails", 1, LATER).await.unwrap().remove(0);
        let done = Completion::new()
            .result(&value!({ "to": "ada@example.com" }))
            .unwrap();
        q.ack_with(&held.lease(), done).await.unwrap();
        ids.push(held.id);
    }

    let out = redq(&url, &ns, &["jobs", "delete", &ids[0]]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim_end(),
        format!("deleted completed job {}", ids[0])
    );
    assert_eq!(q.result(&ids[0]).await.unwrap(), JobResult::Unknown);
    let out = redq(&url, &ns, &["jobs", "show", &ids[0]]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains(&format!("no job {}", ids[0])),
        "{}",
        stderr(&out)
    );
    // Only that one: the other result is still kept.
    assert_eq!(q.counts("emails").await.unwrap().completed, 1);

    let out = redq(&url, &ns, &["jobs", "delete", &ids[1], "-o", "json"]);
    assert_exit(&out, 0);
    let report = json(&out);
    assert_eq!(report["jobs"][0]["id"], ids[1].as_str());
    assert_eq!(report["jobs"][0]["outcome"], "deleted completed job");
    assert_eq!(q.counts("emails").await.unwrap().completed, 0);

    // Nowhere now: as any unknown id.
    let out = redq(&url, &ns, &["jobs", "delete", &ids[1]]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains(&format!("no job {}", ids[1])),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn deleting_a_cancelled_jobs_tombstone_says_it_was_cancelled() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-delete-tombstone");
    let url = server.url();
    let q = connect(&url, &ns).await;
    // No retention policy: a cancel leaves only a tombstone.
    let job = q.add("emails", NewJob::new(value!(1))).await.unwrap();
    q.cancel(job.id(), "test").await.unwrap();
    assert!(matches!(
        q.result(job.id()).await.unwrap(),
        JobResult::Tombstone(_)
    ));

    let out = redq(&url, &ns, &["jobs", "delete", job.id()]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim_end(),
        format!("deleted cancelled job {}", job.id())
    );
    assert_eq!(q.result(job.id()).await.unwrap(), JobResult::Unknown);

    let out = redq(&url, &ns, &["jobs", "delete", "01NOSUCHJOB"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no job 01NOSUCHJOB"),
        "{}",
        stderr(&out)
    );
}
