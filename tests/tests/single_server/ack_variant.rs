//! ack.lua's variant `plain` (its header): the same script declaring only
//! the 10 keys of an ack on a queue that keeps nothing and has no limits,
//! with no gates in the namespace, of jobs without notes or a dedup or
//! ordering key and not detached, where the whole script declares 36. The driver sends every
//! ack without notes there first; the variant refuses a call that needs
//! more before writing anything, and the driver sends it, and that queue's
//! acks for a while after (30 s), to the whole script.

use fred::interfaces::ClientLike;
use fred::types::Value;
use redq::flow::{Limit, LimitScope};
use redq::kept::Retention;
use redq::workflow::Batch;
use redq::{Acked, Completion, Enqueued, Job, JobResult, NewJob, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{lua, unique_namespace};
use serde_json::json;

/// ack.lua's arguments after the queue and channel for `jobs`, each with a
/// run time, a result and its noted flag.
fn ack_args(jobs: &[&Job], noted: bool) -> Vec<Value> {
    let mut args = vec![Value::from(jobs.len() as i64)];
    for job in jobs {
        args.push(Value::from(job.id.as_str()));
        args.push(Value::from(job.lease_id as i64));
        args.push(Value::from(5));
        args.push(Value::from(""));
        args.push(Value::from(noted as i64));
    }
    args
}

/// Add `job` to `name` and claim it.
async fn claimed(queue: &RedisQueue, name: &str, job: NewJob) -> Job {
    queue.add(name, job).await.unwrap();
    let mut held = queue.claim(name, 1, LONG).await.unwrap();
    assert_eq!(held.len(), 1, "{name}: one job claimed");
    held.remove(0)
}

#[tokio::test]
async fn the_plain_variant_refuses_an_ack_that_needs_a_key_it_lacks_before_writing() {
    let server = server();
    let client = server.client().await;
    let ns = unique_namespace("ack-variant");
    let queue = handle(&server, &ns).await;
    let body = lua::variant("ack_plain", 10);
    let sha = lua::load(&client, &body).await;

    queue
        .set_retention("kept", &Retention::new().max_count(10))
        .await
        .unwrap();
    let kept = claimed(&queue, "kept", NewJob::new(json!(1))).await;
    queue
        .set_limit("limited", LimitScope::Queue, Limit::concurrency(5))
        .await
        .unwrap();
    let limited = claimed(&queue, "limited", NewJob::new(json!(2))).await;
    let plain = claimed(&queue, "keyed", NewJob::new(json!(3))).await;
    let deduped = claimed(&queue, "keyed", NewJob::new(json!(4)).dedup_key("once")).await;
    let ordered = claimed(&queue, "keyed", NewJob::new(json!(5)).ordering_key("k")).await;
    let noted = claimed(&queue, "noted", NewJob::new(json!(6))).await;
    // A detached record (`RecordFormat::Detached`): its payload is deleted
    // with it, from the key the variant lacks.
    queue
        .set_record_format(redq::RecordFormat::Detached { min_bytes: 64 })
        .await
        .unwrap();
    let large = NewJob::new(json!({ "pad": "x".repeat(64) }));
    let detached = claimed(&queue, "keyed", large).await;

    let cases = [
        (
            "a queue that keeps finished jobs",
            "kept",
            vec![&kept],
            false,
        ),
        ("a queue with limits", "limited", vec![&limited], false),
        // The first job of the call is one the variant takes: still nothing is written.
        (
            "a job holding a dedup or ordering key",
            "keyed",
            vec![&plain, &deduped],
            false,
        ),
        (
            "a job holding a dedup or ordering key",
            "keyed",
            vec![&ordered],
            false,
        ),
        ("a job with notes", "noted", vec![&noted], true),
        ("a detached record", "keyed", vec![&plain, &detached], false),
    ];
    let mut before = digest(&server).await;
    for (needs, name, jobs, with_notes) in &cases {
        let err = lua::evalsha(&client, &sha, &ns, name, &ack_args(jobs, *with_notes))
            .await
            .expect_err(needs);
        let expected = format!("variant refused: this variant of ack takes no call with {needs}");
        assert!(err.details().contains(&expected), "{needs}: {err}");
        assert_eq!(digest(&server).await, before, "{needs}: nothing written");
    }

    // What it does take: jobs without keys on a queue with none of the above.
    let reply = lua::evalsha(&client, &sha, &ns, "keyed", &ack_args(&[&plain], false))
        .await
        .expect("a plain ack");
    assert_eq!(reply.convert::<Vec<i64>>().unwrap(), [1]);
    assert!(
        queue.inspect(&plain.id).await.unwrap().is_none(),
        "acknowledged and gone"
    );

    // Gates anywhere in the namespace need the whole script.
    let another = claimed(&queue, "keyed", NewJob::new(json!(7))).await;
    queue
        .enqueue_batch(Batch::new().jobs("rows", vec![NewJob::new(json!(8))]))
        .await
        .unwrap();
    before = digest(&server).await;
    let err = lua::evalsha(&client, &sha, &ns, "keyed", &ack_args(&[&another], false))
        .await
        .expect_err("gates");
    assert!(
        err.details().contains(
            "variant refused: this variant of ack takes no call with gates in the namespace"
        ),
        "{err}"
    );
    assert_eq!(digest(&server).await, before, "gates: nothing written");
    client.quit().await.ok();
}

#[tokio::test]
async fn acks_go_to_the_variant_and_a_queue_it_refuses_goes_whole_for_a_while() {
    let server = server();
    let ns = unique_namespace("ack-routing");
    let queue = lazy_functions(&server, &ns).await;

    let job = claimed(&queue, "plain", NewJob::new(json!(1))).await;
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
    assert!(server.holds_library_of("ack_plain").await);
    assert!(
        !server.holds_library_of("ack").await,
        "a plain ack runs the variant only"
    );

    // A queue that keeps its jobs: refused by the variant, acknowledged by
    // the whole script, which keeps the result.
    queue
        .set_retention("kept", &Retention::new().max_count(10))
        .await
        .unwrap();
    let job = claimed(&queue, "kept", NewJob::new(json!(2))).await;
    let done = Completion::new().result(&json!({"ok": true})).unwrap();
    let outcome = queue.ack_batch_with(&[job.lease()], &[done]).await.unwrap();
    assert_eq!(outcome[0].as_ref().unwrap(), &Acked::Completed);
    assert!(server.holds_library_of("ack").await);
    let JobResult::Kept(kept) = queue.result(&job.id).await.unwrap() else {
        panic!("the whole script kept the job")
    };
    assert_eq!(kept.id, job.id);

    // Its next ack goes straight to the whole script: with the variant's
    // library gone, it is not loaded again.
    server.delete_library_of("ack_plain").await;
    let job = claimed(&queue, "kept", NewJob::new(json!(3))).await;
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
    assert!(
        !server.holds_library_of("ack_plain").await,
        "the kept queue's acks go whole"
    );
    // Another queue's still go to the variant.
    let job = claimed(&queue, "plain", NewJob::new(json!(4))).await;
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
    assert!(server.holds_library_of("ack_plain").await);

    // A job with a dedup key on a plain queue: the whole script frees the
    // key, so the next job with it is created, not a duplicate.
    let job = claimed(&queue, "dedup", NewJob::new(json!(5)).dedup_key("once")).await;
    assert_eq!(queue.ack(&job.lease()).await.unwrap(), Acked::Completed);
    let again = queue
        .add("dedup", NewJob::new(json!(6)).dedup_key("once"))
        .await
        .unwrap();
    assert!(matches!(again, Enqueued::Created(_)), "{again:?}");
}
