//! Operator calls: queue sizes, throughput, job listings, dead letters,
//! pausing. The console and the `redq` subcommands use only these.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use fred::interfaces::{ClientLike, HashesInterface, SetsInterface};
use serde::Serialize;

use crate::job::ms_to_time;
use crate::limits::{self, check_queue_name};
use crate::meta::Meta;
use crate::page::Page;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{DeadLetterReport, JobRecord, JobState, QueueError, RedisQueue};

/// Width of one throughput bucket.
pub const STATS_BUCKET: Duration = Duration::from_secs(5);

/// How many jobs a queue holds, by state, read in one atomic snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueCounts {
    /// The queue.
    pub queue: String,
    /// Due now, waiting to be claimed.
    pub waiting: u64,
    /// Delayed, or backing off before a retry.
    pub scheduled: u64,
    /// Claimed under a lease.
    pub leased: u64,
    /// In the dead-letter set.
    pub dead: u64,
    /// Waiting behind an earlier job with the same ordering key.
    pub blocked: u64,
    /// Leases past their expiry that nobody reclaimed yet.
    pub lapsed: u64,
    /// Completed jobs the queue keeps (see [`crate::kept`]).
    pub completed: u64,
    /// Cancelled jobs the queue keeps.
    pub cancelled: u64,
    /// Due jobs held back by their limit key's limits ([`crate::flow`]).
    pub held: u64,
    /// Jobs waiting for their batch, dependencies or tree
    /// ([`crate::workflow`]), held ones included.
    pub awaiting: u64,
    /// Scheduled jobs whose time has come (counted in `scheduled` too). A
    /// claim moves them to waiting, so while workers run this stays near 0;
    /// with none left, retries and delayed jobs pile up here, due but not
    /// waiting.
    pub due: u64,
    /// When the earliest of the `due` jobs came due.
    pub due_since: Option<SystemTime>,
    /// Claims hand out nothing while paused. Over shards: paused on any
    /// shard (a half-applied pause shows rather than hides; see
    /// `paused_shards`).
    pub paused: bool,
    /// How many of the `shards` these counts cover are paused: 0 or 1 for
    /// one namespace; over a `ShardedQueue`, the paused shards, so that a
    /// half-applied pause can say how far it got.
    pub paused_shards: u32,
    /// How many namespaces (shards) these counts cover: 1, or a
    /// `ShardedQueue`'s shard count.
    pub shards: u32,
    /// Enqueue time of the earliest enqueued waiting job, of any priority
    /// (not the claim order's head, which a newer job of a higher priority
    /// would replace, hiding a starved one).
    pub head_enqueued_at: Option<SystemTime>,
    /// Redis's clock when the snapshot was taken.
    pub now: SystemTime,
}

