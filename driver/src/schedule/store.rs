//! Schedules on a [`RedisQueue`]: upsert, read, list, pause, resume, delete,
//! trigger; and the two calls a [`crate::schedule::Scheduler`] makes, `due`
//! and `fire`.

use std::time::SystemTime;

use fred::types::Value;

use crate::codes;
use crate::job::time_to_ms;
use crate::keys::QueueKeys;
use crate::limits::{self, MAX_TIME_MS};
use crate::outcome::schedule::FireOutcome;
use crate::schedule::cron::CronExpr;
use crate::schedule::record::Record;
use crate::schedule::{Schedule, ScheduleChange, ScheduleInfo, Triggered, Upserted};
use crate::scripts::{self, reply, Op};
use crate::scripts::{num, text};
use crate::{QueueError, RedisQueue};

/// Longest schedule name, in bytes.
pub const MAX_SCHEDULE_NAME: usize = 128;

/// How many times a call that read a schedule retries when an upsert changed
/// it before the call's script ran.
const CHANGED_RETRIES: usize = 5;

/// Schedules listed per script call.
const LIST_PAGE: u64 = 200;

/// One due schedule, as the due script reports it.
#[derive(Debug)]
pub(crate) struct Due {
    pub name: String,
    pub tick_ms: u64,
    /// `None` for a next-run entry without a record (a foreign writer).
    pub record: Option<Result<Record, QueueError>>,
}

/// A scheduler's view of the schedules: what is due, Redis's clock, and the
/// soonest next run of all.
#[derive(Debug)]
pub(crate) struct DueSet {
    pub now_ms: u64,
    pub earliest_ms: Option<u64>,
    pub due: Vec<Due>,
}

/// Schedule names are hash fields and feed the tick job ids: bounded, no
/// control characters.
pub(crate) fn check_schedule_name(name: &str) -> Result<(), QueueError> {
    limits::check_text("schedule name", name, MAX_SCHEDULE_NAME)
}

/// The first tick strictly after `after_ms`, at or after `starts_at_ms`, and
/// at or before `ends_at_ms` (0 = no bound); 0 when there is none.
pub(crate) fn first_tick(
    cron: &CronExpr,
    after_ms: u64,
    starts_at_ms: u64,
    ends_at_ms: u64,
) -> u64 {
    let from = after_ms.max(starts_at_ms.saturating_sub(1));
    match cron.next_after_ms(from) {
        Some(next) if ends_at_ms == 0 || next <= ends_at_ms => next,
        _ => 0,
    }
}

fn time_ms(what: &'static str, at: Option<SystemTime>) -> Result<u64, QueueError> {
    let Some(at) = at else { return Ok(0) };
    let ms = time_to_ms(at);
    if ms == 0 || ms > MAX_TIME_MS {
        return Err(QueueError::invalid(
            what,
            format!("{at:?}"),
            "a time after 1970 and before the year 6000",
        ));
    }
    Ok(ms)
}

impl RedisQueue {
    fn schedule_keys(&self) -> QueueKeys {
        QueueKeys::from(vec![
            self.inner.keys.schedules(),
            self.inner.keys.schedules_next(),
        ])
    }

