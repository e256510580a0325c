//! `RedisQueue`: enqueue, claim, and the lease-fenced transitions.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fred::bytes::Bytes;
use fred::types::Value;

use crate::coalesce::SendBatch;
use crate::codes::{self, lease_lost};
use crate::connect::RedisQueueBuilder;
use crate::enqueue_args::{encode_into, encode_single, EnqueueArgs, Jobs, SingleJob};
use crate::handle::{Inner, RedisQueue};
use crate::kept::Completion;
use crate::keys::QueueKeys;
use crate::limits::{self, check_queue_name};
use crate::lost_claim::LostClaim;
use crate::notes::NoteBatch;
use crate::scripts::variant_route::WholeQueues;
use crate::scripts::{self, num, reply, text, Op};
use crate::{Acked, Enqueued, Job, Lease, Nacked, NewJob, QueueError, Reclaimed, WorkerIdentity};

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

    /// The identity recorded on the leases this handle takes: the
    /// builder's ([`RedisQueueBuilder::identity`](crate::RedisQueueBuilder::identity)),
    /// shared by every clone. A [`Worker`](crate::worker::Worker) made on
    /// the handle leases under it too, but a second `Worker` on the same
    /// handle (or a clone) takes the same node with an instance of its own,
    /// so that each `Worker` holds only its own leases, is listed once in
    /// `workers`, and gives back only the hand-offs it lost.
    pub fn identity(&self) -> WorkerIdentity {
        self.identity
    }

    /// This handle for one more `Worker`: itself for the first, else with
    /// the same node and a fresh instance (see [`RedisQueue::identity`]).
    pub(crate) fn for_a_worker(&self) -> RedisQueue {
        use std::sync::atomic::Ordering;
        if self.inner.workers_made.fetch_add(1, Ordering::Relaxed) == 0 {
            return self.clone();
        }
        self.with_identity(WorkerIdentity {
            node: self.identity.node,
            instance: WorkerIdentity::unique().instance,
        })
    }

    /// Marks this handle's identity as taken by the sharded queue whose
    /// shard it is: every shard shares it, for the queue's first Worker. A
    /// Worker made on this one shard then takes an instance of its own, so
    /// that one Worker per shard is told apart (in `redq workers`, and on
    /// each holder channel) rather than listed as one.
    pub(crate) fn identity_taken_by_shards(&self) {
        use std::sync::atomic::Ordering;
        self.inner.workers_made.fetch_add(1, Ordering::Relaxed);
    }

    /// This handle, its leases taken under `identity`.
    pub(crate) fn with_identity(&self, identity: WorkerIdentity) -> RedisQueue {
        RedisQueue {
            inner: self.inner.clone(),
            identity,
        }
    }

    /// The URL connected to, with any password removed.
    pub fn redacted_url(&self) -> &str {
        &self.inner.url
    }

    /// Close the connections; this handle and every clone of it fail from
    /// then on. Dropping a handle leaves its pool reconnecting in the
    /// background, so a caller that opens a handle only to learn whether
    /// Redis answers (the console probing an outage) closes it.
    pub async fn close(&self) {
        let _ = fred::interfaces::ClientLike::quit(&self.inner.pool).await;
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

    /// How this handle calls its scripts: [`ScriptCalls::Eval`] or
    /// [`ScriptCalls::Functions`], which [`ScriptCalls::Auto`] (the default)
    /// became at connect. Under `Auto`, a script whose function library the
    /// server has refused since is called by `EVALSHA` all the same.
    ///
    /// [`ScriptCalls::Auto`]: crate::ScriptCalls::Auto
    /// [`ScriptCalls::Eval`]: crate::ScriptCalls::Eval
    /// [`ScriptCalls::Functions`]: crate::ScriptCalls::Functions
    pub fn script_calls(&self) -> crate::ScriptCalls {
        self.inner.script_calls.settled()
    }

    /// A connection and how this handle calls the scripts.
    pub(crate) fn caller(&self) -> scripts::Caller<'_> {
        scripts::Caller {
            client: self.client(),
            mode: &self.inner.script_calls,
            client_resends: true,
        }
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
        args: Vec<Value>,
    ) -> Result<Value, QueueError> {
        self.run_by(self.caller(), op, queue, args).await
    }

    /// [`RedisQueue::run`] through `caller`.
    async fn run_by(
        &self,
        caller: scripts::Caller<'_>,
        op: Op,
        queue: &str,
        mut args: Vec<Value>,
    ) -> Result<Value, QueueError> {
        let keys = self.queue_keys(queue)?;
        let mut argv = Vec::with_capacity(args.len() + 2);
        argv.push(text(queue));
        argv.push(text(self.inner.keys.wake_channel()));
        argv.append(&mut args);
        self.attribute(op, &mut argv);
        scripts::run(caller, op, &keys, argv)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))
    }

    /// Enqueue one job; see [`NewJob`] for the options.
    ///
    /// Concurrent `add` calls on one handle are coalesced: while one is in
    /// flight, the others are sent together in batch script calls, what
    /// waits shared among up to four batches in flight (see `coalesce.rs`);
    /// each still gets its own outcome.
    ///
    /// Runs in a `redq.publish` span (`crate::trace`).
    pub async fn add(&self, queue: &str, job: NewJob) -> Result<Enqueued, QueueError> {
        use tracing::Instrument;
        let span = crate::trace::publish_span(queue, 1);
        self.add_in_span(queue, job).instrument(span).await
    }

    async fn add_in_span(&self, queue: &str, job: NewJob) -> Result<Enqueued, QueueError> {
        self.queue_keys(queue)?;
        if job.waits_for_jobs() {
            // One gate_seal call: the job and its gate (`crate::workflow`).
            return self.add_dependent(queue, &job).await;
        }
        let encoded = self.encode(&job)?;
        let (_in_flight, busy) = self.inner.coalescer.enter();
        let encoded = if busy {
            let (reply, outcome) = tokio::sync::oneshot::channel();
            let pending = crate::coalesce::Pending {
                queue: queue.to_owned(),
                job: encoded,
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
                Err(pending) => pending.job,
            }
        } else {
            encoded
        };
        let mut outcomes = self
            .send_encoded(queue, std::slice::from_ref(&encoded))
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
    ///
    /// Runs in a `redq.publish` span (`crate::trace`).
    pub async fn add_batch(
        &self,
        queue: &str,
        jobs: Vec<NewJob>,
    ) -> Result<Vec<Enqueued>, QueueError> {
        use tracing::Instrument;
        let span = crate::trace::publish_span(queue, jobs.len());
        self.add_batch_in_span(queue, jobs).instrument(span).await
    }

    async fn add_batch_in_span(
        &self,
        queue: &str,
        jobs: Vec<NewJob>,
    ) -> Result<Vec<Enqueued>, QueueError> {
        self.queue_keys(queue)?;
        crate::options::refuse_dependents_in_batch(&jobs)?;
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
        chunk: &[SingleJob],
    ) -> Result<Vec<Enqueued>, QueueError> {
        self.send_jobs(queue, Jobs::Single(chunk)).await
    }

    /// One enqueue script call for `jobs`, all of one queue, applied
    /// atomically; outcomes in input order.
    ///
    /// A call whose jobs need no dedup, ordering or limit key goes to the
    /// enqueue variant that declares only the keys such jobs touch (13 of
    /// 32: each declared key costs the server about 1 200 instructions a
    /// call, `lua/enqueue.lua` header), or, when one of them is stored
    /// detached, to the variant with the detached payloads' key as well.
    async fn send_jobs(&self, queue: &str, jobs: Jobs<'_>) -> Result<Vec<Enqueued>, QueueError> {
        let detached = self
            .record_format()
            .detach_from()
            .is_some_and(|min_bytes| jobs.any_payload_from(min_bytes));
        let op = match (jobs.all_plain(), detached) {
            (true, false) => Op::EnqueuePlain,
            (true, true) => Op::EnqueueDetached,
            (false, _) => Op::Enqueue,
        };
        self.send_enqueue(op, queue, jobs, crate::enqueue_args::no_gate())
            .await
    }

    /// [`RedisQueue::send_jobs`] whose created jobs join `gate` (id and
    /// kind: `crate::workflow`).
    pub(crate) async fn send_jobs_into(
        &self,
        queue: &str,
        jobs: Jobs<'_>,
        gate: [Value; 2],
    ) -> Result<Vec<Enqueued>, QueueError> {
        self.send_enqueue(Op::Enqueue, queue, jobs, gate).await
    }

    /// One call of enqueue script `op` (enqueue or its variant) for `jobs`
    /// joining `gate` (id and kind, both empty for none).
    async fn send_enqueue(
        &self,
        op: Op,
        queue: &str,
        jobs: Jobs<'_>,
        gate: [Value; 2],
    ) -> Result<Vec<Enqueued>, QueueError> {
        let keys = self.queue_keys(queue)?;
        let count = jobs.len();
        let args = EnqueueArgs {
            head: [text(queue), text(self.inner.keys.wake_channel())],
            payload_limit: self.inner.payload_limit as u64,
            gate,
            format: self.record_format().wire(),
            jobs,
        };
        let reply = scripts::run_with(self.caller(), op, &keys, &args)
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
            outcomes.push(codes::enqueued(&code, reply::text(id)?)?);
        }
        Ok(outcomes)
    }

    /// Validate one job as every enqueue does and lay it out as its entries
    /// of enqueue.lua.
    pub(crate) fn encode(&self, job: &NewJob) -> Result<SingleJob, QueueError> {
        encode_single(job, self.inner.payload_limit)
    }

    /// Claim up to `limit` due jobs of `queue` for `lease`.
    ///
    /// Highest priority first, oldest first within a priority. Before
    /// claiming, lapsed leases of the queue are reclaimed (bounded per call)
    /// and delayed jobs that came due are promoted. A paused queue returns
    /// nothing. A `limit` of 0 returns no jobs without a round trip (the
    /// queue name and lease are still checked); one above
    /// [`limits::MAX_CLAIM`] (1000) claims at most that many.
    ///
    /// A claim that Redis starts more than half the handle's command
    /// timeout after it was sent (Redis stalled: its caller may have given
    /// up) leases nothing and returns no jobs, so no job is leased to a
    /// caller that never saw it; the moment is sent on Redis's own clock,
    /// as this handle's earlier claims measured it (before its first claim,
    /// a handle reads that clock once: one `TIME`, one round trip).
    ///
    /// A claim whose reply is lost (the connection broke, the command timed
    /// out) is not sent again: a second run would lease other jobs. It
    /// fails, and any job its run leased returns when its lease lapses,
    /// unless a [`Worker`](crate::worker::Worker) made the claim: a worker
    /// looks for them and gives them back at once (`crate::lost_claim`).
    pub async fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<Job>, QueueError> {
        self.claim_noting(queue, limit, lease, &mut None).await
    }

    /// [`RedisQueue::claim`], noting in `lost` a claim that failed after it
    /// may have leased jobs (`crate::lost_claim`).
    pub(crate) async fn claim_noting(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
        lost: &mut Option<LostClaim>,
    ) -> Result<Vec<Job>, QueueError> {
        let lease_ms = limits::check_lease(lease)?;
        let limit = limits::claim_count(limit);
        if limit == 0 {
            limits::check_queue_name(queue)?;
            return Ok(Vec::new());
        }
        self.read_redis_clock().await;
        let identity = self.identity;
        let clock = &self.inner.redis_clock;
        let window = crate::redis_clock::claim_start_window(self.inner.timeout);
        // The latest deadline sent (0: none), for a claim whose reply is
        // lost. Atomic only so that the claim's future stays `Send`.
        let deadline = std::sync::atomic::AtomicU64::new(0);
        // Built for each call made: once, or twice after a refusal. Each
        // carries the moment, on Redis's clock, after which it must lease
        // nothing (none before a reply has shown that clock).
        let args = || {
            let mut args = vec![
                num(limit as u64),
                num(lease_ms),
                num(identity.node),
                num(identity.instance as u64),
            ];
            let at = clock.in_redis_time(window);
            deadline.store(at.unwrap_or(0), Relaxed);
            args.extend(at.map(num));
            args
        };
        // To the variant declaring only the keys a claim that leases
        // waiting jobs touches (10 of 36), unless the queue's claims were
        // refused there lately (`scripts::variant_route`).
        let whole = &self.inner.whole_claims;
        let ops = (Op::ClaimPlain, Op::Claim);
        let sent = std::time::Instant::now();
        // What a failure of this claim may have left leased (`crate::lost_claim`).
        let lost_after = |e: &QueueError| {
            let deadline = Some(deadline.load(Relaxed)).filter(|at| *at > 0);
            LostClaim::after(
                e,
                queue,
                limit,
                lease_ms,
                clock.at_or_before(sent),
                deadline,
            )
        };
        let reply = self
            .run_variant(self.caller(), whole, ops, queue, false, args)
            .await
            .inspect_err(|e| *lost = lost_after(e))?;
        let items = reply::array(reply)?;
        if let Some(now) = items.first().and_then(|now| now.as_u64()) {
            clock.heard(now, sent);
        }
        let mut leased = Vec::with_capacity(items.len() / 2);
        let mut rest = items.into_iter().skip(1);
        while let (Some(id), Some(record)) = (rest.next(), rest.next()) {
            leased.push(crate::leased::leased_job(id, record)?);
        }
        // The jobs are leased; a read of their detached payloads that
        // fails so leaves them as a lost reply would.
        self.with_payloads(leased)
            .await
            .inspect_err(|e| *lost = lost_after(e))
    }

    /// Read Redis's clock (`TIME`), once a handle and unless a claim's
    /// reply showed it already, so that this handle's first claim carries a
    /// deadline too (`crate::redis_clock`), and a lost reply of it can be
    /// looked for (`crate::lost_claim`). A failure leaves the clock to the
    /// first claim's reply.
    async fn read_redis_clock(&self) {
        let clock = &self.inner.redis_clock;
        if !clock.read_first() {
            return;
        }
        let sent = std::time::Instant::now();
        if let Ok(now) = self.redis_now_ms(&self.inner.keys.jobs()).await {
            clock.heard(now, sent);
        }
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
        self.ack_batch_with(leases, &[]).await
    }

    /// [`RedisQueue::ack_batch`] with each job's [`Completion`] (its result
    /// and run time, kept when its queue keeps finished jobs, see
    /// [`crate::kept`]): `completions` is empty or one per lease. Sent in
    /// the same one call per queue and 1000 jobs.
    pub async fn ack_batch_with(
        &self,
        leases: &[Lease],
        completions: &[Completion],
    ) -> Result<Vec<Result<Acked, QueueError>>, QueueError> {
        self.ack_batch_by(self.caller(), leases, completions).await
    }

    /// [`RedisQueue::ack_batch_with`] for a caller that sends an ack again
    /// itself (a `Worker`'s acker): fred does not, so an ack whose reply a
    /// dropped connection lost fails back to the caller, and a second
    /// send's [`Acked::AlreadyGone`] is known to be the first send's doing,
    /// not an operator's delete (a resend by fred answered the same, and
    /// the worker counted a finished job as lost to someone else).
    pub(crate) async fn ack_batch_resent_by_caller(
        &self,
        leases: &[Lease],
        completions: &[Completion],
    ) -> Result<Vec<Result<Acked, QueueError>>, QueueError> {
        let caller = self.caller().resent_by_caller();
        self.ack_batch_by(caller, leases, completions).await
    }

    async fn ack_batch_by(
        &self,
        caller: scripts::Caller<'_>,
        leases: &[Lease],
        completions: &[Completion],
    ) -> Result<Vec<Result<Acked, QueueError>>, QueueError> {
        if !completions.is_empty() && completions.len() != leases.len() {
            return Err(QueueError::invalid(
                "completions",
                completions.len().to_string(),
                format!("none, or one per lease ({})", leases.len()),
            ));
        }
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
        // A namespace that detaches large payloads acks a mix of detached
        // and whole records: its acks go to the variant that also declares
        // the payloads' key, so a detached job does not send its queue's
        // acks to the whole script (26 keys more).
        let ack_variant = match self.record_format().detach_from() {
            Some(_) => Op::AckDetached,
            None => Op::AckPlain,
        };
        let calls = by_queue.iter().flat_map(|(queue, indexes)| {
            indexes.chunks(limits::MAX_CLAIM).map(move |chunk| {
                // A fifth argument per job, its noted flag, only when one
                // of the chunk has notes to forget (`crate::notes`).
                let noted = chunk
                    .iter()
                    .any(|&i| completions.get(i).is_some_and(Completion::is_noted));
                let per_job = match (completions.is_empty(), noted) {
                    (true, _) => 2,
                    (false, false) => 4,
                    (false, true) => 5,
                };
                let args = move || {
                    let mut args = Vec::with_capacity(1 + per_job * chunk.len());
                    args.push(num(chunk.len() as u64));
                    for &i in chunk {
                        args.push(text(leases[i].id.as_str()));
                        args.push(num(leases[i].lease_id));
                        if let Some(done) = completions.get(i) {
                            args.push(num(done.run_ms()));
                            args.push(text(done.result_json()));
                            if noted {
                                args.push(num(done.is_noted() as u64));
                            }
                        }
                    }
                    args
                };
                // Jobs with notes to forget need the whole script.
                let whole = &self.inner.whole_acks;
                let ops = (ack_variant, Op::Ack);
                async move {
                    (
                        chunk,
                        self.run_variant(caller, whole, ops, queue, noted, args)
                            .await,
                    )
                }
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
                if codes::result_unkept(code) {
                    crate::kept::warn_result_dropped(
                        self.namespace(),
                        &leases[i].queue,
                        &leases[i].id,
                    );
                }
                outcomes[i] = Some(codes::acked(code, &leases[i])?);
            }
        }
        Ok(outcomes
            .into_iter()
            .map(|o| o.expect("every lease got an outcome"))
            .collect())
    }

    /// One call of `queue` with the arguments `args` makes, to `ops`'
    /// variant (declaring fewer keys: each declared key costs the server
    /// about 1 200 instructions a call), unless `whole_only` or `whole`
    /// remembers the queue; a call the variant refuses (it wrote nothing)
    /// goes to the whole script, `ops`' second, and `whole` remembers the
    /// queue (`scripts::variant_route`).
    async fn run_variant(
        &self,
        caller: scripts::Caller<'_>,
        whole: &WholeQueues,
        (variant, op): (Op, Op),
        queue: &str,
        whole_only: bool,
        args: impl Fn() -> Vec<Value>,
    ) -> Result<Value, QueueError> {
        if whole_only || whole.contains(queue) {
            return self.run_by(caller, op, queue, args()).await;
        }
        match self.run_by(caller, variant, queue, args()).await {
            Err(e) if scripts::variant_route::refused_by_variant(&e) => {
                whole.insert(queue);
                self.run_by(caller, op, queue, args()).await
            }
            reply => reply,
        }
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
        self.fail_attempt(self.caller(), lease, delay, error, false, &NoteBatch::new())
            .await
    }

    /// The job must not be tried again: move it to the dead-letter set now.
    pub async fn dead_letter(&self, lease: &Lease, error: &str) -> Result<Nacked, QueueError> {
        self.fail_attempt(
            self.caller(),
            lease,
            Duration::ZERO,
            error,
            true,
            &NoteBatch::new(),
        )
        .await
    }

    /// A nack (`dead`: a dead-letter) carrying the job's last `notes` (see
    /// [`crate::notes`]) in the same call, through `caller` (a `Worker`
    /// sends it again itself).
    pub(crate) async fn fail_attempt(
        &self,
        caller: scripts::Caller<'_>,
        lease: &Lease,
        delay: Duration,
        error: &str,
        dead: bool,
        notes: &NoteBatch,
    ) -> Result<Nacked, QueueError> {
        check_lease(lease)?;
        let delay = limits::check_duration("retry delay", delay)?;
        let mut args = vec![
            text(lease.id.as_str()),
            num(lease.lease_id),
            num(delay),
            text(limits::cut_error(error)),
            num(dead as u64),
        ];
        if !notes.is_empty() {
            args.extend(notes.args());
        }
        let items = reply::array(self.run_by(caller, Op::Nack, &lease.queue, args).await?)?;
        codes::nacked(&items, lease)
    }

    /// Heartbeat: the lease now lapses `lease` from now (Redis clock).
    /// Returns the new expiry, or [`QueueError::LeaseLost`].
    pub async fn extend(&self, held: &Lease, lease: Duration) -> Result<SystemTime, QueueError> {
        self.extend_noting(held, lease, &NoteBatch::new()).await
    }

    /// [`RedisQueue::extend`] carrying `notes` (see [`crate::notes`]) in the
    /// same call, fenced by the same lease: refused notes are not written.
    pub async fn extend_noting(
        &self,
        held: &Lease,
        lease: Duration,
        notes: &NoteBatch,
    ) -> Result<SystemTime, QueueError> {
        check_lease(held)?;
        let lease_ms = limits::check_lease(lease)?;
        let mut args = vec![text(held.id.as_str()), num(held.lease_id), num(lease_ms)];
        if !notes.is_empty() {
            args.extend(notes.args());
        }
        let items = reply::array(self.run(Op::Extend, &held.queue, args).await?)?;
        codes::extended(&items, held)
    }

    /// Give a claimed job back unrun: due again at once, no attempt counted
    /// (graceful shutdown).
    pub async fn release(&self, lease: &Lease) -> Result<(), QueueError> {
        check_lease(lease)?;
        let args = vec![text(lease.id.as_str()), num(lease.lease_id)];
        codes::released(&self.run(Op::Release, &lease.queue, args).await?, lease)
    }

    /// Give back a job this worker was running as it shuts down, as
    /// [`RedisQueue::release`] does, recorded as a `given_back` event that
    /// says `why` and names the worker ([`crate::events::EventKind::GivenBack`]).
    pub(crate) async fn release_for_shutdown(
        &self,
        lease: &Lease,
        why: ShutdownRelease,
    ) -> Result<(), QueueError> {
        check_lease(lease)?;
        let args = vec![
            text(lease.id.as_str()),
            num(lease.lease_id),
            text(why.as_arg()),
        ];
        codes::released(&self.run(Op::Release, &lease.queue, args).await?, lease)
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

/// Coalesced enqueues go out through the handle's shared state.
impl SendBatch for Inner {
    async fn send_batch(
        self: Arc<Self>,
        queue: String,
        jobs: Vec<SingleJob>,
    ) -> Result<Vec<Enqueued>, QueueError> {
        let identity = self.identity;
        RedisQueue {
            inner: self,
            identity,
        }
        .send_encoded(&queue, &jobs)
        .await
    }
}

/// Check a lease handed back by a caller before it reaches a script: the id
/// must be a valid job id, and a lease id no claim can have issued (the
/// scripts count them in exact doubles, up to 2^53 - 1) is simply lost.
pub(crate) const MAX_LEASE_ID: u64 = (1 << 53) - 1;

pub(crate) fn check_lease(lease: &Lease) -> Result<(), QueueError> {
    limits::check_id(&lease.id)?;
    if lease.lease_id > MAX_LEASE_ID {
        return Err(lease_lost(lease));
    }
    Ok(())
}

impl crate::unwaited::Closable for RedisQueue {
    async fn close_unused(self) {
        self.close().await;
    }
}

/// Why a stopping worker gives back a job it was running: `release.lua`'s
/// fifth argument, which its `given_back` event puts in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShutdownRelease {
    /// The grace period ended while the handler ran: it was stopped
    /// mid-run, and the job runs again from its start.
    Interrupted,
    /// The handler stopped early for the shutdown
    /// ([`crate::worker::JobError::stopped`]).
    Stopped,
}

impl ShutdownRelease {
    fn as_arg(self) -> &'static str {
        match self {
            ShutdownRelease::Interrupted => "interrupted",
            ShutdownRelease::Stopped => "stopped",
        }
    }
}
