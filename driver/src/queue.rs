//! `RedisQueue`: enqueue, claim, and the lease-fenced transitions.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fred::bytes::Bytes;
use fred::types::Value;

use crate::connect::{Inner, RedisQueueBuilder};
use crate::job::{ms_to_time, parse_payload, time_to_ms};
use crate::keys::QueueKeys;
use crate::limits::{self, check_queue_name};
use crate::meta::Meta;
use crate::scripts::{self, reply, Arg, Op};
use crate::{Acked, Enqueued, Job, Lease, Nacked, NewJob, QueueError, Reclaimed, WorkerIdentity};

/// A handle on the queues of one namespace in one Redis. Cheap to clone:
/// clones share the connection pool.
#[derive(Clone)]
pub struct RedisQueue {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisQueue")
            .field("url", &self.inner.url)
            .field("namespace", &self.inner.namespace)
            .field("identity", &self.inner.identity)
            .finish_non_exhaustive()
    }
}

pub(crate) fn text(s: impl Into<String>) -> Value {
    Value::String(s.into().into())
}

pub(crate) fn num(n: u64) -> Value {
    text(n.to_string())
}

/// One validated job: its numbers, and where its text fields lie in the
/// buffer they were written to.
struct Encoded {
    id: Range<usize>,
    payload: Range<usize>,
    priority: u64,
    delay: u64,
    not_before: u64,
    dedup_key: Range<usize>,
    dedup_ttl: u64,
    ordering_key: Range<usize>,
    max_attempts: u64,
    retry_window: u64,
    name: Range<usize>,
}

impl Encoded {
    /// The 11 ARGV fields of enqueue.lua, text fields sliced out of `buf`.
    fn fields<'a>(&self, buf: &'a Bytes) -> [Arg<'a>; 11] {
        let slice = |range: &Range<usize>| Arg::Slice(buf, range.clone());
        [
            slice(&self.id),
            slice(&self.payload),
            Arg::Uint(self.priority),
            Arg::Uint(self.delay),
            Arg::Uint(self.not_before),
            slice(&self.dedup_key),
            Arg::Uint(self.dedup_ttl),
            slice(&self.ordering_key),
            Arg::Uint(self.max_attempts),
            Arg::Uint(self.retry_window),
            slice(&self.name),
        ]
    }
}

/// The jobs of one enqueue script call.
enum Jobs<'a> {
    /// Validated by `add_batch`, text fields in the shared buffer.
    Encoded(&'a [Encoded], &'a Bytes),
    /// Already laid out as ARGV fields (coalesced single enqueues).
    Fields(&'a [[Value; 11]]),
}

impl Jobs<'_> {
    fn len(&self) -> usize {
        match self {
            Jobs::Encoded(jobs, _) => jobs.len(),
            Jobs::Fields(jobs) => jobs.len(),
        }
    }
}

/// The ARGV of enqueue.lua: the queue and the wake channel (as for every
/// queue-scoped script), the payload limit, the job count, then 11 fields
/// per job.
struct EnqueueArgs<'a> {
    head: [Value; 2],
    payload_limit: u64,
    jobs: Jobs<'a>,
}

impl scripts::Args for EnqueueArgs<'_> {
    fn count(&self) -> usize {
        4 + 11 * self.jobs.len()
    }

    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>) {
        out.extend(self.head.iter().map(Arg::Value));
        out.push(Arg::Uint(self.payload_limit));
        out.push(Arg::Uint(self.jobs.len() as u64));
        match self.jobs {
            Jobs::Encoded(jobs, buf) => {
                for job in jobs {
                    out.extend(job.fields(buf));
                }
            }
            Jobs::Fields(jobs) => {
                for fields in jobs {
                    out.extend(fields.iter().map(Arg::Value));
                }
            }
        }
    }
}

impl RedisQueue {
    /// Connect with every setting at its default; see [`RedisQueue::builder`].
    pub async fn connect(url: &str) -> Result<RedisQueue, QueueError> {
        RedisQueue::builder(url).connect().await
    }

    /// Settings for a connection to `url`.
    pub fn builder(url: &str) -> RedisQueueBuilder {
        RedisQueueBuilder::new(url)
    }

    /// The namespace this handle works in.
    pub fn namespace(&self) -> &str {
        &self.inner.namespace
    }

    /// The identity recorded on the leases this handle takes.
    pub fn identity(&self) -> WorkerIdentity {
        self.inner.identity
    }

