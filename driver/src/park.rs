//! Hand-offs: an idle worker parks on its queue, and the next enqueue leases
//! the head of the queue to it and publishes the job on the worker's own
//! channel, so the job starts without a wake-up and a claim round trip
//! (`lua/park.lua`, `lua/enqueue.lua`, `lua/unpark.lua`).

use std::time::Duration;

use fred::types::Value;

use crate::job::parse_payload;
use crate::meta::Meta;
use crate::msgpack_fields::read_array;
use crate::scripts::num;
use crate::scripts::{reply, Op};
use crate::{limits, Job, QueueError, RedisQueue};

/// What `park` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Parked {
    /// How long until a job is due (zero: now), `None` when nothing is pending.
    pub due_in: Option<Duration>,
    /// Whether this worker is now the queue's parked worker.
    pub parked: bool,
}

/// The message `unpark` publishes after the last hand-off of a park.
pub(crate) const FENCE: &[u8] = b"fence";

/// What `park` publishes when it parks, followed by the park's number:
/// every wake-up delivered before it predates the park.
pub(crate) const PARKED: &[u8] = b"parked ";

/// The park number of a `PARKED` message, `None` for any other message.
pub(crate) fn parked_number(message: &[u8]) -> Option<u64> {
    std::str::from_utf8(message.strip_prefix(PARKED)?)
        .ok()?
        .parse()
        .ok()
}

impl RedisQueue {
    /// The channel jobs handed to the worker parked with `token` arrive on.
    pub(crate) fn handoff_channel(&self, token: u64) -> String {
        format!("{}:{token}", self.wake_channel())
    }

    /// Park on `queue` for `park_for`, able to take `capacity` jobs under
    /// `lease`, unless something is due now or another worker is parked.
    /// Parked, the script publishes `PARKED` and `number` on the worker's
    /// hand-off channel: a shard channel when the worker hears those
    /// (`shard`: the worker's listener says, `worker::wake`), as are the
    /// jobs handed to it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn park(
        &self,
        queue: &str,
        token: u64,
        lease: Duration,
        capacity: usize,
        park_for: Duration,
        number: u64,
        shard: bool,
    ) -> Result<Parked, QueueError> {
        let lease_ms = limits::check_lease(lease)?;
        let identity = self.identity();
        let args = vec![
            num(token),
            num(identity.node),
            num(identity.instance as u64),
            num(lease_ms),
            num(capacity.clamp(1, limits::MAX_CLAIM) as u64),
            num(park_for.as_millis().max(1) as u64),
            num(number),
            num(shard as u64),
        ];
        let items = reply::array(self.run(Op::Park, queue, args).await?)?;
        let due = reply::int(items.first().unwrap_or(&Value::Null))?;
        let parked = reply::int(items.get(1).unwrap_or(&Value::Null))? == 1;
        Ok(Parked {
            due_in: (due >= 0).then(|| Duration::from_millis(due as u64)),
            parked,
        })
    }

    /// Leave the park on `queue` (if it is still this worker's) and publish
    /// the fence, on the kind of channel it parked with (`shard`). Returns
    /// how many jobs the park handed out, `None` when it was no longer this
    /// worker's.
    pub(crate) async fn unpark(
        &self,
        queue: &str,
        token: u64,
        shard: bool,
    ) -> Result<Option<u64>, QueueError> {
        let args = vec![num(token), num(shard as u64)];
        let handed = reply::int(&self.run(Op::Unpark, queue, args).await?)?;
        Ok((handed >= 0).then_some(handed as u64))
    }
}

/// Decode a hand-off message: msgpack `[id, record]`, the same two values a
/// claim returns per job.
pub(crate) fn decode_handoff(raw: &[u8]) -> Result<Job, QueueError> {
    let bad = |why: &str| QueueError::Protocol(format!("hand-off message: {why}"));
    let (parts, _) = read_array(raw).map_err(|why| bad(&why))?;
    let [id, record] = parts.as_slice() else {
        return Err(bad("not two elements"));
    };
    let (Some(id), Some(record)) = (id.bytes(), record.bytes()) else {
        return Err(bad("an element is not a string"));
    };
    let id = std::str::from_utf8(id).map_err(|_| bad("job id is not UTF-8"))?;
    let (meta, payload) = Meta::decode_record(record)?;
    Ok(Job::from_meta(id.to_owned(), parse_payload(payload), meta))
}