impl QueueCounts {
    /// Since when the job that has waited longest to run has been ready:
    /// the earliest waiting job's enqueue time (of any priority), or the
    /// moment the earliest
    /// due scheduled job came due, whichever is earlier; `None` when
    /// nothing is ready. What an operator's "oldest" and an age alert
    /// read: due jobs that no claim moved (every worker gone) count too.
    pub fn ready_since(&self) -> Option<SystemTime> {
        let head = self.head_enqueued_at.filter(|_| self.waiting > 0);
        match (head, self.due_since) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// How many jobs are in `state`: what a listing of that state totals,
    /// and what a bulk change of it starts from.
    pub fn in_state(&self, state: JobState) -> u64 {
        match state {
            JobState::Waiting => self.waiting,
            JobState::Scheduled => self.scheduled,
            JobState::Leased => self.leased,
            JobState::Dead => self.dead,
            JobState::Blocked => self.blocked,
            JobState::Held => self.held,
            JobState::Awaiting => self.awaiting,
            JobState::Completed => self.completed,
            JobState::Cancelled => self.cancelled,
        }
    }

    /// How many jobs are in `state`, for the states a bulk cancel takes
    /// (others are refused, saying which are taken).
    pub fn cancellable_in(&self, state: JobState) -> Result<u64, QueueError> {
        Ok(match state {
            JobState::Waiting => self.waiting,
            JobState::Scheduled => self.scheduled,
            JobState::Leased => self.leased,
            JobState::Dead => self.dead,
            JobState::Held => self.held,
            JobState::Awaiting => self.awaiting,
            _ => {
                return Err(QueueError::invalid(
                    "state",
                    state.as_str(),
                    "one of waiting, scheduled, leased, dead, held, awaiting (blocked jobs follow their waiting holder; cancel them by id)",
                ))
            }
        })
    }
}

impl QueueCounts {
    /// The counts of one queue over two namespaces (e.g. two shards of a
    /// `ShardedQueue`): sizes summed, paused when either is (a half-applied
    /// pause shows rather than hides), the older head, the later clock.
    #[must_use]
    pub fn plus(self, other: QueueCounts) -> QueueCounts {
        QueueCounts {
            queue: self.queue,
            waiting: self.waiting + other.waiting,
            scheduled: self.scheduled + other.scheduled,
            leased: self.leased + other.leased,
            dead: self.dead + other.dead,
            blocked: self.blocked + other.blocked,
            lapsed: self.lapsed + other.lapsed,
            completed: self.completed + other.completed,
            cancelled: self.cancelled + other.cancelled,
            held: self.held + other.held,
            awaiting: self.awaiting + other.awaiting,
            due: self.due + other.due,
            due_since: match (self.due_since, other.due_since) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            paused: self.paused || other.paused,
            paused_shards: self.paused_shards + other.paused_shards,
            shards: self.shards + other.shards,
            head_enqueued_at: match (self.head_enqueued_at, other.head_enqueued_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            now: self.now.max(other.now),
        }
    }
}

/// One throughput bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StatsBucket {
    /// Start of the bucket (Redis clock).
    pub start: SystemTime,
    /// Jobs acknowledged in it.
    pub processed: u64,
    /// Failed attempts in it (retries and dead letters).
    pub failed: u64,
}

/// An event from the `{ns}:events` stream: one transition (see
/// [`EventKind`](crate::events::EventKind) for what each kind carries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueEvent {
    /// The stream entry id (time-ordered).
    pub event_id: String,
    /// What happened: an [`EventKind`](crate::events::EventKind)'s text
    /// (`dead`, `enqueued`, …).
    pub kind: String,
    /// The queue ("" for the worker registry's kinds).
    pub queue: String,
    /// The job, when the transition is about one ("" for a batch); for a
    /// gate's kinds the gate, for a schedule's changes (`schedule_created`
    /// and the like) the schedule's name (see
    /// [`EventKind`](crate::events::EventKind)).
    pub job_id: String,
    /// The job type name, if any.
    pub name: Option<String>,
    /// The error of a failed attempt ("" for other kinds).
    pub error: String,
    /// Failed attempts (retried and dead), or the attempt counter requeued
    /// dead letters restart at (requeued); 0 for other kinds.
    pub attempts: u32,
    /// How many jobs the transition covers (a batch's enqueue or ack, a
    /// bulk requeue, delete or cancel), when it says.
    pub count: Option<u64>,
    /// Who did it, for an operator action through a handle with an actor
    /// ([`RedisQueueBuilder::actor`](crate::RedisQueueBuilder::actor)) or a
    /// cancel given a `by`.
    pub by: Option<String>,
    /// The kind's own words: a limit's scope and figures, a schedule's
    /// name, a worker's id, a bulk action's state.
    pub detail: Option<String>,
    /// When it happened.
    pub at: SystemTime,
    /// The namespace whose stream it came from (which shard, when a queue
    /// is sharded).
    pub namespace: String,
}