    /// The URL connected to, with any password removed.
    pub fn redacted_url(&self) -> &str {
        &self.inner.url
    }

    /// The pub/sub channel on which queue names are published when they get
    /// due work (workers subscribe to sleep without polling).
    pub fn wake_channel(&self) -> String {
        self.inner.keys.wake_channel()
    }

    /// The underlying client pool, for the crate's own background duties.
    pub(crate) fn client(&self) -> &fred::clients::Client {
        self.inner.pool.next()
    }

    pub(crate) fn queue_keys(&self, queue: &str) -> Result<Arc<QueueKeys>, QueueError> {
        if let Some(keys) = self
            .inner
            .queue_keys
            .read()
            .expect("queue key cache poisoned")
            .get(queue)
        {
            return Ok(keys.clone());
        }
        check_queue_name(queue)?;
        let keys = Arc::new(self.inner.keys.queue(queue));
        self.inner
            .queue_keys
            .write()
            .expect("queue key cache poisoned")
            .insert(queue.to_owned(), keys.clone());
        Ok(keys)
    }

    /// Run a queue-scoped script: ARGV starts with the queue and the channel.
    pub(crate) async fn run(
        &self,
        op: Op,
        queue: &str,
        mut args: Vec<Value>,
    ) -> Result<Value, QueueError> {
        let keys = self.queue_keys(queue)?;
        let mut argv = Vec::with_capacity(args.len() + 2);
        argv.push(text(queue));
        argv.push(text(self.inner.keys.wake_channel()));
        argv.append(&mut args);
        scripts::run(self.client(), op, &keys, argv)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))
    }

    /// Enqueue one job; see [`NewJob`] for the options.
    ///
    /// Concurrent `add` calls on one handle are coalesced: while one is in
    /// flight, the others are sent together as one batch script call (see
    /// `coalesce.rs`); each still gets its own outcome.
    pub async fn add(&self, queue: &str, job: NewJob) -> Result<Enqueued, QueueError> {
        self.queue_keys(queue)?;
        let fields = self.encode(&job)?;
        let (_in_flight, busy) = self.inner.coalescer.enter();
        let fields = if busy {
            let (reply, outcome) = tokio::sync::oneshot::channel();
            let pending = crate::coalesce::Pending {
                queue: queue.to_owned(),
                fields,
                reply,
            };
            match self
                .inner
                .coalescer
                .submit(std::sync::Arc::downgrade(&self.inner), pending)
            {
                Ok(()) => {
                    return outcome.await.unwrap_or_else(|_| {
                        Err(QueueError::Protocol("the enqueue batcher stopped".into()))
                    })
                }
                Err(pending) => pending.fields,
            }
        } else {
            fields
        };
        let mut outcomes = self
            .send_encoded(queue, std::slice::from_ref(&fields))
            .await?;
        outcomes
            .pop()
            .ok_or_else(|| QueueError::Protocol("enqueue returned no outcome".into()))
    }

    /// Enqueue a batch in one round trip; outcomes come back in input order.
    ///
    /// Every job is validated before anything is sent: one bad job fails the
    /// whole batch with nothing written. Batches over
    /// [`limits::ENQUEUE_CHUNK`] jobs are sent as consecutive chunks, each
    /// applied atomically, one after the other so that FIFO order holds
    /// across chunks; if a chunk fails, the chunks after it are not sent.
    ///
    /// If the connection drops while an enqueue is in flight, the call fails
    /// and the jobs may or may not have been created: enqueues are never
    /// resent behind your back, because a resend after the jobs already ran
    /// would create them again. Retry with a dedup key to be safe.
    pub async fn add_batch(
        &self,
        queue: &str,
        jobs: Vec<NewJob>,
    ) -> Result<Vec<Enqueued>, QueueError> {
        self.queue_keys(queue)?;
        // Every job validated first; their text fields share one buffer.
        let mut buf = Vec::with_capacity(jobs.len() * 64);
        let mut encoded = Vec::with_capacity(jobs.len());
        for job in &jobs {
            encoded.push(encode_into(job, self.inner.payload_limit, &mut buf)?);
        }
        let buf = Bytes::from(buf);
        let mut outcomes = Vec::with_capacity(jobs.len());
        // One chunk at a time: chunks sent concurrently go out over different
        // pooled connections and may run in either order, which would break
        // FIFO order (and leave holes after a failed chunk).
        for chunk in encoded.chunks(limits::ENQUEUE_CHUNK) {
            let jobs = Jobs::Encoded(chunk, &buf);
            outcomes.extend(self.send_jobs(queue, jobs).await?);
        }
        Ok(outcomes)
    }

    /// One enqueue script call for up to [`limits::ENQUEUE_CHUNK`] encoded
    /// jobs of one queue, applied atomically; outcomes in input order.
    pub(crate) async fn send_encoded(
        &self,
        queue: &str,
        chunk: &[[Value; 11]],
    ) -> Result<Vec<Enqueued>, QueueError> {
        self.send_jobs(queue, Jobs::Fields(chunk)).await
    }

    /// One enqueue script call for `jobs`, all of one queue, applied
    /// atomically; outcomes in input order.
    async fn send_jobs(&self, queue: &str, jobs: Jobs<'_>) -> Result<Vec<Enqueued>, QueueError> {
        let keys = self.queue_keys(queue)?;
        let count = jobs.len();
        let args = EnqueueArgs {
            head: [text(queue), text(self.inner.keys.wake_channel())],
            payload_limit: self.inner.payload_limit as u64,
            jobs,
        };
        let reply = scripts::run_with(self.client(), Op::Enqueue, &keys, &args)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))?;
        let items = reply::array(reply)?;
        let mut outcomes = Vec::with_capacity(count);
        let mut items = items.into_iter();
        while let Some(code) = items.next() {
            let Some(id) = items.next() else {
                return Err(QueueError::Protocol(
                    "enqueue reply has an odd length".into(),
                ));
            };
            let id = reply::text(id)?;
            outcomes.push(match reply::int(&code)? {
                0 => Enqueued::Duplicate(id),
                _ => Enqueued::Created(id),
            });
        }
        Ok(outcomes)
    }

    /// Validate one job and lay it out as the 11 ARGV fields of enqueue.lua.
    pub(crate) fn encode(&self, job: &NewJob) -> Result<[Value; 11], QueueError> {
        let mut buf = Vec::with_capacity(128);
        let layout = encode_into(job, self.inner.payload_limit, &mut buf)?;
        Ok(layout.fields(&Bytes::from(buf)).map(Value::from))
    }

    /// Claim up to `limit` (1 to 1000) due jobs of `queue` for `lease`.
    ///
    /// Highest priority first, oldest first within a priority. Before
    /// claiming, lapsed leases of the queue are reclaimed (bounded per call)
    /// and delayed jobs that came due are promoted. A paused queue returns
    /// nothing.
    pub async fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<Job>, QueueError> {
        limits::check_limit("claim limit", limit, limits::MAX_CLAIM)?;
        let lease_ms = limits::check_lease(lease)?;
        let identity = self.inner.identity;
        let args = vec![
            num(limit as u64),
            num(lease_ms),
            num(identity.node),
            num(identity.instance as u64),
        ];
        let items = reply::array(self.run(Op::Claim, queue, args).await?)?;
        let mut jobs = Vec::with_capacity(items.len() / 2);
        let mut rest = items.into_iter().skip(1);
        while let (Some(id), Some(record)) = (rest.next(), rest.next()) {
            let record = reply::bytes(record)?;
            let (meta, payload) = Meta::decode_record(&record)?;
            jobs.push(Job::from_meta(
                reply::text(id)?,
                parse_payload(payload),
                meta,
            ));
        }
        Ok(jobs)
    }

    /// The job is done: remove it for good. Fenced by the lease: after the
    /// lease was reclaimed or the job claimed again, returns
    /// [`QueueError::LeaseLost`] and changes nothing. Acking a job that no
    /// longer exists (a repeated ack) returns [`Acked::AlreadyGone`].
    pub async fn ack(&self, lease: &Lease) -> Result<Acked, QueueError> {
        check_lease(lease)?;
        let mut outcomes = self.ack_batch(std::slice::from_ref(lease)).await?;
        outcomes
            .pop()
            .unwrap_or_else(|| Err(QueueError::Protocol("ack returned no outcome".into())))
    }

    /// Acknowledge many jobs in as few round trips as possible: one script
    /// call per queue and 1000 jobs. Each job is fenced by its own lease,
    /// and gets its own outcome, in input order, exactly as [`RedisQueue::ack`]
    /// would give it. The outer error is for the call as a whole (Redis
    /// unreachable, bad input): then nothing is known to be acknowledged.
    pub async fn ack_batch(
        &self,
        leases: &[Lease],
    ) -> Result<Vec<Result<Acked, QueueError>>, QueueError> {
        for lease in leases {
            limits::check_id(&lease.id)?;
            self.queue_keys(&lease.queue)?;
        }
        let mut outcomes: Vec<Option<Result<Acked, QueueError>>> =
            leases.iter().map(|_| None).collect();
        let mut by_queue: Vec<(&str, Vec<usize>)> = Vec::new();
        for (index, lease) in leases.iter().enumerate() {
            if lease.lease_id > MAX_LEASE_ID {
                // No claim can have issued it: lost without asking Redis,
                // so one forged id cannot fail the rest of the batch.
                outcomes[index] = Some(Err(lease_lost(lease)));
                continue;
            }
            match by_queue.iter_mut().find(|(q, _)| *q == lease.queue) {
                Some((_, indexes)) => indexes.push(index),
                None => by_queue.push((&lease.queue, vec![index])),
            }
        }
        let calls = by_queue.iter().flat_map(|(queue, indexes)| {
            indexes.chunks(limits::MAX_CLAIM).map(move |chunk| {
                let mut args = Vec::with_capacity(1 + 2 * chunk.len());
                args.push(num(chunk.len() as u64));
                for &i in chunk {
                    args.push(text(leases[i].id.as_str()));
                    args.push(num(leases[i].lease_id));
                }
                async move { (chunk, self.run(Op::Ack, queue, args).await) }
            })
        });
        for (chunk, reply) in futures::future::join_all(calls).await {
            let codes = reply::array(reply?)?;
            if codes.len() != chunk.len() {
                return Err(QueueError::Protocol(format!(
                    "ack returned {} codes for {} jobs",
                    codes.len(),
                    chunk.len()
                )));
            }
            for (&i, code) in chunk.iter().zip(codes.iter()) {
                outcomes[i] = Some(match reply::int(code)? {
                    1 => Ok(Acked::Completed),
                    0 => Ok(Acked::AlreadyGone),
                    _ => Err(lease_lost(&leases[i])),
                });
            }
        }
        Ok(outcomes
            .into_iter()
            .map(|o| o.expect("every lease got an outcome"))
            .collect())
    }

    /// The attempt failed: retry after `delay`, unless attempts or the retry
    /// window are spent, in which case the job is dead-lettered. Fenced like
    /// [`RedisQueue::ack`].
    pub async fn nack(
        &self,
        lease: &Lease,
        delay: Duration,
        error: &str,
    ) -> Result<Nacked, QueueError> {
        self.fail_attempt(lease, delay, error, false).await
    }

    /// The job must not be tried again: move it to the dead-letter set now.
    pub async fn dead_letter(&self, lease: &Lease, error: &str) -> Result<Nacked, QueueError> {
        self.fail_attempt(lease, Duration::ZERO, error, true).await
    }

    async fn fail_attempt(
        &self,
        lease: &Lease,
        delay: Duration,
        error: &str,
        dead: bool,
    ) -> Result<Nacked, QueueError> {
        check_lease(lease)?;
        let delay = limits::check_duration("retry delay", delay)?;
        let args = vec![
            text(lease.id.as_str()),
            num(lease.lease_id),
            num(delay),
            text(limits::cut_error(error)),
            num(dead as u64),
        ];
        let items = reply::array(self.run(Op::Nack, &lease.queue, args).await?)?;
        let field = |i: usize| {
            items
                .get(i)
                .map(reply::int)
                .transpose()
                .map(|v| v.unwrap_or(0))
        };
        let (code, attempts, dead, due) = (field(0)?, field(1)? as u32, field(2)?, field(3)?);
        match (code, dead) {
            (1 | 2, 1) => Ok(Nacked::DeadLettered { attempts }),
            (1 | 2, _) => Ok(Nacked::Retrying {
                attempts,
                due_at: if due > 0 {
                    ms_to_time(due as u64)
                } else {
                    SystemTime::now()
                },
            }),
            _ => Err(lease_lost(lease)),
        }
    }

    /// Heartbeat: the lease now lapses `lease` from now (Redis clock).
    /// Returns the new expiry, or [`QueueError::LeaseLost`].
    pub async fn extend(&self, held: &Lease, lease: Duration) -> Result<SystemTime, QueueError> {
        check_lease(held)?;
        let lease_ms = limits::check_lease(lease)?;
        let args = vec![text(held.id.as_str()), num(held.lease_id), num(lease_ms)];
        let items = reply::array(self.run(Op::Extend, &held.queue, args).await?)?;
        match items.as_slice() {
            [code, expiry] if reply::int(code)? == 1 => Ok(ms_to_time(reply::int(expiry)? as u64)),
            _ => Err(lease_lost(held)),
        }
    }

    /// Give a claimed job back unrun: due again at once, no attempt counted
    /// (graceful shutdown).
    pub async fn release(&self, lease: &Lease) -> Result<(), QueueError> {
        check_lease(lease)?;
        let args = vec![text(lease.id.as_str()), num(lease.lease_id)];
        match reply::int(&self.run(Op::Release, &lease.queue, args).await?)? {
            1 | 2 => Ok(()),
            _ => Err(lease_lost(lease)),
        }
    }

    /// Reclaim up to `limit` (1 to 10 000) lapsed leases of `queue`: each
    /// counts a failed attempt and goes back to the queue, or to the
    /// dead-letter set when spent. `claim` does this too; this is the bounded
    /// call for janitors.
    pub async fn reclaim(&self, queue: &str, limit: usize) -> Result<Reclaimed, QueueError> {
        limits::check_limit("reclaim limit", limit, 10_000)?;
        let items = reply::array(
            self.run(Op::Reclaim, queue, vec![num(limit as u64)])
                .await?,
        )?;
        let field = |i: usize| reply::count_at(&items, i);
        Ok(Reclaimed {
            requeued: field(0)?,
            dead_lettered: field(1)?,
            still_lapsed: field(2)?,
        })
    }

    /// How long until a job of `queue` is due: `Some(ZERO)` when one is
    /// waiting now, `None` when nothing is pending (or the queue is paused).
    /// Lease expiries count, so an idle worker wakes to reclaim a crashed
    /// peer's jobs.
    pub async fn next_due(&self, queue: &str) -> Result<Option<Duration>, QueueError> {
        let ms = reply::int(&self.run(Op::NextDue, queue, Vec::new()).await?)?;
        Ok((ms >= 0).then(|| Duration::from_millis(ms as u64)))
    }
}

