//! `redq metrics` against a real Redis: started on port 0 (the address read
//! from its stderr), scraped over HTTP, the page parsed as the Prometheus
//! text format and every figure compared with what the driver's API says;
//! an outage (the server SIGKILLed) answers `redq_up 0` with a sentence; and
//! queues past `--max-queues` are summed under `queue="_other"`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use redq::events::EventStream;
use redq::{NewJob, RedisQueue, ShardedQueue};
use redq_tests::{unique_namespace, wait_until, RedisServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::seed::{connect, dead_letters};
use crate::spawned::Spawned;

const STARTUP: Duration = Duration::from_secs(20);

/// `GET /metrics` from the exporter at `addr`: the page's body, and how
/// long it took from the request to its last byte. Bounded, so a scrape
/// that hangs fails the test instead of stalling it.
pub(crate) async fn fetch_page(addr: &str) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_string(&mut raw))
        .await
        .expect("a scrape answered within 30 s")
        .unwrap();
    let took = started.elapsed();
    let (_, body) = raw.split_once("\r\n\r\n").expect("an HTTP response");
    (body.to_owned(), took)
}

/// A running exporter and where it serves.
pub(crate) struct Exporter {
    process: Spawned,
    addr: String,
}

impl Exporter {
    /// Where it serves (`host:port`).
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    pub(crate) async fn start(url: &str, namespace: &str, extra: &[&str]) -> Exporter {
        let mut args = vec!["metrics", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut process = Spawned::start(url, namespace, &args);
        let line = process.stderr_line("serving http://", STARTUP).await;
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        Exporter { process, addr }
    }

    /// GET `path`: the status code, the headers (lowercased names) and the body.
    async fn get(&self, path: &str) -> (u16, BTreeMap<String, String>, String) {
        let mut stream = tokio::net::TcpStream::connect(&self.addr).await.unwrap();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).await.unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP response");
        let mut lines = head.lines();
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
            .collect();
        (status, headers, body.to_owned())
    }

    pub(crate) async fn scrape(&self) -> Page {
        let (status, headers, body) = self.get("/metrics").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            headers.get("content-type").map(String::as_str),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        Page::parse(&body)
    }
}

/// One family as parsed: help, type and samples (labels → value).
#[derive(Debug, Default)]
struct Parsed {
    help: String,
    kind: String,
    samples: Vec<(BTreeMap<String, String>, f64)>,
}

/// A scraped page in the Prometheus text format.
#[derive(Debug)]
pub(crate) struct Page {
    text: String,
    comments: Vec<String>,
    families: BTreeMap<String, Parsed>,
}

impl Page {
    fn parse(text: &str) -> Page {
        let mut comments = Vec::new();
        let mut families: BTreeMap<String, Parsed> = BTreeMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, help) = rest.split_once(' ').unwrap();
                families.entry(name.into()).or_default().help = help.into();
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                let family = families.entry(name.into()).or_default();
                assert!(family.samples.is_empty(), "TYPE after samples of {name}");
                family.kind = kind.into();
            } else if let Some(comment) = line.strip_prefix("# ") {
                comments.push(comment.into());
            } else if !line.is_empty() {
                let (mut name, mut labels, value) = sample(line);
                // A histogram's `_bucket`, `_sum` and `_count` samples belong
                // to its family; the suffix is kept as the label `__suffix`.
                for suffix in ["_bucket", "_sum", "_count"] {
                    if let Some(base) = name.strip_suffix(suffix) {
                        if !families.contains_key(&name) && families.contains_key(base) {
                            labels.insert("__suffix".into(), suffix.into());
                            name = base.to_owned();
                            break;
                        }
                    }
                }
                let family = families
                    .get_mut(&name)
                    .unwrap_or_else(|| panic!("sample before HELP/TYPE: {line}"));
                family.samples.push((labels, value));
            }
        }
        Page {
            text: text.into(),
            comments,
            families,
        }
    }

    fn family(&self, name: &str) -> &Parsed {
        self.families
            .get(name)
            .unwrap_or_else(|| panic!("no family {name} in:\n{}", self.text))
    }

    /// Whether the page has a family `name`.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.families.contains_key(name)
    }

    /// The value of `name` with exactly these labels.
    pub(crate) fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let want: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.family(name)
            .samples
            .iter()
            .find(|(l, _)| *l == want)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no sample {name}{labels:?} in:\n{}", self.text))
    }

    /// Every `queue` label value on the page.
    fn queue_labels(&self) -> std::collections::BTreeSet<String> {
        self.families
            .values()
            .flat_map(|f| {
                f.samples
                    .iter()
                    .filter_map(|(l, _)| l.get("queue").cloned())
            })
            .collect()
    }
}

