//! The job meta record (defined by the table `M` in `lua/lib/job_record.lua`),
//! decoded from the msgpack the scripts store, for readers that bypass the
//! driver: the structural check and the server-side transition log. Kept
//! independent of the driver's decoder on purpose (a checker should not
//! share the code it checks); the test below proves both read the same bytes
//! the same way, on records the real scripts wrote.
//!
//! A job's value in `{ns}:jobs` is the msgpack meta array immediately
//! followed by the payload bytes (JSON text), so the decoder reads exactly
//! one msgpack value and hands back whatever follows it.

/// The fields of one meta record that the checks look at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    pub queue: String,
    pub priority: u64,
    pub seq: u64,
    pub enqueued_at: u64,
    pub not_before: u64,
    pub attempts: u64,
    pub max_attempts: u64,
    pub retry_window: u64,
    pub dedup_key: String,
    pub dedup_ttl: u64,
    pub ordering_key: String,
    pub lease_id: u64,
    pub lease_expiry: u64,
    pub worker_node: String,
    pub worker_instance: u64,
    pub died_at: u64,
    /// Signed: a release records minus the lease id.
    pub resolved_lease: i64,
    /// A reclaim's backoff (ms): its first delay and its ceiling; 0 in a
    /// record of the older 19-field layout.
    pub backoff_base: u64,
    pub backoff_cap: u64,
    /// The limit key within the queue, "" = none (or an older layout).
    pub limit_key: String,
    /// The producer's W3C traceparent, "" = none (or an older layout).
    pub trace: String,
    /// The gate (workflow) the job was created into as a member, "" = none.
    pub gate: String,
    /// How many gates the job joined after its creation (as a dependency).
    pub more_gates: u64,
    /// The gate the job waits on, "" = none (kept after the decision).
    pub awaits: String,
}

impl Meta {
    /// Decodes the meta part of a record, ignoring the payload after it;
    /// `None` when it does not start with a compact record (3 to 5 fields)
    /// or a msgpack array of 19 to 27
    /// fields: 27 whole, the 24 of records written before workflows, the 23
    /// of records written before trace contexts, the 22 of records written
    /// before limit keys, the 19 of records written before the reclaim
    /// backoff, or any of those lengths for a lean record (its trailing
    /// fields at their defaults left out). A stored not_before of 0 is a
    /// lean record's "due when enqueued": it reads as enqueued_at.
    pub fn decode(raw: &[u8]) -> Option<Meta> {
        Meta::split(raw).map(|(meta, _)| meta)
    }

    /// Decodes the meta part of a record and returns it with the bytes that
    /// follow it: the payload (empty when the record has none).
    pub fn split(raw: &[u8]) -> Option<(Meta, &[u8])> {
        let mut rest = raw;
        // Reading one value advances `rest` past it, onto the payload.
        let value = rmpv::decode::read_value(&mut rest).ok()?;
        let rmpv::Value::Array(f) = value else {
            return None;
        };
        let compact = (3..=5).contains(&f.len());
        if !compact && !(19..=27).contains(&f.len()) {
            return None;
        }
        let int = |i: usize| -> i64 {
            match f.get(i) {
                None => 0,
                Some(v) => match v {
                    rmpv::Value::Integer(n) => n.as_i64().unwrap_or(i64::MAX),
                    rmpv::Value::F64(x) => *x as i64,
                    rmpv::Value::F32(x) => *x as i64,
                    _ => -1,
                },
            }
        };
        let num = |i: usize| int(i).max(0) as u64;
        let text = |i: usize| -> String {
            match f.get(i).unwrap_or(&rmpv::Value::Nil) {
                rmpv::Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                rmpv::Value::Binary(b) => String::from_utf8_lossy(b).into_owned(),
                rmpv::Value::Integer(n) => n.to_string(),
                _ => String::new(),
            }
        };
        if compact {
            // A compact record (COMPACT_FIELDS in lua/lib/job_record.lua):
            // queue, seq, enqueued_at, then name and max_attempts as far as
            // stored; a fresh job, not leased, due when enqueued.
            let meta = Meta {
                queue: text(0),
                seq: num(1),
                enqueued_at: num(2),
                not_before: num(2),
                max_attempts: num(4),
                ..Meta::default()
            };
            return Some((meta, rest));
        }
        // Positions as in lua/lib/job_record.lua's M, from 0.
        let meta = Meta {
            lease_id: num(0),
            lease_expiry: num(1),
            worker_node: text(2),
            worker_instance: num(3),
            queue: text(4),
            dedup_key: text(5),
            dedup_ttl: num(6),
            ordering_key: text(7),
            priority: num(8),
            seq: num(9),
            enqueued_at: num(10),
            not_before: match num(11) {
                0 => num(10),
                due => due,
            },
            attempts: num(12),
            max_attempts: num(13),
            retry_window: num(14),
            died_at: num(17),
            resolved_lease: int(18),
            backoff_base: num(19),
            backoff_cap: num(20),
            limit_key: text(22),
            trace: text(23),
            gate: text(24),
            more_gates: num(25),
            awaits: text(26),
        };
        Some((meta, rest))
    }