/// Validate one job (every check of an enqueue, each with its error) and
/// append its text fields to `buf`; the returned layout says where they are.
fn encode_into(
    job: &NewJob,
    payload_limit: usize,
    buf: &mut Vec<u8>,
) -> Result<Encoded, QueueError> {
    limits::check_payload_depth(&job.payload)?;
    let start = buf.len();
    serde_json::to_writer(&mut *buf, &job.payload)
        .map_err(|e| QueueError::invalid("payload", e.to_string(), "serializable JSON"))?;
    let payload = start..buf.len();
    if payload.len() > payload_limit {
        return Err(QueueError::PayloadTooLarge {
            size: payload.len(),
            limit: payload_limit,
        });
    }
    let delay = limits::check_duration("delay", job.delay)?;
    let not_before = job.not_before.map(time_to_ms).unwrap_or(0);
    if not_before > limits::MAX_TIME_MS {
        return Err(QueueError::invalid(
            "not_before",
            format!("{:?}", job.not_before),
            "a time before the year 6000",
        ));
    }
    let (dedup_key, dedup_ttl) = match &job.dedup {
        Some((key, ttl)) => {
            limits::check_text("dedup key", key, limits::MAX_KEY_LEN)?;
            let ttl = match ttl {
                Some(ttl) if ttl.is_zero() => {
                    return Err(QueueError::invalid("dedup TTL", "0s", "at least 1 ms"));
                }
                Some(ttl) => limits::check_duration("dedup TTL", *ttl)?,
                None => 0,
            };
            (key.as_str(), ttl)
        }
        None => ("", 0),
    };
    if let Some(key) = &job.ordering_key {
        limits::check_text("ordering key", key, limits::MAX_KEY_LEN)?;
    }
    if let Some(name) = &job.name {
        limits::check_text("job name", name, limits::MAX_JOB_NAME)?;
    }
    let retry_window = limits::check_retry_window(job.retry_window)?;
    let mut id = [0u8; ulid::ULID_LEN];
    ulid::Ulid::new().array_to_str(&mut id);
    let mut append = |text: &[u8]| {
        let start = buf.len();
        buf.extend_from_slice(text);
        start..buf.len()
    };
    Ok(Encoded {
        id: append(&id),
        payload,
        priority: job.priority as u64,
        delay,
        not_before,
        dedup_key: append(dedup_key.as_bytes()),
        dedup_ttl,
        ordering_key: append(job.ordering_key.as_deref().unwrap_or("").as_bytes()),
        max_attempts: job.max_attempts as u64,
        retry_window,
        name: append(job.name.as_deref().unwrap_or("").as_bytes()),
    })
}