/// `name{a="x",b="y"} value` with the format's escapes in label values.
fn sample(line: &str) -> (String, BTreeMap<String, String>, f64) {
    let mut labels = BTreeMap::new();
    let (name, rest) = match line.find('{') {
        None => {
            let (name, value) = line.split_once(' ').unwrap();
            return (name.into(), labels, value.parse().unwrap());
        }
        Some(open) => (&line[..open], &line[open + 1..]),
    };
    let mut chars = rest.chars();
    loop {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        assert_eq!(chars.next(), Some('"'), "in {line}");
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(other) => value.push(other),
                    None => panic!("dangling escape in {line}"),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        labels.insert(key, value);
        match chars.next() {
            Some(',') => continue,
            Some('}') => break,
            other => panic!("unexpected {other:?} in {line}"),
        }
    }
    let value: String = chars.collect();
    (name.into(), labels, value.trim().parse().unwrap())
}

/// Every family the endpoint serves with a reading, and its type.
const FAMILIES: [(&str, &str); 27] = [
    ("redq_up", "gauge"),
    ("redq_scrape_errors_total", "counter"),
    ("redq_scrape_duration_seconds", "gauge"),
    ("redq_queues", "gauge"),
    ("redq_workers", "gauge"),
    ("redq_workers_by_wake_ups", "gauge"),
    ("redq_event_history_seconds", "gauge"),
    ("redq_jobs", "gauge"),
    ("redq_due_jobs", "gauge"),
    ("redq_lapsed_leases", "gauge"),
    ("redq_queue_paused", "gauge"),
    ("redq_queue_metrics_off", "gauge"),
    ("redq_oldest_job_age_seconds", "gauge"),
    ("redq_processed_last_minute", "gauge"),
    ("redq_failed_last_minute", "gauge"),
    ("redq_processed_last_15_minutes", "gauge"),
    ("redq_failed_last_15_minutes", "gauge"),
    ("redq_queue_workers", "gauge"),
    ("redq_jobs_completed_total", "counter"),
    ("redq_jobs_retried_total", "counter"),
    ("redq_jobs_dead_lettered_total", "counter"),
    ("redq_jobs_cancelled_total", "counter"),
    ("redq_jobs_reclaimed_total", "counter"),
    ("redq_handoffs_lost_total", "counter"),
    ("redq_claims_lost_total", "counter"),
    ("redq_job_wait_seconds", "histogram"),
    ("redq_job_run_seconds", "histogram"),
];

/// A small namespace: waiting, scheduled (one past its time that no claim
/// moved), leased (one lapsed), dead, a completion, a paused queue, and a
/// queue with its metrics off.
async fn small_namespace(q: &RedisQueue) {
    for to in ["ada", "bob"] {
        q.add("emails", NewJob::new(serde_json::json!({ "to": to })))
            .await
            .unwrap();
    }
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "later"})).delay(Duration::from_secs(600)),
    )
    .await
    .unwrap();
    q.add(
        "emails",
        NewJob::new(serde_json::json!({"to": "cy"})).priority(9),
    )
    .await
    .unwrap();
    let done = q.claim("emails", 1, Duration::from_secs(60)).await.unwrap();
    q.ack(&done[0].lease()).await.unwrap();
    q.add("reports", NewJob::new(serde_json::json!({"r": 1})))
        .await
        .unwrap();
    let lapsing = q
        .claim("reports", 1, Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(lapsing.len(), 1);
    wait_until(
        Duration::from_secs(5),
        "the reports lease to lapse",
        async || q.counts("reports").await.unwrap().lapsed == 1,
    )
    .await;
    q.add(
        "reports",
        NewJob::new(serde_json::json!({"r": 2})).delay(Duration::from_millis(50)),
    )
    .await
    .unwrap();
    wait_until(
        Duration::from_secs(5),
        "the delayed report to come due",
        async || q.counts("reports").await.unwrap().due == 1,
    )
    .await;
    dead_letters(q, "webhooks", 2, "HTTP 503 from upstream").await;
    q.pause("webhooks").await.unwrap();
    q.set_metrics_recording("reports", false).await.unwrap();
}

