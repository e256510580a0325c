//! A recorded client that calls the scripts directly with `EVALSHA`, so a
//! test can swap a script for a deliberately broken variant (built with
//! [`crate::lua::patched`]) and show that the checker catches the breakage.
//! It records the same calls and replies as [`super::RecordingQueue`].

use std::collections::HashMap;

use fred::clients::Client;
use fred::interfaces::HashesInterface;
use fred::types::Value;

use super::meta::Meta;
use super::record::{tag_of, Call, Claimed, JobSpec, Recorder, Reply};
use crate::lua;

/// A client of one queue that runs (possibly patched) scripts itself.
pub struct RawQueue {
    client: Client,
    ns: String,
    queue: String,
    shas: HashMap<String, String>,
    pub recorder: Recorder,
    node: u64,
    instance: u32,
    /// enqueue.lua's record format argument ("", "compact" or
    /// "detached:1"), which gate_seal.lua takes too.
    record_format: &'static str,
}

/// A job as a claim (or a park's hand-off) recorded it: its lease from
/// the record's meta, its tag from the payload.
fn claimed(id: String, meta: Meta, payload: &[u8]) -> Claimed {
    let payload: serde_json::Value = serde_json::from_slice(payload).unwrap_or_default();
    Claimed {
        id,
        tag: tag_of(&payload),
        lease: meta.lease_id,
        attempts: meta.attempts as u32,
        expiry_ms: meta.lease_expiry,
        ordering_key: meta.ordering_key,
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.to_vec(),
        Value::String(s) => s.to_string().into_bytes(),
        Value::Integer(n) => n.to_string().into_bytes(),
        _ => Vec::new(),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Integer(n) => *n,
        other => String::from_utf8_lossy(&bytes(other)).parse().unwrap_or(0),
    }
}

fn s(v: impl ToString) -> Value {
    Value::from(v.to_string())
}

/// The enqueue entries of job `id` made from `spec` (payload `{"tag": …}`).
fn job_fields(id: &str, spec: &JobSpec) -> Vec<Value> {
    let payload = serde_json::json!({ "tag": spec.tag }).to_string();
    lua::EnqueueJob {
        id,
        payload: &payload,
        priority: 0,
        delay_ms: 0,
        dedup_key: "",
        ordering_key: &spec.ordering_key,
        max_attempts: spec.max_attempts,
        backoff_base_ms: spec.reclaim_backoff_ms.0,
        backoff_cap_ms: spec.reclaim_backoff_ms.1,
        limit_key: &spec.limit_key,
    }
    .argv()
}

#[path = "raw_workflow.rs"]
mod workflow;
pub use workflow::WaiterSpec;

impl RawQueue {
    /// Loads the shipped scripts, then `overrides` (name, body) in their place.
    pub async fn new(
        client: Client,
        ns: &str,
        queue: &str,
        recorder: Recorder,
        overrides: &[(&str, String)],
    ) -> RawQueue {
        let mut shas = HashMap::new();
        for (name, source) in lua::QUEUE_SCRIPTS.iter().copied() {
            shas.insert(
                name.to_owned(),
                lua::load(&client, &lua::compose(source)).await,
            );
        }
        for (name, body) in overrides {
            shas.insert(
                (*name).to_owned(),
                lua::load_named(&client, name, body).await,
            );
        }
        RawQueue {
            client,
            ns: ns.to_owned(),
            queue: queue.to_owned(),
            shas,
            recorder,
            node: rand::random::<u32>() as u64,
            instance: 1,
            record_format: "",
        }
    }

    /// From now on this queue's enqueues ask for compact records
    /// (`lua/lib/job_record.lua`), as a driver in a compact namespace does.
    pub fn write_compact(&mut self) {
        self.record_format = "compact";
    }

    /// From now on this queue's enqueues store every payload detached
    /// (`lua/lib/job_record.lua`), as a driver in a namespace of format
    /// `detached:1` does.
    pub fn write_detached(&mut self) {
        self.record_format = "detached:1";
    }

    async fn run(&self, script: &str, args: Vec<Value>) -> Result<Value, fred::error::Error> {
        lua::evalsha(
            &self.client,
            &self.shas[script],
            &self.ns,
            &self.queue,
            &args,
        )
        .await
    }

    /// Enqueues `specs` in one script call; returns the created ids.
    pub async fn enqueue(&self, specs: &[JobSpec]) -> Vec<String> {
        self.enqueue_into(specs, "", "").await
    }

