//! Hand-offs: an idle worker parks on its queue, and the next enqueue leases
//! the head of the queue to it and publishes the job on the worker's own
//! channel, so the job starts without a wake-up and a claim round trip
//! (`lua/park.lua`, `lua/enqueue.lua`, `lua/unpark.lua`).

use std::time::Duration;

use fred::types::Value;

use crate::event_kind::EventKind;
use crate::job::parse_payload;
use crate::meta::Meta;
use crate::msgpack_fields::read_array;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{codes, limits, Job, Lease, QueueError, RedisQueue};

/// What `park` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Parked {
    /// How long until a job is due (zero: now), `None` when nothing is pending.
    pub due_in: Option<Duration>,
    /// Where the park began, when this worker is now the queue's parked
    /// worker; `None` when it is not.
    pub began: Option<ParkMark>,
}

/// The queue's lease sequence and Redis's clock at one end of a park: every
/// job the park hands is leased above its start's sequence and at most its
/// end's, and expires a lease after a time between the two clocks
/// (`lua/handed_unheard.lua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParkMark {
    pub lease_seq: u64,
    pub now_ms: u64,
}

/// What `unpark` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unparked {
    /// How many jobs the park handed out, `None` when it was no longer this
    /// worker's (it lapsed).
    pub handed: Option<u64>,
    /// Where the park ended.
    pub ended: ParkMark,
}

/// What `unpark` publishes after the last hand-off of a park, followed by
/// the park's number.
pub(crate) const FENCE: &[u8] = b"fence ";

/// The park number of a `FENCE` message, `None` for any other message.
pub(crate) fn fence_number(message: &[u8]) -> Option<u64> {
    number_after(FENCE, message)
}

/// What `park` publishes when it parks, followed by the park's number:
/// every wake-up delivered before it predates the park.
pub(crate) const PARKED: &[u8] = b"parked ";

/// The park number of a `PARKED` message, `None` for any other message.
pub(crate) fn parked_number(message: &[u8]) -> Option<u64> {
    number_after(PARKED, message)
}

/// The number that follows `prefix` in `message`, if it starts so.
fn number_after(prefix: &[u8], message: &[u8]) -> Option<u64> {
    std::str::from_utf8(message.strip_prefix(prefix)?)
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
            began: if parked {
                Some(park_mark(items.get(2..).unwrap_or_default())?)
            } else {
                None
            },
        })
    }

    /// Leave the park numbered `number` on `queue` (if it is still this
    /// worker's) and publish the fence, on the kind of channel it parked
    /// with (`shard`).
    pub(crate) async fn unpark(
        &self,
        queue: &str,
        token: u64,
        shard: bool,
        number: u64,
    ) -> Result<Unparked, QueueError> {
        let args = vec![num(token), num(shard as u64), num(number)];
        let items = reply::array(self.run(Op::Unpark, queue, args).await?)?;
        let handed = reply::int(items.first().unwrap_or(&Value::Null))?;
        Ok(Unparked {
            handed: (handed >= 0).then_some(handed as u64),
            ended: park_mark(items.get(1..).unwrap_or_default())?,
        })
    }

    /// The jobs of `queue` leased to this handle's identity in `window`:
    /// what a park may have handed to it (`lua/handed_unheard.lua`), as
    /// leases, in the order their leases expire.
    pub(crate) async fn handed_in(
        &self,
        queue: &str,
        window: &HandOffWindow,
    ) -> Result<Vec<Lease>, QueueError> {
        let identity = self.identity();
        let mut leases = Vec::new();
        let mut offset = 0;
        loop {
            let args = vec![
                num(identity.node),
                num(identity.instance as u64),
                num(window.began.lease_seq),
                num(window.ended.lease_seq),
                num(window.began.now_ms + window.lease_ms),
                num(window.ended.now_ms + window.lease_ms),
                num(offset),
                num(UNHEARD_PAGE),
            ];
            let items = reply::array(self.run(Op::HandedUnheard, queue, args).await?)?;
            let next = reply::int(items.first().unwrap_or(&Value::Null))?;
            for pair in items.get(1..).unwrap_or_default().chunks(2) {
                let [id, lease_id] = pair else {
                    return Err(QueueError::Protocol(
                        "handed_unheard: an id without its lease".into(),
                    ));
                };
                leases.push(Lease {
                    queue: queue.to_owned(),
                    id: reply::text(id.clone())?,
                    lease_id: reply::int(lease_id)? as u64,
                });
            }
            if next < 0 {
                return Ok(leases);
            }
            offset = next as u64;
        }
    }

    /// Give back a job leased to this worker whose news was lost on the
    /// way: released as [`RedisQueue::release`] does, due again at once
    /// with no attempt counted, recorded as a `why` event naming the
    /// worker and counted in the queue's metrics, so that an operator sees
    /// the trouble behind it: [`EventKind::HandoffLost`], a hand-off whose
    /// message never reached it (`super::worker::unheard`), or
    /// [`EventKind::ClaimLost`], a claim whose reply never did
    /// (`crate::lost_claim`).
    pub(crate) async fn give_back_lost(
        &self,
        lease: &Lease,
        why: EventKind,
    ) -> Result<(), QueueError> {
        debug_assert!(matches!(why, EventKind::HandoffLost | EventKind::ClaimLost));
        crate::queue::check_lease(lease)?;
        let args = vec![
            text(lease.id.as_str()),
            num(lease.lease_id),
            text(why.as_str()),
        ];
        codes::released(&self.run(Op::Release, &lease.queue, args).await?, lease)
    }
}

/// How many leased-set entries one `handed_unheard` call looks at: a few
/// hundred microseconds of the server's time at most.
const UNHEARD_PAGE: u64 = 500;

/// Where to look for the jobs one park handed (`RedisQueue::handed_in`):
/// its two ends, and the lease its jobs were handed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandOffWindow {
    pub began: ParkMark,
    pub ended: ParkMark,
    pub lease_ms: u64,
}

/// A park's end from a script's reply: the lease sequence (text, as `GET`
/// read it) and the clock.
fn park_mark(items: &[Value]) -> Result<ParkMark, QueueError> {
    let bad = || QueueError::Protocol("park: no lease sequence and clock in the reply".into());
    let [lease_seq, now_ms, ..] = items else {
        return Err(bad());
    };
    Ok(ParkMark {
        lease_seq: reply::int(lease_seq)? as u64,
        now_ms: reply::int(now_ms)? as u64,
    })
}

/// Decode a hand-off message: msgpack `[id, record]`, the same two values a
/// claim returns per job, or `[id, meta, payload]` for a detached record
/// (`lua/lib/handoff.lua`).
pub(crate) fn decode_handoff(raw: &[u8]) -> Result<Job, QueueError> {
    let bad = |why: &str| QueueError::Protocol(format!("hand-off message: {why}"));
    let (parts, _) = read_array(raw).map_err(|why| bad(&why))?;
    let (id, record, detached) = match parts.as_slice() {
        [id, record] => (id, record, None),
        [id, meta, payload] => (id, meta, Some(payload)),
        _ => return Err(bad("not two or three elements")),
    };
    let (Some(id), Some(record)) = (id.bytes(), record.bytes()) else {
        return Err(bad("an element is not a string"));
    };
    let id = std::str::from_utf8(id).map_err(|_| bad("job id is not UTF-8"))?;
    let (meta, payload) = Meta::decode_record(record)?;
    let payload = match detached {
        None => payload,
        Some(payload) => payload
            .bytes()
            .ok_or_else(|| bad("a detached payload is not a string"))?,
    };
    Ok(Job::from_meta(id.to_owned(), parse_payload(payload), meta))
}
