//! `redq schedules [list]|show|set|trigger|pause|resume|delete NAME`: the
//! driver's schedule calls, on the shard that has the schedule. An unknown
//! name is an error (exit 1) naming the schedules there are.
//!
//! With `--shards`, the same name may be stored on several shards: those
//! are several schedules, each firing. A change or a `show` then needs
//! `--shard INDEX` and is refused without it, naming the shards: acting on
//! all of them would enqueue one job per shard on a trigger and delete
//! more than was looked at, and acting on the first one (as before) left
//! the others firing while saying it was done.

use std::time::SystemTime;

use redq::schedule::{
    Misfire, Schedule, ScheduleChange, ScheduleInfo as Stored, Triggered, Upserted,
};
use redq::Operator;
use serde_json::{json, Value};

use crate::aggregate::Target;
use crate::cli::{MisfireArg, ScheduleShard, SchedulesCommand};
use crate::clock;
use crate::failure::Failure;
use crate::output::{opt_time, outln, print_json, time};
use crate::registry::{last_enqueue_was_trigger, last_tick_fired, schedule_row};
use crate::text::inert;

use super::known::require_known_with;

/// How many upcoming runs `show` previews.
const PREVIEW_RUNS: usize = 5;

/// Whether a `schedules` subcommand changes Redis.
pub fn mutates(command: &Option<SchedulesCommand>) -> Option<&'static str> {
    match command {
        None | Some(SchedulesCommand::List) | Some(SchedulesCommand::Show { .. }) => None,
        Some(SchedulesCommand::Set { .. }) => Some("schedules set"),
        Some(SchedulesCommand::Trigger { .. }) => Some("schedules trigger"),
        Some(SchedulesCommand::Pause { .. }) => Some("schedules pause"),
        Some(SchedulesCommand::Resume { .. }) => Some("schedules resume"),
        Some(SchedulesCommand::Delete { .. }) => Some("schedules delete"),
    }
}

pub async fn run(
    target: &Target,
    command: Option<SchedulesCommand>,
    json: bool,
) -> Result<(), Failure> {
    let (name, verb, change) = match command {
        None | Some(SchedulesCommand::List) => {
            return super::listing::schedules(target, json).await
        }
        Some(SchedulesCommand::Show { name, shard }) => {
            return show(target, &name, shard, json).await
        }
        Some(command @ SchedulesCommand::Set { .. }) => return set(target, command, json).await,
        Some(SchedulesCommand::Trigger { name, shard }) => {
            return trigger(target, &name, shard, json).await
        }
        Some(SchedulesCommand::Pause { name, shard }) => {
            let on = which_shard(target, &name, shard).await?;
            let change = target.pause_schedule_on(on, &name).await?;
            (name, "paused", change)
        }
        Some(SchedulesCommand::Resume { name, shard }) => {
            let on = which_shard(target, &name, shard).await?;
            let change = target.resume_schedule_on(on, &name).await?;
            (name, "resumed", change)
        }
        Some(SchedulesCommand::Delete { name, shard, yes }) => {
            if !yes {
                return Err(Failure::Usage(format!(
                    "delete removes schedule {} for good (the jobs it enqueued stay); add --yes to do it",
                    inert(&name)
                )));
            }
            let on = which_shard(target, &name, shard).await?;
            let change = target.delete_schedule_on(on, &name).await?;
            (name, "deleted", change)
        }
    };
    let shown = inert(&name);
    match change {
        ScheduleChange::NotFound => return Err(not_found(target, &name).await),
        ScheduleChange::Done if json => {
            print_json(&json!({ "schedule": name, "action": verb, "changed": true }))
        }
        ScheduleChange::Unchanged if json => {
            print_json(&json!({ "schedule": name, "action": verb, "changed": false }))
        }
        ScheduleChange::Done => outln!("{verb} schedule {shown}"),
        ScheduleChange::Unchanged => outln!("schedule {shown} was already {verb}"),
    }
    tracing::info!(schedule = %name, action = verb, "schedule changed");
    Ok(())
}

