//! Property tests of every input: the driver API over arbitrary queue
//! names, ids, dedup and ordering keys, job names, delays, priorities,
//! payload sizes and bytes, cron strings and time zones; and every
//! queue-scoped script straight through `EVALSHA` with hostile ARGV
//! (`nan`, `inf`, `1e999`, 2^53+1, negative, huge, empty, hex, padded).
//!
//! The properties: no panic; every refusal is a typed error (`Invalid`,
//! `PayloadTooLarge` from the driver, `ERR redq: …` from a script, never a
//! Lua runtime error); a refused call writes nothing (`DEBUG DIGEST` equal
//! before and after); an accepted call leaves the namespace structurally
//! sound and a payload reads back byte for byte.
//!
//! Case counts are small so the suite stays quick; raise them with
//! `PROPTEST_CASES=1000` for a long run.

use std::mem::ManuallyDrop;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fred::clients::Client;
use fred::types::Value;
use proptest::prelude::*;
use redq::schedule::{CronExpr, Schedule};
use redq::{NewJob, QueueError, RedisQueue};
use redq_tests::{history, lua, unique_namespace, RedisServer};
use tokio::runtime::Runtime;

/// One server and runtime for all cases of a test (a server per case would
/// dominate). Each test thread has its own, so the server is stopped when
/// the test's thread ends; a process-wide static is never dropped, and its
/// redis-server outlived every run.
struct World {
    server: RedisServer,
    queue: RedisQueue,
    client: Client,
    /// Never dropped: a runtime dropped while the thread's locals are torn
    /// down may touch tokio's own, already destroyed, thread locals. Its
    /// threads end with the process.
    rt: ManuallyDrop<Runtime>,
}

fn new_world() -> World {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = RedisServer::builder().enable_debug().start();
    let (queue, client) = rt.block_on(async {
        let queue = RedisQueue::builder(&server.url())
            .namespace(unique_namespace("props"))
            .payload_limit(64 * 1024)
            .connect()
            .await
            .unwrap();
        (queue, server.client().await)
    });
    World {
        server,
        queue,
        client,
        rt: ManuallyDrop::new(rt),
    }
}

thread_local! {
    static WORLD: Rc<World> = Rc::new(new_world());
}

/// The tests share one server; each case runs alone so that "the dataset
/// did not change" means "this call wrote nothing".
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

async fn digest(client: &Client) -> String {
    fred::interfaces::ClientLike::custom::<String, _>(
        client,
        fred::types::CustomCommand::new_static("DEBUG", fred::types::ClusterHash::FirstKey, false),
        vec!["DIGEST"],
    )
    .await
    .unwrap()
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text that stresses the rules: empty, long, control characters, the key
/// separators `{ } :`, newlines, NUL, multi-byte characters.
fn nasty_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z0-9_.-]{1,20}",
        "\\PC{0,40}",
        "[{}:\\n\\t\\x00 ]{1,5}",
        "[a-z]{1,5}[{}:\\n\\r\\x00\\x7f][a-z]{0,5}",
        (100usize..700).prop_map(|n| "k".repeat(n)),
        Just("é€😀".repeat(50)),
    ]
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        "\\PC{0,30}".prop_map(serde_json::Value::from),
        proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| serde_json::Value::from(String::from_utf8_lossy(&b).into_owned())),
        (0usize..100_000).prop_map(|n| serde_json::Value::from("p".repeat(n))),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("\\PC{0,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
struct JobInput {
    queue: String,
    payload: serde_json::Value,
    priority: u8,
    delay_ms: u64,
    not_before_ms: Option<u64>,
    dedup: Option<(String, Option<u64>)>,
    ordering_key: Option<String>,
    max_attempts: u32,
    retry_window_ms: Option<u64>,
    name: Option<String>,
}

fn duration_ms() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..10_000,
        Just(315_360_000_000u64),
        Just(315_360_000_001u64),
        any::<u64>(),
    ]
}

