//! Wake-ups and hand-offs on shard channels (lua/lib/notify.lua): what a
//! listener of this driver hears them as, what a park record written by an
//! earlier driver is handed on, and a user not allowed sharded pub/sub.

use std::time::Duration;

use fred::clients::Client;
use fred::interfaces::{EventInterface, PubsubInterface};
use fred::types::{Message, MessageKind, Value};
use redq::worker::{Registry, Services, WakeUps, WorkOptions, Worker};
use redq::RedisQueue;
use redq_tests::acl::{set_user, worker_acl, worker_handle};
use redq_tests::fixtures::{self, DEADLINE};
use redq_tests::jobs::{recorded_runs, Recorded};
use redq_tests::running::RunningWorker;
use redq_tests::{lua, unique_namespace, wait_until, RedisServer};

const TOKEN: u64 = 4242;

/// A client subscribed to `channel` both as a plain channel and as a shard
/// channel, on one connection: each message says which kind it came on.
async fn listen_both(server: &RedisServer, channel: &str) -> (Client, Receiver) {
    let listener = server.client().await;
    let messages = listener.message_rx();
    listener.subscribe(channel).await.unwrap();
    listener.ssubscribe(channel).await.unwrap();
    (listener, Receiver(messages))
}

struct Receiver(tokio::sync::broadcast::Receiver<Message>);

impl Receiver {
    /// The next message: its kind, and its text (a hand-off's job id).
    async fn next(&mut self) -> (MessageKind, String) {
        let message = tokio::time::timeout(DEADLINE, self.0.recv())
            .await
            .expect("a message within the deadline")
            .unwrap();
        let body = message.value.as_bytes().expect("a message body");
        let text = match rmpv::decode::read_value(&mut &body[..]) {
            Ok(rmpv::Value::Array(parts)) => parts[0].as_str().expect("job id").to_owned(),
            _ => String::from_utf8(body.to_vec()).expect("a text message"),
        };
        (message.kind, text)
    }
}

/// Park on queue `work` as worker `TOKEN`, saying whether it hears shard
/// channels (`None`: as a driver before that argument parks).
async fn park(admin: &Client, sha: &str, ns: &str, number: u64, shard: Option<bool>) -> Vec<i64> {
    let mut args: Vec<Value> = [TOKEN, 9, 1, 30_000, 1, 5_000, number]
        .iter()
        .map(|n| n.to_string().into())
        .collect();
    if let Some(shard) = shard {
        args.push(if shard { "1" } else { "0" }.into());
    }
    lua::evalsha(admin, sha, ns, "work", &args)
        .await
        .expect("park")
        .convert()
        .unwrap()
}

/// A park that says its worker hears shard channels is told and handed jobs
/// on one; a park without that (as an earlier driver writes it, whose
/// listener subscribes plainly) is told and handed them plainly. The
/// record's marker is what an earlier driver's enqueue cannot read, so it
/// hands such a worker nothing (lua/lib/parked.lua).
#[tokio::test]
async fn a_hand_off_goes_on_the_kind_of_channel_its_worker_parked_with() {
    let server = RedisServer::start();
    let ns = unique_namespace("shard-handoff");
    let queue = fixtures::handle(&server, &ns).await;
    let (_listener, mut messages) = listen_both(&server, &format!("{{{ns}}}:wake:{TOKEN}")).await;
    let admin = server.client().await;
    let sha = lua::load(&admin, &lua::compose(lua::source("park"))).await;
    let parked_record = async || -> String {
        server
            .cmd(&["GET", &format!("{{{ns}}}:q:work:parked")])
            .await
            .convert()
            .unwrap()
    };

    for (number, shard, kind) in [
        (1, None, MessageKind::Message),
        (2, Some(false), MessageKind::Message),
        (3, Some(true), MessageKind::SMessage),
    ] {
        assert_eq!(park(&admin, &sha, &ns, number, shard).await[1], 1, "parked");
        let record = parked_record().await;
        assert_eq!(
            record.split(' ').any(|f| f == "s"),
            shard == Some(true),
            "park {number}: {record}"
        );
        assert_eq!(
            messages.next().await,
            (kind.clone(), format!("parked {number}"))
        );
        let id = queue
            .add(
                "work",
                redq::NewJob::new(serde_json::json!({ "park": number })),
            )
            .await
            .unwrap()
            .id()
            .to_owned();
        assert_eq!(messages.next().await, (kind, id), "park {number}");
    }
}