/// `redq schedules set`: the driver's upsert, which checks the expression,
/// zone and name before writing anything; an existing schedule only with
/// --replace.
async fn set(target: &Target, command: SchedulesCommand, json: bool) -> Result<(), Failure> {
    let SchedulesCommand::Set {
        name,
        queue,
        expression,
        timezone,
        job_name,
        payload,
        misfire,
        replace,
        allow_unknown,
        shard,
    } = command
    else {
        unreachable!("set is called with a set command")
    };
    if !allow_unknown {
        require_known_with(
            target,
            &queue,
            "; to send a schedule's jobs to it before its first job, add --allow-unknown",
        )
        .await?;
    }
    let payload = match payload {
        None => Value::Null,
        Some(text) => serde_json::from_str(&text).map_err(|e| {
            Failure::Usage(format!("--payload is not JSON ({e}): {}", inert(&text)))
        })?,
    };
    let mut schedule = Schedule::new(&name, &queue, &expression)
        .timezone(&timezone)
        .payload(payload)
        .misfire(match misfire {
            MisfireArg::FireOnce => Misfire::FireOnce,
            MisfireArg::Skip => Misfire::Skip,
        });
    if let Some(job_name) = job_name {
        schedule = schedule.job_name(job_name);
    }
    let n = target.shards().len();
    let on = match shard.shard {
        Some(_) => which_shard(target, &name, shard).await?,
        None if n == 1 => 0,
        None => {
            return Err(Failure::Usage(format!(
                "with --shards, add --shard INDEX (0 to {}) to say which shard stores schedule {}",
                n - 1,
                inert(&name)
            )))
        }
    };
    let queue_on = &target.shards()[on];
    let before = queue_on.schedule(&name).await?;
    if !replace && before.is_some() {
        return Err(Failure::Usage(format!(
            "schedule {} exists; add --replace to replace it whole (anything not given takes \
             its default)",
            inert(&name)
        )));
    }
    let upserted = queue_on.upsert_schedule(schedule).await?;
    let after = queue_on.schedule(&name).await?;
    let changed = match (&before, &after) {
        (Some(before), Some(after)) => changed_fields(before, after),
        _ => Vec::new(),
    };
    let verb = match upserted {
        Upserted::Created { .. } => "created",
        Upserted::Updated { .. } => "replaced",
    };
    let next = upserted.next_run();
    tracing::info!(schedule = %name, action = verb, "schedule set");
    if json {
        print_json(&json!({
            "schedule": name,
            "action": verb,
            "expression": expression,
            "timezone": timezone,
            "next_run": opt_time(next),
            "changed": changed,
        }));
        return Ok(());
    }
    let when = match next {
        Some(at) => format!(
            "{}{}",
            clock::rfc3339(at),
            Operator::wall_clock(at, &timezone)
                .map_or_else(String::new, |l| format!(" ({l} {})", inert(&timezone)))
        ),
        None => "none (paused)".to_owned(),
    };
    outln!(
        "{verb} schedule {} ({}): next run {when}",
        inert(&name),
        inert(&expression)
    );
    if !changed.is_empty() {
        outln!(
            "changed from what it was: {} (a replace sets every field; give the old values \
             to keep them)",
            changed.join(", ")
        );
    }
    if after.as_ref().is_some_and(|s| s.job_name.is_none()) {
        eprintln!(
            "note: its jobs carry no job name, so a typed Worker cannot run them (it \
             dead-letters them); add --job-name NAME"
        );
    }
    Ok(())
}