fn job_input() -> impl Strategy<Value = JobInput> {
    (
        prop_oneof![Just("q".to_owned()), nasty_text()],
        json_value(),
        any::<u8>(),
        duration_ms(),
        proptest::option::of(prop_oneof![
            any::<u64>(),
            Just(1u64 << 47),
            Just((1u64 << 47) + 1)
        ]),
        proptest::option::of((nasty_text(), proptest::option::of(duration_ms()))),
        proptest::option::of(nasty_text()),
        any::<u32>(),
        proptest::option::of(duration_ms()),
        proptest::option::of(nasty_text()),
    )
        .prop_map(
            |(
                queue,
                payload,
                priority,
                delay_ms,
                not_before_ms,
                dedup,
                ordering_key,
                max_attempts,
                retry_window_ms,
                name,
            )| JobInput {
                queue,
                payload,
                priority,
                delay_ms,
                not_before_ms,
                dedup,
                ordering_key,
                max_attempts,
                retry_window_ms,
                name,
            },
        )
}

fn build(input: &JobInput) -> NewJob {
    let mut job = NewJob::new(input.payload.clone())
        .priority(input.priority)
        .delay(Duration::from_millis(input.delay_ms))
        .max_attempts(input.max_attempts);
    if let Some(ms) = input.not_before_ms {
        if let Some(at) = UNIX_EPOCH.checked_add(Duration::from_millis(ms)) {
            job = job.not_before(at);
        }
    }
    if let Some((key, ttl)) = &input.dedup {
        job = match ttl {
            Some(ms) => job.dedup_key_for(key.clone(), Duration::from_millis(*ms)),
            None => job.dedup_key(key.clone()),
        };
    }
    if let Some(key) = &input.ordering_key {
        job = job.ordering_key(key.clone());
    }
    if let Some(ms) = input.retry_window_ms {
        job = job.retry_window(Duration::from_millis(ms));
    }
    if let Some(name) = &input.name {
        job = job.name(name.clone());
    }
    job
}

fn typed_refusal(err: &QueueError) -> bool {
    matches!(
        err,
        QueueError::Invalid { .. } | QueueError::PayloadTooLarge { .. }
    )
}

