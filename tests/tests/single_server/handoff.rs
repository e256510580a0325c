//! Hand-offs: an idle worker parks on its queue and the next enqueue leases
//! the job straight to it (lua/park.lua, lua/enqueue.lua, lua/unpark.lua).
//! Every test watches what a user can observe: the job's state in Redis the
//! moment `add` returns, the park record, and the runs the jobs record.

use std::time::Duration;

use fred::clients::Client;
use fred::interfaces::KeysInterface;
use redq::events::EventKind;
use redq::worker::{Registry, Services, TypedJob, WorkOptions, Worker};
use redq::{JobState, NewJob, RecordFormat, RedisQueue};
use redq_tests::acl::{set_user, worker_acl, worker_handle};
use redq_tests::events::latest_of_kind;
use redq_tests::fixtures::{self, DEADLINE};
use redq_tests::jobs::{recorded_runs, Recorded};
use redq_tests::running::RunningWorker;
use redq_tests::{lua, unique_namespace, wait_until, RedisServer};

use super::lean_record::{stored, REENCODE};

/// A worker of queue `work` running [`Recorded`] jobs. An hour of max idle:
/// only a hand-off or a wake-up can start a job in time.
pub(super) fn start(queue: &RedisQueue, client: &Client, options: WorkOptions) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<Recorded>();
    let options = options
        .queues(["work"])
        .max_idle(Duration::from_secs(3600))
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(client.clone()));
    RunningWorker::spawn(worker)
}

pub(super) fn job(tag: &str, sleep_ms: u64) -> Recorded {
    Recorded {
        tag: tag.into(),
        sleep_ms,
    }
}

/// The park record of queue `work`, its numbers: "token node instance
/// lease_ms capacity handed" (the marker `s` of a worker that hears shard
/// channels, before `handed`, left out: `SHARD_MARKER`).
pub(super) async fn park_record(client: &Client, ns: &str) -> Option<Vec<u64>> {
    let raw: Option<String> = client
        .get(format!("{{{ns}}}:q:work:parked"))
        .await
        .expect("GET");
    raw.map(|r| {
        r.split(' ')
            .filter(|f| *f != SHARD_MARKER)
            .map(|f| f.parse().expect("numeric park field"))
            .collect()
    })
}

/// The field of a park record that says its worker hears shard channels.
const SHARD_MARKER: &str = "s";

pub(super) async fn wait_parked(client: &Client, ns: &str) -> Vec<u64> {
    wait_until(DEADLINE, "a worker to park on the queue", async || {
        park_record(client, ns).await.is_some()
    })
    .await;
    park_record(client, ns).await.expect("parked")
}

/// A worker process, killed when the test ends however it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn state(queue: &RedisQueue, id: &str) -> Option<JobState> {
    queue.inspect(id).await.expect("inspect").map(|j| j.state)
}

#[tokio::test]
async fn an_idle_worker_is_handed_the_next_job_already_leased_to_it() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let running = start(&queue, &client, WorkOptions::new().concurrency(3));
    let park = wait_parked(&client, &ns).await;
    assert_eq!(park[2..], [queue.identity().instance as u64, 30_000, 3, 0]);

    let id = queue.push(&job("h", 500)).await.unwrap().id().to_owned();
    // Leased inside the enqueue script itself: no claim has run yet.
    let record = queue.inspect(&id).await.unwrap().expect("job exists");
    assert_eq!(record.state, JobState::Leased, "{record:?}");
    let identity = queue.identity();
    assert_eq!(record.holder, Some((identity.node, identity.instance)));
    assert_eq!(park_record(&client, &ns).await.expect("still parked")[5], 1);

    wait_until(
        DEADLINE,
        "the handed job to run and be acknowledged",
        async || state(&queue, &id).await.is_none(),
    )
    .await;
    assert_eq!(recorded_runs(&client, "h").await, vec![(id, 1)]);
    let report = running.shutdown().await;
    assert_eq!(report.processed, 1);
}

