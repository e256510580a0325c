//! A leased job as a claim's reply carries it (`lua/lib/lease.lua`): its
//! record, the packed meta followed by the payload; or, for a detached
//! record (`crate::record_format`), the pair `[meta, payload]`, so that the
//! script makes no string of the payload's length but the one it read; or,
//! in a claim of several detached records, `[meta]` alone, its payload left
//! in `{ns}:detached` for the claimer to read after the claim (one `HMGET`
//! for the call), since a payload read in Lua costs the server far more
//! than the round trip (`lua/lib/lease.lua` `claim_payloads`).

use fred::interfaces::HashesInterface;
use fred::types::Value;

use crate::job::parse_payload;
use crate::meta::Meta;
use crate::scripts::reply;
use crate::{Job, QueueError, RedisQueue};

/// One job of a claim's reply.
pub(crate) enum Leased {
    /// The job with its payload.
    Whole(Job),
    /// A detached job's fields; its payload is to be read from
    /// `{ns}:detached`.
    PayloadApart { id: String, meta: Meta },
}

/// The job `id` whose leased record is `record`, as a claim returned them.
/// The payload is parsed where it lies, never copied first: this is every
/// claimed job's path.
pub(crate) fn leased_job(id: Value, record: Value) -> Result<Leased, QueueError> {
    let id = reply::text(id)?;
    match record {
        Value::Array(mut parts) => {
            let payload = match parts.len() {
                1 => None,
                2 => parts.pop(),
                n => {
                    return Err(QueueError::Protocol(format!(
                        "claim of job {id}: a detached record came as {n} values, not its meta \
                         and perhaps its payload"
                    )))
                }
            };
            let meta = parts.pop().expect("one value at least");
            let meta = Meta::decode(&reply::bytes(meta)?)?;
            Ok(match payload {
                Some(payload) => {
                    let payload = parse_payload(&reply::bytes(payload)?);
                    Leased::Whole(Job::from_meta(id, payload, meta))
                }
                None => Leased::PayloadApart { id, meta },
            })
        }
        record => {
            let record = reply::bytes(record)?;
            let (meta, payload) = Meta::decode_record(&record)?;
            Ok(Leased::Whole(Job::from_meta(
                id,
                parse_payload(payload),
                meta,
            )))
        }
    }
}

impl RedisQueue {
    /// The jobs of a claim's reply, in its order, with the payloads it left
    /// apart read in one `HMGET` of `{ns}:detached`.
    pub(crate) async fn with_payloads(&self, leased: Vec<Leased>) -> Result<Vec<Job>, QueueError> {
        let apart: Vec<&str> = leased
            .iter()
            .filter_map(|job| match job {
                Leased::PayloadApart { id, .. } => Some(id.as_str()),
                Leased::Whole(_) => None,
            })
            .collect();
        if apart.is_empty() {
            return Ok(assemble(leased, Vec::new()));
        }
        let payloads: Vec<Value> = self
            .client()
            .hmget(self.inner.keys.detached(), apart)
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        Ok(assemble(leased, payloads))
    }
}

/// The claimed jobs, each job left apart given the next of `payloads` (in
/// the same order). A payload gone by the time it was read means the job
/// went with it (deleted or cancelled by an operator between the claim and
/// the read; no script leaves a detached record without its payload): the
/// job is left out, as a claim made a moment later would not have leased
/// it, and its lease, if its record is still there, lapses as any other.
fn assemble(leased: Vec<Leased>, payloads: Vec<Value>) -> Vec<Job> {
    let mut payloads = payloads.into_iter();
    leased
        .into_iter()
        .filter_map(|job| match job {
            Leased::Whole(job) => Some(job),
            Leased::PayloadApart { id, meta } => match payloads.next() {
                Some(Value::Bytes(payload)) => {
                    Some(Job::from_meta(id, parse_payload(&payload), meta))
                }
                Some(Value::String(payload)) => {
                    Some(Job::from_meta(id, parse_payload(payload.as_bytes()), meta))
                }
                _ => {
                    tracing::warn!(job = %id, "a claimed job's detached payload was gone when read: the job is left out");
                    None
                }
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packed meta of the oldest length, every field 0 or "" but its queue.
    fn packed_meta() -> (Meta, Vec<u8>) {
        let texts = [
            crate::meta::field::WORKER_NODE,
            crate::meta::field::QUEUE,
            crate::meta::field::DEDUP_KEY,
            crate::meta::field::ORDERING_KEY,
            crate::meta::field::NAME,
            crate::meta::field::ERROR,
        ];
        let fields = (0..crate::meta::OLDEST_JOB_RECORD_LEN)
            .map(|i| match i {
                i if i == crate::meta::field::QUEUE => rmpv::Value::from("q"),
                i if texts.contains(&i) => rmpv::Value::from(""),
                _ => rmpv::Value::from(0),
            })
            .collect();
        let mut packed = Vec::new();
        rmpv::encode::write_value(&mut packed, &rmpv::Value::Array(fields)).unwrap();
        (Meta::decode(&packed).unwrap(), packed)
    }

    #[test]
    fn a_claim_reply_is_read_whole_as_a_pair_or_with_the_payload_apart() {
        let (_, meta) = packed_meta();
        let whole = leased_job(
            Value::from("a"),
            Value::Array(vec![
                Value::Bytes(meta.clone().into()),
                Value::from(r#"{"n":1}"#),
            ]),
        )
        .unwrap();
        assert!(matches!(&whole, Leased::Whole(job) if job.payload == serde_json::json!({"n": 1})));
        let apart = leased_job(
            Value::from("b"),
            Value::Array(vec![Value::Bytes(meta.clone().into())]),
        )
        .unwrap();
        assert!(matches!(&apart, Leased::PayloadApart { id, .. } if id == "b"));
        let three = Value::Array(vec![
            Value::Bytes(meta.into()),
            Value::from("x"),
            Value::from("y"),
        ]);
        let err = leased_job(Value::from("c"), three)
            .err()
            .expect("three values refused");
        assert!(err.to_string().contains("3 values"), "{err}");
    }

    #[test]
    fn payloads_read_apart_fill_their_jobs_in_order_and_a_gone_one_leaves_its_job_out() {
        let (meta, _) = packed_meta();
        let apart = |id: &str| Leased::PayloadApart {
            id: id.into(),
            meta: meta.clone(),
        };
        let whole = Job::from_meta("w".into(), serde_json::json!("whole"), meta.clone());
        let jobs = assemble(
            vec![apart("a"), Leased::Whole(whole), apart("gone"), apart("c")],
            vec![
                Value::from("1"),
                Value::Null,
                Value::Bytes(b"3".to_vec().into()),
            ],
        );
        let got: Vec<(&str, &serde_json::Value)> =
            jobs.iter().map(|j| (j.id.as_str(), &j.payload)).collect();
        assert_eq!(
            got,
            [
                ("a", &serde_json::json!(1)),
                ("w", &serde_json::json!("whole")),
                ("c", &serde_json::json!(3))
            ]
        );
    }
}