proptest! {
    #![proptest_config(config(96))]

    /// Any job input is either accepted (and reads back exactly) or refused
    /// with a typed error that wrote nothing.
    #[test]
    fn any_job_is_accepted_whole_or_refused_with_a_typed_error(input in job_input()) {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let w = WORLD.with(Rc::clone);
        w.rt.block_on(async {
            let before = digest(&w.client).await;
            match w.queue.add(&input.queue, build(&input)).await {
                Ok(outcome) => {
                    let record = w.queue.inspect(outcome.id()).await.unwrap()
                        .expect("an accepted job can be inspected");
                    // A duplicate (same dedup key as an earlier case) is the
                    // earlier job; only a created one must read back as sent.
                    if matches!(outcome, redq::Enqueued::Created(_)) {
                        prop_assert_eq!(&record.payload, &input.payload, "payload round trip");
                        prop_assert_eq!(record.priority, input.priority);
                    }
                    let broken = history::check_namespace(&w.client, w.queue.namespace()).await;
                    prop_assert!(broken.is_empty(), "{:?}", broken);
                }
                Err(e) => {
                    prop_assert!(typed_refusal(&e), "untyped refusal: {e:?}");
                    prop_assert_eq!(digest(&w.client).await, before, "a refused add wrote something");
                }
            }
            Ok(())
        })?;
    }

    /// Claim, ack, nack, extend and release with any queue name, lease
    /// length, limit, job id and lease id: typed errors only, and each
    /// refused call leaves the database digest as it found it.
    #[test]
    fn fenced_calls_with_any_arguments_are_typed_and_atomic(
        queue in prop_oneof![Just("q".to_owned()), nasty_text()],
        limit in prop_oneof![0usize..3, Just(1000usize), Just(1001usize), any::<usize>()],
        lease_ms in duration_ms(),
        id in prop_oneof![Just("01ARZ3NDEKTSV4RRFFQ69G5FAV".to_owned()), nasty_text()],
        lease_id in prop_oneof![Just(0u64), 1u64..100, Just(1u64 << 53), Just((1u64 << 53) + 1), any::<u64>()],
        delay_ms in duration_ms(),
        error in nasty_text(),
    ) {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let w = WORLD.with(Rc::clone);
        w.rt.block_on(async {
            let lease = redq::Lease { queue: queue.clone(), id: id.clone(), lease_id };
            let before = digest(&w.client).await;
            if let Err(e) = w.queue.claim(&queue, limit, Duration::from_millis(lease_ms)).await {
                prop_assert!(typed_refusal(&e), "claim: {e:?}");
                prop_assert_eq!(&digest(&w.client).await, &before);
            }
            for call in ["ack", "nack", "extend", "release"] {
                let before = digest(&w.client).await;
                let result = match call {
                    "ack" => w.queue.ack(&lease).await.map(|_| ()),
                    "nack" => w.queue.nack(&lease, Duration::from_millis(delay_ms), &error).await.map(|_| ()),
                    "extend" => w.queue.extend(&lease, Duration::from_millis(lease_ms)).await.map(|_| ()),
                    _ => w.queue.release(&lease).await.map(|_| ()),
                };
                if let Err(e) = result {
                    prop_assert!(
                        typed_refusal(&e) || matches!(e, QueueError::LeaseLost { .. }),
                        "{}: {:?}", call, e
                    );
                    prop_assert_eq!(&digest(&w.client).await, &before, "{} refused yet wrote", call);
                }
            }
            let broken = history::check_namespace(&w.client, w.queue.namespace()).await;
            prop_assert!(broken.is_empty(), "{:?}", broken);
            Ok(())
        })?;
    }

    /// Any cron string and time zone: parsed or refused, never a panic; a
    /// parsed expression yields increasing future times; a schedule stored
    /// from it is accepted whole or refused with nothing written.
    #[test]
    fn any_cron_string_parses_or_is_refused(
        expression in prop_oneof![
            "\\PC{0,40}",
            "([0-9*/,-]{1,6} ){4,6}[0-9*/,-]{1,6}",
            Just("* * * * *".to_owned()),
            Just("0 0 31 2 *".to_owned()),
            Just("@hourly".to_owned()),
            Just("*/0 * * * *".to_owned()),
            Just("60 24 32 13 8".to_owned()),
            (100usize..400).prop_map(|n| "*".repeat(n)),
        ],
        timezone in prop_oneof![Just("UTC".to_owned()), Just("Europe/Paris".to_owned()), nasty_text()],
        name in prop_oneof![Just("s".to_owned()), nasty_text()],
    ) {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let now = SystemTime::now();
        if let Ok(cron) = CronExpr::parse(&expression, &timezone) {
            let times = cron.upcoming(now, 3);
            prop_assert!(times.windows(2).all(|t| t[0] < t[1]), "{:?}", times);
            prop_assert!(times.iter().all(|t| *t > now));
        }
        let w = WORLD.with(Rc::clone);
        w.rt.block_on(async {
            let before = digest(&w.client).await;
            let schedule = Schedule::new(name.clone(), "q", expression.clone()).timezone(timezone.clone());
            if let Err(e) = w.queue.upsert_schedule(schedule).await {
                prop_assert!(typed_refusal(&e), "schedule: {e:?}");
                prop_assert_eq!(digest(&w.client).await, before);
            } else {
                let _ = w.queue.delete_schedule(&name).await;
            }
            Ok(())
        })?;
    }

    /// Every queue script straight through EVALSHA with hostile ARGV: a
    /// reply, or a typed `ERR redq:` refusal that wrote nothing.
    #[test]
    fn every_script_refuses_hostile_argv_with_a_typed_error_and_no_write(
        script in 0usize..lua::QUEUE_SCRIPTS.len(),
        queue in prop_oneof![4 => Just("q".to_owned()), 1 => nasty_text()],
        argv in proptest::collection::vec(hostile_arg(), 0..16),
    ) {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let w = WORLD.with(Rc::clone);
        w.rt.block_on(async {
            let (name, source) = lua::QUEUE_SCRIPTS[script];
            let sha = lua::load(&w.client, &lua::compose(source)).await;
            seed_jobs(&w).await;
            let before = digest(&w.client).await;
            let args: Vec<Value> = argv.iter().map(|a| Value::from(a.clone())).collect();
            match lua::evalsha(&w.client, &sha, w.queue.namespace(), &queue, &args).await {
                Ok(_) => {
                    let broken = history::check_namespace(&w.client, w.queue.namespace()).await;
                    prop_assert!(broken.is_empty(), "{name} {argv:?} left {broken:?}");
                }
                Err(e) => {
                    let text = e.details().to_owned();
                    prop_assert!(text.contains("redq: "), "{name} {argv:?}: untyped error {text}");
                    prop_assert_eq!(digest(&w.client).await, before, "{} {:?} wrote before failing", name, argv);
                }
            }
            Ok(())
        })?;
    }
}