#[tokio::test]
async fn a_park_takes_only_what_the_worker_has_room_for_and_the_rest_wakes_others() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-room");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let first = start(&queue, &client, WorkOptions::new().concurrency(1));
    wait_parked(&client, &ns).await;
    // Its own connection: a second process, as far as Redis can tell.
    let other = fixtures::handle(&server, &ns).await;
    let second = start(&other, &client, WorkOptions::new().concurrency(1));
    wait_until(DEADLINE, "the second worker to register", async || {
        queue.workers().await.unwrap().len() == 2
    })
    .await;

    let jobs = (0..3)
        .map(|_| {
            redq::NewJob::new(serde_json::to_value(job("room", 1000)).unwrap()).name(Recorded::NAME)
        })
        .collect();
    let ids: Vec<String> = queue
        .add_batch("work", jobs)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id().to_owned())
        .collect();
    // One slot parked: exactly one job handed over (the head of the queue,
    // to the parked worker); the rest went to the queue and woke the other.
    let park = park_record(&client, &ns).await.expect("still parked");
    assert_eq!((park[4], park[5]), (1, 1), "capacity 1, handed 1");
    let head = queue.inspect(&ids[0]).await.unwrap().expect("job exists");
    let identity = queue.identity();
    assert_eq!(head.state, JobState::Leased);
    assert_eq!(head.holder, Some((identity.node, identity.instance)));
    wait_until(DEADLINE, "every job to run", async || {
        recorded_runs(&client, "room").await.len() == 3
    })
    .await;
    let mut runs = recorded_runs(&client, "room").await;
    runs.sort();
    let mut expected: Vec<(String, u32)> = ids.iter().map(|id| (id.clone(), 1)).collect();
    expected.sort();
    assert_eq!(runs, expected, "each job once, first attempt");
    first.shutdown().await;
    second.shutdown().await;
}

/// A lone job handed to a parked worker is leased inside its enqueue,
/// where its leased record is spliced from its meta and its payload, kept
/// apart until then (lua/enqueue.lua, lib/lease.lua). Stored, it is exactly
/// what its fields encode to (what any script rewriting it, a claim's
/// lease included, stores), leased to the worker, with its payload whole,
/// in either record format and with a short or a 4 KB payload; the worker
/// runs it with that payload.
#[tokio::test]
async fn a_handed_lone_job_is_stored_as_its_fields_encode_with_its_payload_whole() {
    let server = RedisServer::start();
    let client = server.client().await;
    let reencode = lua::load(&client, &lua::compose(REENCODE)).await;
    for format in [RecordFormat::Standard, RecordFormat::Compact] {
        let ns = unique_namespace("handoff-record");
        let queue = fixtures::handle(&server, &ns).await;
        queue.set_record_format(format).await.unwrap();
        let running = start(&queue, &client, WorkOptions::new().concurrency(4));
        wait_parked(&client, &ns).await;
        for (size, handed) in [(1, 1), (4096, 2)] {
            let sent = job(&format!("{}-{}", format.name(), "x".repeat(size)), 300);
            // A plain job, which a compact namespace stores compact (a typed
            // push sends options that only the whole record holds).
            let plain = NewJob::new(serde_json::to_value(&sent).unwrap())
                .name(<Recorded as TypedJob>::NAME)
                .max_attempts(3);
            let id = queue.add("work", plain).await.unwrap().id().to_owned();
            let raw = stored(&server, &queue, &id).await;
            assert_eq!(
                park_record(&client, &ns).await.expect("still parked")[5],
                handed,
                "{format:?}, {size} B: handed, not claimed"
            );
            let (meta, payload) = redq::lua::JobMeta::decode_record(&raw).unwrap();
            let identity = queue.identity();
            assert!(meta.lease_id > 0, "{format:?}, {size} B: leased");
            assert_eq!(
                (meta.worker_node, meta.worker_instance),
                (identity.node, identity.instance)
            );
            assert_eq!(
                serde_json::from_slice::<serde_json::Value>(payload).unwrap(),
                serde_json::to_value(&sent).unwrap(),
                "{format:?}, {size} B: the payload whole"
            );
            let again = lua::evalsha(&client, &reencode, &ns, "work", &[id.as_str().into()])
                .await
                .unwrap();
            let fred::types::Value::Bytes(again) = again else {
                panic!("{again:?}")
            };
            assert!(
                again == raw.as_slice(),
                "{format:?}, {size} B: as its fields encode"
            );
            wait_until(
                DEADLINE,
                "the handed job to run and be acknowledged",
                async || state(&queue, &id).await.is_none(),
            )
            .await;
            assert_eq!(recorded_runs(&client, &sent.tag).await, vec![(id, 1)]);
        }
        running.shutdown().await;
    }
}

