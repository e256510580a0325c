//! The way back from the compact and detached record formats
//! (`driver/src/record_rewrite.rs`): counting the records a driver older
//! than them cannot read, and rewriting them in the standard layout, so an
//! operator can roll a namespace back without waiting for every such job
//! to finish. Every job reads the same before and after.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::ClientLike;
use fred::types::Value;
use redq::{JobRecord, JobState, NewJob, NewerRecords, QueueError, RecordFormat, RedisQueue};
use redq_tests::fixtures::*;
use redq_tests::{lua, RedisServer};

use super::compact_records::STANDARD;
use super::detached_records::{detached_count, payload, DETACHED, FROM};
use super::lean_record::stored;

/// Each job's record as an operator reads it, by id.
async fn read_all(queue: &RedisQueue, ids: &[String]) -> Vec<JobRecord> {
    let mut records = Vec::new();
    for id in ids {
        records.push(queue.inspect(id).await.unwrap().expect("the job is live"));
    }
    records
}

#[tokio::test]
async fn a_rewrite_takes_compact_and_detached_records_to_the_standard_layout_and_every_job_reads_the_same(
) {
    let server = server();
    let format = RecordFormat::CompactDetached { min_bytes: FROM };
    let queue = queue_in_format(&server, "record-rewrite", format).await;
    let large = payload("large", FROM as usize);
    let add = |job: NewJob| {
        let queue = queue.clone();
        async move { queue.add("q", job).await.unwrap().id().to_owned() }
    };

    // A detached job that dies, and one left running: claimed first, so
    // they are the only jobs their claims take.
    let dies = add(NewJob::new(large.clone()).max_attempts(1)).await;
    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    queue
        .nack(&job.lease(), Duration::ZERO, "boom")
        .await
        .unwrap();
    let runs = add(NewJob::new(large.clone()).name("running")).await;
    let running = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(running.id, runs);
    let compact = add(NewJob::new(payload("small", 1)).name("tiny")).await;
    let waits = add(NewJob::new(large.clone()).name("big")).await;
    let later = add(NewJob::new(large.clone()).delay(Duration::from_secs(3600))).await;
    let whole = add(NewJob::new(payload("small", 1)).priority(3)).await;
    assert!(stored(&server, &queue, &compact).await[0] & 0xf0 == 0x90);
    for id in [&dies, &runs, &waits, &later] {
        assert_eq!(stored(&server, &queue, id).await[0], DETACHED, "{id}");
    }
    let ids = [dies.clone(), runs.clone(), compact, waits, later, whole];
    let before = read_all(&queue, &ids).await;
    let states: Vec<JobState> = before.iter().map(|r| r.state).collect();
    use JobState::*;
    assert_eq!(states, [Dead, Leased, Waiting, Waiting, Scheduled, Waiting]);

    let newer = NewerRecords {
        compact: 1,
        detached: 3,
        leased_detached: 1,
    };
    assert_eq!(queue.newer_records().await.unwrap(), newer);
    // Refused while producers still write the newer formats: nothing is
    // rewritten.
    let refused = queue.rewrite_records().await.unwrap_err();
    assert!(
        matches!(&refused, QueueError::Invalid { rule, .. } if rule.contains("set it first")),
        "{refused}"
    );
    assert_eq!(queue.newer_records().await.unwrap(), newer);

    queue
        .set_record_format(RecordFormat::Standard)
        .await
        .unwrap();
    let done = queue.rewrite_records().await.unwrap();
    assert_eq!(
        (done.compact, done.detached, done.left_leased),
        (1, 3, 1),
        "{done:?}"
    );
    for id in &ids {
        let first = stored(&server, &queue, id).await[0];
        let expected = if id == &runs { DETACHED } else { STANDARD };
        assert_eq!(first, expected, "{id}: stored layout after the rewrite");
    }
    assert_eq!(
        detached_count(&server, &queue).await,
        1,
        "the running job's"
    );
    assert_eq!(
        read_all(&queue, &ids).await,
        before,
        "every job reads the same"
    );
    assert_eq!(
        queue.newer_records().await.unwrap(),
        NewerRecords {
            leased_detached: 1,
            ..NewerRecords::default()
        }
    );

    // The running job's worker finishes it as if nothing happened, and
    // then nothing is left an older driver cannot read.
    queue.ack(&running.lease()).await.unwrap();
    assert_eq!(queue.newer_records().await.unwrap().total(), 0);
    assert_eq!(detached_count(&server, &queue).await, 0);
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    let mut payloads: Vec<_> = claimed.iter().map(|j| j.payload.clone()).collect();
    payloads.sort_by_key(|p| p.to_string());
    let mut sent = vec![large, payload("small", 1), payload("small", 1)];
    sent.sort_by_key(|p| p.to_string());
    assert_eq!(payloads, sent, "the waiting jobs claim with their payloads");
}