/// Arguments that break naive number and text handling in Lua.
fn hostile_arg() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop_oneof![
            Just("nan"), Just("-nan"), Just("inf"), Just("-inf"), Just("1e999"), Just("1e3"),
            Just("9007199254740993"), Just("9007199254740992"), Just("18446744073709551616"),
            Just("-1"), Just("0"), Just("1"), Just("2"), Just("1000"), Just("1001"), Just(""),
            Just(" 12"), Just("12 "), Just("0x10"), Just("1.5"), Just("+1"), Just("00000000000000001"),
            Just("01ARZ3NDEKTSV4RRFFQ69G5FAV"), Just("waiting"), Just("dead"), Just("{}"), Just("\n"),
        ]
        .prop_map(str::to_owned),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "\\PC{0,12}",
        1 => (1usize..200_000).prop_map(|n| "9".repeat(n)),
    ]
}

/// Keeps a few jobs in every state around, so scripts have something to
/// act on (and to half-write, if they could).
async fn seed_jobs(w: &World) {
    let counts = w.queue.counts("q").await.unwrap();
    if counts.waiting + counts.leased + counts.dead + counts.blocked >= 6 {
        return;
    }
    let jobs = vec![
        NewJob::new(serde_json::json!(1)),
        NewJob::new(serde_json::json!(2)).ordering_key("o"),
        NewJob::new(serde_json::json!(3)).ordering_key("o"),
        NewJob::new(serde_json::json!(4)).dedup_key("d"),
        NewJob::new(serde_json::json!(5)).delay(Duration::from_secs(3600)),
        NewJob::new(serde_json::json!(6)),
    ];
    w.queue.add_batch("q", jobs).await.unwrap();
    let held = w
        .queue
        .claim("q", 2, Duration::from_secs(3600))
        .await
        .unwrap();
    if let Some(job) = held.first() {
        w.queue.dead_letter(&job.lease(), "seeded").await.unwrap();
    }
}

/// The per-thread world the properties run in is usable as they use it:
/// the raw client reads (DEBUG DIGEST) the world's own server, which the
/// queue writes, and a job round-trips through the queue.
#[test]
fn the_worlds_client_sees_what_its_queue_writes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = WORLD.with(Rc::clone);
    w.rt.block_on(async {
        let before = digest(&w.client).await;
        let added = w
            .queue
            .add("world", NewJob::new(serde_json::json!(1)))
            .await
            .unwrap();
        assert_ne!(digest(&w.client).await, before, "the client saw no write");
        // ... and that server is the world's own private one.
        let own: String = w.server.cmd(&["DEBUG", "DIGEST"]).await.convert().unwrap();
        assert_eq!(
            own,
            digest(&w.client).await,
            "the client is on another server"
        );
        let claimed = w
            .queue
            .claim("world", 1, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].id, added.id());
        w.queue.ack(&claimed[0].lease()).await.unwrap();
    });
}

/// Found by `any_job_is_accepted_whole_or_refused_with_a_typed_error`:
/// serde_json's default float parser read this back one ulp off, so a
/// claimed payload differed from the enqueued one. The workspace now
/// enables serde_json's `float_roundtrip`.
#[test]
fn a_float_payload_reads_back_exactly() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = WORLD.with(Rc::clone);
    w.rt.block_on(async {
        let payload = serde_json::json!({ "": -9.817587185814017e27, "x": 0.1 + 0.2 });
        let added = w
            .queue
            .add("floats", NewJob::new(payload.clone()))
            .await
            .unwrap();
        let record = w.queue.inspect(added.id()).await.unwrap().unwrap();
        assert_eq!(record.payload, payload);
        let claimed = w
            .queue
            .claim("floats", 1, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(claimed[0].payload, payload);
        w.queue.ack(&claimed[0].lease()).await.unwrap();
    });
}