#[tokio::test]
async fn a_paused_queue_hands_nothing_over() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-paused");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let running = start(&queue, &client, WorkOptions::new());
    wait_parked(&client, &ns).await;
    queue.pause("work").await.unwrap();
    let id = queue.push(&job("p", 0)).await.unwrap().id().to_owned();
    assert_eq!(state(&queue, &id).await, Some(JobState::Waiting));
    queue.resume("work").await.unwrap();
    wait_until(DEADLINE, "the job to run after resume", async || {
        recorded_runs(&client, "p").await.len() == 1
    })
    .await;
    running.shutdown().await;
}

#[tokio::test]
async fn a_stopped_worker_leaves_its_park_so_nothing_is_handed_to_it() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-stop");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let running = start(&queue, &client, WorkOptions::new());
    wait_parked(&client, &ns).await;
    running.shutdown().await;
    assert_eq!(park_record(&client, &ns).await, None);
    let id = queue.push(&job("s", 0)).await.unwrap().id().to_owned();
    assert_eq!(state(&queue, &id).await, Some(JobState::Waiting));
}

#[tokio::test]
async fn a_worker_killed_while_parked_gets_its_handed_job_back_after_the_lease() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-kill9");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let mut child = KillOnDrop(
        std::process::Command::new(env!("CARGO_BIN_EXE_redq-test-worker"))
            .args([server.url(), ns.clone(), "500".into()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn worker process"),
    );
    wait_parked(&client, &ns).await;
    child.0.kill().expect("SIGKILL");
    child.0.wait().unwrap();

    // The park outlives its worker (for at most a few seconds): the job is
    // leased to the dead process, exactly as if it had claimed it and died.
    let id = queue.push(&job("k", 0)).await.unwrap().id().to_owned();
    assert_eq!(state(&queue, &id).await, Some(JobState::Leased));
    let running = start(&queue, &client, WorkOptions::new());
    wait_until(
        DEADLINE,
        "the job to run once its lease lapsed",
        async || recorded_runs(&client, "k").await.len() == 1,
    )
    .await;
    assert_eq!(
        recorded_runs(&client, "k").await,
        vec![(id, 2)],
        "the lapsed lease counts as the first attempt"
    );
    running.shutdown().await;
}

/// Hand-offs published while the worker is cut off from Redis reach no
/// one. Once back, the worker looks for the jobs leased to it that it never
/// heard of and gives them back: the job runs at once, on its first
/// attempt, not after its two-minute lease with an attempt counted.
#[tokio::test]
async fn a_job_handed_while_its_worker_was_cut_off_runs_on_its_first_attempt_without_waiting_for_the_lease(
) {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-cut-off");
    set_user(&server, &worker_acl(&ns, "cut-secret")).await;
    let worker_queue = worker_handle(&server, &ns, "cut-secret").await;
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let options = WorkOptions::new().lease(Duration::from_secs(120));
    let running = start(&worker_queue, &client, options);
    let park_key = format!("{{{ns}}}:q:work:parked");
    let id = loop {
        wait_parked(&client, &ns).await;
        // Cut the worker off: its connections closed, no new one let in.
        // Its park stays until its time is up, so the next enqueue hands
        // the job to it, and the message goes nowhere.
        server.cmd(&["ACL", "SETUSER", "worker", "off"]).await;
        server.cmd(&["CLIENT", "KILL", "USER", "worker"]).await;
        let left = server
            .cmd(&["PTTL", &park_key])
            .await
            .as_i64()
            .unwrap_or(-2);
        if left >= 500 {
            break queue.push(&job("cut", 0)).await.unwrap().id().to_owned();
        }
        // Cut off between two parks, or at the end of one: again.
        server.cmd(&["ACL", "SETUSER", "worker", "on"]).await;
    };
    assert_eq!(
        state(&queue, &id).await,
        Some(JobState::Leased),
        "handed to the cut-off worker"
    );
    server.cmd(&["ACL", "SETUSER", "worker", "on"]).await;
    wait_until(DEADLINE, "the lost hand-off to run", async || {
        recorded_runs(&client, "cut").await.len() == 1
    })
    .await;
    assert_eq!(
        recorded_runs(&client, "cut").await,
        vec![(id.clone(), 1)],
        "given back with no attempt counted, and run"
    );
    // What an operator sees: one event, naming the job and the worker as
    // the registry lists it.
    let workers = queue.workers().await.unwrap();
    let [worker] = workers.as_slice() else {
        panic!("one worker registered, got {workers:?}");
    };
    let lost: Vec<_> = latest_of_kind(&queue, EventKind::HandoffLost)
        .await
        .into_iter()
        .map(|e| (e.queue, e.job_id, e.name, e.detail))
        .collect();
    assert_eq!(
        lost,
        [(
            "work".to_owned(),
            id,
            Some(Recorded::NAME.to_owned()),
            Some(worker.id.clone())
        )],
        "the give-back recorded as a handoff_lost event"
    );
    let counted = queue.metric_totals("work").await.unwrap().handoffs_lost;
    assert_eq!(counted, 1, "and counted once for the queue's alarm");
    // And on the worker's own record, which it rewrites at once rather than
    // at its next heartbeat (5 s on).
    wait_until(
        Duration::from_secs(3),
        "the worker's record to count its lost hand-off",
        async || queue.workers().await.unwrap()[0].handoffs_lost == Some(1),
    )
    .await;
    let report = running.shutdown().await;
    assert_eq!(report.handoffs_lost, 1, "{report:?}");
}