    /// The score `lua/lib/waiting.lua` gives a waiting job.
    pub fn waiting_score(&self) -> f64 {
        (255 - self.priority.min(255)) as f64 * 17_592_186_044_416.0 + self.seq as f64
    }
}

#[cfg(test)]
mod tests {
    use fred::interfaces::HashesInterface;
    use fred::types::Value;

    use super::Meta;
    use crate::lua;
    use crate::RedisServer;

    const TRACE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn s(v: impl ToString) -> Value {
        Value::from(v.to_string())
    }

    /// One job's enqueue.lua entries, every field set to something other
    /// than its default where the script allows it.
    fn job(id: &str, n: u64) -> Vec<Value> {
        lua::enqueue_entries(
            id,
            &format!(r#"{{"n":{n}}}"#),
            [
                (n % 3).to_string(),                                         // priority
                (if n == 4 { 60_000 } else { 0 }).to_string(),               // delay_ms
                (if n == 5 { 4_000_000_000_000u64 } else { 0 }).to_string(), // not_before_ms
                format!("dedup-{n}"),                                        // dedup_key
                (if n.is_multiple_of(2) { 30_000 } else { 0 }).to_string(),  // dedup_ttl_ms
                (if n == 3 { "ord" } else { "" }).to_string(),               // ordering_key
                (5 + n).to_string(),                                         // max_attempts
                (1_000 * n).to_string(),                                     // retry_window_ms
                format!("kind-{n}"),                                         // name
                (n % 2).to_string(),                                         // attempts
                (100 * n).to_string(),                                       // backoff_base_ms
                (100 * n + 7).to_string(),                                   // backoff_cap_ms
                (if n == 2 { "tenant" } else { "" }).to_string(),            // limit_key
                (if n == 1 { TRACE } else { "" }).to_string(),               // trace
            ],
        )
    }

    fn text(v: &Value) -> String {
        match v {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Value::String(s) => s.to_string(),
            Value::Integer(n) => n.to_string(),
            other => panic!("{other:?}"),
        }
    }

    fn items(v: Value) -> Vec<Value> {
        match v {
            Value::Array(items) => items,
            other => panic!("expected an array, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_checkers_decoder_reads_what_the_scripts_write_as_the_driver_does() {
        let server = RedisServer::start();
        let client = server.client().await;
        let (ns, queue) = ("agree", "q");
        let sha = |name: &'static str| {
            let client = client.clone();
            async move { lua::load(&client, &lua::compose(lua::source(name))).await }
        };
        let (enqueue, claim, nack, release) = (
            sha("enqueue").await,
            sha("claim").await,
            sha("nack").await,
            sha("release").await,
        );

        let ids: Vec<String> = (0..6).map(|n| format!("job-{n}")).collect();
        // Every job a member of batch "B"; then a dependent "W" of job-4
        // (job-4, never claimed, joins W's gate: more_gates; W awaits it).
        let mut args = vec![s(1 << 20), s(ids.len()), s("B"), s("batch"), s("")];
        for (n, id) in ids.iter().enumerate() {
            args.extend(job(id, n as u64));
        }
        lua::evalsha(&client, &enqueue, ns, queue, &args)
            .await
            .expect("enqueue");
        let mut seal = vec![s("W"), s("deps"), s(1 << 20), s(""), s(1), s("job-4"), s(1)];
        seal.extend([s(queue), s("success"), s("dead")]);
        seal.extend(job("W", 6));
        // No parent gate; the standard record format.
        seal.extend([s(""), s(""), s("")]);
        lua::evalsha(&client, &sha("gate_seal").await, ns, queue, &seal)
            .await
            .expect("gate_seal");
        // Lease the due jobs to a node id beyond 2^53 (kept as text).
        let claimed = items(
            lua::evalsha(
                &client,
                &claim,
                ns,
                queue,
                &[s(3), s(60_000), s(u64::MAX - 7), s(42)],
            )
            .await
            .expect("claim"),
        );
        let leased: Vec<(String, u64)> = claimed[1..]
            .chunks(2)
            .map(|pair| {
                let id = text(&pair[0]);
                let (meta, _) = redq::lua::JobMeta::decode_record(match &pair[1] {
                    Value::Bytes(b) => b,
                    other => panic!("{other:?}"),
                })
                .unwrap();
                (id, meta.lease_id)
            })
            .collect();
        assert_eq!(leased.len(), 3, "{claimed:?}");
        // One failure recorded (error text, resolved lease > 0), one forced
        // dead (died_at), one released (resolved lease < 0).
        let (a, b, c) = (&leased[0], &leased[1], &leased[2]);
        lua::evalsha(
            &client,
            &nack,
            ns,
            queue,
            &[s(&a.0), s(a.1), s(50_000), s("boom"), s(0)],
        )
        .await
        .expect("nack");
        lua::evalsha(
            &client,
            &nack,
            ns,
            queue,
            &[s(&b.0), s(b.1), s(0), s("dead"), s(1)],
        )
        .await
        .expect("nack to dead");
        lua::evalsha(&client, &release, ns, queue, &[s(&c.0), s(c.1)])
            .await
            .expect("release");
        lua::evalsha(&client, &claim, ns, queue, &[s(1), s(60_000), s(7), s(9)])
            .await
            .expect("claim again");
        // Compact records, left waiting: one of each stored length (3, 4 and
        // 5 fields: no name, a name, a name and max_attempts).
        let compact_jobs = [
            ("c-plain", "", "0"),
            ("c-named", "kind", "0"),
            ("c-max", "kind", "3"),
        ];
        let mut args = vec![
            s(1 << 20),
            s(compact_jobs.len()),
            s(""),
            s(""),
            s("compact"),
        ];
        for (id, name, max_attempts) in compact_jobs {
            let mut options: [String; 14] = Default::default();
            (options[6], options[8]) = (max_attempts.into(), name.into());
            args.extend(lua::enqueue_entries(id, r#"{"c":1}"#, options));
        }
        lua::evalsha(&client, &enqueue, ns, queue, &args)
            .await
            .expect("compact enqueue");

        let records: std::collections::HashMap<String, Vec<u8>> = client
            .hgetall(redq::keys::Keys::new(ns).jobs())
            .await
            .expect("HGETALL");
        assert_eq!(records.len(), ids.len() + 1 + compact_jobs.len());
        for (id, _, _) in compact_jobs {
            let first = records[id][0];
            assert!(
                (0x93..=0x95).contains(&first),
                "{id} is stored compact: {first:#x}"
            );
        }
        let mut seen_nonzero = std::collections::BTreeSet::new();
        for (id, raw) in &records {
            let (mine, my_payload) = Meta::split(raw).expect("the checker decodes it");
            let (driver, driver_payload) =
                redq::lua::JobMeta::decode_record(raw).expect("the driver decodes it");
            assert_eq!(my_payload, driver_payload, "{id}: payload");
            let fields: [(&str, String, String); 24] = [
                ("queue", mine.queue.clone(), driver.queue.clone()),
                (
                    "priority",
                    mine.priority.to_string(),
                    driver.priority.to_string(),
                ),
                ("seq", mine.seq.to_string(), driver.seq.to_string()),
                (
                    "enqueued_at",
                    mine.enqueued_at.to_string(),
                    driver.enqueued_at_ms.to_string(),
                ),
                (
                    "not_before",
                    mine.not_before.to_string(),
                    driver.not_before_ms.to_string(),
                ),
                (
                    "attempts",
                    mine.attempts.to_string(),
                    driver.attempts.to_string(),
                ),
                (
                    "max_attempts",
                    mine.max_attempts.to_string(),
                    driver.max_attempts.to_string(),
                ),
                (
                    "retry_window",
                    mine.retry_window.to_string(),
                    driver.retry_window_ms.to_string(),
                ),
                (
                    "dedup_key",
                    mine.dedup_key.clone(),
                    driver.dedup_key.clone(),
                ),
                (
                    "dedup_ttl",
                    mine.dedup_ttl.to_string(),
                    driver.dedup_ttl_ms.to_string(),
                ),
                (
                    "ordering_key",
                    mine.ordering_key.clone(),
                    driver.ordering_key.clone(),
                ),
                (
                    "lease_id",
                    mine.lease_id.to_string(),
                    driver.lease_id.to_string(),
                ),
                (
                    "lease_expiry",
                    mine.lease_expiry.to_string(),
                    driver.lease_expiry_ms.to_string(),
                ),
                (
                    "worker_node",
                    mine.worker_node.clone(),
                    match driver.worker_node {
                        0 => String::new(),
                        n => n.to_string(),
                    },
                ),
                (
                    "worker_instance",
                    mine.worker_instance.to_string(),
                    driver.worker_instance.to_string(),
                ),
                (
                    "died_at",
                    mine.died_at.to_string(),
                    driver.died_at_ms.to_string(),
                ),
                (
                    "resolved_lease",
                    mine.resolved_lease.to_string(),
                    driver.resolved_lease.to_string(),
                ),
                (
                    "backoff_base",
                    mine.backoff_base.to_string(),
                    driver.backoff_base_ms.to_string(),
                ),
                (
                    "backoff_cap",
                    mine.backoff_cap.to_string(),
                    driver.backoff_cap_ms.to_string(),
                ),
                (
                    "limit_key",
                    mine.limit_key.clone(),
                    driver.limit_key.clone(),
                ),
                ("trace", mine.trace.clone(), driver.trace.clone()),
                ("gate", mine.gate.clone(), driver.gate.clone()),
                (
                    "more_gates",
                    mine.more_gates.to_string(),
                    driver.more_gates.to_string(),
                ),
                ("awaits", mine.awaits.clone(), driver.awaits.clone()),
            ];
            for (field, checker, driver) in fields {
                assert_eq!(checker, driver, "{id}: {field}");
                if !["", "0"].contains(&checker.as_str()) {
                    seen_nonzero.insert(field);
                }
            }
            if mine.resolved_lease < 0 {
                seen_nonzero.insert("resolved_lease < 0");
            }
        }
        // Every position was exercised with a value other than its default,
        // so a field read from the wrong place would have shown.
        assert_eq!(seen_nonzero.len(), 25, "{seen_nonzero:?}");
    }
}