/// The fields a replace changed, each with its old value where it is short
/// enough to say (never the payload: it may hold what must not be shown).
fn changed_fields(before: &Stored, after: &Stored) -> Vec<String> {
    let mut changed = Vec::new();
    let mut said = |what: &str, was: Option<String>| {
        changed.push(match was {
            Some(was) => format!("{what} (was {})", inert(&was)),
            None => what.to_owned(),
        })
    };
    if before.queue != after.queue {
        said("queue", Some(before.queue.clone()));
    }
    if before.expression != after.expression {
        said("expression", Some(before.expression.clone()));
    }
    if before.timezone != after.timezone {
        said("time zone", Some(before.timezone.clone()));
    }
    if before.job_name != after.job_name {
        said(
            "job name",
            Some(before.job_name.clone().unwrap_or_else(|| "none".into())),
        );
    }
    if before.payload != after.payload {
        said("payload", None);
    }
    if before.misfire != after.misfire {
        let was = misfire_text(before);
        said(
            "misfire policy",
            Some(was[..was.find(' ').unwrap_or(was.len())].to_owned()),
        );
    }
    if before.priority != after.priority {
        said("priority", Some(before.priority.to_string()));
    }
    if before.max_attempts != after.max_attempts {
        said("max attempts", Some(before.max_attempts.to_string()));
    }
    changed
}

async fn trigger(
    target: &Target,
    name: &str,
    shard: ScheduleShard,
    json: bool,
) -> Result<(), Failure> {
    let on = which_shard(target, name, shard).await?;
    match target.trigger_schedule_on(on, name).await? {
        Triggered::NotFound => Err(not_found(target, name).await),
        Triggered::Enqueued(id) => {
            tracing::info!(schedule = %name, job = %id, "schedule triggered");
            if json {
                print_json(&json!({ "schedule": name, "action": "triggered", "job": id }));
            } else {
                outln!(
                    "triggered schedule {}: enqueued job {}",
                    inert(name),
                    inert(&id)
                );
            }
            Ok(())
        }
    }
}

/// The shard to act on for `name`: the one `--shard` names, else the only
/// one that stores it. Several: refused, naming them.
async fn which_shard(target: &Target, name: &str, shard: ScheduleShard) -> Result<usize, Failure> {
    let n = target.shards().len();
    if let Some(shard) = shard.shard {
        if shard >= n {
            return Err(Failure::Usage(match n {
                1 => format!(
                    "--shard {shard}: there is one namespace (no --shards), so the only shard is 0"
                ),
                _ => format!(
                    "--shard {shard}: there are {n} shards, numbered 0 to {}",
                    n - 1
                ),
            }));
        }
        return Ok(shard);
    }
    let on = target.schedule_shards(name).await?;
    match on.as_slice() {
        [] => Err(not_found(target, name).await),
        [one] => Ok(*one),
        several => {
            let list: Vec<String> = several.iter().map(|i| i.to_string()).collect();
            let choose: Vec<String> = several.iter().map(|i| format!("--shard {i}")).collect();
            Err(Failure::Usage(format!(
                "schedule {} is stored on shards {}, each a schedule of its own that fires; \
                 add {} to choose one",
                inert(name),
                list.join(" and "),
                choose.join(" or ")
            )))
        }
    }
}

/// The refusal for a schedule no shard has, naming those there are.
async fn not_found(target: &Target, name: &str) -> Failure {
    let names: Vec<String> = match target.schedules().await {
        Ok(Some(all)) => all
            .into_iter()
            .map(|s| match s.shard {
                Some(shard) => format!("{} (shard {shard})", inert(&s.name)),
                None => inert(&s.name),
            })
            .collect(),
        _ => Vec::new(),
    };
    let known = if names.is_empty() {
        "there are no schedules".to_owned()
    } else {
        format!("the schedules are {}", names.join(", "))
    };
    Failure::Failed(format!("no schedule is named {}; {known}", inert(name)))
}

/// Every stored schedule with the shard that stores it (with several),
/// by name then shard.
pub async fn stored(target: &Target) -> Result<Vec<(Option<usize>, Stored)>, Failure> {
    let sharded = target.is_sharded();
    let mut all = Vec::new();
    for (i, shard) in target.shards().iter().enumerate() {
        for s in shard.list_schedules().await? {
            all.push((sharded.then_some(i), s));
        }
    }
    all.sort_by(|(a_shard, a), (b_shard, b)| a.name.cmp(&b.name).then(a_shard.cmp(b_shard)));
    Ok(all)
}