#[tokio::test]
async fn a_scrape_shows_what_the_operator_api_says() {
    let server = RedisServer::builder().password("metrics-s3cret").start();
    let url = server.url_with_password();
    let ns = unique_namespace("metrics_api");
    let q = connect(&url, &ns).await;
    small_namespace(&q).await;
    let exporter = Exporter::start(&url, &ns, &[]).await;

    let before = SystemTime::now();
    let operator = q.operator();
    let mut history_before = Vec::new();
    for stream in EventStream::BOTH {
        history_before.push(operator.event_history(stream).await.unwrap().unwrap());
    }
    let page = exporter.scrape().await;
    for (name, kind) in FAMILIES {
        let family = page.family(name);
        assert_eq!(family.kind, kind, "{name}");
        assert!(
            family.help.len() > 20,
            "{name} has a help text: {:?}",
            family.help
        );
        assert!(!family.samples.is_empty(), "{name} has samples");
    }
    assert_eq!(page.value("redq_up", &[]), 1.0);
    assert_eq!(page.value("redq_scrape_errors_total", &[]), 0.0);
    let queues = operator.queues().await.unwrap();
    assert_eq!(queues, ["emails", "reports", "webhooks"]);
    assert_eq!(page.value("redq_queues", &[]), 3.0);
    assert_eq!(
        page.value("redq_workers", &[]),
        q.workers().await.unwrap().len() as f64
    );
    for queue in &queues {
        let c = operator.counts(queue).await.unwrap();
        let sizes = [
            ("waiting", c.waiting),
            ("scheduled", c.scheduled),
            ("leased", c.leased),
            ("dead", c.dead),
            ("blocked", c.blocked),
            ("held", c.held),
            ("completed", c.completed),
            ("cancelled", c.cancelled),
        ];
        for (state, size) in sizes {
            let got = page.value("redq_jobs", &[("queue", queue), ("state", state)]);
            assert_eq!(got, size as f64, "{queue} {state}");
        }
        let one = [("queue", queue.as_str())];
        assert_eq!(
            page.value("redq_lapsed_leases", &one),
            c.lapsed as f64,
            "{queue}"
        );
        assert_eq!(
            page.value("redq_queue_paused", &one),
            f64::from(u8::from(c.paused))
        );
        assert_eq!(page.value("redq_due_jobs", &one), c.due as f64, "{queue}");
        let recording = operator.metrics_recording(queue).await.unwrap();
        assert_eq!(
            page.value("redq_queue_metrics_off", &one),
            f64::from(u8::from(!recording.is_on())),
            "{queue}"
        );
        // The longest-ready job's age grows between the scrape and this
        // read: the scrape's lies between 0 and the age read now (Redis
        // clock). A due job no claim moved counts (reports).
        let age = page.value("redq_oldest_job_age_seconds", &one);
        match c.ready_since() {
            Some(at) => {
                let now_age = c.now.duration_since(at).unwrap().as_secs_f64();
                assert!(age > 0.0 && age <= now_age, "{queue}: {age} vs {now_age}");
            }
            None => assert_eq!(age, 0.0, "{queue}"),
        }
        // Everything happened within the last minute.
        let stats = operator.stats(queue).await.unwrap();
        let processed: u64 = stats.iter().map(|b| b.processed).sum();
        let failed: u64 = stats.iter().map(|b| b.failed).sum();
        for window in ["last_minute", "last_15_minutes"] {
            let p = page.value(&format!("redq_processed_{window}"), &one);
            let f = page.value(&format!("redq_failed_{window}"), &one);
            assert_eq!(
                (p, f),
                (processed as f64, failed as f64),
                "{queue} {window}"
            );
        }
        assert_eq!(page.value("redq_queue_workers", &one), 0.0);
    }
    // The figures the namespace was built to have, said once more plainly.
    assert_eq!(
        page.value("redq_jobs", &[("queue", "emails"), ("state", "waiting")]),
        2.0
    );
    assert_eq!(
        page.value("redq_jobs", &[("queue", "emails"), ("state", "scheduled")]),
        1.0
    );
    assert_eq!(
        page.value("redq_jobs", &[("queue", "reports"), ("state", "leased")]),
        1.0
    );
    assert_eq!(
        page.value("redq_lapsed_leases", &[("queue", "reports")]),
        1.0
    );
    assert_eq!(page.value("redq_due_jobs", &[("queue", "reports")]), 1.0);
    assert!(page.value("redq_oldest_job_age_seconds", &[("queue", "reports")]) > 0.0);
    assert_eq!(
        page.value("redq_jobs", &[("queue", "webhooks"), ("state", "dead")]),
        2.0
    );
    assert_eq!(
        page.value("redq_queue_paused", &[("queue", "webhooks")]),
        1.0
    );
    assert_eq!(
        page.value("redq_queue_metrics_off", &[("queue", "reports")]),
        1.0
    );
    assert_eq!(
        page.value("redq_queue_metrics_off", &[("queue", "emails")]),
        0.0
    );
    assert_eq!(
        page.value("redq_processed_last_minute", &[("queue", "emails")]),
        1.0
    );
    assert_eq!(
        page.value("redq_failed_last_minute", &[("queue", "webhooks")]),
        2.0
    );
    let age = page.value("redq_oldest_job_age_seconds", &[("queue", "emails")]);
    assert!(age <= before.elapsed().unwrap().as_secs_f64() + 60.0);
    // Both event streams hold what small_namespace did: each reaches back
    // to its oldest entry, further than the driver read just before the
    // scrape and no further than it reads after.
    for (stream, read_before) in EventStream::BOTH.into_iter().zip(history_before) {
        let label = stream.as_str();
        let reach = page.value("redq_event_history_seconds", &[("stream", label)]);
        let read_after = operator.event_history(stream).await.unwrap().unwrap();
        assert!(
            read_before.as_secs_f64() - 0.001 <= reach && reach <= read_after.as_secs_f64() + 0.001,
            "{label}: {reach} s, the driver read {read_before:?} before, {read_after:?} after"
        );
    }
    assert!(!page.text.contains("metrics-s3cret"), "{}", page.text);
    assert!(exporter
        .process
        .stderr_seen
        .iter()
        .all(|l| !l.contains("metrics-s3cret")));

    // Only /metrics is served.
    let (status, _, body) = exporter.get("/").await;
    assert_eq!(
        (status, body.as_str()),
        (404, "not found: the metrics are at /metrics\n")
    );
}