/// Check a lease handed back by a caller before it reaches a script: the id
/// must be a valid job id, and a lease id no claim can have issued (the
/// scripts count them in exact doubles, up to 2^53 - 1) is simply lost.
const MAX_LEASE_ID: u64 = (1 << 53) - 1;

fn check_lease(lease: &Lease) -> Result<(), QueueError> {
    limits::check_id(&lease.id)?;
    if lease.lease_id > MAX_LEASE_ID {
        return Err(lease_lost(lease));
    }
    Ok(())
}

pub(crate) fn lease_lost(lease: &Lease) -> QueueError {
    QueueError::LeaseLost {
        id: lease.id.clone(),
        lease_id: lease.lease_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a field goes out as: fred sends an integer as the bulk
    /// string of its decimal digits.
    fn wire(value: &Value) -> String {
        match value {
            Value::Integer(n) => n.to_string(),
            Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
            Value::String(s) => s.to_string(),
            other => panic!("unexpected field {other:?}"),
        }
    }

    fn fields(job: &NewJob) -> Vec<String> {
        let mut buf = Vec::new();
        let layout = encode_into(job, 1 << 20, &mut buf).unwrap();
        let buf = Bytes::from(buf);
        layout
            .fields(&buf)
            .map(Value::from)
            .iter()
            .map(wire)
            .collect()
    }

    #[test]
    fn the_fields_are_the_enqueue_script_argv() {
        let job = NewJob::new(serde_json::json!({"to": ["ada", 2.5]}))
            .priority(7)
            .delay(Duration::from_millis(1500))
            .not_before(SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123))
            .dedup_key_for("mail:ada", Duration::from_secs(60))
            .ordering_key("acct-1")
            .max_attempts(5)
            .retry_window(Duration::from_secs(3600))
            .name("mail.send");
        let f = fields(&job);
        assert_eq!(f[0].len(), ulid::ULID_LEN);
        assert!(ulid::Ulid::from_string(&f[0]).is_ok());
        assert_eq!(
            f[1..],
            [
                r#"{"to":["ada",2.5]}"#,
                "7",
                "1500",
                "1700000000123",
                "mail:ada",
                "60000",
                "acct-1",
                "5",
                "3600000",
                "mail.send",
            ]
        );
        // Unset options: empty strings and zeros.
        let f = fields(&NewJob::new(serde_json::json!(null)));
        assert_eq!(f[1..], ["null", "0", "0", "0", "", "0", "", "0", "0", ""]);
    }

    #[test]
    fn jobs_of_a_batch_share_one_buffer_without_mixing_their_fields() {
        let mut buf = Vec::new();
        let a = encode_into(&NewJob::new(serde_json::json!("a")).name("x"), 64, &mut buf).unwrap();
        let b = encode_into(&NewJob::new(serde_json::json!("bb")), 64, &mut buf).unwrap();
        let buf = Bytes::from(buf);
        let a: Vec<String> = a.fields(&buf).map(Value::from).iter().map(wire).collect();
        let b: Vec<String> = b.fields(&buf).map(Value::from).iter().map(wire).collect();
        assert_eq!((a[1].as_str(), a[10].as_str()), ("\"a\"", "x"));
        assert_eq!((b[1].as_str(), b[10].as_str()), ("\"bb\"", ""));
        assert_ne!(a[0], b[0]);
    }

    #[test]
    fn an_oversized_payload_is_refused_with_its_size() {
        let mut buf = Vec::new();
        let job = NewJob::new(serde_json::json!("0123456789"));
        match encode_into(&job, 11, &mut buf) {
            Err(QueueError::PayloadTooLarge {
                size: 12,
                limit: 11,
            }) => {}
            Err(other) => panic!("unexpected error {other:?}"),
            Ok(_) => panic!("a 12-byte payload passed an 11-byte limit"),
        }
        assert!(encode_into(&job, 12, &mut Vec::new()).is_ok());
    }
}