/// Detached payloads past one call's byte budget (4 MB) take several
/// calls; each still runs in bounded time and every record is rewritten.
#[tokio::test]
async fn a_rewrite_of_payloads_past_one_calls_budget_takes_them_all() {
    let server = RedisServer::start();
    let format = RecordFormat::Detached { min_bytes: FROM };
    let queue = queue_in_format(&server, "record-rewrite-large", format).await;
    let large = payload("large", 900 * 1024);
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(
            queue
                .add("q", NewJob::new(large.clone()))
                .await
                .unwrap()
                .id()
                .to_owned(),
        );
    }
    queue
        .set_record_format(RecordFormat::Standard)
        .await
        .unwrap();
    let done = queue.rewrite_records().await.unwrap();
    assert_eq!((done.compact, done.detached, done.left_leased), (0, 6, 0));
    for id in &ids {
        assert_eq!(stored(&server, &queue, id).await[0], STANDARD, "{id}");
    }
    assert_eq!(detached_count(&server, &queue).await, 0);
    let claimed = queue.claim("q", 10, LONG).await.unwrap();
    assert_eq!(claimed.len(), 6);
    assert!(claimed.iter().all(|job| job.payload == large));
}

/// A job the walk named but that was leased before its rewrite call (a
/// claim ran between the two) is passed over: its worker may still read
/// the payload apart. A job gone meanwhile is passed over too.
#[tokio::test]
async fn a_rewrite_call_passes_over_a_job_leased_or_gone_since_the_walk_named_it() {
    let server = server();
    let format = RecordFormat::Detached { min_bytes: FROM };
    let queue = queue_in_format(&server, "record-rewrite-race", format).await;
    let large = payload("large", FROM as usize);
    let leased = queue
        .add("q", NewJob::new(large.clone()))
        .await
        .unwrap()
        .id()
        .to_owned();
    let job = queue.claim("q", 1, LONG).await.unwrap().remove(0);
    assert_eq!(job.id, leased);
    let client = server.client().await;
    let rewrite = lua::load(&client, &lua::compose(lua::source("rewrite_records"))).await;
    let gone = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    let args: Vec<Value> = ["ids", "4194304", leased.as_str(), gone]
        .into_iter()
        .map(Value::from)
        .collect();
    let reply: Vec<i64> = lua::evalsha(&client, &rewrite, queue.namespace(), "q", &args)
        .await
        .unwrap()
        .convert()
        .unwrap();
    assert_eq!(reply, [2, 0, 1], "both taken, none rewritten, one leased");
    assert_eq!(stored(&server, &queue, &leased).await[0], DETACHED);
    assert_eq!(detached_count(&server, &queue).await, 1);
    queue.ack(&job.lease()).await.unwrap();
    client.quit().await.ok();
}