/// A schedule as JSON: everything its record holds, what the table says of
/// it (`state`, `overdue`), and the last tick apart from the last enqueue,
/// which a manual trigger moves too.
pub fn record_json(shard: Option<usize>, s: &Stored, now: SystemTime) -> Value {
    let row = schedule_row(s, shard);
    let overdue = row.overdue_by(now);
    let mut value = json!({
        "name": s.name,
        "queue": s.queue,
        "expression": s.expression,
        "timezone": s.timezone,
        "state": row.state_text(),
        "paused": s.paused,
        "ended": row.ended(),
        "next_run": opt_time(s.next_run),
        "overdue": overdue.is_some(),
        "overdue_ms": overdue.map(|d| d.as_millis() as u64),
        "last_tick": opt_time(s.last_tick),
        "last_tick_fired": last_tick_fired(s),
        "last_skipped": opt_time(s.last_skipped),
        "last_run": opt_time(s.last_run),
        "last_run_by": last_enqueue_was_trigger(s).map(|t| if t { "trigger" } else { "tick" }),
        "last_job_id": s.last_job_id,
        "misfire": s.misfire,
        "starts_at": opt_time(s.starts_at),
        "ends_at": opt_time(s.ends_at),
        "job_name": s.job_name,
        "payload": s.payload,
        "priority": s.priority,
        "max_attempts": s.max_attempts,
        "retry_window_ms": s.retry_window.map(|d| d.as_millis() as u64),
        "revision": s.revision,
        "created_at": time(s.created_at),
        "updated_at": time(s.updated_at),
    });
    if let Some(shard) = shard {
        value["shard"] = json!(shard);
    }
    value
}

/// `redq schedules show NAME`.
async fn show(
    target: &Target,
    name: &str,
    shard: ScheduleShard,
    json: bool,
) -> Result<(), Failure> {
    let on = which_shard(target, name, shard).await?;
    let Some(s) = target.shards()[on].schedule(name).await? else {
        return Err(not_found(target, name).await);
    };
    let shard = target.is_sharded().then_some(on);
    let now = SystemTime::now();
    if json {
        let upcoming = upcoming(&s, now)?;
        let mut value = record_json(shard, &s, now);
        value["upcoming"] = upcoming
            .iter()
            .map(|(at, local)| json!({ "utc": time(*at), "local": local }))
            .collect();
        print_json(&value);
        return Ok(());
    }
    for (label, text) in show_lines(shard, &s, now)? {
        outln!("{label:<14}{}", text.trim_end());
    }
    Ok(())
}

/// The next [`PREVIEW_RUNS`] runs of `s` at `now` (UTC, and the wall clock
/// in its zone): none while it has no next run and is not paused (ended).
fn upcoming(s: &Stored, now: SystemTime) -> Result<Vec<(SystemTime, String)>, redq::QueueError> {
    // From the next run on, so an overdue tick leads the preview.
    let from = s.next_run.map_or(now, |next| {
        next.min(now) - std::time::Duration::from_millis(1)
    });
    if s.paused || s.next_run.is_some() {
        Operator::upcoming_runs(s, from, PREVIEW_RUNS)
    } else {
        Ok(Vec::new())
    }
}