/// A worker of this driver listens on both kinds of channel (so it hears an
/// earlier driver's plain wake-ups too), parks saying so, and the enqueue
/// that starts its job publishes nothing plainly, with the hand-off on and
/// off.
#[tokio::test]
async fn a_worker_is_woken_and_handed_jobs_on_shard_channels() {
    for handoff in [true, false] {
        let server = RedisServer::start();
        let ns = unique_namespace("shard-worker");
        let queue = fixtures::handle(&server, &ns).await;
        let client = server.client().await;
        let worker = start(&queue, &client, handoff);
        let wake = queue.wake_channel();
        wait_until(DEADLINE, "the worker to listen on both kinds", async || {
            server.subscribers(&wake).await == 1 && server.shard_subscribers(&wake).await == 1
        })
        .await;
        // The registry says so, with the driver's version (the workspace's,
        // which this crate shares).
        wait_until(DEADLINE, "the registry to say shard", async || {
            listed_wake_ups(&queue).await == Some(WakeUps::Shard)
        })
        .await;
        let listed = queue.workers().await.unwrap();
        assert_eq!(
            listed[0].version.as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
        if handoff {
            wait_until(DEADLINE, "the worker to park", async || {
                let record: Option<String> = server
                    .cmd(&["GET", &format!("{{{ns}}}:q:work:parked")])
                    .await
                    .convert()
                    .unwrap();
                record.is_some_and(|r| r.split(' ').any(|f| f == "s"))
            })
            .await;
        }
        server.reset_stats().await;
        push_three_and_see_each_run(&queue, &client, &ns).await;
        assert_eq!(
            server.command_calls("publish").await,
            0,
            "hand-off {handoff}"
        );
        assert!(
            server.command_calls("spublish").await >= 3,
            "hand-off {handoff}"
        );
        worker.shutdown().await;
    }
}

/// A user allowed neither `SPUBLISH` nor `SSUBSCRIBE` (an ACL written for an
/// earlier driver) still has its idle workers woken and handed jobs: the
/// scripts publish plainly where they are refused, and the worker parks as
/// one that hears only plain channels. A user allowed `SPUBLISH` but not
/// `SSUBSCRIBE` is still handed jobs, plainly, as its park says.
#[tokio::test]
async fn a_user_without_sharded_pub_sub_still_wakes_and_hands_off() {
    let without_any: &[&str] = &[
        "+spublish",
        "+ssubscribe",
        "+sunsubscribe",
        "+pubsub|shardnumsub",
    ];
    let without_subscribe: &[&str] = &["+ssubscribe", "+sunsubscribe", "+pubsub|shardnumsub"];
    for (refused, handoff) in [
        (without_any, true),
        (without_any, false),
        (without_subscribe, true),
    ] {
        let server = RedisServer::start();
        let ns = unique_namespace("shard-acl");
        let rules: Vec<String> = worker_acl(&ns, "plain-secret")
            .into_iter()
            .filter(|rule| !refused.contains(&rule.as_str()))
            .collect();
        set_user(&server, &rules).await;
        let queue = worker_handle(&server, &ns, "plain-secret").await;
        let client = server.client().await;
        let worker = start(&queue, &client, handoff);
        wait_until(DEADLINE, "the worker to listen", async || {
            server.subscribers(&queue.wake_channel()).await == 1
        })
        .await;
        // What an operator reads in `redq workers`: this worker may start
        // work only at its next poll where the scripts may SPUBLISH.
        wait_until(DEADLINE, "the registry to say plain", async || {
            listed_wake_ups(&queue).await == Some(WakeUps::Plain)
        })
        .await;
        push_three_and_see_each_run(&queue, &client, &ns).await;
        assert_eq!(
            server.shard_subscribers(&queue.wake_channel()).await,
            0,
            "{refused:?} refused, hand-off {handoff}: the shard subscription was refused"
        );
        worker.shutdown().await;
    }
}

/// How the namespace's one registered worker hears wake-ups, as its
/// registry record says (`None`: none listed yet, or it does not say).
async fn listed_wake_ups(queue: &RedisQueue) -> Option<WakeUps> {
    let workers = queue.workers().await.unwrap();
    workers.first().and_then(|w| w.wake_ups)
}

/// Push three jobs one by one, each recording its run under `ns`, and wait
/// for each to run before the next: with an hour of max idle, each starts
/// only by a wake-up or a hand-off.
async fn push_three_and_see_each_run(queue: &RedisQueue, client: &Client, ns: &str) {
    for i in 0..3 {
        let job = Recorded {
            tag: ns.to_owned(),
            sleep_ms: 0,
        };
        queue.push(&job).await.unwrap();
        wait_until(DEADLINE, "the job to run", async || {
            recorded_runs(client, ns).await.len() == i + 1
        })
        .await;
    }
}

/// A worker of queue `work` running [`Recorded`] jobs, with an hour of max
/// idle: only a wake-up or a hand-off starts a job in time.
fn start(queue: &RedisQueue, client: &Client, handoff: bool) -> RunningWorker {
    let mut registry = Registry::new();
    registry.add_job::<Recorded>();
    let options = WorkOptions::new()
        .queues(["work"])
        .max_idle(Duration::from_secs(3600))
        .handoff(handoff)
        .schedules(false);
    let worker = Worker::new(queue.clone(), registry, options)
        .expect("options")
        .services(Services::new().with(client.clone()));
    RunningWorker::spawn(worker)
}
