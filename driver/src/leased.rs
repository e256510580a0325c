//! A leased job as a claim's reply carries it (`lua/lib/lease.lua`): its
//! record, the packed meta followed by the payload; or, for a detached
//! record (`crate::record_format`), the pair `[meta, payload]`, so that the
//! script makes no string of the payload's length but the one it read.

use fred::types::Value;

use crate::job::parse_payload;
use crate::meta::Meta;
use crate::scripts::reply;
use crate::{Job, QueueError};

/// The job `id` whose leased record is `record`, as a claim returned them.
/// The payload is parsed where it lies, never copied first: this is every
/// claimed job's path.
pub(crate) fn leased_job(id: Value, record: Value) -> Result<Job, QueueError> {
    let id = reply::text(id)?;
    match record {
        Value::Array(pair) => {
            let [meta, payload]: [Value; 2] = pair.try_into().map_err(|items: Vec<Value>| {
                QueueError::Protocol(format!(
                    "claim of job {id}: a detached record came as {} values, not its meta and \
                     payload",
                    items.len()
                ))
            })?;
            let meta = Meta::decode(&reply::bytes(meta)?)?;
            let payload = parse_payload(&reply::bytes(payload)?);
            Ok(Job::from_meta(id, payload, meta))
        }
        record => {
            let record = reply::bytes(record)?;
            let (meta, payload) = Meta::decode_record(&record)?;
            Ok(Job::from_meta(id, parse_payload(payload), meta))
        }
    }
}