impl QueueEvent {
    /// Where it stands in time, for merging the streams of several shards
    /// (or the main and traffic streams): when it happened, then its entry
    /// id as the numbers it is (`…-10` after `…-9`, which as text it is
    /// not).
    pub fn position(&self) -> (SystemTime, u64, u64) {
        let (ms, seq) = self
            .event_id
            .split_once('-')
            .unwrap_or((&self.event_id, "0"));
        (self.at, ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
    }
}

impl RedisQueue {
    /// Every queue that has ever been enqueued to, sorted. A name in the
    /// index that no enqueue could have written (one a queue name may not
    /// be, put there by hand) is left out, so that every name listed can
    /// be read: [`refused_queue_names`](Self::refused_queue_names) lists
    /// those.
    pub async fn queues(&self) -> Result<Vec<String>, QueueError> {
        Ok(self.queue_index().await?.0)
    }

    /// The names in the queue index that [`queues`](Self::queues) leaves
    /// out because they break the queue name rule (control characters,
    /// `{`, `}`, `:`, empty or over 128 bytes), sorted. Only someone with
    /// write access to Redis can have put them there; they are returned
    /// as stored, so a caller that shows one must escape it.
    pub async fn refused_queue_names(&self) -> Result<Vec<String>, QueueError> {
        Ok(self.queue_index().await?.1)
    }

    /// The queue index, read once and split into the names redq accepts
    /// and those it refuses, each sorted. One bad entry must not make
    /// every listing fail: the reads per queue check the name and would
    /// refuse it.
    async fn queue_index(&self) -> Result<(Vec<String>, Vec<String>), QueueError> {
        let mut names: Vec<String> = self
            .client()
            .smembers(self.inner.keys.queues())
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        names.sort();
        Ok(names
            .into_iter()
            .partition(|name| check_queue_name(name).is_ok()))
    }

    /// The queue's size by state, in one atomic snapshot.
    pub async fn counts(&self, queue: &str) -> Result<QueueCounts, QueueError> {
        let items = reply::array(self.run(Op::Counts, queue, Vec::new()).await?)?;
        let field = |i: usize| reply::count_at(&items, i);
        let head = field(7)?;
        Ok(QueueCounts {
            queue: queue.to_owned(),
            waiting: field(0)?,
            scheduled: field(1)?,
            leased: field(2)?,
            dead: field(3)?,
            blocked: field(4)?,
            lapsed: field(5)?,
            completed: field(9)?,
            cancelled: field(10)?,
            held: field(11)?,
            awaiting: field(12)?,
            due: field(13)?,
            due_since: Some(field(14)?).filter(|ms| *ms > 0).map(ms_to_time),
            paused: field(6)? == 1,
            paused_shards: u32::from(field(6)? == 1),
            shards: 1,
            head_enqueued_at: (head > 0).then(|| ms_to_time(head)),
            now: ms_to_time(field(8)?),
        })
    }

    /// Processed and failed counts of the last ~16 minutes in
    /// [`STATS_BUCKET`]-wide buckets, oldest first; buckets without
    /// activity are absent.
    pub async fn stats(&self, queue: &str) -> Result<Vec<StatsBucket>, QueueError> {
        check_queue_name(queue)?;
        let fields: std::collections::HashMap<String, u64> = self
            .client()
            .hgetall(self.inner.keys.stats(queue))
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        let mut buckets: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        for (field, count) in fields {
            let (kind, index) = field.split_at(1.min(field.len()));
            let Ok(index) = index.parse::<u64>() else {
                continue;
            };
            let entry = buckets.entry(index).or_default();
            match kind {
                "p" => entry.0 += count,
                "f" => entry.1 += count,
                _ => {}
            }
        }
        let width = STATS_BUCKET.as_millis() as u64;
        Ok(buckets
            .into_iter()
            .map(|(index, (processed, failed))| StatsBucket {
                start: ms_to_time(index * width),
                processed,
                failed,
            })
            .collect())
    }