    /// Run a schedule script that touches no queue (KEYS = the two schedule keys).
    async fn run_schedules(&self, op: Op, args: Vec<Value>) -> Result<Value, QueueError> {
        scripts::run(self.caller(), op, &self.schedule_keys(), args)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))
    }

    /// Run a schedule change that touches no queue but writes its event
    /// (pause, resume, delete): KEYS = the two schedule keys, then
    /// `{ns}:events`; the handle's actor is appended as for any operator
    /// action.
    async fn change_schedule(&self, op: Op, mut args: Vec<Value>) -> Result<Value, QueueError> {
        let mut keys = self.schedule_keys();
        keys.0.push(self.inner.keys.events().into());
        self.attribute(op, &mut args);
        scripts::run(self.caller(), op, &keys, args)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))
    }

    /// Run a schedule script on a queue: KEYS = the 19 queue keys, then the
    /// two schedule keys; ARGV starts with the queue and the wake channel.
    async fn run_schedules_on(
        &self,
        op: Op,
        queue: &str,
        mut args: Vec<Value>,
    ) -> Result<Value, QueueError> {
        let mut keys = self.queue_keys(queue)?.0.clone();
        keys.extend(self.schedule_keys().0);
        let mut argv = Vec::with_capacity(args.len() + 2);
        argv.push(text(queue));
        argv.push(text(self.inner.keys.wake_channel()));
        argv.append(&mut args);
        self.attribute(op, &mut argv);
        scripts::run(self.caller(), op, &QueueKeys(keys), argv)
            .await
            .map_err(|e| scripts::map_error(e, self.inner.timeout))
    }

    /// Redis's clock and the stored record of `name`, if any.
    async fn load_schedule(&self, name: &str) -> Result<(u64, Option<Record>), QueueError> {
        let items = reply::array(
            self.run_schedules(Op::ScheduleGet, vec![text(name)])
                .await?,
        )?;
        let [now, raw, next] = items.as_slice() else {
            return Err(QueueError::Protocol(
                "schedule_get reply is not 3 items".into(),
            ));
        };
        let now = reply::int(now)?.max(0) as u64;
        let raw = reply::bytes(raw.clone())?;
        if raw.is_empty() {
            return Ok((now, None));
        }
        Ok((now, Some(Record::decode(&raw, reply::int(next)?)?)))
    }

    /// Create or replace the schedule named `schedule.name`.
    ///
    /// Everything is validated before anything is written: a bad expression
    /// or time zone fails with [`QueueError::Invalid`] naming it
    /// (`what` = `"cron expression"`, `"interval"` for a bad `@every`, or
    /// `"timezone"`), and nothing is stored.
    /// So does an end ([`Schedule::ends_at`]) that leaves no tick, because it
    /// has passed on Redis's clock or comes before the first tick (`what` =
    /// `"ends_at"`, naming the end and now): such a schedule would never
    /// run. The one exception is an upsert of the timing already stored
    /// (expression, time zone, start and end): an application re-upserting
    /// its schedules at every start keeps working after one has ended, and
    /// gets [`Upserted::Updated`] with no next run
    /// ([`ScheduleInfo::ended`] then says so).
    ///
    /// The first tick is computed from Redis's clock: the first one strictly
    /// after now (and at or after [`Schedule::starts_at`]). Replacing a
    /// schedule keeps its last run and last job id, and keeps its next run
    /// when the expression, time zone, start and end are unchanged, so
    /// upserting the same schedules at every application start is harmless.
    /// A new payload or option applies from the next tick on.
    pub async fn upsert_schedule(&self, schedule: Schedule) -> Result<Upserted, QueueError> {
        check_schedule_name(&schedule.name)?;
        self.queue_keys(&schedule.queue)?;
        let cron = CronExpr::parse(&schedule.expression, &schedule.timezone)?;
        let payload = serde_json::to_string(&schedule.payload)
            .map_err(|e| QueueError::invalid("payload", e.to_string(), "serializable JSON"))?;
        if payload.len() > self.inner.payload_limit {
            return Err(QueueError::PayloadTooLarge {
                size: payload.len(),
                limit: self.inner.payload_limit,
            });
        }
        if let Some(name) = &schedule.job_name {
            limits::check_text("job name", name, limits::MAX_JOB_NAME)?;
        }
        let retry_window = limits::check_retry_window(schedule.retry_window)?;
        let starts_at = time_ms("starts_at", schedule.starts_at)?;
        let ends_at = time_ms("ends_at", schedule.ends_at)?;
        if ends_at > 0 && ends_at < starts_at {
            return Err(QueueError::invalid(
                "ends_at",
                schedule
                    .ends_at
                    .map(crate::human::time_text)
                    .unwrap_or_default(),
                "a time at or after starts_at",
            ));
        }

        let (now, stored) = self.load_schedule(&schedule.name).await?;
        let next_run = first_tick(&cron, now, starts_at, ends_at);
        if next_run == 0 && ends_at > 0 {
            // Re-upserting the stored timing of a schedule that has since
            // ended is the documented start-up routine, not a mistake.
            let stored_timing = stored.as_ref().is_some_and(|r| {
                r.info.expression == schedule.expression
                    && r.info.timezone == schedule.timezone
                    && r.starts_at_ms == starts_at
                    && r.ends_at_ms == ends_at
            });
            if !stored_timing {
                return Err(never_fires(&cron, now, starts_at, ends_at));
            }
        }
        let paused = match schedule.paused {
            Some(true) => 1,
            Some(false) => 0,
            None => 2,
        };
        let args = vec![
            text(schedule.name.as_str()),
            text(schedule.expression.as_str()),
            text(schedule.timezone.as_str()),
            text(payload),
            num(u64::from(schedule.priority)),
            num(u64::from(schedule.max_attempts)),
            text(schedule.job_name.as_deref().unwrap_or("")),
            num(retry_window),
            num(paused),
            num(starts_at),
            num(ends_at),
            num(schedule.misfire.code()),
            num(next_run),
            num(self.inner.payload_limit as u64),
        ];
        let items = reply::array(
            self.run_schedules_on(Op::ScheduleUpsert, &schedule.queue, args)
                .await?,
        )?;
        codes::upserted(&items)
    }

    /// The schedule named `name`, or `None`.
    pub async fn schedule(&self, name: &str) -> Result<Option<ScheduleInfo>, QueueError> {
        check_schedule_name(name)?;
        Ok(self.load_schedule(name).await?.1.map(|r| r.info))
    }

    /// Every schedule of the namespace, sorted by name, each with its next
    /// run, last run and last job id. Read in pages of a few hundred.
    pub async fn list_schedules(&self) -> Result<Vec<ScheduleInfo>, QueueError> {
        let mut cursor = "0".to_owned();
        let mut out = Vec::new();
        loop {
            let items = reply::array(
                self.run_schedules(
                    Op::ScheduleList,
                    vec![text(cursor.as_str()), num(LIST_PAGE)],
                )
                .await?,
            )?;
            let mut it = items.into_iter();
            let (Some(next_cursor), Some(_now)) = (it.next(), it.next()) else {
                return Err(QueueError::Protocol("schedule_list reply is short".into()));
            };
            while let (Some(_name), Some(raw), Some(next)) = (it.next(), it.next(), it.next()) {
                let raw = reply::bytes(raw)?;
                out.push(Record::decode(&raw, reply::int(&next)?)?.info);
            }
            cursor = reply::text(next_cursor)?;
            if cursor == "0" {
                break;
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out.dedup_by(|a, b| a.name == b.name); // HSCAN may repeat a field
        Ok(out)
    }

    /// Pause the schedule: no tick fires until it is resumed, and the ticks
    /// that pass meanwhile are not fired later.
    pub async fn pause_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        check_schedule_name(name)?;
        let reply = self
            .change_schedule(Op::SchedulePause, vec![text(name), num(1), num(0), num(0)])
            .await?;
        // A pause does not check the revision, so "changed" never comes back.
        codes::schedule_changed(&reply)?
            .ok_or_else(|| QueueError::Protocol("schedule_pause replied changed to a pause".into()))
    }

    /// Resume a paused schedule from its first tick after now (Redis clock).
    pub async fn resume_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        check_schedule_name(name)?;
        for _ in 0..CHANGED_RETRIES {
            let (now, record) = self.load_schedule(name).await?;
            let Some(record) = record else {
                return Ok(ScheduleChange::NotFound);
            };
            if !record.info.paused {
                return Ok(ScheduleChange::Unchanged);
            }
            let cron = CronExpr::parse(&record.info.expression, &record.info.timezone)?;
            let next = first_tick(&cron, now, record.starts_at_ms, record.ends_at_ms);
            let reply = self
                .change_schedule(
                    Op::SchedulePause,
                    vec![text(name), num(0), num(record.info.revision), num(next)],
                )
                .await?;
            if let Some(change) = codes::schedule_changed(&reply)? {
                return Ok(change);
            }
        }
        Err(changed_too_often(name))
    }

    /// Delete the schedule. Jobs it already enqueued are left alone.
    pub async fn delete_schedule(&self, name: &str) -> Result<ScheduleChange, QueueError> {
        check_schedule_name(name)?;
        let reply = self
            .change_schedule(Op::ScheduleDelete, vec![text(name), num(0)])
            .await?;
        codes::schedule_deleted(&reply)
    }

    /// Enqueue the schedule's job now, with its payload and options, without
    /// touching its next run. Works on a paused schedule too. The job id is a
    /// fresh ULID (a tick's job id is derived from the tick instead).
    pub async fn trigger_schedule(&self, name: &str) -> Result<Triggered, QueueError> {
        check_schedule_name(name)?;
        let id = crate::job_id::next().to_string();
        for _ in 0..CHANGED_RETRIES {
            let (_, record) = self.load_schedule(name).await?;
            let Some(record) = record else {
                return Ok(Triggered::NotFound);
            };
            let items = reply::array(
                self.run_schedules_on(
                    Op::ScheduleTrigger,
                    &record.info.queue,
                    vec![text(name), text(id.as_str()), self.record_format().wire()],
                )
                .await?,
            )?;
            if let Some(triggered) = codes::triggered(&items, &id)? {
                return Ok(triggered);
            }
        }
        Err(changed_too_often(name))
    }

    /// Up to `limit` schedules whose next run has come, with Redis's clock.
    pub(crate) async fn due_schedules(&self, limit: usize) -> Result<DueSet, QueueError> {
        let items = reply::array(
            self.run_schedules(Op::ScheduleDue, vec![num(limit as u64)])
                .await?,
        )?;
        let mut it = items.into_iter();
        let (Some(now), Some(earliest)) = (it.next(), it.next()) else {
            return Err(QueueError::Protocol("schedule_due reply is short".into()));
        };
        let mut due = Vec::new();
        while let (Some(name), Some(tick), Some(raw)) = (it.next(), it.next(), it.next()) {
            let tick_ms = reply::int(&tick)?;
            let raw = reply::bytes(raw)?;
            due.push(Due {
                name: reply::text(name)?,
                tick_ms: tick_ms.max(0) as u64,
                record: (!raw.is_empty()).then(|| Record::decode(&raw, tick_ms)),
            });
        }
        Ok(DueSet {
            now_ms: reply::int(&now)?.max(0) as u64,
            earliest_ms: u64::try_from(reply::int(&earliest)?).ok(),
            due,
        })
    }

    /// Fire one tick: see `lua/schedule_fire.lua`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn fire_schedule(
        &self,
        queue: &str,
        name: &str,
        revision: u64,
        tick_ms: u64,
        job_id: &str,
        following_ms: u64,
        enqueue: bool,
    ) -> Result<FireOutcome, QueueError> {
        let args = vec![
            text(name),
            num(revision),
            num(tick_ms),
            text(job_id),
            num(following_ms),
            num(u64::from(enqueue)),
            self.record_format().wire(),
        ];
        let items = reply::array(self.run_schedules_on(Op::ScheduleFire, queue, args).await?)?;
        codes::fired(&items)
    }

    /// Drop a next-run entry that has no schedule record.
    pub(crate) async fn drop_orphan_schedule(&self, name: &str) -> Result<(), QueueError> {
        self.change_schedule(Op::ScheduleDelete, vec![text(name), num(1)])
            .await?;
        Ok(())
    }
}