#[tokio::test]
async fn an_outage_answers_redq_up_0_with_a_sentence_and_recovers() {
    let mut server = RedisServer::builder().password("outage-s3cret").start();
    let url = server.url_with_password();
    let ns = unique_namespace("metrics_outage");
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    let exporter = Exporter::start(&url, &ns, &[]).await;
    assert_eq!(exporter.scrape().await.value("redq_up", &[]), 1.0);

    server.kill9();
    let page = exporter.scrape().await;
    assert_eq!(page.value("redq_up", &[]), 0.0);
    assert_eq!(page.value("redq_scrape_errors_total", &[]), 1.0);
    assert!(
        !page.families.contains_key("redq_jobs"),
        "no figures made up:\n{}",
        page.text
    );
    let reason = page
        .comments
        .first()
        .unwrap_or_else(|| panic!("no reason in:\n{}", page.text));
    let plain_url = format!("redis://127.0.0.1:{}", server.port());
    assert!(
        reason.starts_with(&format!(
            "redq could not read Redis at {plain_url} (namespace {ns}): Redis "
        )),
        "{reason}"
    );
    for debug in ["Error {", "kind:", "details:", "Some(", "outage-s3cret"] {
        assert!(!page.text.contains(debug), "{debug} in:\n{}", page.text);
    }

    server.restart();
    wait_until(
        Duration::from_secs(30),
        "the exporter to read Redis again",
        async || exporter.scrape().await.value("redq_up", &[]) == 1.0,
    )
    .await;
    let page = exporter.scrape().await;
    assert_eq!(
        page.value("redq_scrape_errors_total", &[]),
        1.0,
        "a counter: kept"
    );
    // No reason any more; Redis restarted without its data, so the
    // namespace has no queues and the page says that instead.
    assert!(
        page.comments
            .iter()
            .all(|c| c.starts_with("redq: no queues in namespace ")),
        "{}",
        page.text
    );
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Idle {}

impl redq::worker::TypedJob for Idle {
    const NAME: &'static str = "idle";
    const QUEUE: &'static str = "q4";
    async fn run(&self, _cx: &redq::worker::JobCx) -> Result<(), redq::worker::JobError> {
        Ok(())
    }
}

/// A worker that vanished stays listed, as gone, for ten minutes (`redq
/// workers` and the console show it so), but it is no live worker: an
/// alert on `redq_workers` must not wait those ten minutes.
#[tokio::test]
async fn a_gone_worker_is_not_counted_as_live() {
    let server = RedisServer::start();
    let ns = unique_namespace("metrics_gone");
    let q = connect(&server.url(), &ns).await;
    q.add("reports", NewJob::new(serde_json::json!({ "r": 1 })))
        .await
        .unwrap();
    crate::seed::vanished_worker(&server, &ns, &["reports"], serde_json::json!({})).await;
    let listed = q.workers().await.unwrap();
    assert!(listed.len() == 1 && listed[0].gone, "{listed:?}");
    let exporter = Exporter::start(&server.url(), &ns, &[]).await;
    let page = exporter.scrape().await;
    assert_eq!(page.value("redq_workers", &[]), 0.0);
    assert_eq!(
        page.value("redq_queue_workers", &[("queue", "reports")]),
        0.0
    );
    assert_eq!(
        page.value("redq_workers_by_wake_ups", &[("wake_ups", "unknown")]),
        0.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_past_max_queues_are_summed_under_other() {
    let server = RedisServer::start();
    let ns = unique_namespace("metrics_cardinality");
    let q = connect(&server.url(), &ns).await;
    for (i, queue) in ["q0", "q1", "q2", "q3", "q4"].iter().enumerate() {
        for n in 0..=i {
            q.add(queue, NewJob::new(serde_json::json!({ "n": n })))
                .await
                .unwrap();
        }
    }
    // A worker on the paused q4 (so it claims nothing): counted once, and
    // under the label its queue was folded into.
    q.pause("q4").await.unwrap();
    q.set_metrics_recording("q3", false).await.unwrap();
    q.set_metrics_recording("q4", false).await.unwrap();
    let mut registry = redq::worker::Registry::new();
    registry.add_job::<Idle>();
    let options = redq::worker::WorkOptions::new()
        .queues(["q4"])
        .schedules(false);
    let worker =
        redq::worker::Worker::new(connect(&server.url(), &ns).await, registry, options).unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(worker.run(stop.clone()));
    wait_until(
        Duration::from_secs(10),
        "the worker to register",
        async || !q.workers().await.unwrap().is_empty(),
    )
    .await;
    let exporter = Exporter::start(&server.url(), &ns, &["--max-queues", "3"]).await;
    let page = exporter.scrape().await;
    assert_eq!(page.value("redq_queues", &[]), 5.0);
    let labels: Vec<String> = page.queue_labels().into_iter().collect();
    assert_eq!(labels, ["_other", "q0", "q1", "q2"]);
    let waiting = |queue| page.value("redq_jobs", &[("queue", queue), ("state", "waiting")]);
    assert_eq!(
        (waiting("q0"), waiting("q1"), waiting("q2")),
        (1.0, 2.0, 3.0)
    );
    assert_eq!(waiting("_other"), 4.0 + 5.0);
    assert_eq!(page.value("redq_queue_paused", &[("queue", "_other")]), 1.0);
    assert_eq!(
        page.value("redq_queue_metrics_off", &[("queue", "_other")]),
        2.0
    );
    assert_eq!(
        page.value("redq_queue_metrics_off", &[("queue", "q0")]),
        0.0
    );
    // Each family has one sample per label, no more.
    assert_eq!(page.family("redq_lapsed_leases").samples.len(), 4);
    assert_eq!(page.value("redq_workers", &[]), 1.0);
    // A worker of this version hears shard channels.
    for (word, count) in [
        ("shard", 1.0),
        ("plain", 0.0),
        ("polls", 0.0),
        ("unknown", 0.0),
    ] {
        assert_eq!(
            page.value("redq_workers_by_wake_ups", &[("wake_ups", word)]),
            count,
            "{word}"
        );
    }
    assert_eq!(
        page.value("redq_queue_workers", &[("queue", "_other")]),
        1.0
    );
    assert_eq!(page.value("redq_queue_workers", &[("queue", "q0")]), 0.0);
    stop.cancel();
    running.await.unwrap().unwrap();
}

#[tokio::test]
async fn with_shards_the_figures_are_summed_over_them() {
    let server = RedisServer::start();
    let base = unique_namespace("metrics_shards");
    let sharded = ShardedQueue::connect(RedisQueue::builder(&server.url()), &base, 3)
        .await
        .unwrap();
    for n in 0..12 {
        sharded
            .add("emails", NewJob::new(serde_json::json!({ "n": n })))
            .await
            .unwrap();
    }
    let exporter = Exporter::start(&server.url(), &base, &["--shards", "3"]).await;
    let page = exporter.scrape().await;
    let counts = sharded.operator().counts("emails").await.unwrap();
    assert_eq!(counts.waiting, 12);
    assert_eq!(
        page.value("redq_jobs", &[("queue", "emails"), ("state", "waiting")]),
        12.0
    );
}