    /// [`RawQueue::enqueue`] as members of gate `gate` of `kind` (`batch` |
    /// `tree`; both "" for none).
    pub async fn enqueue_into(&self, specs: &[JobSpec], gate: &str, kind: &str) -> Vec<String> {
        let ids: Vec<String> = specs
            .iter()
            .map(|_| ulid::Ulid::new().to_string())
            .collect();
        self.enqueue_as(specs, &ids, gate, kind).await;
        ids
    }

    /// Sends the enqueue of `specs` under `ids` again, as fred resends a call
    /// in flight when its connection drops: the script finds its jobs and
    /// creates nothing. Returns the ids the reply names.
    pub async fn resend_enqueue(&self, specs: &[JobSpec], ids: &[String]) -> Vec<String> {
        self.enqueue_as(specs, ids, "", "").await
    }

    async fn enqueue_as(
        &self,
        specs: &[JobSpec],
        ids: &[String],
        gate: &str,
        kind: &str,
    ) -> Vec<String> {
        let seq = self.recorder.invoke(Call::Enqueue {
            queue: self.queue.clone(),
            tags: specs.iter().map(|j| j.tag.clone()).collect(),
            keys: specs.iter().map(|j| j.ordering_key.clone()).collect(),
        });
        let mut args = vec![
            s(1 << 20),
            s(specs.len()),
            s(gate),
            s(kind),
            s(self.record_format),
        ];
        for (spec, id) in specs.iter().zip(ids) {
            args.extend(job_fields(id, spec));
        }
        let reply = self.run("enqueue", args).await.expect("enqueue");
        let Value::Array(items) = reply else {
            panic!("enqueue reply {reply:?}")
        };
        let out: Vec<(String, bool)> = items
            .chunks(2)
            .map(|p| {
                (
                    String::from_utf8_lossy(&bytes(&p[1])).into_owned(),
                    int(&p[0]) != 0,
                )
            })
            .collect();
        let named = out.iter().map(|(id, _)| id.clone()).collect();
        self.recorder.complete(seq, Reply::Enqueued { ids: out });
        named
    }

    /// Claims up to `limit` jobs; `extra` is appended to ARGV (for variants
    /// that take more arguments, such as a client clock).
    pub async fn claim(&self, limit: usize, lease_ms: u64, extra: &[Value]) -> Vec<Claimed> {
        let seq = self.recorder.invoke(Call::Claim {
            queue: self.queue.clone(),
            limit,
            lease_ms,
        });
        let mut args = vec![s(limit), s(lease_ms), s(self.node), s(self.instance)];
        args.extend(extra.iter().cloned());
        let reply = self.run("claim", args).await.expect("claim");
        let Value::Array(items) = reply else {
            panic!("claim reply {reply:?}")
        };
        let mut jobs = Vec::new();
        // Per job: id, record (packed meta, then payload), or for a
        // detached record (lua/lib/lease.lua) the pair [meta, payload], or
        // [meta] alone with the payload left in {ns}:detached, read here as
        // the driver reads it (driver/src/leased.rs).
        for t in items[1..].chunks(2) {
            let id = String::from_utf8_lossy(&bytes(&t[0])).into_owned();
            let (record, detached) = match &t[1] {
                Value::Array(pair) if pair.len() == 1 => {
                    let apart: Option<Vec<u8>> = self
                        .client
                        .hget(format!("{{{}}}:detached", self.ns), id.as_str())
                        .await
                        .expect("HGET");
                    (bytes(&pair[0]), Some(apart.unwrap_or_default()))
                }
                Value::Array(pair) => (bytes(&pair[0]), Some(bytes(&pair[1]))),
                record => (bytes(record), None),
            };
            let (meta, payload) = Meta::split(&record).expect("claimed record");
            jobs.push(claimed(id, meta, detached.as_deref().unwrap_or(payload)));
        }
        self.recorder
            .complete(seq, Reply::Claimed { jobs: jobs.clone() });
        jobs
    }

    /// Parks this client's worker on the queue with room for `room` jobs
    /// (`park.lua`), recorded as the claim it stands for: the jobs waiting
    /// are handed over to it at once, leased. The hand-offs travel by
    /// pub/sub, which this client does not read; the jobs it was handed are
    /// read back from their records among `ids` (leased to this client).
    pub async fn park(&self, room: usize, lease_ms: u64, ids: &[String]) -> Vec<Claimed> {
        let args = vec![
            s(7),
            s(self.node),
            s(self.instance),
            s(lease_ms),
            s(room),
            s(5_000),
            s(1),
        ];
        self.read_back_claim(room, lease_ms, ids, Some(args)).await
    }