    /// One page of a queue's jobs in `state` (waiting in claim order,
    /// scheduled soonest first, leased soonest expiry first, dead newest
    /// first, held by limit key, then in claim order within a key, blocked
    /// by ordering key, then in the order they will run: see
    /// [`list_blocked`](Self::list_blocked)). `count` is 1 to 1000.
    pub async fn list_jobs(
        &self,
        queue: &str,
        state: JobState,
        offset: u64,
        count: usize,
    ) -> Result<Page<JobRecord>, QueueError> {
        limits::check_limit("page size", count, 1000)?;
        if let Some(outcome) = crate::kept::Outcome::of_state(state) {
            let page = self.list_kept(queue, outcome, offset, count).await?;
            return Ok(Page {
                total: page.total,
                items: page
                    .items
                    .iter()
                    .map(crate::kept::KeptJob::to_record)
                    .collect(),
            });
        }
        if state == JobState::Blocked {
            return self.list_blocked(queue, offset, count).await;
        }
        // A sorted set holds fewer than 2^32 members, so any larger offset is
        // past the end as well; the script accepts offsets up to u32::MAX.
        let offset = offset.min(u32::MAX as u64);
        let args = vec![text(state.as_str()), num(offset), num(count as u64)];
        let items = reply::array(self.run(Op::ListJobs, queue, args).await?)?;
        let total = items.first().map(reply::int).transpose()?.unwrap_or(0) as u64;
        let jobs = self.listed_rows(state, items.into_iter().skip(2))?;
        Ok(Page { total, items: jobs })
    }

    /// The jobs of a listing script's reply rows (`lua/lib/listed_job.lua`:
    /// id, score, packed meta, payload), all in `state`; a job gone before
    /// its row was read (empty meta) is left out.
    pub(crate) fn listed_rows(
        &self,
        state: JobState,
        mut rows: impl Iterator<Item = fred::types::Value>,
    ) -> Result<Vec<JobRecord>, QueueError> {
        let mut jobs = Vec::new();
        while let (Some(id), Some(score), Some(meta), Some(payload)) =
            (rows.next(), rows.next(), rows.next(), rows.next())
        {
            let meta_raw = reply::bytes(meta)?;
            if meta_raw.is_empty() {
                continue;
            }
            let score = reply::score(&score).ok();
            jobs.push(JobRecord::from_parts(
                self.namespace(),
                reply::text(id)?,
                state,
                &reply::bytes(payload)?,
                Meta::decode(&meta_raw)?,
                score,
            ));
        }
        Ok(jobs)
    }

    /// The stored record of job `id` (read outside any script: a hint of
    /// its queue and holder, which the scripts then check).
    pub(crate) async fn stored_meta(&self, id: &str) -> Result<Option<Meta>, QueueError> {
        let raw: Option<Vec<u8>> = self
            .client()
            .hget(self.inner.keys.jobs(), id)
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        raw.map(|raw| Meta::decode(&raw)).transpose()
    }

    /// Everything about one job, or `None` when no such job exists.
    pub async fn inspect(&self, id: &str) -> Result<Option<JobRecord>, QueueError> {
        limits::check_id(id)?;
        let Some(queue) = self.stored_meta(id).await?.map(|meta| meta.queue) else {
            return Ok(None);
        };
        let items = reply::array(self.run(Op::Inspect, &queue, vec![text(id)]).await?)?;
        let mut it = items.into_iter();
        let (Some(state), Some(meta), Some(payload), _now, score) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            return Ok(None);
        };
        let state = reply::text(state)?;
        let state = JobState::parse(&state)
            .ok_or_else(|| QueueError::Protocol(format!("unknown job state {state}")))?;
        let meta = Meta::decode(&reply::bytes(meta)?)?;
        let score = score.as_ref().and_then(|s| reply::score(s).ok());
        Ok(Some(JobRecord::from_parts(
            self.namespace(),
            id.to_owned(),
            state,
            &reply::bytes(payload)?,
            meta,
            score,
        )))
    }