#[tokio::test]
async fn without_hand_offs_an_idle_worker_still_wakes_on_enqueue() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-off");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let running = start(&queue, &client, WorkOptions::new().handoff(false));
    wait_until(DEADLINE, "the worker to register", async || {
        !queue.workers().await.unwrap().is_empty()
    })
    .await;
    let id = queue.push(&job("off", 0)).await.unwrap().id().to_owned();
    assert_eq!(park_record(&client, &ns).await, None, "never parks");
    wait_until(DEADLINE, "the woken worker to run the job", async || {
        recorded_runs(&client, "off").await.len() == 1
    })
    .await;
    assert_eq!(recorded_runs(&client, "off").await, vec![(id, 1)]);
    running.shutdown().await;
}

#[tokio::test]
async fn jobs_trickled_to_idle_workers_each_run_exactly_once() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-trickle");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let workers = [
        start(&queue, &client, WorkOptions::new().concurrency(2)),
        start(
            &fixtures::handle(&server, &ns).await,
            &client,
            WorkOptions::new().concurrency(2),
        ),
    ];
    wait_parked(&client, &ns).await;
    // Spaced so the workers keep going idle: some jobs are handed over, some
    // wake a sleeping worker, some are claimed by a busy one.
    let mut ids = Vec::new();
    let mut handed_over = 0;
    for i in 0..200u64 {
        ids.push(queue.push(&job("t", i % 3)).await.unwrap().id().to_owned());
        if park_record(&client, &ns).await.is_some_and(|p| p[5] > 0) {
            handed_over += 1;
        }
        tokio::time::sleep(Duration::from_millis(1 + i % 3)).await;
    }
    assert!(handed_over > 0, "some jobs went by hand-off");
    wait_until(DEADLINE, "every job to run", async || {
        recorded_runs(&client, "t").await.len() >= ids.len()
    })
    .await;
    wait_until(DEADLINE, "the queue to drain", async || {
        let c = queue.counts("work").await.unwrap();
        c.waiting + c.scheduled + c.leased + c.dead == 0
    })
    .await;
    let mut runs = recorded_runs(&client, "t").await;
    runs.sort();
    let mut expected: Vec<(String, u32)> = ids.iter().map(|id| (id.clone(), 1)).collect();
    expected.sort();
    assert_eq!(runs, expected, "each job once, on its first attempt");
    let mut processed = 0;
    for w in workers {
        processed += w.shutdown().await.processed;
    }
    assert_eq!(processed, 200);
}