    /// The jobs among `ids` an enqueue handed to this client's park
    /// (`lib/handoff.lua`), recorded as the claim they stand for (of up to
    /// `room`, under `lease_ms`, as the park asked). As with [`Self::park`],
    /// the hand-offs travel by pub/sub and are read back from the records.
    pub async fn handed(&self, room: usize, lease_ms: u64, ids: &[String]) -> Vec<Claimed> {
        self.read_back_claim(room, lease_ms, ids, None).await
    }

    /// A claim of up to `room` jobs under `lease_ms`, recorded around the
    /// park `park_args` asks for (none: the jobs were handed earlier) and
    /// the read-back of the jobs among `ids` whose records say they are
    /// leased to this client.
    async fn read_back_claim(
        &self,
        room: usize,
        lease_ms: u64,
        ids: &[String],
        park_args: Option<Vec<Value>>,
    ) -> Vec<Claimed> {
        let seq = self.recorder.invoke(Call::Claim {
            queue: self.queue.clone(),
            limit: room,
            lease_ms,
        });
        if let Some(args) = park_args {
            self.run("park", args).await.expect("park");
        }
        let mut jobs = Vec::new();
        for id in ids {
            let raw: Option<Vec<u8>> = self
                .client
                .hget(format!("{{{}}}:jobs", self.ns), id.as_str())
                .await
                .expect("HGET");
            let Some(record) = raw else { continue };
            let (meta, payload) = Meta::split(&record).expect("a job record");
            if meta.lease_id == 0 || meta.worker_node != self.node.to_string() {
                continue;
            }
            // A detached record's payload is kept apart (lua/lib/job_record.lua).
            let detached: Option<Vec<u8>> = if payload.is_empty() {
                self.client
                    .hget(format!("{{{}}}:detached", self.ns), id.as_str())
                    .await
                    .expect("HGET")
            } else {
                None
            };
            jobs.push(claimed(
                id.clone(),
                meta,
                detached.as_deref().unwrap_or(payload),
            ));
        }
        self.recorder
            .complete(seq, Reply::Claimed { jobs: jobs.clone() });
        jobs
    }