    /// Apply `action` to these dead letters of `queue`, in batches of
    /// [`limits::DEAD_BATCH`] (the by-id form of every dead-letter change).
    pub async fn change_dead(
        &self,
        action: DeadAction,
        queue: &str,
        ids: &[String],
    ) -> Result<DeadLetterReport, QueueError> {
        for id in ids {
            limits::check_id(id)?;
        }
        self.queue_keys(queue)?;
        if ids.is_empty() {
            // Never send an empty id list: the scripts read it as "the
            // oldest dead letters" (the requeue-all / purge mode).
            return Ok(DeadLetterReport {
                dead_left: self.counts(queue).await?.dead,
                ..DeadLetterReport::default()
            });
        }
        let mut total = DeadLetterReport::default();
        for chunk in ids.chunks(limits::DEAD_BATCH) {
            let mut args = action.args();
            args.extend(chunk.iter().map(|id| text(id.as_str())));
            let report = self.dead_call(action.op(), queue, args).await?;
            total.done += report.done;
            total.not_found += report.not_found;
            total.dead_left = report.dead_left;
        }
        Ok(total)
    }

    /// Apply `action` to every dead letter of `queue`,
    /// [`limits::DEAD_BATCH`] per script call; `progress` is told (done so
    /// far, left). Stops after as many batches as the dead set held at the
    /// start, so jobs dying again meanwhile cannot keep it looping.
    pub async fn drain_dead(
        &self,
        action: DeadAction,
        queue: &str,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<u64, QueueError> {
        let initial = self.counts(queue).await?.dead;
        let max_rounds = initial / limits::DEAD_BATCH as u64 + 1;
        let mut done = 0;
        for _ in 0..max_rounds {
            let report = self.dead_call(action.op(), queue, action.args()).await?;
            done += report.done;
            progress(done, report.dead_left);
            if report.done == 0 || report.dead_left == 0 {
                break;
            }
        }
        Ok(done)
    }

    async fn dead_call(
        &self,
        op: Op,
        queue: &str,
        args: Vec<fred::types::Value>,
    ) -> Result<DeadLetterReport, QueueError> {
        let items = reply::array(self.run(op, queue, args).await?)?;
        let field = |i: usize| reply::count_at(&items, i);
        Ok(DeadLetterReport {
            done: field(0)?,
            not_found: field(1)?,
            dead_left: field(2)?,
        })
    }

    // The named forms, on top of the two general calls above.
    crate::dead_forms::dead_letter_forms!();

    /// Pause a queue: claims hand out nothing until it is resumed. Jobs can
    /// still be enqueued, and held leases run to their end.
    ///
    /// Pausing works while Redis is out of memory (`maxmemory` reached with
    /// `noeviction`), when an operator may need it most: it is one script
    /// (`lua/pause.lua`) allowed to run then, adding one set member, the
    /// queue name, and its event, so Redis overshoots `maxmemory` by at
    /// most that. [`resume`](Self::resume) works then too.
    pub async fn pause(&self, queue: &str) -> Result<(), QueueError> {
        self.pause_or_resume(queue, "pause").await
    }

    /// Resume a paused queue and wake its idle workers. Works while Redis is
    /// out of memory, event included (`lua/pause.lua`).
    pub async fn resume(&self, queue: &str) -> Result<(), QueueError> {
        self.pause_or_resume(queue, "resume").await
    }

    async fn pause_or_resume(&self, queue: &str, step: &str) -> Result<(), QueueError> {
        check_queue_name(queue)?;
        let code = self.run(Op::Pause, queue, vec![text(step)]).await?;
        // Already paused is as good as paused, and not paused as resumed.
        crate::codes::pause_changed(&code)?;
        Ok(())
    }
}

/// Resource figures of the Redis server, from `INFO`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ServerStats {
    /// The server process's `run_id` (`INFO server`): tells apart the
    /// servers of several namespaces (the shards of a
    /// [`ShardedQueue`](crate::ShardedQueue) may share one); a restart
    /// changes it.
    pub run_id: String,
    /// CPU time Redis spent in user mode since it started, in seconds.
    pub used_cpu_user_s: f64,
    /// CPU time Redis spent in the kernel since it started, in seconds.
    pub used_cpu_sys_s: f64,
    /// Bytes allocated by Redis (`used_memory`).
    pub used_memory_bytes: u64,
    /// Of `used_memory`, the bytes Redis leaves out when it compares its use
    /// with `maxmemory` (`mem_not_counted_for_evict`: replication and AOF
    /// buffers).
    pub not_counted_for_evict_bytes: u64,
    /// The server's `maxmemory`; 0 when it has no limit.
    pub maxmemory_bytes: u64,
    /// What the server does at `maxmemory` (`maxmemory_policy`):
    /// `noeviction` refuses writes, the others evict keys. Empty when the
    /// server did not say.
    pub maxmemory_policy: String,
    /// Seconds since this server process started (`uptime_in_seconds`).
    pub uptime_s: u64,
}