async fn wake_subscribers(server: &RedisServer, ns: &str) -> i64 {
    let channel = format!("{{{ns}}}:wake");
    match server.cmd(&["PUBSUB", "NUMSUB", &channel]).await {
        fred::types::Value::Array(v) => v.get(1).and_then(|n| n.as_i64()).unwrap_or(0),
        other => panic!("PUBSUB NUMSUB reply {other:?}"),
    }
}

#[tokio::test]
async fn a_worker_whose_subscriber_connection_is_killed_subscribes_again_and_keeps_taking_jobs() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-reconnect");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    let running = start(&queue, &client, WorkOptions::new());
    wait_parked(&client, &ns).await;
    assert_eq!(wake_subscribers(&server, &ns).await, 1);
    server.cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]).await;
    assert_eq!(wake_subscribers(&server, &ns).await, 0);
    wait_until(DEADLINE, "the worker to subscribe again", async || {
        wake_subscribers(&server, &ns).await == 1
    })
    .await;
    // Handed over or woken: either way well before a lost hand-off's lease
    // (30 s) could bring it back.
    let id = queue.push(&job("r", 0)).await.unwrap().id().to_owned();
    wait_until(DEADLINE, "the job to run", async || {
        recorded_runs(&client, "r").await.len() == 1
    })
    .await;
    assert_eq!(recorded_runs(&client, "r").await, vec![(id, 1)]);
    running.shutdown().await;
}

/// What arrives on a worker's hand-off channel: the park's own message as
/// text, a handed job as its id.
fn handoff_message(value: &fred::types::Value) -> String {
    let body = value.as_bytes().expect("a message body");
    if let Ok(text) = std::str::from_utf8(body) {
        if text.starts_with("parked ") {
            return text.to_owned();
        }
    }
    match rmpv::decode::read_value(&mut &body[..]).expect("a msgpack hand-off") {
        rmpv::Value::Array(parts) => parts[0].as_str().expect("the job id").to_owned(),
        other => panic!("a hand-off is [id, record], got {other:?}"),
    }
}

/// A worker parking while jobs wait (they arrived between its last claim
/// and its park) is handed them at once, up to its room, after the park's
/// own message: it is not refused the park, and what its room did not take
/// is said to be due (lua/park.lua).
#[tokio::test]
async fn a_park_with_jobs_waiting_hands_them_over_up_to_its_room() {
    use fred::interfaces::{EventInterface, PubsubInterface};
    let server = RedisServer::start();
    let ns = unique_namespace("park-handoff");
    let queue = fixtures::handle(&server, &ns).await;
    let ids = fixtures::add_numbered(&queue, "work", 3).await;
    let token = 4242u64;
    let listener = server.client().await;
    let mut messages = listener.message_rx();
    listener
        .subscribe(format!("{{{ns}}}:wake:{token}"))
        .await
        .unwrap();
    let admin = server.client().await;
    let park = redq_tests::lua::load(
        &admin,
        &redq_tests::lua::compose(redq_tests::lua::source("park")),
    )
    .await;
    let park_with = |room: u64, number: u64| {
        let args: Vec<fred::types::Value> = [token, 9, 1, 30_000, room, 5_000, number]
            .iter()
            .map(|n| n.to_string().into())
            .collect();
        let (admin, park, ns) = (admin.clone(), park.clone(), ns.clone());
        async move {
            let reply = redq_tests::lua::evalsha(&admin, &park, &ns, "work", &args)
                .await
                .expect("park");
            let reply: Vec<i64> = reply.convert().unwrap();
            reply
        }
    };
    let mut next_message = async || {
        let message = tokio::time::timeout(DEADLINE, messages.recv())
            .await
            .expect("a message on the hand-off channel")
            .unwrap();
        handoff_message(&message.value)
    };

    // Room for two: parked, the first two handed in claim order, one left
    // due (0 ms). The reply also says where the park began: no lease granted
    // yet, and Redis's clock.
    let reply = park_with(2, 7).await;
    assert_eq!(reply[..3], [0, 1, 0]);
    assert!(reply[3] > 1_700_000_000_000, "a clock in ms: {reply:?}");
    assert_eq!(next_message().await, "parked 7");
    assert_eq!(next_message().await, ids[0]);
    assert_eq!(next_message().await, ids[1]);
    let counts = queue.counts("work").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (1, 2));
    let client = server.client().await;
    let record = park_record(&client, &ns).await.expect("parked");
    assert_eq!((record[4], record[5]), (2, 2), "room 2, handed 2");

    // Parked again with room to spare: the last one handed, nothing left
    // due now (the next thing due is a lease's expiry).
    let reply = park_with(5, 8).await;
    assert_eq!(reply[1], 1);
    assert!(reply[0] > 0, "nothing due now: {reply:?}");
    assert_eq!(
        reply[2], 2,
        "begun after the first park's two leases: {reply:?}"
    );
    assert_eq!(next_message().await, "parked 8");
    assert_eq!(next_message().await, ids[2]);
    let counts = queue.counts("work").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (0, 3));
    for id in &ids {
        assert_eq!(state(&queue, id).await, Some(JobState::Leased));
    }
}