/// Over the shards of a `ShardedQueue`, the operator counts and rewrites
/// every shard's records, and refuses before rewriting any while the
/// format is not standard.
#[tokio::test]
async fn over_shards_the_operator_counts_and_rewrites_every_shards_records() {
    let server = server();
    let builder = RedisQueue::builder(&server.url());
    let namespace = redq_tests::unique_namespace("record-rewrite-sharded");
    let sharded = redq::ShardedQueue::connect(builder, &namespace, 2)
        .await
        .unwrap();
    let operator = sharded.operator();
    operator
        .set_record_format(RecordFormat::Compact)
        .await
        .unwrap();
    for n in 0..8 {
        operator
            .add("q", NewJob::new(serde_json::json!(n)))
            .await
            .unwrap();
    }
    for shard in sharded.shards() {
        assert!(
            shard.newer_records().await.unwrap().compact > 0,
            "the jobs did not spread"
        );
    }
    let all_compact = NewerRecords {
        compact: 8,
        ..NewerRecords::default()
    };
    assert_eq!(operator.newer_records().await.unwrap(), all_compact);
    assert!(operator.rewrite_records().await.is_err());
    assert_eq!(operator.newer_records().await.unwrap(), all_compact);

    operator
        .set_record_format(RecordFormat::Standard)
        .await
        .unwrap();
    let done = operator.rewrite_records().await.unwrap();
    assert_eq!((done.compact, done.detached, done.left_leased), (8, 0, 0));
    assert_eq!(operator.newer_records().await.unwrap().total(), 0);
    let mut payloads = Vec::new();
    for shard in sharded.shards() {
        for job in shard.claim("q", 10, LONG).await.unwrap() {
            payloads.push(job.payload.as_i64().unwrap());
        }
    }
    payloads.sort();
    assert_eq!(payloads, (0..8).collect::<Vec<_>>());
}

/// Job `i`'s payload for the live test below: every third one detaches,
/// the others fit the compact record.
fn sent(i: usize) -> serde_json::Value {
    match i % 3 {
        0 => serde_json::json!({ "i": i, "pad": "x".repeat(2 * FROM as usize) }),
        _ => serde_json::json!({ "i": i }),
    }
}

/// A rewrite run beside a producer that still writes compact and detached
/// records (it connected before the format was set back) and workers that
/// claim several at a time (their detached payloads read apart, after the
/// claim) loses, repeats and changes no job: each runs once, with the
/// payload it was sent, and nothing is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_beside_producers_and_workers_loses_repeats_or_changes_no_job() {
    const JOBS: usize = 400;
    const BACKLOG: usize = 150;
    let server = server();
    let format = RecordFormat::CompactDetached { min_bytes: FROM };
    let producer = queue_in_format(&server, "record-rewrite-live", format).await;
    let rewriter = handle(&server, producer.namespace()).await;
    rewriter
        .set_record_format(RecordFormat::Standard)
        .await
        .unwrap();
    for i in 0..BACKLOG {
        producer.add("q", NewJob::new(sent(i))).await.unwrap();
    }
    let first = rewriter.rewrite_records().await.unwrap();
    assert_eq!((first.compact, first.detached), (100, 50), "{first:?}");

    let working = Arc::new(AtomicBool::new(true));
    let rewrites = tokio::spawn({
        let (rewriter, working) = (rewriter.clone(), working.clone());
        async move {
            let (mut passes_while_working, mut rewritten) = (0, 0);
            while working.load(Ordering::SeqCst) {
                let done = rewriter.rewrite_records().await.unwrap();
                rewritten += done.compact + done.detached;
                passes_while_working += 1;
            }
            (passes_while_working, rewritten)
        }
    });
    let produced = tokio::spawn({
        let producer = producer.clone();
        async move {
            for i in BACKLOG..JOBS {
                producer.add("q", NewJob::new(sent(i))).await.unwrap();
            }
        }
    });
    let mut runs = vec![0; JOBS];
    let worker = handle(&server, producer.namespace()).await;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while runs.iter().sum::<usize>() < JOBS {
        assert!(tokio::time::Instant::now() < deadline, "jobs left unrun");
        let claimed = worker.claim("q", 8, LONG).await.unwrap();
        for job in &claimed {
            let i = job.payload["i"].as_u64().expect("the payload's index") as usize;
            assert_eq!(job.payload, sent(i), "job {i}'s payload");
            runs[i] += 1;
        }
        let leases: Vec<_> = claimed.iter().map(|job| job.lease()).collect();
        for acked in worker.ack_batch(&leases).await.unwrap() {
            acked.unwrap();
        }
    }
    working.store(false, Ordering::SeqCst);
    produced.await.unwrap();
    let (passes, rewritten) = rewrites.await.unwrap();
    assert!(runs.iter().all(|&n| n == 1), "each job runs once: {runs:?}");
    assert!(passes > 0, "no rewrite ran beside the workers");
    eprintln!("{passes} rewrite passes beside the workers rewrote {rewritten} records");
    assert_eq!(detached_count(&server, &producer).await, 0);
    assert_eq!(hlen(&server, &producer, "jobs").await, 0);
}