impl ServerStats {
    fn parse(info: &str) -> ServerStats {
        let mut stats = ServerStats::default();
        for line in info.lines() {
            let Some((key, value)) = line.trim().split_once(':') else {
                continue;
            };
            match key {
                "used_cpu_user" => stats.used_cpu_user_s = value.parse().unwrap_or(0.0),
                "used_cpu_sys" => stats.used_cpu_sys_s = value.parse().unwrap_or(0.0),
                "used_memory" => stats.used_memory_bytes = value.parse().unwrap_or(0),
                "mem_not_counted_for_evict" => {
                    stats.not_counted_for_evict_bytes = value.parse().unwrap_or(0)
                }
                "maxmemory" => stats.maxmemory_bytes = value.parse().unwrap_or(0),
                "maxmemory_policy" => stats.maxmemory_policy = value.to_owned(),
                "uptime_in_seconds" => stats.uptime_s = value.parse().unwrap_or(0),
                "run_id" => stats.run_id = value.to_owned(),
                _ => {}
            }
        }
        stats
    }
}

impl RedisQueue {
    /// The CPU and memory use and limit (`INFO cpu` and `INFO memory`), and
    /// the run id and uptime (`INFO server`), of the server that holds this
    /// namespace: on Redis Cluster, the primary serving its slot (it used
    /// to be any node, so a bench on a cluster reported another primary's
    /// figures). A user whose ACL refuses `INFO` gets the refusal.
    pub async fn server_stats(&self) -> Result<ServerStats, QueueError> {
        let slot = fred::util::redis_keyslot(self.inner.keys.jobs().as_bytes());
        // One section a call (INFO takes several only since Redis 7.0),
        // sent together: one round trip, not three.
        let parts = ["cpu", "memory", "server"].map(|section| async move {
            self.client()
                .custom::<String, _>(
                    fred::types::CustomCommand::new_static(
                        "INFO",
                        fred::types::ClusterHash::Custom(slot),
                        false,
                    ),
                    vec![section],
                )
                .await
                .map_err(|e| QueueError::from_redis(e, self.inner.timeout))
        });
        let parts = futures::future::try_join_all(parts).await?;
        Ok(ServerStats::parse(&parts.concat()))
    }
}

/// What a change of dead letters does to each (the CLI's `dead requeue`
/// and `dead delete`, the console's `r` and `d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadAction {
    /// Back to waiting, the attempt counter set to `attempts` (usually 0).
    Requeue {
        /// The attempt counter the job restarts from.
        attempts: u32,
    },
    /// Removed for good.
    Delete,
}

// The script, and its arguments before the job ids (lua/requeue_dead.lua,
// lua/delete_dead.lua).
impl DeadAction {
    fn op(self) -> Op {
        match self {
            DeadAction::Requeue { .. } => Op::RequeueDead,
            DeadAction::Delete => Op::DeleteDead,
        }
    }

    fn args(self) -> Vec<fred::types::Value> {
        let limit = num(limits::DEAD_BATCH as u64);
        match self {
            DeadAction::Requeue { attempts } => vec![limit, num(attempts as u64)],
            DeadAction::Delete => vec![limit],
        }
    }
}