/// The refusal of an upsert whose end leaves no tick: the end has passed on
/// Redis's clock (`now_ms`), or no tick falls between now (or the start) and
/// the end. Stored, it would list as a schedule that never runs.
fn never_fires(cron: &CronExpr, now_ms: u64, starts_at_ms: u64, ends_at_ms: u64) -> QueueError {
    let text = |ms: u64| crate::human::time_text(crate::job::ms_to_time(ms));
    let end = text(ends_at_ms);
    let rule = if ends_at_ms <= now_ms {
        format!(
            "a time after now ({} on the Redis clock): this end has passed, so the schedule \
             would never fire",
            text(now_ms)
        )
    } else {
        match first_tick(cron, now_ms, starts_at_ms, 0) {
            0 => "a time at or after the schedule's first tick".to_owned(),
            first => format!(
                "a time at or after the schedule's first tick, {} (now {} on the Redis \
                 clock): no tick of {:?} falls before this end, so the schedule would never fire",
                text(first),
                text(now_ms),
                cron.expression()
            ),
        }
    };
    QueueError::invalid("ends_at", end, rule)
}

fn changed_too_often(name: &str) -> QueueError {
    QueueError::Protocol(format!(
        "schedule {name} changed {CHANGED_RETRIES} times while being read; try again"
    ))
}