/// The enqueue's function library keeps the parse of the last park it
/// handed a job to (lua/lib/parked.lua): a later park by another worker,
/// with its own token, identity and room, is handed jobs under its own
/// terms, never the earlier park's.
#[tokio::test]
async fn a_park_after_another_workers_is_handed_jobs_as_its_own() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-next-park");
    let producer = fixtures::handle(&server, &ns).await;
    let client = server.client().await;

    let first_queue = fixtures::handle(&server, &ns).await;
    let first = start(&first_queue, &client, WorkOptions::new().concurrency(2));
    let first_park = wait_parked(&client, &ns).await;
    let id = producer
        .push(&job("before", 0))
        .await
        .unwrap()
        .id()
        .to_owned();
    wait_until(DEADLINE, "the first park's job to run", async || {
        state(&producer, &id).await.is_none()
    })
    .await;
    first.shutdown().await;
    wait_until(DEADLINE, "the first worker to leave its park", async || {
        park_record(&client, &ns).await.is_none()
    })
    .await;

    let second_queue = fixtures::handle(&server, &ns).await;
    let second = start(&second_queue, &client, WorkOptions::new().concurrency(5));
    let second_park = wait_parked(&client, &ns).await;
    assert_ne!(second_park[0], first_park[0], "each park has its own token");
    let id = producer
        .push(&job("after", 0))
        .await
        .unwrap()
        .id()
        .to_owned();
    let leased = producer.inspect(&id).await.unwrap();
    let identity = second_queue.identity();
    // Handed already (still leased, or run and gone): to the second worker.
    if let Some(record) = leased {
        assert_eq!(
            record.holder,
            Some((identity.node, identity.instance)),
            "{record:?}"
        );
    }
    let park = park_record(&client, &ns)
        .await
        .expect("the second worker is parked");
    assert_eq!(
        park[..5],
        second_park[..5],
        "the park record keeps its own head"
    );
    assert_eq!((park[4], park[5]), (5, 1), "its room, one job handed");
    wait_until(DEADLINE, "the second park's job to run", async || {
        recorded_runs(&client, "after").await.len() == 1
    })
    .await;
    let report = second.shutdown().await;
    assert_eq!(report.processed, 1);
}

#[tokio::test]
async fn a_job_handed_on_a_queue_with_metrics_off_records_nothing() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff_metrics_off");
    let queue = fixtures::handle(&server, &ns).await;
    let client = server.client().await;
    assert!(
        queue
            .set_metrics_recording("work", false)
            .await
            .unwrap()
            .changed
    );
    let running = start(&queue, &client, WorkOptions::new().concurrency(2));
    wait_parked(&client, &ns).await;

    let id = queue.push(&job("m", 0)).await.unwrap().id().to_owned();
    assert_eq!(
        park_record(&client, &ns).await.expect("still parked")[5],
        1,
        "handed off, not claimed"
    );
    wait_until(DEADLINE, "the handed job to be acknowledged", async || {
        state(&queue, &id).await.is_none()
    })
    .await;
    let totals = queue.metric_totals("work").await.unwrap();
    let figures = totals.total();
    assert_eq!(
        (figures.wait.count(), figures.completed),
        (0, 0),
        "{totals:?}"
    );
    assert!(!totals.recording.is_on());
    assert_eq!(running.shutdown().await.processed, 1);
}