/// What `redq schedules show NAME` prints and the console's schedule
/// detail shows, as labelled lines: the whole record, then the next
/// 5 runs in UTC and in its zone (`upcoming`). Every text
/// from Redis is made inert, the payload too. One definition, so the
/// console and the CLI cannot say different things of a schedule.
pub fn show_lines(
    shard: Option<usize>,
    s: &Stored,
    now: SystemTime,
) -> Result<Vec<(&'static str, String)>, redq::QueueError> {
    let upcoming = upcoming(s, now)?;
    let mut lines = detail_lines(shard, s, now);
    if upcoming.is_empty() {
        lines.push((
            "upcoming",
            format!("none (it is {})", schedule_row(s, shard).state_text()),
        ));
    }
    for (i, (at, local)) in upcoming.iter().enumerate() {
        let label = if i == 0 { "upcoming" } else { "" };
        lines.push((
            label,
            format!(
                "{}  {}  ({})",
                clock::rfc3339(*at),
                local,
                inert(&s.timezone)
            ),
        ));
    }
    Ok(lines)
}

/// The labelled lines of `show`, every text from Redis made inert.
fn detail_lines(shard: Option<usize>, s: &Stored, now: SystemTime) -> Vec<(&'static str, String)> {
    let row = schedule_row(s, shard);
    let when = |at: Option<SystemTime>| at.map_or_else(|| "-".to_owned(), clock::rfc3339);
    let local = |at: Option<SystemTime>| {
        at.and_then(|at| Operator::wall_clock(at, &s.timezone))
            .map_or_else(String::new, |l| format!(" ({l} {})", inert(&s.timezone)))
    };
    let mut state = row.state_text().to_owned();
    if let Some(late) = row.overdue_by(now) {
        state.push_str(&format!(
            ", overdue by {} (no scheduler has fired its next run)",
            clock::compact(late)
        ));
    }
    let tick = match (s.last_tick, last_tick_fired(s)) {
        (None, _) => "- (no tick yet)".to_owned(),
        (Some(at), Some(false)) => format!(
            "{}{} skipped (misfire policy skip)",
            when(Some(at)),
            local(Some(at))
        ),
        (Some(at), _) => format!("{}{}", when(Some(at)), local(Some(at))),
    };
    let enqueue = match (s.last_run, last_enqueue_was_trigger(s)) {
        (None, _) => "-".to_owned(),
        (Some(at), by) => format!(
            "{}, {} job {}",
            when(Some(at)),
            if by == Some(true) {
                "a manual trigger:"
            } else {
                "its tick:"
            },
            inert(s.last_job_id.as_deref().unwrap_or("-"))
        ),
    };
    let mut lines = vec![("name", inert(&s.name))];
    if let Some(shard) = shard {
        lines.push(("shard", shard.to_string()));
    }
    lines.extend([
        ("queue", inert(&s.queue)),
        ("state", state),
        ("expression", inert(&s.expression)),
        ("timezone", inert(&s.timezone)),
        (
            "next run",
            format!("{}{}", when(s.next_run), local(s.next_run)),
        ),
        ("last tick", tick),
        ("last enqueue", enqueue),
        ("misfire", misfire_text(s).to_owned()),
        (
            "starts at",
            format!("{}{}", when(s.starts_at), local(s.starts_at)),
        ),
        (
            "ends at",
            format!("{}{}", when(s.ends_at), local(s.ends_at)),
        ),
        (
            "job name",
            s.job_name.as_deref().map_or("-".to_owned(), inert),
        ),
        ("payload", inert(&s.payload.to_string())),
        ("priority", s.priority.to_string()),
        (
            "max attempts",
            match s.max_attempts {
                0 => "unlimited".to_owned(),
                n => n.to_string(),
            },
        ),
        (
            "retry window",
            s.retry_window.map_or("-".to_owned(), clock::compact),
        ),
        ("revision", s.revision.to_string()),
        ("created", clock::rfc3339(s.created_at)),
        ("updated", clock::rfc3339(s.updated_at)),
    ]);
    lines
}

/// The misfire policy in words.
fn misfire_text(s: &Stored) -> &'static str {
    match s.misfire {
        redq::schedule::Misfire::FireOnce => {
            "fire_once (after an outage, one job for the missed ticks)"
        }
        redq::schedule::Misfire::Skip => "skip (missed ticks fire nothing)",
    }
}