    /// Acks one job under `lease`; returns the recorded reply.
    pub async fn ack(&self, id: &str, lease: u64) -> Reply {
        let seq = self.recorder.invoke(Call::Ack {
            id: id.to_owned(),
            lease,
        });
        let reply = match self.run("ack", vec![s(1), s(id), s(lease)]).await {
            Ok(Value::Array(codes)) => match codes.first().map(int) {
                Some(1) => Reply::Acked { completed: true },
                Some(0) => Reply::Acked { completed: false },
                Some(-2) => Reply::JobCancelled,
                _ => Reply::LeaseLost,
            },
            Ok(other) => Reply::Failed {
                error: format!("{other:?}"),
            },
            Err(e) => Reply::Failed {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
    }

    /// An operator's cancel of `id` (`cancel.lua`), recorded: the checker
    /// holds the job to it (never completed, never leased again).
    pub async fn cancel(&self, id: &str) -> Reply {
        let seq = self.recorder.invoke(Call::Cancel { id: id.to_owned() });
        let reply = match self.run("cancel", vec![s("checker"), s("id"), s(id)]).await {
            Ok(Value::Array(reply)) => match reply.first().map(int) {
                Some(code) => Reply::Cancel {
                    cancelled: code == 1 || code == 2,
                    completed_before: code == 3,
                },
                None => Reply::Failed {
                    error: "empty cancel reply".into(),
                },
            },
            Ok(other) => Reply::Failed {
                error: format!("{other:?}"),
            },
            Err(e) => Reply::Unknown {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
    }

    /// `note.lua`: the holder's progress for `id` under `lease` (not
    /// recorded as a client call: the checker reads it from the server
    /// record); its code (1 noted, -1 lease lost, -2 cancelled).
    pub async fn note(&self, id: &str, lease: u64, progress: &str) -> i64 {
        let args = vec![s(id), s(lease), s(progress), s("")];
        match self.run("note", args).await.expect("note") {
            Value::Array(reply) => int(&reply[0]),
            other => panic!("note reply {other:?}"),
        }
    }

    /// Operator surgery (not recorded as client calls: the checker reads
    /// its effects from the server record). `delete_job.lua` on one id;
    /// the job's code (1 deleted, 0 not found, -1 leased and not forced).
    pub async fn delete(&self, id: &str, force: bool) -> i64 {
        let args = vec![s(1), s(force as u8), s(""), s(""), s(id)];
        match self.run("delete_job", args).await.expect("delete_job") {
            Value::Array(reply) => int(&reply[3]),
            other => panic!("delete_job reply {other:?}"),
        }
    }

    /// `edit_job.lua`: replaces the payload of `id`; its code (1 edited,
    /// 0 not found, -1 leased).
    pub async fn edit(&self, id: &str, payload: &str) -> i64 {
        let args = vec![s(1 << 20), s(id), s(payload)];
        match self.run("edit_job", args).await.expect("edit_job") {
            Value::Array(reply) => int(&reply[0]),
            other => panic!("edit_job reply {other:?}"),
        }
    }

    /// `rewrite_records.lua`: a whole rewrite of the namespace's compact
    /// and detached records in the standard layout, as the driver's
    /// `rewrite_records` runs it (walk steps, then each step's detached
    /// records by id); how many records it rewrote. Not a recorded call:
    /// the checker reads its writes from the server record.
    pub async fn rewrite_records(&self) -> i64 {
        let (mut cursor, mut rewritten) = ("0".to_owned(), 0);
        loop {
            let args = vec![s("rewrite"), s(&cursor), s(500)];
            let Value::Array(step) = self
                .run("rewrite_records", args)
                .await
                .expect("rewrite walk")
            else {
                panic!("rewrite_records walk reply");
            };
            cursor = step[0].as_string().expect("the next cursor");
            rewritten += int(&step[2]);
            let ids: Vec<Value> = step[5..].to_vec();
            if !ids.is_empty() {
                let named = ids.len() as i64;
                let mut args = vec![s("ids"), s(1 << 22)];
                args.extend(ids);
                let Value::Array(done) = self
                    .run("rewrite_records", args)
                    .await
                    .expect("rewrite ids")
                else {
                    panic!("rewrite_records ids reply");
                };
                assert_eq!(int(&done[0]), named, "a test's payloads fit one call");
                rewritten += int(&done[1]);
            }
            if cursor == "0" {
                return rewritten;
            }
        }
    }

    /// `promote_job.lua` in promote mode on one id; its code (1 promoted,
    /// other codes: nothing changed).
    pub async fn promote(&self, id: &str) -> i64 {
        let args = vec![s("promote"), s(1), s(0), s(id)];
        match self.run("promote_job", args).await.expect("promote_job") {
            Value::Array(reply) => int(&reply[3]),
            other => panic!("promote_job reply {other:?}"),
        }
    }

    /// `dead_letter_job.lua`: the operator's dead-letter of job `id`; its
    /// code (1 dead-lettered, 0 not found, 3 leased, 4 dead, 8 awaiting).
    pub async fn dead_letter_job(&self, id: &str) -> i64 {
        let args = vec![s(id), s("set aside")];
        match self
            .run("dead_letter_job", args)
            .await
            .expect("dead_letter_job")
        {
            Value::Array(reply) => int(&reply[0]),
            other => panic!("dead_letter_job reply {other:?}"),
        }
    }

    /// `limits_set.lua`: sets `scope`'s limit ("queue", "each_key", or
    /// "key" with `key`): concurrency, rate max and rate interval (ms), 0
    /// for none. Not a recorded call: the checker reads the limits from the
    /// server record.
    pub async fn set_limit(&self, scope: &str, key: &str, spec: [u64; 3]) {
        let [concurrency, max, per] = spec;
        let args = vec![s(scope), s(key), s(concurrency), s(max), s(per)];
        self.run("limits_set", args).await.expect("limits_set");
    }

    /// Nacks one job under `lease` (retry after `delay_ms`, or dead).
    pub async fn nack(&self, id: &str, lease: u64, delay_ms: u64, dead: bool) -> Reply {
        let seq = self.recorder.invoke(Call::Nack {
            id: id.to_owned(),
            lease,
            delay_ms,
            dead,
        });
        let args = vec![s(id), s(lease), s(delay_ms), s("broken"), s(dead as u8)];
        let reply = match self.run("nack", args).await {
            Ok(Value::Array(f)) if int(&f[0]) == 1 || int(&f[0]) == 2 => Reply::Nacked {
                attempts: int(&f[1]) as u32,
                dead: int(&f[2]) == 1,
                due_ms: int(&f[3]) as u64,
            },
            Ok(_) => Reply::LeaseLost,
            Err(e) => Reply::Failed {
                error: e.to_string(),
            },
        };
        self.recorder.complete(seq, reply.clone());
        reply
    }
}
