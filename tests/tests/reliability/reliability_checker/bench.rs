//! The test bench: a server with a MONITOR, two raw clients, and the
//! fenced calls they lack.

use std::time::{Duration, Instant};

use fred::clients::Client;
use fred::interfaces::LuaInterface;
use fred::types::Value;
use redq_tests::history::raw::RawQueue;
use redq_tests::history::record::{Call, Reply};
use redq_tests::history::{self, Expect, JobSpec, Recorder, Report, ServerLog};
use redq_tests::lua::{self};
use redq_tests::{unique_namespace, RedisServer};

pub const QUEUE: &str = "q";

/// A server, a namespace, a MONITOR on it, and two raw clients: `a` with
/// the shipped scripts and `b` with `overrides` (or the shipped ones).
pub struct Bench {
    pub server: RedisServer,
    pub ns: String,
    pub log: ServerLog,
    pub a: RawQueue,
    pub b: RawQueue,
}

impl Bench {
    pub async fn new(overrides: &[(&str, String)]) -> Bench {
        let server = RedisServer::start();
        let ns = unique_namespace("checker");
        let log = ServerLog::start(server.port(), None).await;
        let a = RawQueue::new(server.client().await, &ns, QUEUE, Recorder::new(1), &[]).await;
        let b = RawQueue::new(
            server.client().await,
            &ns,
            QUEUE,
            Recorder::new(2),
            overrides,
        )
        .await;
        Bench {
            server,
            ns,
            log,
            a,
            b,
        }
    }

    /// Extend and release for `q`, with `overrides` in place of the shipped
    /// scripts.
    pub async fn fenced(&self, q: &RawQueue, overrides: &[(&str, String)]) -> Fenced {
        Fenced::new(
            self.server.client().await,
            &self.ns,
            q.recorder.clone(),
            overrides,
        )
        .await
    }

    /// Waits until the Redis clock has passed `at_ms`: a lease that expires
    /// at `at_ms` has then lapsed, a call now applies after `at_ms`.
    pub async fn until_redis_past(&self, at_ms: u64) {
        let client = self.server.client().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now_ms: u64 = client
                .eval(
                    "local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)",
                    Vec::<String>::new(),
                    Vec::<String>::new(),
                )
                .await
                .expect("the Redis clock");
            if now_ms > at_ms {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the Redis clock did not pass {at_ms} ms within 10 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub async fn finish(self, expect: Expect) -> Report {
        let mut entries = self.a.recorder.entries();
        entries.extend(self.b.recorder.entries());
        let client = self.server.client().await;
        let report = history::finish(
            &client,
            &self.ns,
            self.server.port(),
            None,
            Some(self.log),
            &entries,
            expect,
        )
        .await;
        println!("{report}");
        report
    }
}

/// Extend and release (which [`RawQueue`] does not call), run with
/// `EVALSHA` and recorded in a raw client's recorder like its own calls.
pub struct Fenced {
    client: Client,
    ns: String,
    extend: String,
    release: String,
    recorder: Recorder,
}

pub fn s(v: impl ToString) -> Value {
    Value::from(v.to_string())
}

pub fn int(v: &Value) -> i64 {
    match v {
        Value::Integer(n) => *n,
        other => other.as_string().and_then(|t| t.parse().ok()).unwrap_or(0),
    }
}

impl Fenced {
    pub async fn new(
        client: Client,
        ns: &str,
        recorder: Recorder,
        overrides: &[(&str, String)],
    ) -> Fenced {
        let mut shas = Vec::new();
        for name in ["extend", "release"] {
            let sha = match overrides.iter().find(|(n, _)| *n == name) {
                Some((_, body)) => lua::load_named(&client, name, body).await,
                None => lua::load(&client, &lua::compose(lua::source(name))).await,
            };
            shas.push(sha);
        }
        let release = shas.pop().unwrap();
        let extend = shas.pop().unwrap();
        Fenced {
            client,
            ns: ns.to_owned(),
            extend,
            release,
            recorder,
        }
    }

    pub async fn extend(&self, id: &str, lease: u64, lease_ms: u64) -> Reply {
        let seq = self.recorder.invoke(Call::Extend {
            id: id.to_owned(),
            lease,
            lease_ms,
        });
        let args = [s(id), s(lease), s(lease_ms)];
        let reply = match lua::evalsha(&self.client, &self.extend, &self.ns, QUEUE, &args).await {
            Ok(Value::Array(f)) if int(&f[0]) == 1 => Reply::Extended {
                expiry_ms: int(&f[1]) as u64,
            },
            Ok(_) => Reply::LeaseLost,
            Err(e) => Reply::Failed {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
    }

    pub async fn release(&self, id: &str, lease: u64) -> Reply {
        self.release_with(id, lease, &[]).await
    }

    /// A release that pushes the job's limiter back `ms` (a remote's 429).
    pub async fn release_pushing_back(&self, id: &str, lease: u64, ms: u64) -> Reply {
        self.release_with(id, lease, &[s(ms)]).await
    }

    async fn release_with(&self, id: &str, lease: u64, extra: &[Value]) -> Reply {
        let seq = self.recorder.invoke(Call::Release {
            id: id.to_owned(),
            lease,
        });
        let mut args = vec![s(id), s(lease)];
        args.extend(extra.iter().cloned());
        let reply = match lua::evalsha(&self.client, &self.release, &self.ns, QUEUE, &args).await {
            Ok(v) if int(&v) == 1 || int(&v) == 2 => Reply::Released,
            Ok(_) => Reply::LeaseLost,
            Err(e) => Reply::Failed {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
    }
}

pub fn drained() -> Expect {
    Expect {
        drained: true,
        no_requeue: true,
    }
}

pub fn job(tag: &str) -> JobSpec {
    JobSpec::new(tag)
}
